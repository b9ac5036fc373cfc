"""Policy changes: what a pull request changes about what rulegen checks.

A pull request can make ``rulegen check`` pass without fixing anything: by adding entries to
``.rulegen-baseline.yaml`` for its own new findings, or by switching checks off or weakening
them in ``.rulegen.yaml``. :func:`compare` lists every such change between a Git ref (the base
branch) and the working tree, each with the findings it hides, so that ``rulegen diff`` shows
them to the reviewer (text and Markdown, above the alert changes) and ``rulegen check --base
REF`` can fail on them.

What counts (head: the working tree; base: the ref):

* the baseline: each entry added (it weakens) or removed (it does not), keyed as
  :mod:`rulegen.baseline` keys them; a changed entry is one removed and one added, and a
  version 1 entry (no ``message``) that replaces a version 2 one is an entry added, since it
  covers every finding of its code on that rule. An entry on both sides that covers more
  errors in the working tree than at the base ref weakens too: a second alert of the same
  name in the app (a variant) with the same finding, or any new finding of the code on the
  rule for a version 1 entry, is hidden by the old entry without the file changing;
* ``checks.disable``: a code switched off (weakens) or on again;
* ``checks.severity``: a code's effective severity (its override, else its documented default,
  see :mod:`rulegen.checkdocs`) lowered from error to warning (weakens) or raised;
* the settings that change what is checked: ``conventions.severities`` (a severity allowed
  that was not, or ``[]``: any), ``require_summary``, ``require_description`` (true ->
  false), ``require_runbook_for`` and ``require_triage`` (a severity or field dropped),
  ``duplicate_alert_across_apps`` (error -> warning), ``prometheus_scopes`` (when the apps it
  puts in different scopes have alert or PrometheusRule names in common, RG412/RG415 errors
  it hides; scopes that separate no such apps hide nothing and do not count),
  ``runbooks.allow_html`` (false -> true:
  raw HTML reaches the site, cleaned rather than escaped) and ``policy_changes`` itself (fail
  -> warn) weaken; the opposite changes tighten. The URLs under ``runbooks`` change no check.

The findings a change hides are worked out on the head's specs validated with the base
config and no baseline (what the base policy would report): for an added baseline entry, the
findings it covers; for a disabled code, that code's findings; for a lowered severity, that
code's errors; for a convention, the errors of the codes it governs (RG501-RG504, RG510,
RG412) that the head's config no longer reports as errors.

``rulegen check --base REF`` turns each weakening change into a finding, at the line of the
entry or key in the head's file. Whether they are errors is read from the base ref's
``.rulegen.yaml`` (``policy_changes``), never from the pull request's, which could switch it
off in the same change; ``--fail-on-policy-changes`` makes them errors whatever the base says.
``policy_changes`` defaults to ``fail`` when the base config does not set it (or has no
config): the check only runs when CI passes ``--base``, which a platform team adds to get
exactly this gate, so an existing project that upgrades rulegen fails nothing new until then,
and a gate that turned on silently as "warn" would let the first pull request that baselines
its own errors through. A change that was agreed lands the way the repository merges past a
failing required check (or CI runs ``check --base`` as its own job that maintainers may
waive); ``policy_changes: warn`` on the base branch reports them without failing. Shrinking the
baseline, re-enabling a check or tightening a setting never fails.

Codes (``rulegen check --base REF``; warnings when the base ref sets ``policy_changes: warn``):

* ``RG820`` the baseline grew: an entry of ``.rulegen-baseline.yaml`` is not in the base
  ref's baseline, or covers more errors than it did there, so the findings it covers stop
  failing the check (the message names them).
  Bad: a pull request adding ``{app: shop, rule: ShopDown, code: RG504, message: critical
  alert has no runbook content}`` next to its new alert ShopDown; good: ShopDown gets its
  runbook, or the entry is agreed with the platform team and merged past the check.
* ``RG821`` a check is switched off: ``checks.disable`` in ``.rulegen.yaml`` names a code the
  base ref's config did not; the message names the findings of that code it hides. Bad:
  ``checks: {disable: [RG504]}`` added in the pull request that adds an alert without a
  runbook; good: the runbook written, ``checks.disable`` as on the base branch.
* ``RG822`` a check is weakened: ``checks.severity`` makes a code a warning that was an error
  at the base ref (its documented default or the base's override), so its findings no longer
  fail anything. Bad: ``checks: {severity: {RG301: warning}}``; good: the PromQL fixed, no
  override.
* ``RG823`` a setting of ``.rulegen.yaml`` now checks less than at the base ref (a severity
  allowed, ``require_summary``/``require_description`` off, a severity dropped from
  ``require_runbook_for``, a triage field dropped from ``require_triage``,
  ``duplicate_alert_across_apps: warning``, ``prometheus_scopes`` that separate apps sharing
  alert or PrometheusRule names, ``runbooks.allow_html: true``, ``policy_changes: warn``, a
  severity dropped from ``owners.require_for`` or ``alertmanager.paging_severities``, a
  receiver dropped from ``alertmanager.null_receivers``, ``alertmanager.config`` removed); the
  message names the errors it hides. Bad: ``conventions: {require_runbook_for:
  []}`` in a pull request; good: the setting as on the base branch, or changed in a pull
  request of its own that the platform team approves.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .. import baseline as bl
from .. import checkdocs
from ..config import CONFIG_FILE, Config, load_config, parse_config
from ..findings import Finding, RulegenError, Severity
from ..pipeline import DEFAULT_SPEC_DIR
from ..spec import find_spec_files, load_file, shown_path
from ..validate import Context, validate
from .gitbase import SPEC_DIR, _git, base_file, validate_base, verify_ref
from ..fs import read as fs_read
from ..fs import yamlbound

#: The code of each kind of weakening change.
BASELINE_GREW, CHECK_DISABLED, CHECK_WEAKENED, SETTING_WEAKENED = "RG820", "RG821", "RG822", "RG823"

#: Setting (dotted path in ``.rulegen.yaml``) -> the codes whose findings it governs.
SETTING_CODES = {
    "conventions.severities": ("RG501",),
    "conventions.require_summary": ("RG502",),
    "conventions.require_description": ("RG503",),
    "conventions.require_runbook_for": ("RG504",),
    "conventions.require_triage": ("RG510",),
    "duplicate_alert_across_apps": ("RG412",),
    "prometheus_scopes": ("RG412", "RG415"),
    "runbooks.allow_html": (),
    "policy_changes": (),
    "owners.require_for": ("RG515",),
    "alertmanager.config": ("RG950", "RG951", "RG952", "RG953", "RG954", "RG955"),
    "alertmanager.paging_severities": ("RG953",),
    "alertmanager.null_receivers": ("RG953",),
}

#: How many hidden findings a message or a table cell names before "and N more".
SHOWN = 10

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@dataclass
class PolicyChange:
    """One change of the baseline or the check configuration.

    Attributes:
        code: ``RG820``-``RG823`` when it weakens what is checked, None when it tightens it
            (an entry removed, a check on again).
        file: ``.rulegen-baseline.yaml`` or ``.rulegen.yaml`` (relative to the project root).
        line: 1-based line of the entry or key in the working tree's file; 1 when it is gone
            from there.
        what: one phrase, ``baseline entry added: RG504 on shop/ShopDown (critical alert has no
            runbook content)``; names and messages come from the pull request (hostile text).
        hides: the findings it hides (see the module docstring), sorted by place.
    """

    code: str | None
    file: str
    line: int
    what: str
    hides: list = field(default_factory=list)

    @property
    def weakens(self) -> bool:
        return self.code is not None


@dataclass
class Report:
    """Result of :func:`compare`: the changes (weakening ones first, each group in file order),
    ``mode``: the base ref's ``policy_changes`` (``fail`` or ``warn``), and notes (a base file
    that could not be read)."""

    changes: list = field(default_factory=list)
    mode: str = "fail"
    notes: list = field(default_factory=list)

    @property
    def weakening(self) -> list:
        return [c for c in self.changes if c.weakens]


def plain(text: str) -> str:
    """``text`` on one line without control characters (a hostile entry's message could hold
    an ESC sequence for the terminal or a line break that fakes another line)."""
    return _CONTROL.sub(" ", str(text))


def finding_phrase(f: Finding) -> str:
    """``rules/shop.yaml:12:9 RG504 ShopDown: critical alert has no runbook content``: what is
    wrong, without the advice after the message's first ``"; "``."""
    rule = f" {f.rule}" if f.rule else ""
    return plain(f"{f.location()} {f.code}{rule}: {f.message.split('; ', 1)[0]}")


