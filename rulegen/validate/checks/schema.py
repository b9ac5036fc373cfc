"""Spec schema (JSON Schema draft 2020-12, shipped as ``rulegen/spec/schema.json``).

Codes:

* ``RG201`` unknown key (with "did you mean" for near misses). Bad: ``severty: critical``.
  Good: ``severity: critical``.
* ``RG202`` wrong type (a unitless ``for: 5`` is ``RG302``). A test's ``input_series``
  ``values`` and labels are read as written, as promtool reads them (``values: 0x15`` is the
  text ``0x15``); a rule's label is not. Bad: ``labels: [a]``, ``labels: {code: 0x20}`` (the
  number 32); good: ``labels: {team: a}``, ``labels: {code: "0x20"}``.
* ``RG203`` required field missing. Bad: an alert without ``expr``.
  Good: ``expr: up == 0`` in the alert.
* ``RG204`` value not allowed (pattern, enum, length). Bad: ``app: My App``.
  Good: ``app: my-app``.
* ``RG205`` a rule is neither an alert nor a recording rule, or both.
  Bad: a rule with both ``alert: X`` and ``record: job:x:sum``; good: one of the two.
* ``RG302`` duration not in Prometheus syntax. Bad: ``for: 1.5m``, ``for: "90"``, ``for: 5 m``.
  Good: ``for: 90s``, ``for: 1m30s``, ``for: 0``.
"""

from __future__ import annotations

import difflib
import functools
import json
import re
import types
from pathlib import Path
from typing import TYPE_CHECKING

from ...findings import Severity
from ...spec import SCHEMA_PATH
from ...spec.durations import hint
from ...spec.yamlnodes import resolve_plain, without_comment
from .positions import value_at

if TYPE_CHECKING:
    from jsonschema import Draft202012Validator

ID = "schema"


