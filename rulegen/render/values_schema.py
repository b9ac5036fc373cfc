"""``values.schema.json`` for the keys a chart's template reads, and the knob table they share.

``values.schema.json`` is shared: rulegen sets the JSON Schema of the keys it reads (gates
are booleans, durations match Prometheus' syntax, label values are strings) and keeps every
other property as it was. Helm validates values against it on ``template``/``install``, so
``monitoring.enabled: "yes"`` is rejected before anything renders, and so is a label name
starting with ``__`` in any label map (``additionalRuleLabels.__name__``), as for specs.
:mod:`rulegen.render.values` writes ``values.yaml`` and re-exports these names.
"""

from __future__ import annotations

import copy
import functools
import json

from ..spec import Spec
from .yamltext import line_ending

DURATION_PATTERN = r"^(0|([0-9]+y)?([0-9]+w)?([0-9]+d)?([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?)$"

#: Syntax of a Prometheus label (and annotation) name.
NAME_PATTERN = "^[a-zA-Z_][a-zA-Z0-9_]*$"

#: Schema of a label rules get from values (``additionalRuleLabels``, group and ``customRules``
#: labels) whose name starts with ``__``: always invalid. Prometheus reserves those names (as
#: RG405 says for specs; promtool rejects ``__name__``). A ``patternProperties`` entry rather
#: than a ``propertyNames`` pattern because Helm then reports the key's own path
#: (``at '/prometheusRule/additionalRuleLabels/__x': 'not' failed``); for ``propertyNames``
#: errors Helm 3.22 prints an unrelated location.
RESERVED_LABEL = {"not": {}, "description": "label names starting with __ are reserved by Prometheus"}

#: Schema of a gate: a boolean, or null (left empty: off). "yes", "true" or 1 are rejected.
GATE_SCHEMA = {"type": ["boolean", "null"]}

#: The comment written beside each knob rulegen adds to values.yaml, by knob name.
KNOB_COMMENTS = {
    "runbookUrl": "Base URL of the runbook site; each alert's runbook_url is <runbookUrl>/<app>/#<alert>.",
    "labels": "Labels on the PrometheusRule itself, e.g. release: kube-prometheus-stack for a ruleSelector.",
    "annotations": "Annotations on the PrometheusRule itself.",
    "additionalRuleLabels": "Labels added to every alert and recording rule.",
    "additionalRuleAnnotations": "Annotations added to every alert (summary, description or runbook_url replace the generated ones).",
    "groups": "Per rule group: <group>: {enabled, additionalRuleLabels, additionalRuleAnnotations}.",
    "disabled": "<RuleName>: true drops that alert or recording rule; a group left empty is not rendered.",
    "customRules": "<RuleName>: {for, keepFiringFor, severity, labels, annotations, params} overrides for one rule.",
    "slos": "Per SLO: <slo>: {enabled, ticket, objective}; objective: 99.9 (percent) replaces the spec's.",
}


#: The keys directly under the values key that the chart template reads (and the schema allows).
KNOB_NAMES = tuple(KNOB_COMMENTS)


_ANNOTATION_KEYWORDS = frozenset({"title", "description", "default", "examples", "$comment",
                                  "deprecated", "readOnly", "writeOnly"})


