"""The label set an alert carries when it fires, as far as rulegen can know it.

Prometheus gives a firing alert the labels of its series, then the rule's labels over them
(``alertname`` and the rule's ``labels``). rulegen knows:

* the rule's labels as the chart renders them with its ``values.yaml`` defaults: the spec's
  app, group and rule labels with ``severity`` and ``component``, then the knobs
  ``<valuesKey>.additionalRuleLabels``, ``groups.<group>.additionalRuleLabels`` and
  ``customRules.<Alert>.labels``/``.severity`` (the order of ``templates/helm/_rulegen.tpl``);
* of the series' labels, those the expr pins to one value (an equality matcher the label
  flow carries through to the result, e.g. ``job="api"``).

A label whose value is a template (``{{ $labels.x }}``) and a label the series keep with a
value nobody can know before the alert fires (``namespace``) are *open*: not in the set.
Routes that match on them are routed as if the label were absent.
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

from ..fs import read as fs_read
from ..fs import yamlbound
from ..fs.containment import escaping_link
from ..promql.flowvalue import Flow


def chart_values(root: Path, spec, read=None) -> dict:
    """The ``<valuesKey>`` mapping of the spec's chart ``values.yaml`` (``{}`` when the file
    is missing, unreadable, leads out of the project or has no such mapping). ``read``: a
    function giving a project file's text (or None) instead of the disk (``rulegen diff``
    reads the base ref's from Git)."""
    rel = f"{spec.chart.path}/values.yaml"
    if read is None and escaping_link(root, rel) is not None:
        return {}
    try:
        text = read(rel) if read is not None else fs_read.read_text_or_none(root / rel, rel)
        data = _parsed(text, rel, yamlbound.max_values()) if text else None
    except (yaml.YAMLError, OSError, ValueError):
        return {}
    knobs = data.get(spec.chart.values_key) if isinstance(data, dict) else None
    return knobs if isinstance(knobs, dict) else {}


@functools.lru_cache(maxsize=64)
def _parsed(text: str, rel: str, _limit: int):
    # validation's routing check and the pages' routing lines both read every chart's
    # values.yaml: parsed once per text and alias limit (the knobs are only read, never changed)
    return yamlbound.safe_load(text, rel)


def _strings(d) -> dict:
    return {str(k): str(v) for k, v in d.items() if isinstance(v, (str, int, float)) and not isinstance(v, bool)} \
        if isinstance(d, dict) else {}


def _get(d, *keys):
    for k in keys:
        d = d.get(k) if isinstance(d, dict) else None
    return d


def rule_labels(spec, group, rule, knobs: dict) -> dict:
    """The rule's labels as the chart renders them with values ``knobs`` (the chart's
    ``<valuesKey>`` mapping): spec labels, then the knob layers (see the module docstring)."""
    out = {k: str(v) for k, v in rule.all_labels(spec.labels, group.labels).items()}
    out.update(_strings(knobs.get("additionalRuleLabels")))
    out.update(_strings(_get(knobs, "groups", group.name, "additionalRuleLabels")))
    custom = _get(knobs, "customRules", rule.name)
    out.update(_strings(_get(custom, "labels")))
    sev = _get(custom, "severity")
    if isinstance(sev, str) and sev:
        out["severity"] = sev
    return out


def pinned_labels(fl: Flow) -> dict:
    """Labels the flow ``fl`` of an expr pins to one value: a single non-empty equality matcher
    carried through to the result."""
    if not fl.known or fl.scalar:
        return {}
    out = {}
    for label, matchers in fl.pinned.items():
        if fl.carries(label) is False:
            continue
        eq = [v for op, v in matchers if op == "="]
        if len(matchers) == 1 and len(eq) == 1 and eq[0]:
            out[label] = eq[0]
    return out


def alert_label_set(spec, group, rule, knobs: dict, fl: Flow) -> tuple[dict, tuple]:
    """``(labels, open)``: the label set alert ``rule`` fires with (``alertname``, the labels
    its expr pins, the rule's labels over them) and the names of the labels it carries with
    values unknown here (templated rule labels), sorted."""
    labels = pinned_labels(fl)
    open_ = []
    for k, v in rule_labels(spec, group, rule, knobs).items():
        if "{{" in v:
            open_.append(k)
            labels.pop(k, None)
        else:
            labels[k] = v
    labels["alertname"] = rule.name
    return dict(sorted(labels.items())), tuple(sorted(open_))
