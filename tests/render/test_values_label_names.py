"""values.schema.json rejects reserved ``__`` label names in every label map rulegen reads
(``additionalRuleLabels``, ``groups.<g>.additionalRuleLabels``, ``customRules.<R>.labels``),
as the spec validation does (RG405): helm would render them and promtool then fail with
``invalid label name: __name__``. The real helm rejects them naming the key."""

from __future__ import annotations

import json

import jsonschema
import pytest

from rulegen.render.values import render_values_schema
from rulegen.tools import helm as helm_run
from rulegen.tools.helm import HelmError

from helpers.helm import make_spec, write_chart

SPEC = {"app": "names", "groups": [{"name": "main", "rules": [{"alert": "NamesDown", "expr": "up == 0"}]}]}


def test_schema_rejects_reserved_names_in_every_label_map():
    v = jsonschema.Draft7Validator(json.loads(render_values_schema(make_spec(SPEC), None)))
    bad = {"prometheusRule": {
        "additionalRuleLabels": {"__name__": "x"},
        "groups": {"main": {"additionalRuleLabels": {"__x": "1"}}},
        "customRules": {"NamesDown": {"labels": {"__team": "a"}}},
    }}
    assert sorted((list(e.absolute_path), e.validator) for e in v.iter_errors(bad)) == [
        (["prometheusRule", "additionalRuleLabels", "__name__"], "not"),
        (["prometheusRule", "customRules", "NamesDown", "labels", "__team"], "not"),
        (["prometheusRule", "groups", "main", "additionalRuleLabels", "__x"], "not"),
    ]
    for name in ("__", "___", "__1"):
        assert [list(e.absolute_path) for e in v.iter_errors({"prometheusRule": {"additionalRuleLabels": {name: "x"}}})] \
            == [["prometheusRule", "additionalRuleLabels", name]]
    good = {"prometheusRule": {
        "additionalRuleLabels": {"_": "x", "team": "a", "_1": "b", "a__b": "c"},
        "groups": {"main": {"additionalRuleLabels": {"_x": "1"}}},
        "customRules": {"NamesDown": {"labels": {"tier": "a"}, "annotations": {"__note": "kept"}}},
        "additionalRuleAnnotations": {"__internal": "annotations may use __"},
    }}
    assert list(v.iter_errors(good)) == []


@pytest.mark.tools
@pytest.mark.parametrize("setting,path", [
    ("prometheusRule.additionalRuleLabels.__x=1", "/prometheusRule/additionalRuleLabels"),
    ("prometheusRule.additionalRuleLabels.__name__=up", "/prometheusRule/additionalRuleLabels"),
    ("prometheusRule.groups.main.additionalRuleLabels.__x=1", "/prometheusRule/groups/main/additionalRuleLabels"),
    ("prometheusRule.customRules.NamesDown.labels.__x=1", "/prometheusRule/customRules/NamesDown/labels"),
])
def test_helm_rejects_a_reserved_label_name_naming_the_key(helm_bin, tmp_path, setting, path):
    chart, _ = write_chart(tmp_path, SPEC)
    key = setting.split("=")[0].rsplit(".", 1)[1]
    with pytest.raises(HelmError) as e:
        helm_run.template(chart, set_values=[setting])
    lines = str(e.value).splitlines()
    assert lines[1:] == ["names:", f"- at '{path}/{key}': 'not' failed"], lines


@pytest.mark.tools
def test_helm_accepts_ordinary_label_names(helm_bin, tmp_path):
    chart, _ = write_chart(tmp_path, SPEC)
    out = helm_run.template(chart, set_values=["prometheusRule.additionalRuleLabels._x=one",
                                               "prometheusRule.customRules.NamesDown.labels.tier=a"])
    labels = out.rule_groups()[0]["rules"][0]["labels"]
    assert labels["_x"] == "one" and labels["tier"] == "a"
