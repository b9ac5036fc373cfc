"""values.schema.json knows the app (rulegen.render.values): ``disabled``, ``customRules``
and ``groups`` accept only the chart's rule and group names, severities only the project's,
and the real helm rejects anything else, naming the key."""

from __future__ import annotations

import json

import pytest

from rulegen.render.values import render_values_schema
from rulegen.tools import helm as helm_run
from rulegen.tools.helm import HelmError

from helpers import FIXTURES
from helpers.helm import make_spec, write_chart

SPEC = {"app": "redis", "groups": [
    {"name": "redis", "rules": [
        {"alert": "RedisDown", "expr": "redis_up == 0", "for": "1m", "severity": "critical"},
        {"alert": "RedisMemoryHigh", "expr": "redis_memory_used_bytes / redis_memory_max_bytes > 0.9",
         "severity": "warning"}]},
    {"name": "redis-recording", "rules": [{"record": "redis:up:sum", "expr": "sum(redis_up)"}]}]}


def _schema_errors(chart, set_values: list[str]) -> list[str]:
    """The lines helm prints after the chart name when the values break the schema."""
    with pytest.raises(HelmError) as e:
        helm_run.template(chart, set_values=set_values)
    lines = str(e.value).splitlines()
    assert lines[0].endswith("failed: Error: values don't meet the specifications of the schema(s) in the "
                             "following chart(s):"), lines
    assert lines[1] == "redis:"
    return lines[2:]


@pytest.fixture(scope="module")
def chart(tmp_path_factory):
    return write_chart(tmp_path_factory.mktemp("schema"), SPEC)[0]


@pytest.mark.tools
@pytest.mark.parametrize("sets,errors", [
    (["prometheusRule.disabled.RedisDwn=true"],
     ["- at '/prometheusRule/disabled': additional properties 'RedisDwn' not allowed"]),
    (["prometheusRule.customRules.RedisDwn.for=5m"],
     ["- at '/prometheusRule/customRules': additional properties 'RedisDwn' not allowed"]),
    (["prometheusRule.customRules.RedisDown.severity=page"],
     ["- at '/prometheusRule/customRules/RedisDown/severity': value must be one of 'critical', 'warning', 'info'"]),
    (["prometheusRule.customRules.redis:up:sum.severity=info"],
     ["- at '/prometheusRule/customRules/redis:up:sum': additional properties 'severity' not allowed"]),
    (["prometheusRule.groups.redis-rec.enabled=false"],
     ["- at '/prometheusRule/groups': additional properties 'redis-rec' not allowed"]),
    (["prometheusRule.customRule.RedisDown.severity=info"],
     ["- at '/prometheusRule': additional properties 'customRule' not allowed"]),
    (["prometheusRule.disable.RedisDown=true"],
     ["- at '/prometheusRule': additional properties 'disable' not allowed"]),
    (["prometheusRule.group.redis.enabled=false"],
     ["- at '/prometheusRule': additional properties 'group' not allowed"]),
], ids=["disabled-typo", "custom-typo", "severity", "record-severity", "group-typo",
        "knob-customRule", "knob-disable", "knob-group"])
def test_helm_rejects_a_knob_the_app_does_not_have_and_names_it(chart, helm_bin, sets, errors):
    assert _schema_errors(chart, sets) == errors


@pytest.mark.tools
def test_knobs_the_app_has_render(chart, helm_bin):
    out = helm_run.template(chart, set_values=[
        "prometheusRule.disabled.RedisDown=true", "prometheusRule.customRules.RedisMemoryHigh.severity=info",
        "prometheusRule.customRules.redis:up:sum.labels.env=prod", "prometheusRule.groups.redis-recording.enabled=true"])
    rules = {r.get("alert", r.get("record")): r for g in out.rule_groups() for r in g["rules"]}
    assert sorted(rules) == ["RedisMemoryHigh", "redis:up:sum"]
    assert rules["RedisMemoryHigh"]["labels"]["severity"] == "info"
    assert rules["redis:up:sum"]["labels"] == {"env": "prod"}


def test_severities_come_from_the_project_config():
    spec = make_spec(SPEC)
    def alert_schema(text):
        knobs = json.loads(text)["properties"]["prometheusRule"]
        assert knobs["properties"]["customRules"]["properties"]["RedisDown"] == {
            "$ref": "#/properties/prometheusRule/definitions/customAlert"}
        return knobs["definitions"]["customAlert"]
    sev = alert_schema(render_values_schema(spec, None, severities=("page", "ticket")))
    assert sev["properties"]["severity"] == {"type": "string", "enum": ["page", "ticket"]}
    anything = alert_schema(render_values_schema(spec, None, severities=()))
    assert anything["properties"]["severity"] == {"type": "string"}