# ---------------------------------------------------------------------------------------------
# Reading both sides

def _raw_config(text: str | None) -> tuple[dict, str | None]:
    """(the mapping of a ``.rulegen.yaml`` text, None) or ({}, why it cannot be read)."""
    if text is None:
        return {}, None
    try:
        raw = yaml.safe_load(text) or {}
    except yaml.YAMLError as e:
        return {}, f"not valid YAML: {str(e).splitlines()[0]}"
    return (raw, None) if isinstance(raw, dict) else ({}, "not a mapping")


def base_policy(root: Path, ref: str) -> tuple[Config, str, list[str]]:
    """(config, ``policy_changes`` mode, notes) of the ``.rulegen.yaml`` at Git ``ref``.

    A missing file is the defaults (mode ``fail``). A file this rulegen cannot read (not YAML,
    an unknown key of another rulegen version) is compared as the defaults, with a note; its
    ``policy_changes`` still counts when it is ``warn`` or ``fail``, else the mode is ``fail``.

    Raises:
        RulegenError: git failed.
    """
    try:
        text = base_file(root, ref, CONFIG_FILE)
    except UnicodeDecodeError:
        text, why = None, "not UTF-8"
    else:
        why = None
    raw, why = _raw_config(text) if why is None else ({}, why)
    mode = raw.get("policy_changes", "fail")
    mode = mode if mode in ("fail", "warn") else "fail"
    notes = []
    try:
        config = parse_config(raw)
    except RulegenError as e:
        config, why = Config(), why or str(e).split(": ", 1)[-1]
    if why:
        notes.append(f"{CONFIG_FILE} at {ref} could not be read ({why}); the working tree's checks were "
                     "compared with rulegen's defaults")
    return config, mode, notes