def _set_schema(node: dict, path: list[str], leaf: dict, keep: bool = False) -> None:
    """Set ``leaf`` as the schema of ``path`` under ``node``. Missing parents are created as
    ``{"type": ["object", "null"]}`` (a gate's parent left empty in values.yaml is null, and
    then the gate is off, not an error); parents already there are kept as written (a ``true``
    schema becomes ``{}``, which means the same and can take properties). ``keep``: an
    existing leaf's annotations (``description``, a boolean ``default``...) stay; its
    constraints (``enum``, ``type``...) are rulegen's to set.

    Raises:
        ValueError: a ``properties`` or parent schema on the way is not a JSON object, is a
            schema whose ``type`` does not allow an object, or uses ``$ref``, ``enum`` or
            ``const`` (properties added next to them would be ignored or contradicted, and
            the chart's own values would fail the schema).
    """
    for i, part in enumerate(path):
        props = node.setdefault("properties", {})
        if not isinstance(props, dict):
            where = "/".join(path[:i]) or "the top level"
            raise ValueError(f'"properties" of {where} is not a JSON object')
        if i == len(path) - 1:
            old = props.get(part)
            kept = {k: v for k, v in old.items() if k in _ANNOTATION_KEYWORDS} \
                if keep and isinstance(old, dict) else {}
            if "default" in kept and not isinstance(kept["default"], (bool, type(None))):
                del kept["default"]  # it would contradict the leaf's type
            # never the caller's object: later paths may extend it
            props[part] = {**kept, **copy.deepcopy(leaf)}
            return
        if props.get(part) is True:
            props[part] = {}
        node = props.setdefault(part, {"type": ["object", "null"]})
        where = "/".join(path[:i + 1])
        if not isinstance(node, dict):
            raise ValueError(f'the schema of {where} is not a JSON object')
        kind = node.get("type", "object")
        if "object" not in (kind if isinstance(kind, list) else [kind]):
            raise ValueError(f'the schema of {where} has type {json.dumps(kind)}, but '
                             f'{".".join(path)} needs it to be an object')
        for word in ("$ref", "enum", "const"):
            if word in node:
                raise ValueError(f'the schema of {where} uses "{word}", next to which the properties '
                                 f'{".".join(path)} needs would not hold; write them out in it '
                                 'instead')


#: Schema of a number parameter: a number, or a string holding a PromQL number literal (Helm's
#: ``--set`` reads only integers as numbers, so ``--set ...threshold=0.95`` is the string "0.95").
#: Written once under ``definitions`` (``promqlNumber``, only in a chart with a number
#: parameter) and referenced, with ``\d`` for ``[0-9]`` (the same in Go's regexp, which Helm's
#: validator uses, and in ECMA-262's): inline at a parameter's depth its pattern line was 135
#: characters (issue 29: no line over 120); there it is 114.
PROMQL_NUMBER = {"type": ["number", "string"],
                 "pattern": r"^[-+]?((\d+\.?\d*|\.\d+)([eE][-+]?\d+)?|0[xX][0-9a-fA-F]+|[iI][nN][fF]|[nN][aA][nN])$"}

#: A duration that is zero (``0``, ``0s``, ``0m0s``...): Prometheus rejects it as a range
#: (``rate(x[0s])``: "range ... must be > 0"), so a duration parameter written as a range
#: (``[[[window]]]``) is typed with ``not`` this pattern (Go's regexp, which Helm's schema
#: validator uses, has no lookahead to say it in one pattern).
ZERO_DURATION = r"^(0+(ms|y|w|d|h|m|s))*$|^0+$"

#: Severities a spec may use when the project config does not say (``conventions.severities``).
DEFAULT_SEVERITIES = ("critical", "warning", "info")


#: Schema of an SLO objective override: a percentage above 1 and below 100 (at or below 1 it is
#: a ratio written where a percentage is meant, RG350 of specs), as a number or as a string
#: (``--set`` gives strings for decimals) of at most 3 whole and 12 decimal digits, the forms
#: the chart template computes with (``rulegen.v3.budget``, which also rejects a string outside
#: (1, 100), as a schema pattern cannot say it readably).
OBJECTIVE = {"type": ["number", "string"], "exclusiveMinimum": 1, "exclusiveMaximum": 100,
             "pattern": r"^[0-9]{1,3}([.][0-9]{1,12})?$",
             "description": "percent of good events, replacing the spec's (1 < objective < 100: 99.5, not 0.995)"}


