"""Rule groups in, one spec out: the mapping from Prometheus' rule vocabulary to rulegen's.

Per alert: ``alert``, ``expr``, ``for``, ``keep_firing_for`` as they are; the ``severity`` label
becomes ``severity:``, a ``component`` label ``component:``; ``summary`` and ``description``
annotations become ``summary:``/``description:``; every other label and annotation, including
``runbook_url``, stays under ``labels``/``annotations`` (rulegen generates a ``runbook_url`` only
when the spec has none). Recording rules keep ``record``, ``expr``, ``labels``. Groups keep
``name``, ``interval``, ``query_offset``, ``limit``, ``labels``. Since rulegen gives every alert a
``component`` label by default, a spec with an alert that had none says ``component: false``.

What Prometheus would reject (it refuses to load the whole file) is not imported, and always the
same way: the rule, or for a group-level problem the group, is skipped with an ``RG806`` error
at the line of what is wrong. Checked as Prometheus' ``rulefmt`` checks a rule file: a
recording rule name that is not a metric name, an ``expr`` that does not parse as PromQL, a bad
``for``/``keep_firing_for``/``interval``/``query_offset``/``limit``, ``for``, ``keep_firing_for``
or annotations on a recording rule, label or annotation names that are not valid (or
``__name__``), values that are lists or mappings, and alert label or annotation templates that
do not parse (Go ``text/template`` with Prometheus' functions and variables). A rule whose
``expr`` Prometheus reads but rulegen cannot check (too large or deep, ``RG316``) is skipped
the same way, with that code.

Strings keep their source style (quoted, literal block); a plain string that YAML 1.1 reads as a
boolean, number, null or date (``off``, ``5``, ``1e3``) is written double-quoted, so Kubernetes
(YAML 1.1) and Prometheus (YAML 1.2) read the same string. Whatever cannot be carried over is a
note (codes in :mod:`rulegen.importer`), never dropped silently.
"""

from __future__ import annotations

import re

import yaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import (DoubleQuotedScalarString, FoldedScalarString, LiteralScalarString,
                                      ScalarString, SingleQuotedScalarString)

from ..findings import Finding, Severity
from ..promql.syntax import parse as parse_promql, too_large
from ..spec import durations
from ..spec.yamlnodes import plain_token
from ..validate.checks import gotemplate
from ..validate.checks.yamltraps import yaml11_type
from .helmtext import PLACEHOLDER_RE
from .sources import RuleSet, describe

NAME_RE = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
METRIC_NAME_RE = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_RESOLVER = yaml.resolver.Resolver()

#: Indentation of the written spec (ruamel: mapping 2, sequence 4, offset 2).
_IND_GROUP_ITEM, _IND_GROUP_KEY, _IND_RULE_ITEM, _IND_RULE_KEY, _IND_SUB = 2, 4, 6, 8, 10


def styled(value):
    """A string as it should be written: source quoting and literal blocks kept, folded blocks
    and plain multi-line strings made literal blocks, and plain text that YAML 1.1 would read
    as something other than a string (PyYAML's resolver, and the wider set of
    :func:`rulegen.validate.checks.yamltraps.yaml11_type`: ``y``, ``n``, ``1_000``...)
    double-quoted."""
    if isinstance(value, (DoubleQuotedScalarString, SingleQuotedScalarString, LiteralScalarString)):
        return value
    s = str(value)
    if "\n" in s:
        return LiteralScalarString(s) if _literal_ok(s) else DoubleQuotedScalarString(s)
    if isinstance(value, FoldedScalarString) or _RESOLVER.resolve(yaml.ScalarNode, s, (True, False)) != \
            "tag:yaml.org,2002:str" or yaml11_type(s) is not None or s == "" or s != s.strip():
        return DoubleQuotedScalarString(s)
    return s


def _literal_ok(s: str) -> bool:
    if s.startswith((" ", "\n")) or s.endswith("\n\n") or "\t" in s or "\r" in s:
        return False
    if any(ord(c) < 0x20 and c != "\n" or c in "\x85\u2028\u2029\ufeff" for c in s):
        return False
    return all(line == line.rstrip(" ") for line in s.split("\n"))