def _base_baseline(root: Path, ref: str) -> tuple[bl.Baseline, list[str]]:
    """(the baseline at ``ref``, notes): empty when it has none or it cannot be read (a note
    says so; every entry of the working tree then counts as added)."""
    try:
        text = base_file(root, ref, bl.BASELINE_FILE)
    except UnicodeDecodeError:
        return bl.Baseline(), [f"{bl.BASELINE_FILE} at {ref} is not UTF-8; compared as empty"]
    if text is None:
        return bl.Baseline(), []
    try:
        return bl.parse(text), []
    except RulegenError as e:
        return bl.Baseline(), [f"{bl.BASELINE_FILE} at {ref} could not be read ({str(e).split(': ', 1)[-1]}); "
                               "compared as empty"]


def _key_lines(root: Path) -> dict:
    """Dotted key path (``checks.disable``, ``checks.disable.RG504``, ``conventions.severities``)
    -> 1-based line in the working tree's ``.rulegen.yaml``; a list item is keyed by its value."""
    p = root / CONFIG_FILE
    out: dict = {}
    try:
        node = yamlbound.compose(fs_read.read_text(p, CONFIG_FILE), CONFIG_FILE) if p.is_file() else None
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RulegenError):
        return out

    def walk(n, path: str) -> None:
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                sub = f"{path}.{k.value}" if path else str(k.value)
                out.setdefault(sub, k.start_mark.line + 1)
                walk(v, sub)
        elif isinstance(n, yaml.SequenceNode):
            for item in n.value:
                if isinstance(item, yaml.ScalarNode):
                    out.setdefault(f"{path}.{item.value}", item.start_mark.line + 1)

    walk(node, "")
    return out


def _line(lines: dict, *paths: str) -> int:
    """The line of the first of ``paths`` (or of a parent of it) the file has, else 1."""
    for p in paths:
        parts = p.split(".")
        for n in range(len(parts), 0, -1):
            if ".".join(parts[:n]) in lines:
                return lines[".".join(parts[:n])]
    return 1


def _validate_head(root: Path, config: Config):
    """The working tree's specs under ``rules/`` validated with ``config``, without baseline."""
    folder = root / DEFAULT_SPEC_DIR
    files = find_spec_files([folder]) if folder.is_dir() else []
    return validate([load_file(f, shown_path(f, root)) for f in files], Context(config=config, root=root))


# ---------------------------------------------------------------------------------------------
# Comparing

def _default_severity(code: str) -> str:
    doc = checkdocs.codes().get(code)
    return doc.severity if doc is not None else "error"


def _entry_phrase(k) -> str:
    app, rule, code, subject = k
    return f"{code} on {app}/{rule}" + (f" ({subject})" if subject else f" (every {code} finding of the rule)")