# long: one JSON Schema literal (the knobs object and its definitions), written as the file shows it
def _knobs_schema(rules: tuple = (), groups: tuple[str, ...] = (),
                  severities: tuple[str, ...] = DEFAULT_SEVERITIES, values_key: str = "prometheusRule",
                  slos: tuple[str, ...] = ()) -> dict:
    """The schema of the knobs (the value of ``properties.<values_key>``). ``rules``: (name, is
    an alert, its params as (name, kind, description)) of every rule of the chart's specs;
    ``groups``: their group names. When given, ``disabled``, ``customRules`` and ``groups``
    accept only those names (``additionalProperties: false``: Helm rejects a typo and names
    the key), ``customRules.<recording rule>`` only ``labels``, ``severity`` only
    ``severities`` (any string when empty, as the project config allows), and
    ``customRules.<Alert>.params`` only the alert's parameters, each of its type (a number, or
    a duration; kind ``range``: a duration that is not zero). The knobs object itself is closed (``additionalProperties: false``): a key
    directly under ``values_key`` that is not one of :data:`KNOB_NAMES` (``customRule``,
    ``disable``) is rejected and named by Helm. ``slos``: the names of the chart's SLOs,
    the only keys ``slos`` accepts, each ``{enabled, ticket, objective}``
    (:data:`OBJECTIVE`). Shapes used more than once are written once under ``definitions`` and
    referenced (``$ref``), so the file stays short with many alerts."""
    from urllib.parse import quote
    here = "#/properties/" + quote(values_key.replace("~", "~0").replace("/", "~1"), safe="~") + "/definitions/"
    ref = {name: {"$ref": here + name} for name in ("labels", "annotations", "duration", "group",
                                                   "customAlert", "customRecord", "promqlNumber")}
    str_map = {"type": "object", "additionalProperties": {"type": "string"}}
    severity = {"type": "string", "enum": list(severities)} if severities else {"type": "string"}
    custom_props = {"for": ref["duration"], "keepFiringFor": ref["duration"], "severity": severity,
                    "labels": ref["labels"], "annotations": ref["annotations"]}
    definitions = {
        "labels": {"type": "object", "propertyNames": {"pattern": NAME_PATTERN},
                   "patternProperties": {"^__": RESERVED_LABEL},
                   "additionalProperties": {"type": "string"}},
        "annotations": {"type": "object", "propertyNames": {"pattern": NAME_PATTERN},
                        "additionalProperties": {"type": "string"}},
        "duration": {"type": "string", "minLength": 1, "pattern": DURATION_PATTERN},
        "group": {"type": "object", "additionalProperties": False,
                  "properties": {"enabled": {"type": "boolean"}, "additionalRuleLabels": ref["labels"],
                                 "additionalRuleAnnotations": ref["annotations"]}},
        "customAlert": {"type": "object", "additionalProperties": False, "properties": custom_props},
        "customRecord": {"type": "object", "additionalProperties": False, "properties": {"labels": ref["labels"]},
                         "description": "a recording rule: only labels apply"},
        "slo": {"type": "object", "additionalProperties": False,
                "properties": {"enabled": {"type": "boolean"}, "ticket": {"type": "boolean"},
                               "objective": OBJECTIVE}},
    }
    ref["slo"] = {"$ref": here + "slo"}

    def custom_of(params) -> dict:
        if not params:
            return ref["customAlert"]
        props = {}
        for pname, kind, desc in params:
            if kind == "range":  # a duration inside [ ]: not zero
                props[pname] = {**definitions["duration"], "not": {"pattern": ZERO_DURATION}}
            else:
                props[pname] = dict(ref["duration"]) if kind == "duration" else dict(ref["promqlNumber"])
                if kind != "duration":
                    definitions["promqlNumber"] = PROMQL_NUMBER
            if desc:
                props[pname]["description"] = desc
            if kind == "range":
                props[pname]["description"] = (desc + " " if desc else "") + "(a range: longer than 0)"
        return {"type": "object", "additionalProperties": False, "properties": {**custom_props, "params": {
            "type": "object", "additionalProperties": False, "properties": props}}}

    if rules:
        alerts = {name for name, is_alert, _ in rules if is_alert}
        params: dict = {}
        for name, _, ps in rules:
            params.setdefault(name, set()).update(ps)
        names = sorted({name for name, _, _ in rules})
        groups_schema = {"type": "object", "additionalProperties": False,
                         "properties": {g: ref["group"] for g in sorted(set(groups))}}
        disabled = {"type": "object", "additionalProperties": False,
                    "properties": {n: {"type": "boolean"} for n in names}}
        customs = {"type": "object", "additionalProperties": False,
                   "properties": {n: custom_of(sorted(params[n])) if n in alerts else ref["customRecord"]
                                  for n in names}}
    else:
        groups_schema = {"type": "object", "additionalProperties": ref["group"]}
        disabled = {"type": "object", "additionalProperties": {"type": "boolean"}}
        customs = {"type": "object", "additionalProperties": ref["customAlert"]}
    return {
        "type": "object",
        "description": "Knobs of the PrometheusRule generated by rulegen.",
        # Closed: a misspelt knob (customRule, disable, group) would otherwise render silently.
        "additionalProperties": False,
        "properties": {
            "runbookUrl": {"type": "string", "pattern": "^https?://"},
            "labels": str_map,
            "annotations": str_map,
            "additionalRuleLabels": ref["labels"],
            "additionalRuleAnnotations": ref["annotations"],
            "groups": groups_schema,
            "disabled": disabled,
            "customRules": customs,
            "slos": {"type": "object", "additionalProperties": False,
                     "properties": {name: ref["slo"] for name in sorted(set(slos))}},
        },
        "definitions": definitions,
    }