class _Ctx:
    """Conversion state of one spec: notes, where each source node landed, comments."""

    def __init__(self):
        self.notes: list[Finding] = []
        self.where: dict = {}   # (ruleset index, source path) -> (container, key, indent)

    def note(self, rs: RuleSet, line: int, code: str, msg: str, error: bool = False, rule: str = ""):
        # an unknown line (0) is shown at the rule set's `groups:` line, never as 0:0
        self.notes.append(Finding(rs.source, line if line > 0 else max(rs.line, 1), 1, code,
                                  Severity.ERROR if error else Severity.WARNING, msg, rule))


def _line(node, key=None) -> int:
    try:
        if key is None:
            return node.lc.line + 1
        if isinstance(node, CommentedSeq):
            return node.lc.item(key)[0] + 1
        return node.lc.key(key)[0] + 1
    except (AttributeError, KeyError, TypeError, IndexError):
        return 0


def _source_text(rs: RuleSet, node, key) -> str | None:
    """The text of a plain scalar value as written (``5``, ``1.0``, ``true``)."""
    try:
        ln, col = node.lc.value(key)
    except (AttributeError, KeyError, TypeError):
        return None
    if not 0 <= ln < len(rs.lines):
        return None
    rest = rs.lines[ln][col:]
    tok = plain_token(rest)
    return tok or None


_describe = describe


def _as_string(ctx: _Ctx, rs: RuleSet, node, key, what: str, rule: str):
    """``node[key]`` as a string; a non-string is converted to its source text, with a note.
    Returns None for mappings and lists (not convertible)."""
    v = node[key]
    text = _scalar_text(rs, node, key)
    if text is None or isinstance(v, str):
        return text
    ctx.note(rs, _line(node, key), "RG804",
             f"{what} is {_describe(v)} in the source; imported as the string {text!r}, the text "
             "Prometheus reads (a PrometheusRule must have a string here)", rule=rule)
    return text


def _placeholder(ctx: _Ctx, rs: RuleSet, value, what: str, rule: str, line: int) -> bool:
    """True (with an error note) when ``value`` holds a Helm value action."""
    m = PLACEHOLDER_RE.search(str(value)) if isinstance(value, str) and rs.kind == "helm" else None
    if not m or int(m.group(1)) not in rs.placeholders:
        return False
    for m in PLACEHOLDER_RE.finditer(str(value)):
        if int(m.group(1)) not in rs.placeholders:
            continue
        ln, raw = rs.placeholders[int(m.group(1))]
        ctx.note(rs, ln, "RG802", f"{what} uses `{raw}`, whose value is known only at install time, so "
                 "the rule is not imported; write it out, or import what Helm renders instead "
                 "(`rulegen import CHART_DIR`, with --values/--set as you install it)", error=True, rule=rule)
    return True


def _has_placeholder(v, rs: RuleSet) -> bool:
    """True when ``v`` holds a placeholder of a Helm value action (Helm templates only: in a
    plain file ``__helm_0__`` is just text)."""
    if rs.kind != "helm":
        return False
    if isinstance(v, str):
        return any(int(m.group(1)) in rs.placeholders for m in PLACEHOLDER_RE.finditer(v))
    if isinstance(v, dict):
        return any(_has_placeholder(k, rs) or _has_placeholder(x, rs) for k, x in v.items())
    if isinstance(v, list):
        return any(_has_placeholder(x, rs) for x in v)
    return False


def _first_placeholder(ctx, rs, node, rule: str) -> bool:
    """Report every Helm value action found anywhere in ``node`` (all of them, so that one
    round of fixes is enough), each at its line. True when there was one."""
    stack = [(node, _line(node))]
    found = False
    while stack:
        n, ln = stack.pop(0)
        if isinstance(n, dict):
            for k, v in n.items():
                kl = _line(n, k) or ln
                found |= _placeholder(ctx, rs, k, f"key `{k}`", rule, kl)
                found |= _placeholder(ctx, rs, v, f"`{k}`", rule, kl)
                stack.append((v, kl))
        elif isinstance(n, list):
            stack.extend((x, ln) for x in n)
    return found


def _scalar_text(rs: RuleSet, node, key) -> str | None:
    """``node[key]`` as the string Prometheus reads (numbers and booleans by their source text,
    null as ""), or None for a list or mapping, which Prometheus cannot read as a string."""
    v = node[key]
    if isinstance(v, str):
        return v
    if isinstance(v, (dict, list)):
        return None
    if v is None:
        return ""
    text = _source_text(rs, node, key)
    if text is None or text.startswith(("'", '"')):
        text = str(v).lower() if isinstance(v, bool) else str(v)
    return text


