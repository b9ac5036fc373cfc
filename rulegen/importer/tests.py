"""Bring a team's promtool tests along: ``rulegen import ... --tests FILE...``.

A promtool test file (Prometheus docs, "Unit testing for rules") holds ``rule_files``,
``evaluation_interval``, ``group_eval_order``, ``fuzzy_compare`` and ``tests``, a list of test
groups (``name``, ``interval``, ``input_series``, ``external_labels``, ``external_url``,
``alert_rule_test``, ``promql_expr_test``).

Each test group is attached to the spec rules it exercises, so ``rulegen test`` runs it
against what the generated chart renders (promtool loads the whole app's rules, so a group
that exercises several rules of one app needs no more than one place):

* the rules it exercises are the ``alertname`` of each ``alert_rule_test`` and the recording
  rules whose names appear in each ``promql_expr_test`` ``expr``;
* when they all belong to one imported app, the group goes under the first of them (in spec
  order) as one of its ``tests``, with every field as written (``alertname`` and ``expr``
  kept); a group without ``name`` gets ``<file stem> test <n>`` (the spec needs one,
  promtool does not);
* the file's ``evaluation_interval``, ``group_eval_order`` and ``fuzzy_compare`` become the
  app's ``promtool:`` settings. ``rule_files`` is not needed: rulegen renders the app's rules.

``RG814`` (warning) names a test group that cannot be attached and what to do: it names no
imported rule, or it reads rules of several apps (import them into one with ``--app``, or
split the group); also a test-file key with no place in the spec, and settings that differ
between two files attached to one app (the first is kept). ``RG815`` (error): a test file
cannot be read (not YAML, not a promtool test file).
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..findings import Finding, Severity
from ..fs import read as fs_read
from ..fs import yamlbound
from .specyaml import _plain, _yaml, dump_text, reload_text

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_GROUP_KEYS = ("name", "interval", "input_series", "external_labels", "external_url", "alert_rule_test",
               "promql_expr_test")
_FILE_SETTINGS = ("evaluation_interval", "group_eval_order", "fuzzy_compare")


def _line_of(node, default: int = 1) -> int:
    try:
        return node.lc.line + 1
    except AttributeError:
        return default


def _exercised(group: dict, records: set) -> list[str]:
    """Rule names a test group exercises, in order: alertnames, then recording rules read
    by its PromQL tests."""
    out: list[str] = []
    for a in group.get("alert_rule_test") or []:
        if isinstance(a, dict) and isinstance(a.get("alertname"), str):
            out.append(a["alertname"])
    for p in group.get("promql_expr_test") or []:
        if isinstance(p, dict) and isinstance(p.get("expr"), str):
            out += [n for n in _NAME.findall(re.sub(r'"(?:[^"\\]|\\.)*"', "", p["expr"])) if n in records]
    return list(dict.fromkeys(out))


def _nearest(apps: list, names: list, display: str, specs, where: dict) -> list:
    """Of ``apps`` (each defining some of the rule ``names`` a test group exercises), the one
    that defines all of them and was imported from the folder nearest the test file
    ``display`` (the most leading folders in common): the same rules imported once per
    provider folder (``aws/node.yml``, ``gcp/node.yml``, see :mod:`.scopes`) take the tests
    beside them (``aws/node.test.yml``). ``apps`` unchanged when no single one is nearest."""
    here = PurePosixPath(display).parent.parts
    whole = [a for a in apps if all(any(x == a for x, _ in where.get(n, [])) for n in names)]
    sources = {s.app: s.sources for s in specs}

    def common(src: str) -> int:
        n = 0
        for x, y in zip(here, PurePosixPath(src.removesuffix(" (rendered)")).parent.parts):
            if x != y:
                break
            n += 1
        return n
    depth = {a: max((common(src) for src in sources.get(a, [])), default=0) for a in whole}
    best = max(depth.values(), default=0)
    nearest = [a for a in whole if depth[a] == best]
    return nearest if len(nearest) == 1 and best > 0 else apps


# Over 80 lines on purpose: the tests' groups are matched to the specs, then written into them,
# in one pass that keeps the notes in source order.
def attach(test_files: list[tuple[Path, str]], specs) -> list[Finding]:
    """Attach the test groups of ``test_files`` (``(path, display)``) to ``specs``
    (:class:`rulegen.importer.ImportedSpec`, changed in place: text and data). Returns the
    notes (see the module docstring)."""
    notes: list[Finding] = []
    where: dict[str, list[tuple[str, str]]] = {}    # rule name -> [(app, kind)]
    records: set = set()
    for s in specs:
        for g in s.data.get("groups", []):
            for r in g.get("rules", []):
                kind = "alert" if "alert" in r else "record"
                where.setdefault(r[kind], []).append((s.app, kind))
                if kind == "record":
                    records.add(r[kind])
    docs = {s.app: reload_text(s.text) for s in specs}
    touched: set = set()
    settings: dict[str, dict] = {}
    for path, display in test_files:
        try:
            text = fs_read.read_text(path, display)
            yamlbound.check_text(text, display)
            doc = _yaml().load(text)
        except fs_read.InputRefused as e:  # a FIFO, over the size limit, aliases expanding too far
            notes.append(Finding(display, 1, 1, e.code, Severity.ERROR, e.reason))
            continue
        except Exception as e:  # noqa: BLE001 - any reading error is reported
            notes.append(Finding(display, 1, 1, "RG815", Severity.ERROR,
                                 f"cannot read the promtool test file: {str(e).splitlines()[0]}"))
            continue
        if not isinstance(doc, CommentedMap) or not isinstance(doc.get("tests"), CommentedSeq):
            notes.append(Finding(display, 1, 1, "RG815", Severity.ERROR,
                                 "not a promtool test file (no `tests:` list of test groups)"))
            continue
        for k in doc:
            if k not in ("rule_files", "tests") + _FILE_SETTINGS:
                notes.append(Finding(display, doc.lc.key(k)[0] + 1, 1, "RG814", Severity.WARNING,
                                     f"test-file key `{k}` has no place in the spec; not imported"))
        file_apps: set = set()
        for i, g in enumerate(doc["tests"]):
            line = doc["tests"].lc.item(i)[0] + 1
            if not isinstance(g, CommentedMap):
                notes.append(Finding(display, line, 1, "RG814", Severity.WARNING,
                                     f"test group {i + 1} is not a mapping; not imported"))
                continue
            name = g.get("name") if isinstance(g.get("name"), str) and g.get("name") else None
            shown = f"test group `{name}`" if name else f"test group {i + 1}"
            names = _exercised(g, records)
            apps = sorted({a for n in names for a, _ in where.get(n, [])})
            if not names or not apps:
                notes.append(Finding(display, line, 1, "RG814", Severity.WARNING,
                                     f"{shown} names no imported rule (no `alertname` of an imported alert, no "
                                     "recording rule in a `promql_expr_test` expr); not attached. Add the "
                                     "`alertname`, or import the rules it tests with it", name or ""))
                continue
            if len(apps) > 1:
                apps = _nearest(apps, names, display, specs, where)
            if len(apps) > 1:
                notes.append(Finding(display, line, 1, "RG814", Severity.WARNING,
                                     f"{shown} reads rules of several apps ({', '.join(apps)}: "
                                     f"{', '.join(names)}); not attached. Import those rules into one app "
                                     "(--app), or split the group into one per app", name or ""))
                continue
            app = apps[0]
            data = docs[app]
            target = next(r for g2 in data["groups"] for r in g2["rules"]
                          if (r.get("alert") or r.get("record")) in names)
            out = CommentedMap()
            out["name"] = name or f"{Path(display).name.split('.')[0]} test {i + 1}"
            for k, v in g.items():
                if k == "name":
                    continue
                if k in _GROUP_KEYS:
                    out[k] = v
                else:
                    notes.append(Finding(display, g.lc.key(k)[0] + 1, 1, "RG814", Severity.WARNING,
                                         f"{shown}: key `{k}` has no place in a spec test; not imported",
                                         name or ""))
            if "input_series" not in out:
                out["input_series"] = CommentedSeq()
            target.setdefault("tests", CommentedSeq()).append(out)
            touched.add(app)
            file_apps.add(app)
        for app in file_apps:
            for k in _FILE_SETTINGS:
                if k not in doc:
                    continue
                have = settings.setdefault(app, {})
                if k in have and have[k] != doc[k]:
                    notes.append(Finding(display, doc.lc.key(k)[0] + 1, 1, "RG814", Severity.WARNING,
                                         f"`{k}` {doc[k]!r} differs from {have[k]!r} of another test file of app "
                                         f"`{app}`; the first is kept (import the files into separate apps to "
                                         "keep both)"))
                    continue
                have[k] = doc[k]
    for s in specs:
        if s.app not in touched:
            continue
        data = docs[s.app]
        if settings.get(s.app):
            block = CommentedMap()
            for k in _FILE_SETTINGS:
                if k in settings[s.app]:
                    block[k] = settings[s.app][k]
            keys = list(data.keys())
            data.insert(keys.index("groups"), "promtool", block)
        s.text = dump_text(data)
        s.data = _plain(data)
    return notes