def test_names_of_every_spec_sharing_the_chart_and_values_key():
    a = make_spec(SPEC)
    b = make_spec({"app": "sentinel", "chart": {"path": "charts/redis", "template": "sentinel.yaml"},
                   "groups": [{"name": "sentinel", "rules": [{"alert": "SentinelDown", "expr": "up == 0"}]}]})
    c = make_spec({"app": "other", "chart": {"path": "charts/redis", "template": "o.yaml", "values_key": "otherRules"},
                   "groups": [{"name": "o", "rules": [{"alert": "OtherDown", "expr": "up == 0"}]}]})
    doc = json.loads(render_values_schema(b, None, chart_specs=[a, b, c]))
    knobs = doc["properties"]["prometheusRule"]["properties"]
    assert sorted(knobs["disabled"]["properties"]) == ["RedisDown", "RedisMemoryHigh", "SentinelDown", "redis:up:sum"]
    assert sorted(knobs["groups"]["properties"]) == ["redis", "redis-recording", "sentinel"]


def _check_after_editing_values(tmp_path, capsys, old: str, new: str) -> tuple[int, list[str], str, str]:
    """Build the layout-v1 fixture project, replace the line ``old`` of its llama-swap
    values.yaml by ``new``, and run check: (line of ``old``, check's output lines, the edited
    values text, build's output and errors afterwards)."""
    import shutil
    from pathlib import Path

    from rulegen.cli import main
    root = tmp_path / "p"
    shutil.copytree(FIXTURES / "layout-v1", root)
    assert main(["-C", str(root), "build"]) == 0
    values = root / "charts/llama-swap/values.yaml"
    text = values.read_text(encoding="utf-8")
    assert text.count(old) == 1
    edited = text.replace(old, new)
    values.write_text(edited, encoding="utf-8")
    capsys.readouterr()
    assert main(["-C", str(root), "check"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert main(["-C", str(root), "build"]) == 1
    assert values.read_text(encoding="utf-8") == edited  # nothing added beside the bad key
    built = capsys.readouterr()
    return text[:text.index(old)].count("\n") + 1, out, edited, built.out + built.err


def test_check_names_a_knob_left_behind_in_the_charts_own_values(tmp_path, capsys):
    """RG730: the chart's own values.yaml would fail its schema (a renamed alert or group
    leaves its keys behind: rulegen never removes a person's keys)."""
    line, out, _, _ = _check_after_editing_values(tmp_path, capsys, "  disabled: {}\n",
                                                  "  disabled:\n    LlamaSwapDwn: true\n")
    assert out[0] == (f"charts/llama-swap/values.yaml:{line + 1}:5: error RG730 prometheusRule.disabled.LlamaSwapDwn "
                      "names no rule of this chart (renamed or removed? did you mean LlamaSwapDown?); helm rejects "
                      "it (values.schema.json): remove or rename the key")


def test_a_group_or_custom_rule_left_behind_gets_did_you_mean_or_none(tmp_path, capsys):
    """RG730 under .groups and .customRules: the closest name of the chart, and no guess when
    nothing is close."""
    line, out, _, _ = _check_after_editing_values(
        tmp_path, capsys, "  customRules: {}\n",
        "  customRules:\n    LlamaSwapNoMetric: {severity: info}\n    Unrelated: {severity: info}\n")
    assert out[:2] == [
        f"charts/llama-swap/values.yaml:{line + 1}:5: error RG730 prometheusRule.customRules.LlamaSwapNoMetric "
        "names no rule of this chart (renamed or removed? did you mean LlamaSwapNoMetrics?); helm rejects it "
        "(values.schema.json): remove or rename the key",
        f"charts/llama-swap/values.yaml:{line + 2}:5: error RG730 prometheusRule.customRules.Unrelated "
        "names no rule of this chart (renamed or removed?); helm rejects it (values.schema.json): "
        "remove or rename the key"]
    line, out, _, _ = _check_after_editing_values(
        tmp_path / "g", capsys, "    llama-swap:\n      enabled: true\n", "    llama-swp:\n      enabled: true\n")
    assert out[0].startswith(f"charts/llama-swap/values.yaml:{line}:5: error RG730 prometheusRule.groups.llama-swp "
                             "names no rule group of this chart (renamed or removed? did you mean llama-swap?)")


def test_check_names_a_misspelt_knob_instead_of_adding_the_right_one_beside_it(tmp_path, capsys):
    """RG730: ``customRule:`` directly under the values key is no knob; build must not leave
    it with an empty ``customRules: {}`` beside it while check says up to date."""
    line, out, edited, built = _check_after_editing_values(
        tmp_path, capsys, "  customRules: {}\n", "  customRule:\n    LlamaSwapDown: {severity: info}\n")
    assert "customRules" not in edited
    message = (f"charts/llama-swap/values.yaml:{line}:3: error RG730 prometheusRule.customRule is not a knob "
               "rulegen's template reads (did you mean customRules? the knobs are runbookUrl, labels, "
               "annotations, additionalRuleLabels, additionalRuleAnnotations, groups, disabled, customRules, slos); "
               "helm rejects it (values.schema.json): remove or rename the key")
    assert out[0] == message
    assert message in built


def test_a_gate_under_the_values_key_stays_allowed_by_the_closed_knobs():
    spec = make_spec({**SPEC, "chart": {"gates": ["prometheusRule.enabled"]}})
    knobs = json.loads(render_values_schema(spec, None))["properties"]["prometheusRule"]
    assert knobs["additionalProperties"] is False
    assert knobs["properties"]["enabled"] == {"type": ["boolean", "null"]}
