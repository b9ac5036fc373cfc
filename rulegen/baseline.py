"""The baseline: policy findings a team accepted when it adopted rulegen, so that adopting
does not mean fixing hundreds of alerts first (the usual way to adopt a linter).

File: ``.rulegen-baseline.yaml`` at the project root, written by ``rulegen import`` and
``rulegen baseline``, reviewed in pull requests like any other file. Shape::

    version: 2
    findings:
      - {app: node-exporter, rule: HostOutOfMemory, code: RG504, message: critical alert has no runbook content}

An entry is keyed by app, rule name, code and the finding's ``message`` as
:func:`subject` normalises it: what is wrong (the text before the first ``;``, not the
advice after it), with line and column numbers and lists of allowed values (``one of
critical, warning``) left out. So a second finding of the same code on the same rule (a
second severity outside the set, another mutating command) is not covered by the first
one's entry, and moving lines, rewording advice or extending the allowed list keeps entries
valid. A version 1 entry (app, rule and code, no message) is still read and covers every
finding of its code on that rule; ``rulegen baseline`` rewrites it as one entry per finding
it covers. Only policy codes (:data:`POLICY_CODES`: names and conventions) can be
baselined; a PromQL or schema error never can.

How it acts on findings (:func:`apply`):

* a finding an entry covers is still shown and counted, as a warning, with ``(baselined)``
  in its message, until it is fixed;
* any other finding keeps its severity: a new critical alert without runbook content is an
  error;
* ``RG811``: an entry that matches no finding any more (it was fixed, or the alert renamed or
  removed). ``rulegen check`` fails on it, so the baseline only shrinks; ``validate`` and
  ``build`` show it as a warning. ``rulegen baseline`` removes it. Bad: an entry for
  ``{app: shop, rule: ShopDown, code: RG504, message: ...}`` after ShopDown got its runbook;
  good: the entry removed by ``rulegen baseline``;
* ``RG812`` (error): the baseline file cannot be read (not YAML, wrong shape); the message
  says what is wrong. Bad: ``findings: {app: shop}``; good: ``findings: [{app: shop, rule:
  ShopDown, code: RG504, message: critical alert has no runbook content}]``.

``rulegen baseline`` drops the entries that match nothing and keeps the rest; with
``--add`` it also records the policy errors found now (to adopt, or to accept a finding on
purpose). Without a baseline file it records every current policy error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .findings import Finding, RulegenError, Severity
from .fs import read as fs_read
from .fs.containment import refuse_link_out
from .fs import yamlbound

BASELINE_FILE = ".rulegen-baseline.yaml"
#: Codes a baseline can hold: naming and conventions (team policy), not correctness.
POLICY_CODES = frozenset({"RG401", "RG402", "RG404", "RG501", "RG502", "RG503", "RG504", "RG505"})
_HEADER = """\
# rulegen baseline: policy findings accepted when these rules were adopted.
# Each is still shown, as a warning, until it is fixed; any other finding stays an error.
# `rulegen baseline` removes the entries that were fixed (`rulegen check` fails until it is
# run), and `rulegen baseline --add` records new ones on purpose.
"""

Key = tuple  # (app, rule, code, subject); subject None: a version 1 entry (every finding of the code)

_LINE_REF = re.compile(r"\b(lines?|line\(s\)|col(?:umn)?s?) \d+(?:(?:, ?| and |-)\d+)*")
_FILE_POS = re.compile(r"(\.ya?ml):\d+(?::\d+)?\b")
_ALLOWED = re.compile(r"\bone of [^;()]*?(?=\s*(?:[;()]|$))")


def subject(message: str) -> str:
    """What a finding's ``message`` says is wrong, as the baseline keys it: the text before
    the first ``"; "`` (the advice after it is not the finding), without a ``(baselined
    ...)`` note, with line and column numbers (``line 12`` -> ``line N``, ``x.yaml:3:4`` ->
    ``x.yaml``) and a list of allowed values (``one of critical, warning`` -> ``one of the
    allowed values``) left out, since they change when other things change."""
    text = message.split(f" (baselined in {BASELINE_FILE})")[0]
    text = text.split("; ", 1)[0]
    text = _LINE_REF.sub(lambda m: f"{m.group(1)} N", text)
    text = _FILE_POS.sub(r"\1", text)
    return _ALLOWED.sub("one of the allowed values", text).strip()


@dataclass
class Baseline:
    """The entries of a baseline file, as ``(app, rule, code, subject)`` keys (subject None
    for a version 1 entry), in file order, and the line of each."""

    entries: list = field(default_factory=list)
    lines: dict = field(default_factory=dict)   # key -> 1-based line in the file

    def keys(self) -> set:
        return set(self.entries)

    def covering(self, k: Key, keys: set | None = None) -> Key | None:
        """The entry that covers a finding of key ``k``: its own, or a version 1 entry of its
        app, rule and code; None when none does. ``keys``: :meth:`keys`, when the caller has
        it already (one set for many findings)."""
        keys = self.keys() if keys is None else keys
        if k in keys:
            return k
        old = k[:3] + (None,)
        return old if old in keys else None


def load(root: Path) -> Baseline | None:
    """The baseline of the project at ``root``, or None when it has none (see :func:`parse`).

    Raises:
        RulegenError: the file is not YAML or not of the documented shape (code RG812 in
            the message).
    """
    p = root / BASELINE_FILE
    if not p.exists():  # a dangling link reads nothing (a write through one is RG747)
        return None
    refuse_link_out(root, BASELINE_FILE)
    try:
        text = fs_read.read_text(p, BASELINE_FILE)
    except IsADirectoryError:
        return None
    except UnicodeDecodeError as e:
        raise RulegenError(f"{BASELINE_FILE}: RG812 not valid YAML: {e}") from None
    return parse(text)


def parse(text: str) -> Baseline:
    """The baseline written in ``text`` (the content of ``.rulegen-baseline.yaml``, from the
    working tree or a Git ref). Version 1 entries (no ``message``) are read as keys with
    subject None.

    Raises:
        RulegenError: not YAML or not of the documented shape (code RG812 in the message).
    """
    try:
        raw = yamlbound.safe_load(text, BASELINE_FILE)
    except yaml.YAMLError as e:
        raise RulegenError(f"{BASELINE_FILE}: RG812 not valid YAML: {e}") from None
    if raw is None:
        return Baseline()
    if not isinstance(raw, dict) or not isinstance(raw.get("findings", []), list) or \
            set(raw) - {"version", "findings"} or raw.get("version", 1) not in (1, 2):
        raise RulegenError(f"{BASELINE_FILE}: RG812 must be a mapping with `version: 2` and `findings:`, "
                           "a list of {app, rule, code, message}; rerun `rulegen baseline --add` to rewrite it")
    out = []
    lines: dict = {}
    try:
        node = yaml.compose(text)
        items = next(v for k, v in node.value if k.value == "findings").value
    except (yaml.YAMLError, StopIteration, AttributeError, TypeError):
        items = []
    for i, e in enumerate(raw.get("findings") or []):
        if not (isinstance(e, dict) and {"app", "rule", "code"} <= set(e) <= {"app", "rule", "code", "message"}
                and all(isinstance(e[k], str) and e[k] for k in e)):
            raise RulegenError(f"{BASELINE_FILE}: RG812 findings[{i}] must have app, rule, code and message, "
                               "each a non-empty string (message may be left out: the entry then covers every "
                               "finding of its code on that rule)")
        out.append((e["app"], e["rule"], e["code"], subject(e["message"]) if "message" in e else None))
        if i < len(items):
            lines.setdefault(out[-1], items[i].start_mark.line + 1)
    return Baseline(out, lines)


def _row(k: Key) -> dict:
    row = {"app": k[0], "rule": k[1], "code": k[2]}
    if k[3] is not None:
        row["message"] = k[3]
    return row


def dump(entries) -> str:
    """The baseline file text (version 2) for ``entries`` (keys), sorted and without
    duplicates; a version 1 key is written without ``message``."""
    rows = sorted(set(entries), key=lambda k: (k[0], k[1], k[2], k[3] or ""))
    body = yaml.safe_dump({"version": 2, "findings": [_row(k) for k in rows]},
                          sort_keys=False, default_flow_style=None, width=1_000_000)
    return _HEADER + body


def write(root: Path, entries) -> Path:
    """Write the baseline file for ``entries`` through the one writer (:mod:`rulegen.fs.write`;
    ``RG747`` when it would lead outside ``root``)."""
    from .fs.write import atomic_write  # only `rulegen baseline` and `import` write it
    return atomic_write(root / BASELINE_FILE, dump(entries), root=root)


def key_of(f: Finding, app_of: dict) -> Key | None:
    """The baseline key of finding ``f`` (``app_of``: spec file -> app): ``(app, rule, code,``
    :func:`subject` ``of its message)``, or None when it cannot be baselined (not a policy
    code, no rule, not in a loaded spec)."""
    if f.code not in POLICY_CODES or not f.rule or f.file not in app_of:
        return None
    return (app_of[f.file], f.rule, f.code, subject(f.message))


def policy_errors(findings: list[Finding], app_of: dict) -> set:
    """The keys of the policy findings in ``findings`` that are errors."""
    return {k for f in findings if f.is_error and (k := key_of(f, app_of)) is not None}


def apply(findings: list[Finding], baseline: Baseline | None, app_of: dict, stale_is_error: bool,
          apps_loaded: set | None = None) -> list[Finding]:
    """``findings`` with the baseline applied (see the module docstring), plus one RG811 per
    entry that matches nothing. ``apps_loaded``: the apps whose specs were loaded (entries of
    other apps are not judged); None means every app of the project was loaded."""
    if baseline is None:
        return findings
    keys = baseline.keys()
    seen: set = set()
    out = []
    for f in findings:
        k = key_of(f, app_of)
        entry = baseline.covering(k, keys) if k is not None else None
        if entry is not None:
            seen.add(entry)
            if f.is_error:
                f = Finding(f.file, f.line, f.col, f.code, Severity.WARNING,
                            f"{f.message} (baselined in {BASELINE_FILE})", f.rule)
        out.append(f)
    sev = Severity.ERROR if stale_is_error else Severity.WARNING
    for k in baseline.entries:
        if k in seen or (apps_loaded is not None and k[0] not in apps_loaded):
            continue
        seen.add(k)
        what = f"{k[2]} on {k[0]}/{k[1]}" + (f" ({k[3]})" if k[3] else "")
        out.append(Finding(BASELINE_FILE, baseline.lines.get(k, 1), 1, "RG811", sev,
                           f"{what} is no longer found (fixed, renamed or removed); "
                           "run `rulegen baseline` to remove the entry, so the baseline only shrinks", k[1]))
    return out


@dataclass
class Update:
    """What ``rulegen baseline`` does to the baseline (:func:`update`). Entries are keys
    ``(app, rule, code, subject)``; ``subject`` is None in a version 1 entry."""
    #: the entries the baseline holds afterwards
    after: set
    #: entries that match no finding any more, sorted
    removed: list
    #: entries recorded now (policy errors), sorted
    added: list
    #: entries keyed by the finding's message that replace version 1 entries
    migrated: set
    #: number of version 1 entries rewritten as ``migrated``
    n_old: int
    #: policy errors that stay out of the baseline (without ``add``), sorted
    left_out: list
    #: True when the file must be (re)written: there was none, or an entry changed
    changed: bool


def update(findings: list[Finding], app_of: dict, old: Baseline | None, add: bool) -> Update:
    """The update of baseline ``old`` (None: no file yet) for ``findings`` (found without a
    baseline; ``app_of``: spec file -> app): entries that match no finding are removed; with
    ``add``, or when there is no baseline yet, the current policy errors are recorded; a version
    1 entry is rewritten as one entry per finding it covers."""
    found = {k for f in findings if (k := key_of(f, app_of)) is not None}
    errors = policy_errors(findings, app_of)
    before = set(old.entries) if old is not None else set()
    after = {k for k in before if k in found}
    migrated = {k for k in found if k not in before and k[:3] + (None,) in before}
    after |= migrated
    if add or old is None:
        after |= errors
    removed = sorted((k for k in before - after if not (k[3] is None and any(m[:3] == k[:3] for m in migrated))),
                     key=lambda k: (k[0], k[1], k[2], k[3] or ""))
    added = sorted(after - before - migrated)
    n_old = sum(1 for k in before if k[3] is None and any(m[:3] == k[:3] for m in migrated))
    left_out = sorted(errors - after)
    return Update(after, removed, added, migrated, n_old, left_out,
                  old is None or bool(removed or added or n_old))