def _map_rejected(rs: RuleSet, node, key: str, templated: bool) -> tuple[int, str] | None:
    """Why Prometheus rejects the labels/annotations mapping ``node[key]``, or None."""
    if key not in node or node[key] is None:
        return None
    src = node[key]
    what = key[:-1]
    if not isinstance(src, dict):
        return _line(node, key), f"`{key}` is {describe(src)}, not a mapping of names to strings"
    for k in src:
        ks = str(k)
        if not NAME_RE.fullmatch(ks) or (key == "labels" and ks == "__name__"):
            why = "is reserved for the metric name" if NAME_RE.fullmatch(ks) else \
                "is not a valid Prometheus name ([a-zA-Z_][a-zA-Z0-9_]*)"
            return _line(src, k), f"{what} name `{ks}` {why}"
        text = _scalar_text(rs, src, k)
        if text is None:
            return _line(src, k), f"{what} `{ks}` is {describe(src[k])}, not a string"
        if templated and "{{" in text:
            bad = [i for i in gotemplate.parse(text).issues if i.kind in ("syntax", "variable", "function")]
            if bad:
                i = bad[0]
                why = i.message if i.kind == "syntax" else f"undefined variable {i.name}" \
                    if i.kind == "variable" else f"function {i.name} not defined"
                return _line(src, k), f"{what} `{ks}` is a template that does not parse: {why}"
    return None


def _duration_rejected(rs: RuleSet, node, key: str, prefix: str = "") -> tuple[int, str] | None:
    if key not in node or node[key] is None:
        return None
    text = _scalar_text(rs, node, key)
    if text is None:
        return _line(node, key), f"{prefix}`{key}` is {describe(node[key])}, not a Prometheus duration"
    if not durations.is_valid(text):
        return _line(node, key), f"{prefix}`{key}` {text!r} is not a Prometheus duration"
    return None


def group_rejected(rs: RuleSet, g) -> tuple[int, str] | None:
    """(line, reason) when Prometheus rejects group ``g`` for a group-level field, else None."""
    for k in ("interval", "query_offset"):
        bad = _duration_rejected(rs, g, k, "group ")
        if bad:
            return bad
    if "limit" in g and g["limit"] is not None:
        v = g["limit"]
        if isinstance(v, bool) or not isinstance(v, int) or v < 0:
            return _line(g, "limit"), f"group `limit` {v!r} is not a whole number >= 0"
    return _map_rejected(rs, g, "labels", templated=False)


def rule_rejected(rs: RuleSet, r, kind: str, name: str, expr: str) -> tuple[int, str] | None:
    """(line, reason) when Prometheus rejects rule ``r`` (as ``rulefmt`` validates a rule file),
    else None. ``expr`` is the expression text."""
    if kind == "record" and not METRIC_NAME_RE.fullmatch(name):
        return _line(r, "record"), f"recording rule name {name!r} is not a valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*)"
    _, err = parse_promql(expr)
    if err is not None:
        return _line(r, "expr"), f"`expr` does not parse as PromQL: {err}"
    for k in ("for", "keep_firing_for"):
        bad = _duration_rejected(rs, r, k)
        if bad:
            return bad
        if kind == "record" and k in r and r[k] is not None and durations.parse_ms(_scalar_text(rs, r, k)) != 0:
            return _line(r, k), f"`{k}` is not allowed on a recording rule"
    if kind == "record" and isinstance(r.get("annotations"), dict) and r["annotations"]:
        return _line(r, "annotations"), "`annotations` are not allowed on a recording rule"
    return _map_rejected(rs, r, "labels", templated=kind == "alert") or (
        _map_rejected(rs, r, "annotations", templated=True) if kind == "alert" else None)


