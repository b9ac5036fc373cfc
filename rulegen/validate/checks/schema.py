"""Spec schema (JSON Schema draft 2020-12, shipped as ``rulegen/spec/schema.json``).

Codes:

* ``RG201`` unknown key (with "did you mean" for near misses). Bad: ``severty: critical``.
* ``RG202`` wrong type. Bad: ``for: 5`` (a number), ``labels: [a]``.
* ``RG203`` required field missing. Bad: an alert without ``expr``.
* ``RG204`` value not allowed (pattern, enum, length). Bad: ``app: My App``.
* ``RG205`` a rule is neither an alert nor a recording rule, or both.
* ``RG302`` duration not in Prometheus syntax. Bad: ``for: 1.5m``, ``for: "90"``, ``for: 5 m``.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
from typing import TYPE_CHECKING

from ...findings import Severity
from ...spec import SCHEMA_PATH
from ...spec.durations import hint

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

ID = "schema"


@functools.cache
def schema() -> dict:
    """The spec schema as a dict."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.cache
def _validator(ref: str | None = None) -> Draft202012Validator:
    s = schema()
    if ref is not None:
        s = {"$ref": f"#/$defs/{ref}", "$defs": s["$defs"]}
    from jsonschema import Draft202012Validator
    return Draft202012Validator(s)


@functools.cache
def _fast_schema() -> dict | None:
    """The published schema with one change for speed: a rule is checked against ``alert``
    when it has an ``alert`` key and against ``record`` when it has a ``record`` key, instead
    of against both (``oneOf``). Rules with both or neither key are left to :func:`_kinds`
    (RG205). Same findings, about half the work on rules. None when schema.json changed shape."""
    s = json.loads(json.dumps(schema()))
    rule = s["$defs"]["rule"]
    if rule.get("oneOf") == [{"$ref": "#/$defs/alert"}, {"$ref": "#/$defs/record"}]:
        del rule["oneOf"]
        rule["if"] = {"required": ["alert", "record"]}
        rule["then"] = True
        rule["else"] = {
            "if": {"required": ["alert"]}, "then": {"$ref": "#/$defs/alert"},
            "else": {"if": {"required": ["record"]}, "then": {"$ref": "#/$defs/record"}},
        }
        return s
    return None


@functools.cache
def _fast_validator() -> Draft202012Validator:
    from jsonschema import Draft202012Validator
    return Draft202012Validator(_fast_schema())


# A yes/no pre-check compiled from the schema: most specs are valid, and proving it with plain
# closures is ~20x cheaper than jsonschema's iter_errors (which also costs ~0.15 s of imports).
# It implements the keywords schema.json uses with jsonschema's semantics (types as jsonschema's
# draft 2020-12 type checker sees them, bool never a number, re.search for patterns, len() for
# lengths); a schema using any other keyword is not compiled and jsonschema does all the work.
# A document it does not pass goes to jsonschema, which produces the findings as before.

class _Unsupported(Exception):
    pass


_ANNOTATIONS = {"description", "title", "$schema", "$id", "$comment", "examples", "default", "$defs",
                "deprecated", "readOnly", "writeOnly"}


def _is_type(x, t: str) -> bool:
    if t == "string":
        return isinstance(x, str)
    if t == "object":
        return isinstance(x, dict)
    if t == "array":
        return isinstance(x, list)
    if t == "boolean":
        return isinstance(x, bool)
    if t == "null":
        return x is None
    if t == "number":
        return isinstance(x, (int, float)) and not isinstance(x, bool)
    if t == "integer":
        return (isinstance(x, int) and not isinstance(x, bool)) or (isinstance(x, float) and x.is_integer())
    raise _Unsupported(t)


def _const_equal(x, c) -> bool:
    if x is c:
        return True
    if isinstance(x, str) or isinstance(c, str):
        return x == c
    if isinstance(x, bool) or isinstance(c, bool):
        return isinstance(x, bool) and isinstance(c, bool) and x == c
    if isinstance(x, (list, dict)):
        return False
    return x == c


