"""Knobs in a chart's ``values.yaml`` that name nothing the chart has, or that would silence an
SLO's alerts.

Run on the planned outputs (:func:`rulegen.outputs.check_plan`): the ``values.yaml`` that
``build`` would write, merged from people's keys and rulegen's, read against the rules,
groups, gates and SLOs of the specs that render into the chart.

Codes:

* ``RG730`` a key under ``<valuesKey>.disabled``, ``.customRules`` or ``.groups`` of the chart's
  ``values.yaml`` names no rule or rule group of the chart (left behind by a rename or removal,
  or a typo), or a key directly under ``<valuesKey>`` is no knob (``customRule`` for
  ``customRules``); the chart's values.schema.json rejects it, so ``helm template`` would fail.
  Bad: ``disabled: {RedisDwn: true}``; good: ``disabled: {RedisDown: true}``, or remove the key.
* ``RG363`` two specs rendering into one chart with one values key have an SLO of the same
  name: ``<valuesKey>.slos.<name>`` would set both. Bad: SLO ``checkout`` in
  ``rules/shop.yaml`` and in ``rules/cart.yaml``, both in ``charts/shop``; good: names
  apart (``cart-checkout``), or ``chart.values_key`` apart.
* ``RG364`` the chart's ``values.yaml`` gives some of an SLO's recording rules labels the
  others do not get (``customRules.<recording rule>.labels``): each burn-rate alert compares a
  window's error ratio with the recorded budget (``slo:error_budget:ratio``) on all labels,
  so a label on one side only leaves nothing to compare and the SLO's alerts never fire. Bad:
  ``customRules: {"slo:sli_error:ratio_rate1h": {labels: {cluster: eu}}}``; good: the label for
  the whole group, ``groups: {shop-slo-checkout: {additionalRuleLabels: {cluster: eu}}}``.
"""

from __future__ import annotations

import difflib

import yaml

from ..findings import Finding, Severity
from ..hints import closest
from ..render.inhibit_chart import KNOB, has_rules
from ..render.values import KNOB_NAMES


def check(outputs, specs, fmt: str = "helm") -> list[Finding]:
    """``RG730`` for each key of a planned ``values.yaml`` that names no knob, rule, group or
    SLO of its chart, and ``RG363`` for an SLO name two specs of one chart and values key
    share. ``outputs``: the planned outputs (:func:`rulegen.render.plan`); ``specs``: the
    validated specs; ``fmt``: ``rules`` has no charts, so nothing to check."""
    findings: list[Finding] = []
    if fmt == "rules":
        return findings
    planned = {o.path: o.content for o in outputs}
    in_chart: dict = {}
    for spec in sorted(specs, key=lambda s: s.app):
        in_chart.setdefault(spec.chart.path, []).append(spec)
    for path, specs_here in in_chart.items():  # knobs in values.yaml naming what the chart lacks
        vpath = f"{path}/values.yaml"
        if vpath not in planned:
            continue
        for key in sorted({s.chart.values_key for s in specs_here}):
            mine = [s for s in specs_here if s.chart.values_key == key]
            rule_names = {r.name for s in mine for _, r in s.rules()}
            group_names = {g.name for s in mine for g in s.groups}
            extra = (KNOB,) if any(has_rules(s) for s in mine) else ()  # issue 28: inhibitRules
            for line, col, msg in unknown_knobs(planned[vpath], key, rule_names, group_names,
                                                {g for s in mine for g in s.chart.gates},
                                                {x.name for s in mine for x in s.slos}, extra):
                msg = _knob_hint(msg, key, rule_names, group_names, {x.name for s in mine for x in s.slos})
                findings.append(Finding(vpath, line, col, "RG730", Severity.ERROR, msg))
            findings += _slo_names(mine, path, key)
            findings += _slo_record_labels(planned[vpath], vpath, mine, key)
    return findings