def convert(rulesets: list[RuleSet], app: str) -> tuple[CommentedMap, list[Finding], dict]:
    """The spec data (ruamel round-trip, ready to dump) for ``app`` from ``rulesets``.

    Returns ``(data, notes, where)``; ``where`` maps ``(ruleset index, source path)`` to
    ``(container, key, indent)`` so comments can follow their node (see :func:`place_comments`).
    """
    ctx = _Ctx()
    data = CommentedMap()
    data["app"] = app
    chart = CommentedMap()
    groups = CommentedSeq()
    seen_groups: set = set()
    need_no_component = False
    for si, rs in enumerate(rulesets):
        if rs.chart_name and "name" not in chart:
            chart["name"] = styled(rs.chart_name)
        elif rs.chart_name and chart.get("name") != rs.chart_name:
            ctx.note(rs, 0, "RG808", f"PrometheusRule `{rs.chart_name}` is merged into app `{app}`, whose "
                     f"PrometheusRule is named `{chart['name']}`")
        if rs.chart_namespace and "namespace" not in chart:
            chart["namespace"] = styled(rs.chart_namespace)
        ctx.where[(si, ())] = (data, "app", 0)
        for gi, g in enumerate(rs.groups):
            out = _group(ctx, rs, si, g, (gi,), groups, seen_groups)
            if out is not None:
                need_no_component |= out
    if chart:
        data["chart"] = chart
    if need_no_component:
        data["component"] = False
        data.move_to_end("component")
        if "chart" in data:
            data.move_to_end("chart")
    data["groups"] = groups
    return data, ctx.notes, ctx.where


def _group(ctx: _Ctx, rs: RuleSet, si: int, g, gpath: tuple, groups: CommentedSeq, seen: set) -> bool | None:
    gl = _line(rs.groups, gpath[0])
    if not isinstance(g, CommentedMap):
        ctx.note(rs, gl, "RG806", "a rule group must be a mapping with `name` and `rules`; skipped", error=True)
        return None
    name = g.get("name")
    if not isinstance(name, str) or not name:
        ctx.note(rs, gl, "RG806", "rule group without a `name`; skipped (Prometheus rejects it too)", error=True)
        return None
    if _placeholder(ctx, rs, name, "the group name", name, _line(g, "name")):
        return None
    if _has_placeholder({k: v for k, v in g.items() if k != "rules"}, rs):
        _first_placeholder(ctx, rs, {k: v for k, v in g.items() if k != "rules"}, name)
        return None
    bad = group_rejected(rs, g)
    if bad:
        ctx.note(rs, bad[0], "RG806", f"group `{name}` skipped: {bad[1]} (Prometheus rejects it too)",
                 error=True, rule=name)
        return None
    out = CommentedMap()
    final = name
    n = 2
    while final in seen:
        final = f"{name}-{n}"
        n += 1
    if final != name:
        ctx.note(rs, _line(g, "name"), "RG808", f"group `{name}` appears twice in app; the second is "
                 f"named `{final}` (a PrometheusRule cannot hold two groups with one name)", rule=name)
    seen.add(final)
    out["name"] = styled(name if final == name else final)
    idx = len(groups)
    ctx.where[(si, gpath)] = (groups, idx, _IND_GROUP_ITEM)
    ctx.where[(si, gpath + ("name",))] = (out, "name", _IND_GROUP_KEY)
    for k in ("interval", "query_offset"):
        if k in g and g[k] is not None:
            out[k] = styled(_as_string(ctx, rs, g, k, f"group `{k}`", name))
            ctx.where[(si, gpath + (k,))] = (out, k, _IND_GROUP_KEY)
    if "limit" in g and g["limit"] is not None:
        out["limit"] = int(g["limit"])
        ctx.where[(si, gpath + ("limit",))] = (out, "limit", _IND_GROUP_KEY)
    glabels = _str_map(ctx, rs, si, g, "labels", gpath, name, out, _IND_GROUP_KEY, _IND_GROUP_KEY + 2)
    if glabels:
        out["labels"] = glabels
    for k in g:
        if k not in ("name", "interval", "query_offset", "limit", "labels", "rules"):
            ctx.note(rs, _line(g, k), "RG805", f"group key `{k}` has no place in the spec; not imported", rule=name)
    rules = CommentedSeq()
    no_component = False
    src_rules = g.get("rules")
    if src_rules is None or src_rules == []:
        ctx.note(rs, _line(g, "rules") or gl, "RG805", f"group `{name}` has no rules (it evaluates nothing); a "
                 "spec group needs at least one, so it is not imported", rule=name)
        return None
    if not isinstance(src_rules, list):
        ctx.note(rs, _line(g, "rules") or gl, "RG806", f"group `{name}`: `rules` is not a list; skipped",
                 error=True, rule=name)
        return None
    for ri, r in enumerate(src_rules):
        res = _rule(ctx, rs, si, r, gpath + ("rules", ri), rules, src_rules)
        if res is not None:
            no_component |= res
    if not rules:
        ctx.note(rs, gl, "RG806", f"group `{name}` has no rule left to import; skipped", error=True, rule=name)
        return None
    out["rules"] = rules
    ctx.where[(si, gpath + ("rules",))] = (out, "rules", _IND_GROUP_KEY)
    groups.append(out)
    return no_component