def _compile(node, root: dict, refs: dict):
    """A function ``data -> bool`` (True: valid) for schema ``node``; raises _Unsupported."""
    if node is True:
        return lambda x: True
    if node is False:
        return lambda x: False
    if not isinstance(node, dict):
        raise _Unsupported(repr(node))
    checks = []
    for key, val in node.items():
        if key in _ANNOTATIONS or key in ("then", "else"):
            continue
        if key == "type":
            types = val if isinstance(val, list) else [val]
            for t in types:
                _is_type(None, t)  # unknown type names raise
            checks.append(lambda x, types=types: any(_is_type(x, t) for t in types))
        elif key == "$ref":
            if not isinstance(val, str) or not val.startswith("#/$defs/") or "/" in val[8:] or "~" in val:
                raise _Unsupported(val)
            name = val[8:]
            if name not in root.get("$defs", {}):
                raise _Unsupported(val)
            if name not in refs:
                refs[name] = None
                refs[name] = _compile(root["$defs"][name], root, refs)
            checks.append(lambda x, name=name: refs[name](x))
        elif key == "properties":
            props = {k: _compile(v, root, refs) for k, v in val.items()}
            checks.append(lambda x, props=props: not isinstance(x, dict) or all(
                f(x[k]) for k, f in props.items() if k in x))
        elif key == "additionalProperties":
            if "patternProperties" in node:
                raise _Unsupported(key)
            known = set(node.get("properties", {}))
            f = _compile(val, root, refs)
            checks.append(lambda x, f=f, known=known: not isinstance(x, dict) or all(
                f(v) for k, v in x.items() if k not in known))
        elif key == "required":
            req = list(val)
            checks.append(lambda x, req=req: not isinstance(x, dict) or all(k in x for k in req))
        elif key == "items":
            if "prefixItems" in node:
                raise _Unsupported(key)
            f = _compile(val, root, refs)
            checks.append(lambda x, f=f: not isinstance(x, list) or all(f(v) for v in x))
        elif key == "propertyNames":
            f = _compile(val, root, refs)
            checks.append(lambda x, f=f: not isinstance(x, dict) or all(f(k) for k in x))
        elif key == "pattern":
            rx = re.compile(val)
            checks.append(lambda x, rx=rx: not isinstance(x, str) or rx.search(x) is not None)
        elif key == "minLength":
            checks.append(lambda x, n=val: not isinstance(x, str) or len(x) >= n)
        elif key == "maxLength":
            checks.append(lambda x, n=val: not isinstance(x, str) or len(x) <= n)
        elif key == "minItems":
            checks.append(lambda x, n=val: not isinstance(x, list) or len(x) >= n)
        elif key == "minimum":
            checks.append(lambda x, n=val: not _is_type(x, "number") or x >= n)
        elif key == "const":
            if isinstance(val, (list, dict)):
                raise _Unsupported(key)
            checks.append(lambda x, c=val: _const_equal(x, c))
        elif key == "enum":
            if any(isinstance(v, (list, dict)) for v in val):
                raise _Unsupported(key)
            checks.append(lambda x, vals=list(val): any(_const_equal(x, c) for c in vals))
        elif key == "not":
            f = _compile(val, root, refs)
            checks.append(lambda x, f=f: not f(x))
        elif key == "oneOf":
            fs = [_compile(v, root, refs) for v in val]
            checks.append(lambda x, fs=fs: sum(1 for f in fs if f(x)) == 1)
        elif key == "anyOf":
            fs = [_compile(v, root, refs) for v in val]
            checks.append(lambda x, fs=fs: any(f(x) for f in fs))
        elif key == "allOf":
            fs = [_compile(v, root, refs) for v in val]
            checks.append(lambda x, fs=fs: all(f(x) for f in fs))
        elif key == "if":
            fi = _compile(val, root, refs)
            ft = _compile(node.get("then", True), root, refs)
            fe = _compile(node.get("else", True), root, refs)
            checks.append(lambda x, fi=fi, ft=ft, fe=fe: ft(x) if fi(x) else fe(x))
        else:
            raise _Unsupported(key)
    if not checks:
        return lambda x: True
    if len(checks) == 1:
        return checks[0]
    return lambda x: all(c(x) for c in checks)


@functools.cache
def _precheck():
    """The compiled pre-check of the fast schema, or None when it cannot be compiled."""
    s = _fast_schema()
    if s is None:
        return None
    try:
        return _compile(s, s, {})
    except (_Unsupported, re.error):
        return None


def _kinds(lf):
    """RG205 for every rule that has both ``alert`` and ``record``, or neither."""
    groups = lf.data.get("groups") if isinstance(lf.data, dict) else None
    if not isinstance(groups, list):
        return
    for gi, g in enumerate(groups):
        rules = g.get("rules") if isinstance(g, dict) else None
        if not isinstance(rules, list):
            continue
        for ri, r in enumerate(rules):
            if isinstance(r, dict) and ("alert" in r) == ("record" in r):
                yield from _rule_errors(lf, r, ("groups", gi, "rules", ri))


def _rule_name(data, path) -> str:
    try:
        if len(path) >= 4 and path[0] == "groups" and path[2] == "rules":
            r = data["groups"][path[1]]["rules"][path[3]]
            return r.get("alert") or r.get("record") or ""
    except (KeyError, IndexError, TypeError, AttributeError):
        pass
    return ""