def render_values_schema(spec: Spec, existing: str | None, chart_specs=None,
                         severities: tuple[str, ...] | None = DEFAULT_SEVERITIES) -> str:
    """New ``values.schema.json`` text: ``existing`` (or an empty schema) with the schema of
    rulegen's keys set, with ``existing``'s line ending (CRLF stays CRLF). ``chart_specs``:
    every spec rendering into this chart (default: ``spec`` alone); the rule and group names
    the knobs accept are theirs, for specs sharing ``spec``'s values key. ``severities``: the
    project's allowed severities (``conventions.severities``; empty allows any). Raises
    ValueError when ``existing`` is not a JSON object."""
    specs = [s for s in (chart_specs or [spec]) if s.chart.values_key == spec.chart.values_key]
    if spec not in specs:
        specs.append(spec)
    def kind(r, p) -> str:  # "range": a duration parameter written as a range, [[[name]]] or [[[name]]:
        written = r.expr_template or ""
        if p.kind == "duration" and (f"[[[{p.name}]]]" in written or f"[[[{p.name}]]:" in written):
            return "range"
        return p.kind
    rules = tuple(sorted({(r.name, r.is_alert, tuple((p.name, kind(r, p), p.description) for p in r.params.values()))
                          for s in specs for _, r in s.rules()}))
    groups = tuple(sorted({g.name for s in specs for g in s.groups}))
    slos = tuple(sorted({x.name for s in specs for x in s.slos}))
    from .inhibit_chart import has_rules
    return _values_schema_text(existing, tuple(spec.chart.gates), spec.chart.values_key, rules, groups,
                               tuple(severities or ()), slos, any(has_rules(s) for s in specs))