def _str_map(ctx: _Ctx, rs: RuleSet, si: int, node, key: str, path: tuple, rule: str, parent_out,
             key_indent: int, sub_indent: int, skip=()) -> CommentedMap | None:
    """A labels/annotations mapping with string values; bad names dropped with a note."""
    if key not in node or node[key] is None:
        return None
    src = node[key]
    if not isinstance(src, dict):
        ctx.note(rs, _line(node, key), "RG806", f"`{key}` must be a mapping of names to strings; not imported",
                 error=True, rule=rule)
        return None
    out = CommentedMap()
    for k, v in src.items():
        if k in skip:
            continue
        ks = str(k)
        if not NAME_RE.fullmatch(ks):
            ctx.note(rs, _line(src, k), "RG806", f"{key[:-1]} name `{ks}` is not a valid Prometheus name "
                     "([a-zA-Z_][a-zA-Z0-9_]*); not imported (Prometheus rejects it too)", error=True, rule=rule)
            continue
        s = _as_string(ctx, rs, src, k, f"{key[:-1]} `{ks}`", rule)
        if s is None:
            ctx.note(rs, _line(src, k), "RG806", f"{key[:-1]} `{ks}` is {_describe(v)}, not a string; "
                     "not imported", error=True, rule=rule)
            continue
        out[ks] = styled(src[k] if isinstance(src[k], str) else s)
        ctx.where[(si, path + (key, k))] = (out, ks, sub_indent)
    ctx.where[(si, path + (key,))] = (parent_out, key, key_indent)
    return out


_ALERT_KEYS = ("alert", "expr", "for", "keep_firing_for", "labels", "annotations")
_RECORD_KEYS = ("record", "expr", "labels")


def _lift(ctx: _Ctx, rs: RuleSet, si: int, rpath: tuple, name: str, out, src: dict, key: str,
          specials: tuple, what: str) -> None:
    """Move the ``specials`` of the rule's ``src`` map (its ``labels`` or ``annotations``) to
    spec keys of their own (``severity:``, ``summary:``, ...), remembering where they came from."""
    for special in specials:
        if special in src:
            v = _as_string(ctx, rs, src, special, f"{what} `{special}`", name)
            if v is None:
                continue
            out[special] = styled(src[special] if isinstance(src[special], str) else v)
            ctx.where[(si, rpath + (key, special))] = (out, special, _IND_RULE_KEY)