def check_file(lf, ctx):
    """Validate ``lf.data`` against the schema, reporting each error at its own position."""
    data = lf.data
    if _fast_schema() is None:  # schema.json changed shape
        yield from _errors(lf, data, _validator(), ())
        return
    pre = _precheck()
    if pre is not None and pre(data):
        findings = list(_kinds(lf))  # valid: jsonschema would report nothing
    else:
        findings = list(_errors(lf, data, _fast_validator(), ())) + list(_kinds(lf))
    yield from sorted(findings, key=lambda f: (f.line, f.col, f.code))


def _errors(lf, instance, validator, base):
    errors = sorted(validator.iter_errors(instance), key=lambda e: [str(p) for p in e.absolute_path])
    for e in errors:
        path = base + tuple(e.absolute_path)
        rule = _rule_name(lf.data, path)
        if e.validator == "oneOf" and isinstance(e.instance, dict) and _is_rule_path(path):
            yield from _rule_errors(lf, e.instance, path)
            continue
        yield _one(lf, e, path, rule)


def _is_rule_path(path) -> bool:
    return len(path) == 4 and path[0] == "groups" and path[2] == "rules"


def _rule_errors(lf, inst, path):
    rule = inst.get("alert") or inst.get("record") or ""
    has_a, has_r = "alert" in inst, "record" in inst
    if has_a == has_r:
        what = "both `alert` and `record`" if has_a else "neither `alert` nor `record`"
        yield lf.finding(path, "RG205", f"a rule has {what}; an alerting rule has `alert:`, a "
                         "recording rule has `record:`", rule=str(rule))
        return
    kind = "alert" if has_a else "record"
    errs = list(_validator(kind).iter_errors(inst))
    for e in errs:
        yield _one(lf, e, path + tuple(e.absolute_path), str(rule))


def _one(lf, e, path, rule):
    v = e.validator
    if v == "additionalProperties":
        allowed = sorted((e.schema.get("properties") or {}).keys())
        extra = sorted(set(e.instance) - set(allowed)) if isinstance(e.instance, dict) else []
        key = extra[0] if extra else "?"
        near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        tip = f"did you mean `{near[0]}`?" if near else f"allowed keys here: {', '.join(allowed)}"
        return lf.finding(path + (key,), "RG201", f"unknown key `{key}`; {tip}", rule=rule, key=True)
    if v == "required":
        missing = e.message.split("'")[1] if "'" in e.message else e.message
        return lf.finding(path, "RG203", f"`{missing}` is required here", rule=rule, key=True)
    if v == "type":
        want = e.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        got = _json_type(e.instance)
        extra = ""
        if (want == "string" and got == "number"
                and e.schema.get("description", "").startswith("Prometheus duration")):
            # `for: 90` -> say which duration to write, not just "quote it" (which fails next)
            written = lf.source_token(path) or _yaml_text(e.instance)
            return lf.finding(path, "RG302", f"`{_last(path)}`: {written} is a number, not a Prometheus "
                              f"duration; {hint(written)}", rule=rule)
        if want == "string" and got in ("number", "boolean", "null"):
            written = lf.source_token(path) or _yaml_text(e.instance)
            if written != _yaml_text(e.instance) and got == "number":
                extra = f" (YAML reads {written} as the number {_yaml_text(e.instance)}); quote it: \"{written}\""
            else:
                extra = f"; quote it: \"{written}\""
        return lf.finding(path, "RG202", f"`{_last(path)}` must be a {want}, not a {got}{extra}",
                          rule=rule)
    if v == "pattern" and e.schema.get("description", "").startswith("Prometheus duration"):
        return lf.finding(path, "RG302", f"`{_last(path)}`: {e.instance!r} is not a Prometheus "
                          f"duration; {hint(e.instance)}", rule=rule)
    if v == "minLength" and e.schema.get("description", "").startswith("Prometheus duration"):
        return lf.finding(path, "RG302", f"`{_last(path)}` is empty; write a duration such as 5m", rule=rule)
    if v == "propertyNames":
        return lf.finding(path, "RG204", f"`{_last(path)}`: {e.message}; label and annotation names "
                          "match [a-zA-Z_][a-zA-Z0-9_]*", rule=rule)
    if v == "oneOf" and _last(path) in ("promql",):
        return lf.finding(path, "RG202", "`promql` must be a string or a list of strings", rule=rule)
    if v == "oneOf":
        return lf.finding(path, "RG204", "a runbook block has exactly one of `markdown`, `commands`, "
                          "`promql`, `table`", rule=rule)
    return lf.finding(path, "RG204", f"`{_last(path)}`: {e.message}", rule=rule)


def _last(path) -> str:
    for p in reversed(path):
        if isinstance(p, str):
            return p
    return "value"


def _json_type(v) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, (int, float)):
        return "number"
    if v is None:
        return "null"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "mapping"
    return "string"


def _yaml_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    return str(v)