def _config_changes(old: Config, new: Config, lines: dict) -> list[tuple]:
    """``(code or None, line, what, kind, arg)`` per change of the checks from ``old`` (base)
    to ``new`` (head); kind/arg say how to find what it hides: ``("code", c)``, ``("errors",
    c)`` or ``("setting", dotted key)``."""
    out: list[tuple] = []
    for c in sorted(new.disabled - old.disabled):
        out.append((CHECK_DISABLED, _line(lines, f"checks.disable.{c}"), f"check {c} switched off "
                    "(checks.disable)", "code", c))
    for c in sorted(old.disabled - new.disabled):
        out.append((None, _line(lines, "checks.disable"), f"check {c} switched on again (checks.disable)", None, c))
    for c in sorted((set(old.severity_overrides) | set(new.severity_overrides)) - new.disabled - old.disabled):
        default = _default_severity(c)
        a = Severity(old.severity_overrides.get(c, default))
        b = Severity(new.severity_overrides.get(c, default))
        if a is b:
            continue
        where = _line(lines, f"checks.severity.{c}", "checks.severity")
        if b is Severity.WARNING:
            out.append((CHECK_WEAKENED, where, f"check {c} lowered from error to warning (checks.severity)",
                        "errors", c))
        else:
            out.append((None, where, f"check {c} raised from warning to error (checks.severity)", None, c))

    def setting(key: str, weaker: bool, what: str) -> None:
        out.append((SETTING_WEAKENED if weaker else None, _line(lines, key), what,
                    "setting" if weaker else None, key))

    def listed(values) -> str:
        return ", ".join(values)

    if set(old.severities) != set(new.severities):
        allowed = set(new.severities) - set(old.severities)
        weaker = (not new.severities and bool(old.severities)) or (bool(allowed) and bool(old.severities))
        setting("conventions.severities", weaker,
                f"conventions.severities: [{listed(old.severities)}] -> [{listed(new.severities)}]"
                + (" (any severity allowed)" if not new.severities else ""))
    for key in ("require_summary", "require_description"):
        a, b = getattr(old, key), getattr(new, key)
        if a != b:
            setting(f"conventions.{key}", a and not b, f"conventions.{key}: {str(a).lower()} -> {str(b).lower()}")
    if set(old.require_runbook_for) != set(new.require_runbook_for):
        setting("conventions.require_runbook_for", bool(set(old.require_runbook_for) - set(new.require_runbook_for)),
                f"conventions.require_runbook_for: [{listed(old.require_runbook_for)}] -> "
                f"[{listed(new.require_runbook_for)}]")
    for sev in sorted(set(old.require_triage) | set(new.require_triage)):
        a, b = set(old.require_triage.get(sev, ())), set(new.require_triage.get(sev, ()))
        if a != b:
            setting(f"conventions.require_triage.{sev}", bool(a - b),
                    f"conventions.require_triage.{sev}: [{listed(old.require_triage.get(sev, ()))}] -> "
                    f"[{listed(new.require_triage.get(sev, ()))}]")
    if old.duplicate_alert_across_apps != new.duplicate_alert_across_apps:
        setting("duplicate_alert_across_apps", new.duplicate_alert_across_apps == "warning",
                f"duplicate_alert_across_apps: {old.duplicate_alert_across_apps} -> {new.duplicate_alert_across_apps}")
    if old.prometheus_scopes != new.prometheus_scopes:
        # weakens when it hides a duplicate (see compare); none left: every app compared again
        setting("prometheus_scopes", bool(new.prometheus_scopes),
                f"prometheus_scopes: [{listed(sorted(old.prometheus_scopes))}] -> [{listed(sorted(new.prometheus_scopes))}]"
                " (apps of different scopes are not compared for RG412/RG415)")
    if old.allow_html != new.allow_html:
        setting("runbooks.allow_html", new.allow_html,
                f"runbooks.allow_html: {str(old.allow_html).lower()} -> {str(new.allow_html).lower()}"
                + (" (raw HTML in runbook text reaches the site, cleaned instead of escaped)" if new.allow_html else ""))
    a, b = set(old.owners.require_for), set(new.owners.require_for)
    if a != b:
        setting("owners.require_for", bool(a - b), f"owners.require_for: [{listed(old.owners.require_for)}] -> "
                f"[{listed(new.owners.require_for)}]")
    if old.alertmanager_config != new.alertmanager_config:
        setting("alertmanager.config", new.alertmanager_config is None,
                f"alertmanager.config: {old.alertmanager_config or '(none)'} -> "
                f"{new.alertmanager_config or '(none)'}"
                + (" (routing not checked)" if new.alertmanager_config is None else ""))
    if old.alertmanager_config is not None and new.alertmanager_config is not None:
        for key in ("paging_severities", "null_receivers"):
            a, b = getattr(old, key), getattr(new, key)
            if set(a) != set(b):
                # one dropped: a severity no longer must page, or a receiver that pages nobody
                # counts as paging; either way RG953 reports less
                setting(f"alertmanager.{key}", bool(set(a) - set(b)),
                        f"alertmanager.{key}: [{listed(a)}] -> [{listed(b)}]")
    if old.policy_changes != new.policy_changes:
        setting("policy_changes", new.policy_changes == "warn",
                f"policy_changes: {old.policy_changes} -> {new.policy_changes}"
                + (" (counts only once it is on the base branch)" if new.policy_changes == "warn" else ""))
    return out