def _rule(ctx: _Ctx, rs: RuleSet, si: int, r, rpath: tuple, rules: CommentedSeq, src_rules) -> bool | None:
    rl = _line(src_rules, rpath[-1])
    if not isinstance(r, CommentedMap):
        ctx.note(rs, rl, "RG806", "a rule must be a mapping (alert or record, expr, ...); skipped", error=True)
        return None
    kind = "alert" if "alert" in r else "record" if "record" in r else None
    if kind is None or ("alert" in r and "record" in r):
        ctx.note(rs, rl, "RG806", "a rule needs exactly one of `alert` and `record`; skipped", error=True)
        return None
    name = _as_string(ctx, rs, r, kind, f"the {kind} name", "")
    if not name:
        ctx.note(rs, rl, "RG806", f"`{kind}` has no name; skipped", error=True)
        return None
    if _has_placeholder(r, rs):
        _first_placeholder(ctx, rs, r, name)
        return None
    if "expr" not in r or r["expr"] in (None, ""):
        ctx.note(rs, rl, "RG806", f"{kind} `{name}` has no `expr`; skipped (Prometheus rejects it too)",
                 error=True, rule=name)
        return None
    expr = _scalar_text(rs, r, "expr")
    if expr is None:
        ctx.note(rs, _line(r, "expr"), "RG806", f"{kind} `{name}` skipped: `expr` is {describe(r['expr'])}, not "
                 "text (Prometheus rejects it too)", error=True, rule=name)
        return None
    big = too_large(expr)
    if big:  # Prometheus reads it; rulegen cannot check it (RG316, rulegen.validate.checks.promql)
        ctx.note(rs, _line(r, "expr"), "RG316", f"{kind} `{name}` skipped: {big}", error=True, rule=name)
        return None
    bad = rule_rejected(rs, r, kind, name, expr)
    if bad:
        ctx.note(rs, bad[0], "RG806", f"{kind} `{name}` skipped: {bad[1]} (Prometheus rejects it too)",
                 error=True, rule=name)
        return None
    expr = _as_string(ctx, rs, r, "expr", "`expr`", name)
    out = CommentedMap()
    out[kind] = styled(r[kind] if isinstance(r[kind], str) else name)
    out["expr"] = styled(r["expr"] if isinstance(r["expr"], str) else expr)
    idx = len(rules)
    ctx.where[(si, rpath)] = (rules, idx, _IND_RULE_ITEM)
    ctx.where[(si, rpath + (kind,))] = (out, kind, _IND_RULE_KEY)
    ctx.where[(si, rpath + ("expr",))] = (out, "expr", _IND_RULE_KEY)
    allowed = _ALERT_KEYS if kind == "alert" else _RECORD_KEYS
    for k in r:
        if k not in allowed:
            extra = " (Prometheus allows it on alerting rules only; here it is empty or zero, so it has " \
                "no effect)" if k in _ALERT_KEYS else ""
            ctx.note(rs, _line(r, k), "RG805", f"`{k}` on {kind} `{name}` has no place in the spec{extra}; "
                     "not imported", rule=name)
    if kind == "alert":
        for k in ("for", "keep_firing_for"):
            if k in r and r[k] is not None:
                v = _as_string(ctx, rs, r, k, f"`{k}`", name)
                out[k] = styled(r[k] if isinstance(r[k], str) else v)
                ctx.where[(si, rpath + (k,))] = (out, k, _IND_RULE_KEY)
    labels = _str_map(ctx, rs, si, r, "labels", rpath, name, out, _IND_RULE_KEY, _IND_SUB,
                      skip=("severity", "component") if kind == "alert" else ())
    no_component = False
    if kind == "alert":
        src_labels = r.get("labels") if isinstance(r.get("labels"), dict) else {}
        _lift(ctx, rs, si, rpath, name, out, src_labels, "labels", ("severity", "component"), "label")
        if "component" not in src_labels:
            no_component = True
    if labels:
        out["labels"] = labels
    elif (si, rpath + ("labels",)) in ctx.where:
        del ctx.where[(si, rpath + ("labels",))]
    if kind == "alert":
        ann = _str_map(ctx, rs, si, r, "annotations", rpath, name, out, _IND_RULE_KEY, _IND_SUB,
                       skip=("summary", "description"))
        src_ann = r.get("annotations") if isinstance(r.get("annotations"), dict) else {}
        _lift(ctx, rs, si, rpath, name, out, src_ann, "annotations", ("summary", "description"), "annotation")
        if ann:
            out["annotations"] = ann
        elif (si, rpath + ("annotations",)) in ctx.where:
            del ctx.where[(si, rpath + ("annotations",))]
    rules.append(out)
    return no_component if kind == "alert" else False


def place_comments(rulesets: list[RuleSet], where: dict, data: CommentedMap) -> list[Finding]:
    """Attach each source comment to the output node its source node became (or the nearest
    enclosing one that was kept). Returns notes for comments with nowhere to go."""
    notes = []
    before: dict = {}
    eol: dict = {}
    top: list = []
    for si, rs in enumerate(rulesets):
        for path, c in sorted(rs.comments.items(), key=lambda kv: [str(x) for x in kv[0]]):
            if path == ():
                top.extend(c["before"])
                continue
            p = path
            exact = True
            while p and (si, p) not in where:
                p = p[:-1]
                exact = False
            if not p:
                top.extend(c["before"] + c["eol"])
                continue
            target = where[(si, p)]
            key = (id(target[0]), target[1])
            before.setdefault(key, (target, []))[1].extend(c["before"])
            if exact and not isinstance(target[0], CommentedSeq):
                eol.setdefault(key, (target, []))[1].extend(c["eol"])
            else:
                before[key][1].extend(c["eol"])
    for (target, texts) in before.values():
        if texts:
            container, key, indent = target
            container.yaml_set_comment_before_after_key(key, before="\n".join(_bare(t) for t in texts), indent=indent)
    for (target, texts) in eol.values():
        if texts:
            container, key, _ = target
            container.yaml_add_eol_comment("  ".join(texts), key)
    data._rulegen_top = [_bare(t) for t in top]  # read by the writer, after the schema line
    return notes


def _bare(t: str) -> str:
    """Comment text without its ``#`` and one following space (ruamel adds ``# ``)."""
    t = t[1:] if t.startswith("#") else t
    return t[1:] if t.startswith(" ") else t