@functools.lru_cache(maxsize=64)
def _values_schema_text(existing: str | None, gates: tuple[str, ...], values_key: str,
                        rules: tuple = (), groups: tuple = (), severities: tuple = DEFAULT_SEVERITIES,
                        slos: tuple = (), inhibit: bool = False) -> str:
    """:func:`render_values_schema` from what it depends on. Cached: ``json.dumps`` with
    ``indent`` runs in pure Python (a tenth of a second for 100 charts), and a check renders
    each chart's schema once more for the link check."""
    try:
        doc = json.loads(existing) if existing and existing.strip() else {
            "$schema": "https://json-schema.org/draft-07/schema#", "type": "object"}
    except RecursionError:
        raise ValueError("values.schema.json is nested too deeply to read") from None
    if not isinstance(doc, dict):
        raise ValueError("values.schema.json is not a JSON object")
    for gate in gates:
        _set_schema(doc, gate.split("."), GATE_SCHEMA, keep=True)
    knobs = _knobs_schema(rules, groups, severities, values_key, slos)
    if inhibit:  # the chart's AlertmanagerConfig of inhibit rules (rulegen.render.inhibit_chart)
        from .inhibit_chart import KNOB, KNOB_SCHEMA
        knobs = {**knobs, "properties": {**knobs["properties"], KNOB: KNOB_SCHEMA}}
    _set_schema(doc, [values_key], knobs)
    for gate in gates:  # a gate under the values key is a key the closed knobs object allows
        if gate.split(".")[0] == values_key:
            _set_schema(doc, gate.split("."), GATE_SCHEMA, keep=True)
    if doc.get("additionalProperties") is False:  # a closed top level: Helm adds the chart library's
        # values (an empty map under its name, as for every subchart), which must not fail it
        props = doc.setdefault("properties", {})
        if isinstance(props, dict) and "rulegen-library" not in props:
            props["rulegen-library"] = {"type": "object"}
    # json.dumps escapes line breaks inside strings, so every "\n" here is a line ending.
    try:
        text = compact_json(doc) + "\n"
        text.encode("utf-8")
    except RecursionError:
        raise ValueError("values.schema.json is nested too deeply to write") from None
    except UnicodeEncodeError:
        raise ValueError("values.schema.json holds a lone surrogate escape (\\ud800-\\udfff), "
                         "which cannot be written as UTF-8") from None
    return text.replace("\n", line_ending(existing))


#: The widest line :func:`compact_json` writes a value on one line for (characters).
JSON_WIDTH = 100


def compact_json(value, width: int = JSON_WIDTH) -> str:
    """``value`` (JSON data) as JSON text for a reviewer: a list or object whose one-line form
    (``json.dumps`` with ``", "``/``": "`` separators) fits on its line within ``width``
    characters stays on that line; a larger one opens, puts each member on its own line
    indented two spaces more, and closes at its own indent. Same data as ``json.dumps(value,
    indent=2)`` (``json.loads`` of both is equal), in far fewer lines: ``"type": ["boolean",
    "null"]`` is one line, not four. Non-ASCII is written as is.

    Raises:
        RecursionError: ``value`` is nested deeper than Python's recursion limit.
    """
    def one_line(v) -> str:
        return json.dumps(v, ensure_ascii=False, separators=(", ", ": "))

    def emit(v, indent: int, prefix: str) -> str:
        flat = one_line(v)
        if not isinstance(v, (dict, list)) or not v or indent + len(prefix) + len(flat) + 1 <= width:
            return prefix + flat
        inner = " " * (indent + 2)
        if isinstance(v, dict):
            items = [emit(x, indent + 2, one_line(k) + ": ") for k, x in v.items()]
            opening, closing = "{", "}"
        else:
            items = [emit(x, indent + 2, "") for x in v]
            opening, closing = "[", "]"
        body = ",\n".join(inner + it for it in items)
        return f"{prefix}{opening}\n{body}\n{' ' * indent}{closing}"

    return emit(value, 0, "")


def gate_values(gates) -> dict:
    """Nested values with every gate path set true: ``["a", "b.c"]`` -> ``{a: true, b: {c: true}}``."""
    out: dict = {}
    for gate in gates:
        node = out
        parts = gate.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = True
    return out