def _sorted(found) -> list:
    return sorted(found, key=lambda f: (f.file, f.line, f.col, f.code, f.message))


def _changed_specs(root: Path, ref: str) -> set:
    """Paths (relative to ``root``) under ``rules/`` that differ between ``ref`` and the working
    tree, deleted, or not tracked (ignored ones too)."""
    names = _git(root, "diff", "--name-only", "--relative", ref, "--", SPEC_DIR).splitlines()
    names += _git(root, "ls-files", "--others", "--", SPEC_DIR).splitlines()
    return set(names)


def _unbaselined(found: list) -> list:
    """``found`` (findings with the project's baseline applied, :func:`rulegen.baseline.apply`)
    as they were before it: a baselined finding an error again, without its ``(baselined in
    ...)`` note; the RG811 findings of stale entries left out."""
    note = f" (baselined in {bl.BASELINE_FILE})"
    out = []
    for f in found:
        if f.code == "RG811" and f.file == bl.BASELINE_FILE:
            continue
        if f.message.endswith(note) and not f.is_error:
            f = Finding(f.file, f.line, f.col, f.code, Severity.ERROR, f.message[:-len(note)], f.rule)
        out.append(f)
    return out


def _covered(k, found, apps) -> list:
    """The findings of ``found`` that baseline entry ``k`` covers (``apps``: spec file -> app)."""
    return [f for f in found if (fk := bl.key_of(f, apps)) is not None
            and bl.Baseline([k]).covering(fk, {k}) == k]


def _config_hides(kind: str, arg: str, ref_findings: list, head_errors: set) -> list:
    """The findings of ``ref_findings`` a config change hides: ``kind`` ``code`` (check ``arg``
    switched off), ``errors`` (check ``arg`` lowered to warning) or ``setting`` (setting ``arg``
    weakened: the errors of its codes not among ``head_errors``, what the working tree's config
    still reports)."""
    if kind == "code":
        return [f for f in ref_findings if f.code == arg]
    if kind == "errors":
        return [f for f in ref_findings if f.code == arg and f.is_error]
    codes = SETTING_CODES.get(arg, SETTING_CODES.get(arg.rsplit(".", 1)[0], ()))
    return [f for f in ref_findings if f.code in codes and f.is_error
            and (f.file, f.line, f.col, f.code, f.message) not in head_errors]


