"""The chart's ``values.yaml`` keys the template reads, and ``values.schema.json`` for them.

``values.yaml`` belongs to people: rulegen only *adds* what is missing (the gates and the
``prometheusRule`` knobs, each with a comment saying what it does). ruamel.yaml's round-trip
loader finds where each key is; the new lines are inserted into the original text, which is
never re-serialized, so existing keys, their order, quoting, anchors, indentation and comments
are kept byte for byte (a ruamel dump would re-indent, drop ``---``, turn ``~`` into an
empty value and attach trailing comments to the wrong key).

``values.schema.json`` is shared too: rulegen sets the JSON Schema of the keys it reads (gates
are booleans, durations match Prometheus' syntax, label values are strings) and keeps every
other property as it was. Helm validates values against it on ``template``/``install``, so
``monitoring.enabled: "yes"`` is rejected before anything renders, and so is a label name
starting with ``__`` in any label map (``additionalRuleLabels.__name__``), as for specs.
"""

from __future__ import annotations

import copy
import functools
import json
import re

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap

from ..spec import Spec
from .yamltext import double_quoted, yaml_key

_BREAK = re.compile(r"\r(?!\n)|\n")

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

_KNOB_COMMENTS = {
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
KNOB_NAMES = tuple(_KNOB_COMMENTS)


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    return y


class _Want:
    """A key rulegen wants in values.yaml: its default (a scalar, ``{}``, or a dict of more
    _Want), a comment line before it and an end-of-line comment."""

    def __init__(self, default, before: str = "", eol: str = ""):
        self.default, self.before, self.eol = default, before, eol


def _wanted(spec: Spec, site_url: str, labels: dict | None = None) -> dict:
    """The tree of keys the template reads, in the order they are written when missing;
    ``labels``: the PrometheusRule's own labels a new values.yaml starts with."""
    tree: dict = {}
    gate_note = ("rulegen gate: the PrometheusRule renders only when all of "
                 f"{', '.join(spec.chart.gates)} are true")
    for gate in spec.chart.gates:
        node = tree
        parts = gate.split(".")
        for part in parts[:-1]:
            w = node.setdefault(part, _Want({}))
            if not isinstance(w.default, dict):
                break
            node = w.default
        else:
            node.setdefault(parts[-1], _Want(False, eol=gate_note))
    knobs = {
        **({"runbookUrl": _Want(site_url.rstrip("/"))} if spec.chart.runbook_url else {}),
        "labels": _Want({k: _Want(v) for k, v in (labels or {}).items()}), "annotations": _Want({}),
        "additionalRuleLabels": _Want({}), "additionalRuleAnnotations": _Want({}),
        "groups": _Want({g.name: _Want({"enabled": _Want(True)}) for g in spec.groups}),
        "disabled": _Want({}), "customRules": _Want({}),
    }
    if spec.slos:  # the objective is not written: a copy here would outlive a change in the spec
        knobs["slos"] = _Want({s.name: _Want({"enabled": _Want(True), "ticket": _Want(True)}) for s in spec.slos})
    for k, w in knobs.items():
        w.before = _KNOB_COMMENTS[k]
    tree.setdefault(spec.chart.values_key, _Want(
        knobs, before=f"Knobs of the PrometheusRule generated by rulegen (templates/{spec.chart.template})."))
    return tree


def _scalar_text(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, dict):
        return "{}"
    return double_quoted(str(v))


def _emit(key: str, want: _Want, indent: int, step: int) -> list[str]:
    """Lines (no newline) writing ``key`` and its default subtree at column ``indent``."""
    pad = " " * indent
    lines = [f"{pad}# {want.before}"] if want.before else []
    eol = f"  # {want.eol}" if want.eol else ""
    if isinstance(want.default, dict) and want.default:
        lines.append(f"{pad}{yaml_key(key)}:{eol}")
        for k, w in want.default.items():
            lines += _emit(k, w, indent + step, step)
    else:
        lines.append(f"{pad}{yaml_key(key)}: {_scalar_text(want.default)}{eol}")
    return lines


def line_ending(text: str | None) -> str:
    r"""The line ending a shared file uses: ``"\r\n"`` when its first line ends with CRLF,
    else ``"\n"`` (also for an empty or one-line file)."""
    i = (text or "").find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"


def _split_lines(text: str) -> list[str]:
    r"""``text`` cut at ``\n`` only, each line keeping its terminator (``\n`` or ``\r\n``).

    Not :meth:`str.splitlines`, which also cuts at U+2028, U+2029, U+0085, ``\v``, ``\f``
    and the C0 separators: YAML 1.2 (and Helm's reader) does not break lines there, and a
    value holding one must come back unchanged.
    """
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _line_map(text: str) -> list[int | None]:
    r"""For each line number ruamel.yaml reports, the index of that line in
    :func:`_split_lines`, or None when ruamel's line starts inside one of ours.

    ruamel.yaml counts ``\n`` and a ``\r`` not followed by ``\n`` as line breaks (not
    U+2028, U+2029, U+0085): a lone CR (old Mac line ending, or raw in a quoted value) shifts
    its numbering against ours, and a key after a lone CR is not at the start of a line of ours.
    """
    out: list[int | None] = [0]
    ours = 0
    for m in _BREAK.finditer(text):
        if m.group() == "\n":
            ours += 1
            out.append(ours)
        else:
            out.append(None)
    return out


def _indent_of(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_blank(line: str) -> bool:
    """Only YAML white space (space, tab) and the line break: str.strip() would also take
    U+2028, U+0085 and other Unicode spaces, which YAML reads as content."""
    return not line.strip(" \t\r\n")


def _block_end(lines: list[str], first: int, indent: int) -> int:
    """Index of the last line of the block mapping whose first key is on line ``first`` at
    column ``indent``: the last non-blank line at that column or deeper before a content line
    less indented. Comments less indented than the block belong to what follows it."""
    last = first
    for i in range(first + 1, len(lines)):
        if _is_blank(lines[i]):
            continue
        ind = _indent_of(lines[i])
        if ind >= indent:
            last = i
        elif not lines[i].lstrip(" \t").startswith("#"):
            break
    return last


def _step(node: CommentedMap) -> int | None:
    """Indentation step of the document: the column of the first nested block mapping's keys
    minus its parent's, or None when there is none."""
    for k, v in node.items():
        if isinstance(v, CommentedMap) and len(v) and not v.fa.flow_style():
            inner = v.lc.key(next(iter(v)))[1] - node.lc.key(k)[1]
            if inner > 0:
                return inner
            sub = _step(v)
            if sub:
                return sub
    return None


# The fast path of render_values: when every key rulegen wants is already there (every build
# after the first, and every check), the answer is the text as it is. That is decided from
# libyaml's node tree (PyYAML's C composer) instead of ruamel.yaml's pure-Python round-trip
# load (a quarter of a check's time on the 100-app benchmark project), but only for files
# where both read the same: keys that are plain identifiers (not YAML 1.1 or 1.2 booleans,
# nulls or numbers) or quoted without escapes, no duplicate or merge key anywhere (ruamel
# rejects duplicates), no tag, no directive. Anything else, a libyaml error included, takes
# the ruamel path, which decides and reports as before.
_SAFE_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")
_NOT_STRINGS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n"}


def _key_of(node) -> str | None:
    """The string key node ``node`` stands for in both YAML readers, or None when unsure."""
    import yaml
    if not isinstance(node, yaml.ScalarNode):
        return None
    v = node.value
    if node.style in ("'", '"'):
        return v if "\\" not in v else None
    if not node.style and _SAFE_PLAIN_KEY.fullmatch(v) and v.lower() not in _NOT_STRINGS:
        return v
    return None


def _nothing_missing(text: str, want: dict) -> bool:
    """True when :func:`render_values` would return ``text`` unchanged (see above); False
    when something is missing or the fast path cannot tell."""
    if not text.strip() or "!" in text or "\t" in text or "\r" in text or text.lstrip().startswith("%") \
            or "\n%" in text:
        return False
    import yaml
    loader = getattr(yaml, "CSafeLoader", None)
    if loader is None:
        return False
    try:
        root = yaml.compose(text, Loader=loader)
    except Exception:
        return False
    if not isinstance(root, yaml.MappingNode):
        return False
    keys_of: dict[int, dict] = {}
    stack, seen = [root], set()
    while stack:  # every mapping of the document: keys all safe, no duplicate
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            keys: dict = {}
            for k, v in node.value:
                key = _key_of(k)
                if key is None or key in keys:
                    return False
                keys[key] = v
                stack.append(v)
            keys_of[id(node)] = keys
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)

    def complete(node, want: dict) -> bool:
        keys = keys_of[id(node)]
        for key, w in want.items():
            if key not in keys:
                return False
            if isinstance(w.default, dict) and w.default:
                child = keys[key]
                if isinstance(child, yaml.MappingNode) and child.value and not child.flow_style:
                    if not complete(child, w.default):
                        return False
        return True

    return complete(root, want)


def render_values(spec: Spec, existing: str | None, site_url: str, new_labels: dict | None = None) -> str:
    r"""New ``values.yaml`` text: ``existing`` with the keys the template reads added where missing.

    ``new_labels``: labels of the PrometheusRule itself (``<values_key>.labels``) that a chart
    without a values.yaml (``existing`` None or blank: a new chart) starts with, such as the
    project's rule-selector label ``release: kube-prometheus-stack``
    (:attr:`rulegen.config.Config.rule_selector_labels`); an existing values.yaml never gets
    them, so a chart's rendered metadata changes only when a person changes it.

    The existing text is kept byte for byte: new lines are only *inserted* (at the end of the
    block mapping they belong to, at its indentation, or at the end of the file), so a
    person's order, quoting, anchors, comments and layout survive. Missing gates are added as
    ``false`` (a chart must opt in to a PrometheusRule, which needs the Prometheus Operator's
    CRDs). A key that exists with a value that is not a block mapping (``monitoring: null``,
    ``prometheusRule: {}`` written in flow style, a string) is left as written: the template
    treats it as unset and values.schema.json reports a wrong type.

    Lines are cut at ``\n`` only (a ``\r`` before it stays with its line), never at U+2028,
    U+2029 or U+0085, which YAML 1.2 reads as content; new lines take the file's line ending
    (:func:`line_ending`). A file with bare CR line endings before a key rulegen must add
    under is refused (ValueError) rather than guessed at.

    Raises:
        ValueError: ``existing`` is YAML but not a mapping, or has bare CR line endings.
        ruamel.yaml errors: ``existing`` is not YAML; the caller reports them.
    """
    text = existing or ""
    wanted = _wanted(spec, site_url, new_labels if not text.strip() else None)
    if _nothing_missing(text, wanted):
        return text
    doc = _yaml().load(text) if text.strip() else None
    if doc is None:
        doc = CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise ValueError("values.yaml is not a mapping")
    nl = line_ending(text)
    lines = _split_lines(text)
    line_of = _line_map(text)
    step = _step(doc) or 2
    inserts: list[tuple[int, int, list[str]]] = []  # (after line index or -1 for EOF, indent, lines)

    def walk(node: CommentedMap, want: dict, indent: int, end: int) -> None:
        missing: list[str] = []
        for key, w in want.items():
            if key not in node:
                missing += _emit(key, w, indent, step)
            elif isinstance(w.default, dict) and w.default:
                child = node[key]
                if isinstance(child, CommentedMap) and len(child) and not child.fa.flow_style():
                    first_line, col = child.lc.key(next(iter(child)))
                    ours = line_of[first_line]
                    if ours is None:
                        raise ValueError(f"line {first_line + 1} ends with a bare carriage return "
                                         "(\\r); rulegen only adds lines to files with \\n or "
                                         "\\r\\n line endings")
                    walk(child, w.default, col, _block_end(lines, ours, col))
        if missing:
            inserts.append((end, indent, missing))

    walk(doc, wanted, 0, -1)
    if not inserts:
        return text
    by_line: dict[int, list[tuple[int, list[str]]]] = {}
    for at, indent, new in inserts:
        by_line.setdefault(at, []).append((indent, [line + nl for line in new]))
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += nl  # the last line gets a line break, so lines can follow it
    out: list[str] = []
    for i, line in enumerate(lines):
        out.append(line)
        for _, new in sorted(by_line.get(i, []), key=lambda t: -t[0]):
            out += new
    for _, new in sorted(by_line.get(-1, []), key=lambda t: -t[0]):
        out += new
    return "".join(out)


#: JSON Schema keywords that describe a value without constraining it (draft-07 "annotations").
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
PROMQL_NUMBER = {"type": ["number", "string"],
                 "pattern": r"^[-+]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?|0[xX][0-9a-fA-F]+|[iI][nN][fF]|[nN][aA][nN])$"}

#: A duration that is zero (``0``, ``0s``, ``0m0s``...): Prometheus rejects it as a range
#: (``rate(x[0s])``: "range ... must be > 0"), so a duration parameter written as a range
#: (``[[[window]]]``) is typed with ``not`` this pattern (Go's regexp, which Helm's schema
#: validator uses, has no lookahead to say it in one pattern).
ZERO_DURATION = r"^(0+(ms|y|w|d|h|m|s))*$|^0+$"

#: Severities a spec may use when the project config does not say (``conventions.severities``).
DEFAULT_SEVERITIES = ("critical", "warning", "info")


#: Schema of an SLO objective override: a percentage strictly between 0 and 100, as a number or
#: as a string (``--set`` gives strings for decimals) of at most 3 whole and 12 decimal digits,
#: the forms the chart template computes with (``rulegen.v2.objective``, which also rejects a
#: string outside (0, 100), as a schema pattern cannot say it readably).
OBJECTIVE = {"type": ["number", "string"], "exclusiveMinimum": 0, "exclusiveMaximum": 100,
             "pattern": r"^[0-9]{1,3}([.][0-9]{1,12})?$",
             "description": "percent of good events, replacing the spec's objective (0 < objective < 100)"}


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
                                                   "customAlert", "customRecord")}
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
                props[pname] = dict(ref["duration"]) if kind == "duration" else dict(PROMQL_NUMBER)
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
    return _values_schema_text(existing, tuple(spec.chart.gates), spec.chart.values_key, rules, groups,
                               tuple(severities or ()), slos)


@functools.lru_cache(maxsize=64)
def _values_schema_text(existing: str | None, gates: tuple[str, ...], values_key: str,
                        rules: tuple = (), groups: tuple = (), severities: tuple = DEFAULT_SEVERITIES,
                        slos: tuple = ()) -> str:
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
    _set_schema(doc, [values_key], _knobs_schema(rules, groups, severities, values_key, slos))
    for gate in gates:  # a gate under the values key is a key the closed knobs object allows
        if gate.split(".")[0] == values_key:
            _set_schema(doc, gate.split("."), GATE_SCHEMA, keep=True)
    # json.dumps escapes line breaks inside strings, so every "\n" here is a line ending.
    try:
        text = json.dumps(doc, indent=2, ensure_ascii=False) + "\n"
        text.encode("utf-8")
    except RecursionError:
        raise ValueError("values.schema.json is nested too deeply to write") from None
    except UnicodeEncodeError:
        raise ValueError("values.schema.json holds a lone surrogate escape (\\ud800-\\udfff), "
                         "which cannot be written as UTF-8") from None
    return text.replace("\n", line_ending(existing))


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
