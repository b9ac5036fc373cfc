"""Bring a team's promtool tests along: ``rulegen import ... --tests FILE...``.

A promtool test file (Prometheus docs, "Unit testing for rules") holds ``rule_files``,
``evaluation_interval``, ``group_eval_order``, ``fuzzy_compare`` and ``tests``, a list of test
groups (``name``, ``interval``, ``input_series``, ``external_labels``, ``external_url``,
``start_timestamp``, ``alert_rule_test``, ``promql_expr_test``).

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

Values are taken as promtool reads them (its test file is decoded by go-yaml v2 into Go
strings, so every scalar where promtool wants a string is the scalar's text as written):
``condition: true``, ``quantile: 0.99``, ``cluster_id: 12345`` in ``input_series``,
``external_labels``, ``exp_labels`` and ``exp_annotations`` (and ``series``, ``values``,
``alertname``, ``expr``, ``labels``, ``histogram``, ``name``, ``external_url``) become the
quoted strings ``"true"``, ``"0.99"``, ``"12345"`` (``0x1F`` stays ``"0x1F"``); an empty value
(``exp_alerts:``, ``exp_labels:``, a label ``x:``) is what promtool makes of it: an empty list
or mapping, an empty string. The test reads the same, so nothing is noted. A finding on an
attached test is shown at the test file's line it came from.

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
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ..findings import Finding, Severity
from ..fs import read as fs_read
from ..fs import yamlbound
from ..spec.testvalues import as_promtool_reads, scalar_text
from ..spec.yamlnodes import plain_token
from .specyaml import _plain, _yaml, dump_text, reload_text

_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_GROUP_KEYS = ("name", "interval", "input_series", "external_labels", "external_url", "start_timestamp",
               "alert_rule_test", "promql_expr_test")
_FILE_SETTINGS = ("evaluation_interval", "group_eval_order", "fuzzy_compare")


def _quoted_text(lines: list[str]):
    """The ``as_text`` of :func:`rulegen.spec.testvalues.as_promtool_reads` for a test file
    read by ruamel.yaml (text ``lines``): the scalar's text as written, double-quoted (null:
    ``""``)."""
    def as_text(container, key, _path):
        v = container[key]
        text = None
        if v is not None:
            try:
                line, col = container.lc.value(key) if isinstance(container, dict) else container.lc.item(key)
                text = plain_token(lines[line][col:]) or None
            except (AttributeError, KeyError, TypeError, ValueError, IndexError):
                text = None
            if text is not None:
                text = re.sub(r"^!\S*\s+", "", text)   # an explicit tag (!!int 5): promtool takes the 5
        return DoubleQuotedScalarString(text if text is not None else scalar_text(v))
    return as_text


def _origins_of(node, path: tuple, display: str, out: dict) -> None:
    """``{spec path: (display, key position, value position)}`` (1-based) of every node under
    the test-file node ``node``, now at spec ``path`` (see :attr:`ImportedSpec.origins`)."""
    if isinstance(node, CommentedMap):
        for k in node:
            try:
                kl, kc = node.lc.key(k)
                vl, vc = node.lc.value(k)
                out[path + (k,)] = (display, (kl + 1, kc + 1), (vl + 1, vc + 1))
            except (AttributeError, KeyError, TypeError, ValueError):
                pass   # a key import made (a test group's derived name)
            _origins_of(node[k], path + (k,), display, out)
    elif isinstance(node, CommentedSeq):
        for i, item in enumerate(node):
            try:
                il, ic = node.lc.item(i)
            except (AttributeError, KeyError, TypeError, ValueError, IndexError):
                continue
            out[path + (i,)] = (display, None, (il + 1, ic + 1))
            _origins_of(item, path + (i,), display, out)


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
    origins: dict[str, dict] = {}   # app -> spec path -> where in a test file
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
        lines = text.split("\n")
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
            gi, ri = next((gi, ri) for gi, g2 in enumerate(data["groups"]) for ri, r in enumerate(g2["rules"])
                          if (r.get("alert") or r.get("record")) in names)
            target = data["groups"][gi]["rules"][ri]
            as_promtool_reads(g, (), _quoted_text(lines), CommentedMap, CommentedSeq)
            out = CommentedMap()
            out["name"] = name or f"{Path(display).name.split('.')[0]} test {i + 1}"
            if name and g.lc.data and "name" in g.lc.data:
                out.lc.add_kv_line_col("name", g.lc.data["name"])
            for k, v in g.items():
                if k == "name":
                    continue
                if k in _GROUP_KEYS:
                    out[k] = v
                    if g.lc.data and k in g.lc.data:
                        out.lc.add_kv_line_col(k, g.lc.data[k])
                else:
                    notes.append(Finding(display, g.lc.key(k)[0] + 1, 1, "RG814", Severity.WARNING,
                                         f"{shown}: key `{k}` has no place in a spec test; not imported",
                                         name or ""))
            if "input_series" not in out:
                out["input_series"] = CommentedSeq()
            tests = target.setdefault("tests", CommentedSeq())
            at = ("groups", gi, "rules", ri, "tests", len(tests))
            origins.setdefault(app, {})[at] = (display, None, (line, doc["tests"].lc.item(i)[1] + 1))
            _origins_of(out, at, display, origins[app])
            tests.append(out)
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
        s.origins.update(origins.get(s.app, {}))
    return notes