@functools.cache
def schema() -> dict:
    """The spec schema as a dict."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


#: A ``$`` not escaped by a backslash: the end of the text in a JSON Schema pattern.
_DOLLAR = re.compile(r"(?<!\\)\$")


@functools.cache
def ecma_pattern(pattern: str) -> re.Pattern:
    """A JSON Schema ``pattern`` compiled to mean what it means in JSON Schema (ECMA-262, and
    RE2 for Kubernetes' OpenAPI schemas): ``$`` ends the text. Python's ``$`` also matches
    before a final line feed, so ``^[a-z0-9]+$`` took ``"shop\\n"``; each unescaped ``$``
    is ``\\Z`` here (as fastjsonschema compiles it)."""
    return re.compile(_DOLLAR.sub(r"\\Z", pattern))


def with_ecma_patterns(cls):
    """The jsonschema validator class ``cls`` with its ``pattern`` keyword read as
    :func:`ecma_pattern` reads it (the same error, message and ``validator_value``)."""
    from jsonschema import ValidationError, validators

    def pattern(validator, patrn, instance, schema):
        if validator.is_type(instance, "string") and not ecma_pattern(patrn).search(instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")
    return validators.extend(cls, {"pattern": pattern})


@functools.cache
def _validator(ref: str | None = None) -> Draft202012Validator:
    s = schema()
    if ref is not None:
        s = {"$ref": f"#/$defs/{ref}", "$defs": s["$defs"]}
    from jsonschema import Draft202012Validator
    return with_ecma_patterns(Draft202012Validator)(s)


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
    return with_ecma_patterns(Draft202012Validator)(_fast_schema())


# A yes/no pre-check: most specs are valid, and proving it with fastjsonschema's compiled
# validator is several times cheaper than jsonschema's iter_errors (which also costs ~0.15 s of
# imports). A document it does not pass goes to jsonschema, which produces the findings. The
# fast schema only uses keywords that mean the same in draft-07 (fastjsonschema's newest
# draft) and 2020-12; tests/validate/test_schema_precheck.py holds the two to agreement.

_ROOT_DEF = re.compile(r"^def (\w+)\(", re.M)


@functools.cache
def _own_source() -> bytes:
    try:
        return Path(__file__).read_bytes()
    except OSError:
        return b"?"


def _compiled(definition: dict):
    """fastjsonschema's validator for ``definition``: the code of
    :func:`fastjsonschema.compile_to_code` (its first function is the root validator), kept
    between runs by :mod:`rulegen.codecache` (generating and compiling it costs about 0.1 s).

    Raises:
        fastjsonschema.JsonSchemaDefinitionException: the schema cannot be compiled.
    """
    import fastjsonschema
    from ... import codecache
    # this module's own text is part of the key: a change to how the code is made is a new entry
    name = "schema-" + codecache.key("fastjsonschema", fastjsonschema.VERSION, _own_source(),
                                     json.dumps(definition, sort_keys=True))
    entry = codecache.load(name)
    if isinstance(entry, tuple) and len(entry) == 2 and isinstance(entry[0], str) \
            and isinstance(entry[1], types.CodeType):
        validate = _run_code(*entry)
        if validate is not None:
            return validate
    source = fastjsonschema.compile_to_code(definition)
    root = _ROOT_DEF.search(source)
    if root is None:
        return fastjsonschema.compile(definition)
    entry = (root.group(1), compile(source, "<rulegen spec schema (fastjsonschema)>", "exec"))
    validate = _run_code(*entry)
    if validate is None:
        return fastjsonschema.compile(definition)
    codecache.store(name, entry)
    return validate


def _run_code(root: str, code: types.CodeType):
    """The function ``root`` defined by running ``code``, or None when that fails."""
    namespace: dict = {}
    try:
        exec(code, namespace)  # noqa: S102 - code fastjsonschema generated from rulegen's own schema
    except Exception:
        return None
    fn = namespace.get(root)
    return fn if callable(fn) else None


@functools.cache
def _precheck():
    """A function ``data -> bool`` (True: the fast schema accepts ``data``), or None when the
    schema cannot be compiled for it."""
    s = _fast_schema()
    if s is None:
        return None
    import fastjsonschema
    draft7 = dict(s, **{"$schema": "http://json-schema.org/draft-07/schema#"})
    try:
        validate = _compiled(draft7)
    except fastjsonschema.JsonSchemaDefinitionException:
        return None

    def accepts(data) -> bool:
        try:
            validate(data)
        except fastjsonschema.JsonSchemaException:
            return False
        return True

    return accepts


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
        findings = _one_per_typo(list(_errors(lf, data, _fast_validator(), ())) + list(_kinds(lf)))
    yield from sorted(findings, key=lambda f: (f.line, f.col, f.code))


def _one_per_typo(findings: list) -> list:
    """A misspelt required key (``exp:`` for ``expr:``) is one mistake: keep the RG201 that
    says "did you mean `expr`?" and drop the RG203 "`expr` is required" of the same rule."""
    meant = {(f.rule, m.group(1)) for f in findings if f.code == "RG201"
             for m in [re.search(r"did you mean `([^`]+)`\?", f.message)] if m}
    return [f for f in findings if not (
        f.code == "RG203" and (m := re.match(r"`([^`]+)` is required", f.message))
        and (f.rule, m.group(1)) in meant)]


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


# long: a table: one branch per JSON Schema validator, each turning its error into a finding
def _one(lf, e, path, rule):
    v = e.validator
    if v == "additionalProperties":
        allowed = sorted((e.schema.get("properties") or {}).keys())
        extra = sorted(set(e.instance) - set(allowed)) if isinstance(e.instance, dict) else []
        key = extra[0] if extra else "?"
        near = difflib.get_close_matches(key, allowed, n=1, cutoff=0.6)
        tip = f"did you mean `{near[0]}`?" if near else f"allowed keys here: {', '.join(allowed)}"
        return lf.finding(path + (key,), "RG201", f"unknown key `{key}`; {tip}", rule=rule, key=True)
    if v == "anyOf" and path == ():  # the spec's top level: groups, or slos, or both
        slos = e.instance.get("slos") if isinstance(e.instance, dict) else None
        if isinstance(slos, list) and not slos:
            return lf.finding(("slos",), "RG204", "`slos` is empty and there is no `groups:`; add an SLO "
                              "or a rule group", rule=rule)
        return lf.finding(path, "RG203", "`groups` (or `slos`) is required here; add `groups:` with "
                          "rule groups, `slos:` with SLOs, or both", rule=rule, key=True)
    if v == "required":
        missing = e.message.split("'")[1] if "'" in e.message else e.message
        return lf.finding(path, "RG203", f"`{missing}` is required here; add `{missing}:`",
                          rule=rule, key=True)
    if v == "type":
        want = e.validator_value
        want = " or ".join(want) if isinstance(want, list) else want
        got = _json_type(e.instance)
        extra = ""
        if e.schema.get("description", "").startswith("Prometheus duration"):
            if got == "number":
                # `for: 1.5` -> say which duration to write, not just "quote it" (which fails next)
                written = lf.source_token(path) or _yaml_text(e.instance)
                return lf.finding(path, "RG302", f"`{_last(path)}`: {written} is a number, not a "
                                  f"Prometheus duration; {hint(written)}", rule=rule)
            return lf.finding(path, "RG202", f"`{_last(path)}` must be a Prometheus duration, not a "
                              f"{got}; write one such as `{_last(path)}: 5m`", rule=rule)
        if want in ("number", "integer") and got == "string":
            extra = _number_fix(path, e.instance, want, "percent" in e.schema.get("description", ""))
        if want == "string" and got in ("number", "boolean", "null"):
            written = lf.source_token(path) or _yaml_text(e.instance)
            if written != _yaml_text(e.instance) and got == "number":
                extra = f" (YAML reads {written} as the number {_yaml_text(e.instance)}); quote it: \"{written}\""
            else:
                extra = f"; quote it: \"{written}\""
        if "string" in want and got in ("mapping", "list"):
            extra = _structure_trap(lf, path, got) or ""
        return lf.finding(path, "RG202", f"`{_last(path)}` must be a {want}, not a {got}{extra}",
                          rule=rule)
    if v == "pattern" and e.schema.get("description", "").startswith("Prometheus duration"):
        return lf.finding(path, "RG302", f"`{_last(path)}`: {e.instance!r} is not a Prometheus "
                          f"duration; {hint(e.instance)}", rule=rule)
    if v in ("minimum", "maximum") and e.schema.get("description", "").startswith("Prometheus duration"):
        # a number other than 0 (`for: 90`): Prometheus takes only 0 without a unit
        written = lf.source_token(path) or _yaml_text(e.instance)
        return lf.finding(path, "RG302", f"`{_last(path)}`: {written} is a number, not a Prometheus "
                          f"duration; {hint(written)}", rule=rule)
    if v == "minLength" and e.schema.get("description", "").startswith("Prometheus duration"):
        return lf.finding(path, "RG302", f"`{_last(path)}` is empty; write a duration such as 5m", rule=rule)
    if v == "propertyNames" or "propertyNames" in list(e.relative_schema_path)[:-1]:
        # jsonschema reports a bad key name at the mapping (its path does not name the key),
        # which is the mapping's first key in block style and its `{` in flow style: point at
        # the key itself
        mapping = value_at(lf.data, path)
        if isinstance(e.instance, str) and isinstance(mapping, dict) and e.instance in mapping:
            what = {"labels": "label", "annotations": "annotation", "params": "parameter",
                    "variables": "variable"}.get(str(_last(path)), "key")
            fixed = pattern_fix(e.validator_value, e.instance)
            to = f" to `{fixed}`" if fixed and fixed not in mapping else ""
            return lf.finding(path + (e.instance,), "RG204", f"`{_last(path)}`: {e.instance!r} is no {what} "
                              f"name (names match {e.validator_value}); rename the key{to}", rule=rule, key=True)
        return lf.finding(path, "RG204", f"`{_last(path)}`: {e.message}; label and annotation names "
                          "match [a-zA-Z_][a-zA-Z0-9_]*", rule=rule)
    if v == "oneOf" and _last(path) in ("promql",):
        return lf.finding(path, "RG202", "`promql` must be a string or a list of strings", rule=rule)
    if v == "oneOf":
        return lf.finding(path, "RG204", "a runbook block has exactly one of `markdown`, `commands`, "
                          "`promql`, `table`", rule=rule)
    if v == "minItems":
        return lf.finding(path, "RG204", f"`{_last(path)}` is empty; add at least one entry", rule=rule)
    if v == "enum":
        allowed = ", ".join(str(x) for x in e.validator_value)
        return lf.finding(path, "RG204", f"`{_last(path)}`: {e.instance!r} is not allowed; use one of "
                          f"{allowed}", rule=rule)
    if v in ("pattern", "maxLength") and path == ("app",):
        slug = re.sub(r"[^a-z0-9]+", "-", str(e.instance).lower()).strip("-")[:53].strip("-") or "my-app"
        return lf.finding(path, "RG204", f"`app`: {e.instance!r} is not a DNS label (lowercase letters, "
                          f"digits and `-`, at most 53 characters); write `app: {slug}` and put the "
                          f"name to show in `title: {e.instance}`", rule=rule)
    if v == "pattern" and isinstance(e.instance, str) and e.validator_value in _PATTERNS:
        words = _PATTERNS[e.validator_value][0]
        fixed = pattern_fix(e.validator_value, e.instance, e.schema.get("maxLength"))
        write = (f"; write `{fixed}` instead" if isinstance(path[-1], int) else f"; write `{_last(path)}: {fixed}`") \
            if fixed else ""
        return lf.finding(path, "RG204", f"`{_last(path)}`: {e.instance!r} is not {words}{write}", rule=rule)
    return lf.finding(path, "RG204", f"`{_last(path)}`: {e.message}; change it to what `rulegen schema` "
                      "allows here", rule=rule)


def _name(s: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]+", "_", s).strip("_")
    return "_" + s if s[:1].isdigit() else s


#: The spec schema's patterns (rulegen/spec/schema.json) in words, each with how to turn a value
#: into one that matches (the concrete fix an RG204 finding offers).
_PATTERNS = {
    "^[a-z0-9]([a-z0-9-]*[a-z0-9])?$": (
        "a DNS label (lowercase letters, digits and `-`, starting and ending with a letter or digit)",
        lambda s: re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")),
    "^[A-Za-z_][A-Za-z0-9_]*$": ("a name of letters, digits and `_` that does not start with a digit", _name),
    "^[a-zA-Z_][a-zA-Z0-9_]*$": ("a name of letters, digits and `_` that does not start with a digit", _name),
    "^[A-Z_][A-Z0-9_]*$": ("an upper-case name (A-Z, digits and `_`, not starting with a digit)",
                           lambda s: _name(s.upper())),
    "^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$": (
        "a values path (names of letters, digits and `_`, joined by `.`)",
        lambda s: ".".join(n for n in (_name(p) for p in s.split(".")) if n)),
    "^https?://[^\\s]+$": (
        "an http(s) URL without spaces",
        lambda s: "" if re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", s.strip()) and not re.match(r"https?://", s.strip())
        else (s.strip() if re.match(r"https?://", s.strip()) else "https://" + s.strip()).replace(" ", "%20")),
    "^[A-Za-z0-9_.-]+\\.yaml$": (
        "a file name of letters, digits, `_`, `.` and `-` ending in `.yaml`",
        lambda s: re.sub(r"[^A-Za-z0-9_.-]+", "-", re.sub(r"\.ya?ml$", "", s)).strip("-.") + ".yaml"),
}


def pattern_fix(pattern: str, value: str, max_length: int | None = None) -> str | None:
    """``value`` turned into a text that matches ``pattern``, one of the spec schema's
    patterns (:data:`_PATTERNS`), cut to ``max_length``; None when the pattern is not one of
    them or nothing usable is left (``"--"`` as a DNS label)."""
    known = _PATTERNS.get(pattern)
    if known is None:
        return None
    fixed = known[1](value)
    if max_length:
        fixed = fixed[:max_length].rstrip("-_.")
    return fixed if fixed and fixed != value and re.fullmatch(pattern, fixed) else None


def _number_fix(path, value: str, want: str, percentage: bool) -> str:
    """The fix for a number written as text (``objective: "99.5%"``): the number to write,
    when the text holds one that the spec loader reads as a number once unquoted (spaces
    around it dropped, and a ``%`` sign when the field is a ``percentage``), else "". Python's
    ``float()`` also reads digits of other scripts (``٩٩.٥``, full-width ``９９``), which YAML
    reads as text: the fix would give the same error again."""
    text = value.strip()
    percent = percentage and text.endswith("%")
    text = text.rstrip("%").strip() if percent else text
    read = resolve_plain(text)
    if type(read) not in (int, float):
        return ""
    try:
        number = float(text)
    except ValueError:
        return ""
    if want == "integer" and not number.is_integer():
        return ""
    if number != number or number in (float("inf"), float("-inf")):
        return ""
    return f"; write `{_last(path)}: {text}`" + (" (a percentage, without `%`)" if percent else " (unquoted)")


def _structure_trap(lf, path, got: str) -> str | None:
    """When text meant as a string was read by YAML as a mapping or a list, the character that
    did it and the quoted line to write instead (``; the ": " after `wait` ... quote it: "..."``),
    from the source line at ``path``; None when the value was written as a real structure
    (several lines, several keys).

    YAML (1.2 and 1.1 alike) reads ``: `` (a colon then a space) in a plain scalar as a key
    separator, and ``{``/``[`` at the start of a value as a flow mapping/list."""
    try:
        line, col = lf.pos(path)
        text = lf.text.splitlines()[line - 1][col - 1:]
    except (IndexError, AttributeError, TypeError):
        return None
    text = without_comment(text)
    if not text:
        return None
    if text[0] in "{[":
        if not text.endswith("}]"[text[0] == "["]):
            return None
        cause = f"the `{text[0]}` at its start makes YAML read a {got}"
    elif got == "mapping":
        m = re.search(r":(\s|$)", text)
        if m is None:
            return None
        before = text[:m.start()].split()[-1] if text[:m.start()].split() else ""
        cause = (f"the `: ` after `{before}` makes YAML read a mapping" if m.group(1)
                 else "the `:` at its end makes YAML read a mapping")
    else:
        return None
    quoted = ('"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"') if "'" in text \
        else "'" + text + "'" if '"' in text else '"' + text + '"'
    return f": {cause}; quote it: {quoted}"


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