def compare(root: Path, ref: str, head_config: Config | None = None, loaded=None) -> Report:
    """Every change of the baseline and the check configuration between Git ``ref`` and the
    working tree of the project at ``root`` (see the module docstring), with the findings each
    weakening change hides.

    Args:
        head_config: the working tree's config, when the caller has it.
        loaded: the whole working tree's specs and findings (:func:`rulegen.pipeline.load_project`
            without paths), when the caller has them: when the base config is the same, they
            are not validated again.

    Raises:
        RulegenError: ``ref`` names no commit or git fails, or the working tree's config or
            baseline is invalid (as for ``validate``).
    """
    verify_ref(root, ref)
    old_config, mode, notes = base_policy(root, ref)
    new_config = head_config if head_config is not None else load_config(root)
    old_base, base_notes = _base_baseline(root, ref)
    notes += base_notes
    new_base = bl.load(root) or bl.Baseline()
    report = Report(mode=mode, notes=notes)

    old_keys, new_keys = old_base.keys(), new_base.keys()
    added = [k for k in dict.fromkeys(new_base.entries) if k not in old_keys]
    removed = [k for k in dict.fromkeys(old_base.entries) if k not in new_keys]
    kept = [k for k in dict.fromkeys(new_base.entries) if k in old_keys]
    conf = _config_changes(old_config, new_config, _key_lines(root))
    # a kept entry can only cover more when a spec changed: both sides are judged by the base
    # config, and the policy codes are judged spec by spec
    changed = _changed_specs(root, ref) if kept else set()
    if not (added or removed or conf or changed):
        return report

    ref_findings, app_of = [], {}
    if added or changed or any(c[0] is not None for c in conf):
        if loaded is not None and old_config == new_config:
            ref_findings, app_of = _unbaselined(loaded.findings), {s.file: s.app for s in loaded.specs}
        else:
            reference = _validate_head(root, old_config)     # what the base policy would report
            ref_findings, app_of = reference.findings, {s.file: s.app for s in reference.specs}
    head_errors = set()
    if any(c[3] == "setting" for c in conf):
        head_errors = {(f.file, f.line, f.col, f.code, f.message)
                       for f in _validate_head(root, new_config).findings if f.is_error}

    # scopes that separate no colliding apps (a new provider's own scope) hide nothing: no weakening
    conf = [(None,) + c[1:] if c[4] == "prometheus_scopes" and c[0] is not None
            and not _config_hides(c[3], c[4], ref_findings, head_errors) else c for c in conf]
    grew = []
    for k in added:
        grew.append((k, "baseline entry added: " + _entry_phrase(k), _covered(k, ref_findings, app_of)))
    apps_changed = {app_of[f] for f in changed if f in app_of}
    kept = [k for k in kept if k[0] in apps_changed]
    if kept:
        at_base, _ = validate_base(root, ref, old_config, only=changed)
        base_apps = {s.file: s.app for s in at_base.specs}
        base_errors = [f for f in at_base.findings if f.is_error]
        errors_now = [f for f in ref_findings if f.is_error]
        for k in kept:
            now, before = _covered(k, errors_now, app_of), len(_covered(k, base_errors, base_apps))
            if len(now) > before:
                grew.append((k, f"baseline entry covers {len(now)} error(s), {before} at {ref}: "
                             + _entry_phrase(k), now))
    for k, what, hides in sorted(grew, key=lambda g: new_base.lines.get(g[0], 1)):
        report.changes.append(PolicyChange(BASELINE_GREW, bl.BASELINE_FILE, new_base.lines.get(k, 1), what,
                                           _sorted(hides)))
    for code, line, what, kind, arg in conf:
        if code is None:
            continue
        hides = _config_hides(kind, arg, ref_findings, head_errors)
        report.changes.append(PolicyChange(code, CONFIG_FILE, line, what, _sorted(hides)))
    for k in removed:
        report.changes.append(PolicyChange(None, bl.BASELINE_FILE, 1, "baseline entry removed: " + _entry_phrase(k)))
    for code, line, what, _, _ in conf:
        if code is None:
            report.changes.append(PolicyChange(None, CONFIG_FILE, line, what))
    return report


# ---------------------------------------------------------------------------------------------
# ``rulegen check --base``

def hides_phrase(c: PolicyChange) -> str:
    """``it hides 2 finding(s): A; B`` (at most :data:`SHOWN` named), or ``it hides no finding
    today``."""
    if not c.hides:
        return "it hides no finding today"
    shown = "; ".join(finding_phrase(f) for f in c.hides[:SHOWN])
    more = f"; and {len(c.hides) - SHOWN} more" if len(c.hides) > SHOWN else ""
    return f"it hides {len(c.hides)} finding(s): {shown}{more}"


def findings(report: Report, ref: str, force: bool = False) -> list[Finding]:
    """One finding per weakening change of ``report`` (code RG820-RG823, at the entry or key),
    errors when the base ref's ``policy_changes`` is ``fail`` or ``force``, else warnings."""
    strict = force or report.mode == "fail"
    sev = Severity.ERROR if strict else Severity.WARNING
    why = ("--fail-on-policy-changes" if force and report.mode != "fail"
           else f"policy_changes: {report.mode} at {ref}")
    out = []
    for c in report.weakening:
        out.append(Finding(c.file, c.line, 1, c.code, sev,
                           plain(f"policy change since {ref}: {c.what}; {hides_phrase(c)} ({why}; "
                                 "a reviewer must agree to it, or undo it)")))
    return out