def _slo_record_labels(text: str, vpath: str, mine: list, key: str) -> list[Finding]:
    """``RG364`` at ``customRules.<name>.labels`` of ``values.yaml`` text (path ``vpath``) for
    each recording rule of an SLO of ``mine`` (the specs of one chart and values key ``key``)
    whose labels there are not what every recording rule of that SLO gets (a name left out
    gets none)."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:
        return []
    custom = _child(_child(root, key), "customRules")
    if not isinstance(custom, yaml.MappingNode):
        return []
    given: dict = {}  # rule name -> (labels as text pairs, the labels key node)
    for k, v in custom.value:
        labels = _child(v, "labels")
        if isinstance(k, yaml.ScalarNode) and isinstance(labels, yaml.MappingNode):
            pairs = frozenset((getattr(a, "value", None), getattr(b, "value", None)) for a, b in labels.value)
            given[k.value] = (pairs, next(n for n, _ in v.value if getattr(n, "value", None) == "labels"))
    findings = []
    for s in mine:
        for g in s.groups:
            if g.slo is None:
                continue
            records = sorted({r.name for r in g.rules if not r.is_alert})
            sets = {given.get(n, (frozenset(), None))[0] for n in records}
            if len(sets) < 2:
                continue
            for n in records:
                if n in given:
                    node = given[n][1]
                    findings.append(Finding(
                        vpath, node.start_mark.line + 1, node.start_mark.column + 1, "RG364", Severity.ERROR,
                        f"{key}.customRules.{n}.labels: labels on some recording rules of SLO {g.slo} "
                        f"(group {g.name}) only: its burn-rate alerts compare each error ratio with "
                        "slo:error_budget:ratio on all labels and would never fire; set them for the whole "
                        f"group ({key}.groups.{g.name}.additionalRuleLabels) or for every rule "
                        f"({key}.additionalRuleLabels)"))
    return findings


def _child(node, key):
    """The value node of ``key`` in the YAML mapping ``node`` (None when absent or no mapping)."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def _slo_names(mine: list, path: str, key: str) -> list[Finding]:
    """``RG363`` for each SLO of ``mine`` (the specs of chart ``path`` with values key
    ``key``, in app order) whose name an SLO of an earlier spec has."""
    findings = []
    # SLO knobs are keyed by name under the values key: one name in two specs is one knob
    first: dict = {}
    for s in mine:
        for x in s.slos:
            if x.name in first and first[x.name] is not s:
                findings.append(s.source.finding(
                    x.path + ("name",), "RG363",
                    f"SLO {x.name} has the name of an SLO of {first[x.name].source.path}, which renders "
                    f"into the same chart ({path}) with the same values key: "
                    f"`{key}.slos.{x.name}` would set both; rename one of them",
                    rule=x.name))
            first.setdefault(x.name, s)
    return findings


def unknown_knobs(text: str, values_key: str, rules, groups, gates=(), slos=(),
                  extra_knobs=()) -> list[tuple[int, int, str]]:
    """Keys of ``values.yaml`` text directly under ``<values_key>`` that are no knob
    (:data:`KNOB_NAMES`, ``extra_knobs`` (the chart's ``inhibitRules``), or the first part of a gate under the values key, ``gates``: dotted
    paths), and keys under ``<values_key>.disabled``, ``.customRules``, ``.groups`` and ``.slos``
    that name no rule (``rules``: names), group (``groups``) or SLO (``slos``) of the chart, as (line, column, message),
    1-based, at the key, in document order. The chart's values.schema.json rejects them,
    so ``helm template`` of the chart itself would fail; rulegen never removes a person's keys,
    so a renamed or removed alert or group leaves one behind (``RG730``). Returns [] when the
    text does not parse (``RG701`` says so) or has no such keys."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:
        return []

    def child(node, key):
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and k.value == key:
                    return v
        return None

    knobs = child(root, values_key)
    out = []
    names = tuple(KNOB_NAMES) + tuple(extra_knobs)
    allowed = set(names) | {g.split(".")[1] for g in gates
                                 if g.count(".") >= 1 and g.split(".")[0] == values_key}
    if isinstance(knobs, yaml.MappingNode):
        for k, _ in knobs.value:
            if isinstance(k, yaml.ScalarNode) and k.value not in allowed:
                close = difflib.get_close_matches(k.value, sorted(allowed), n=1)
                hint = f"did you mean {close[0]}? " if close else ""
                out.append((k.start_mark.line + 1, k.start_mark.column + 1,
                            f"{values_key}.{k.value} is not a knob rulegen's template reads ({hint}the knobs "
                            f"are {', '.join(names)}); helm rejects it (values.schema.json): "
                            "remove or rename the key"))
    for part, known, what in (("disabled", set(rules), "rule"), ("customRules", set(rules), "rule"),
                              ("groups", set(groups), "rule group"), ("slos", set(slos), "SLO")):
        node = child(knobs, part)
        if not isinstance(node, yaml.MappingNode):
            continue
        for k, _ in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value not in known:
                out.append((k.start_mark.line + 1, k.start_mark.column + 1,
                            f"{values_key}.{part}.{k.value} names no {what} of this chart (renamed or "
                            f"removed?); helm rejects it (values.schema.json): remove or rename the key"))
    return sorted(out)


def _knob_hint(msg: str, values_key: str, rule_names: set, group_names: set, slo_names: set = frozenset()) -> str:
    """An RG730 message of :func:`values.unknown_knobs` about a key under
    ``<values_key>.disabled``, ``.customRules``, ``.groups`` or ``.slos`` naming no rule,
    group or SLO, with "did you mean" the closest name of the chart added; other messages as
    they are."""
    for part, known in (("disabled", rule_names), ("customRules", rule_names), ("groups", group_names),
                        ("slos", slo_names)):
        prefix = f"{values_key}.{part}."
        if msg.startswith(prefix) and " names no " in msg and "(renamed or removed?)" in msg:
            near = closest(msg[len(prefix):msg.index(" names no ")], known)
            if near:
                return msg.replace("(renamed or removed?)", f"(renamed or removed? did you mean {near}?)", 1)
    return msg
