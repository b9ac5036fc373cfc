"""Per-rule knobs from values, with the real helm: each knob changes exactly the rules it
names, in exactly the way the values say, and every other rule stays identical.

Baseline: the synthetic chart below rendered with its default values equals the spec's own
rules (``rulegen.render.plain.rule_groups``). Each test renders with one knob set and compares
rule by rule with the baseline.
"""

from __future__ import annotations

import copy

import pytest

from rulegen.render.plain import rule_groups
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run

from helpers.helm import SITE, rules_by_name, strict_load_all, write_chart

pytestmark = pytest.mark.tools("helm")

SPEC = {
    "app": "knobs",
    "labels": {"team": "ai"},
    "groups": [
        {"name": "api", "rules": [
            {"alert": "ApiDown", "expr": "up{job=\"api\"} == 0", "for": "5m", "keep_firing_for": "10m",
             "severity": "critical", "labels": {"tier": "front"},
             "summary": "API {{ $labels.instance }} down", "description": "No scrape for 5m."},
            {"alert": "ApiSlow", "expr": "api:req:rate5m > 10", "severity": "warning", "summary": "slow"},
            {"record": "api:req:rate5m", "expr": "sum(rate(http_requests_total[5m]))",
             "labels": {"source": "spec"}},
        ]},
        {"name": "db", "rules": [
            {"alert": "DbDown", "expr": "up{job=\"db\"} == 0", "for": "1m", "severity": "critical"},
            {"record": "db:up:sum", "expr": "sum(up{job=\"db\"})"},
        ]},
    ],
}
ALERTS = [("api", "ApiDown"), ("api", "ApiSlow"), ("db", "DbDown")]
ALL = [("api", "ApiDown"), ("api", "ApiSlow"), ("api", "api:req:rate5m"), ("db", "DbDown"), ("db", "db:up:sum")]


@pytest.fixture(scope="module")
def chart(tmp_path_factory):
    c, spec = write_chart(tmp_path_factory.mktemp("knobs"), SPEC)
    return c, spec


def render(chart, knobs: dict | None = None, release: str = helm_run.DEFAULT_RELEASE) -> dict:
    """The one PrometheusRule rendered with ``prometheusRule: knobs`` (strict YAML parse)."""
    c, _ = chart
    out = helm_run.template(c, values=[values_yaml({"prometheusRule": knobs})] if knobs else None, release=release)
    prs = [d for d in strict_load_all(out.text) if d.get("kind") == "PrometheusRule"]
    assert len(prs) == 1
    return prs[0]


@pytest.fixture(scope="module")
def baseline(chart):
    pr = render(chart)
    assert pr["spec"]["groups"] == rule_groups(chart[1], SITE)
    return rules_by_name(pr["spec"]["groups"])


def changed(chart, baseline, knobs) -> dict:
    """Rules that differ from the baseline under ``knobs``: {(group, name): rule}; asserts the
    set of rules (and their order) is unchanged."""
    after = rules_by_name(render(chart, knobs)["spec"]["groups"])
    assert list(after) == list(baseline)
    return {k: r for k, r in after.items() if r != baseline[k]}


def with_(rule: dict, **changes) -> dict:
    out = copy.deepcopy(rule)
    for k, v in changes.items():
        if isinstance(v, dict):
            out[k] = {**out.get(k, {}), **v}
        else:
            out[k] = v
    return out


def test_baseline_is_the_spec(baseline):
    assert baseline[("api", "ApiDown")] == {
        "alert": "ApiDown", "expr": 'up{job="api"} == 0', "for": "5m", "keep_firing_for": "10m",
        "labels": {"component": "knobs", "severity": "critical", "team": "ai", "tier": "front"},
        "annotations": {"description": "No scrape for 5m.", "summary": "API {{ $labels.instance }} down",
                        "runbook_url": f"{SITE}/knobs/#apidown"}}
    assert baseline[("api", "api:req:rate5m")] == {
        "record": "api:req:rate5m", "expr": "sum(rate(http_requests_total[5m]))",
        "labels": {"source": "spec", "team": "ai"}}


@pytest.mark.parametrize("knob,value,key,expected", [
    ("for", "15m", "for", "15m"),
    ("keepFiringFor", "0s", "keep_firing_for", "0s"),
])
def test_custom_for_and_keep_firing_for_replace_spec_values(chart, baseline, knob, value, key, expected):
    diff = changed(chart, baseline, {"customRules": {"ApiDown": {knob: value}}})
    assert diff == {("api", "ApiDown"): with_(baseline[("api", "ApiDown")], **{key: expected})}


def test_custom_for_and_keep_firing_for_added_when_spec_has_none(chart, baseline):
    diff = changed(chart, baseline, {"customRules": {"ApiSlow": {"for": "2m", "keepFiringFor": "3m"}}})
    want = with_(baseline[("api", "ApiSlow")], **{"for": "2m", "keep_firing_for": "3m"})
    assert diff == {("api", "ApiSlow"): want}
    assert list(diff[("api", "ApiSlow")]) == ["alert", "expr", "for", "keep_firing_for", "labels", "annotations"]


def test_custom_severity(chart, baseline):
    diff = changed(chart, baseline, {"customRules": {"DbDown": {"severity": "info"}}})
    assert diff == {("db", "DbDown"): with_(baseline[("db", "DbDown")], labels={"severity": "info"})}


def test_custom_severity_wins_over_custom_severity_label(chart, baseline):
    diff = changed(chart, baseline, {"customRules": {"DbDown": {"severity": "info", "labels": {"severity": "page"}}}})
    assert diff[("db", "DbDown")]["labels"]["severity"] == "info"


def test_custom_labels(chart, baseline):
    diff = changed(chart, baseline, {"customRules": {"ApiDown": {"labels": {"tier": "back", "extra": "x"}}}})
    assert diff == {("api", "ApiDown"): with_(baseline[("api", "ApiDown")], labels={"tier": "back", "extra": "x"})}


def test_custom_labels_on_recording_rule(chart, baseline):
    diff = changed(chart, baseline, {"customRules": {"db:up:sum": {"labels": {"env": "prod"}}}})
    assert diff == {("db", "db:up:sum"): with_(baseline[("db", "db:up:sum")], labels={"env": "prod"})}


@pytest.mark.parametrize("name", ["summary", "description", "runbook_url", "dashboard"])
def test_custom_annotation_replaces_or_adds(chart, baseline, name):
    diff = changed(chart, baseline, {"customRules": {"ApiDown": {"annotations": {name: "from values {{ $value }}"}}}})
    want = with_(baseline[("api", "ApiDown")], annotations={name: "from values {{ $value }}"})
    assert diff == {("api", "ApiDown"): want}


def test_additional_rule_labels_reach_every_rule_including_recording(chart, baseline):
    diff = changed(chart, baseline, {"additionalRuleLabels": {"env": "prod"}})
    assert sorted(diff) == sorted(ALL)
    for k, r in diff.items():
        assert r == with_(baseline[k], labels={"env": "prod"})


def test_group_additional_rule_labels_reach_only_that_group(chart, baseline):
    diff = changed(chart, baseline, {"groups": {"db": {"additionalRuleLabels": {"shard": "2"}}}})
    assert sorted(diff) == [("db", "DbDown"), ("db", "db:up:sum")]
    for k, r in diff.items():
        assert r == with_(baseline[k], labels={"shard": "2"})


def test_additional_rule_annotations_reach_alerts_only(chart, baseline):
    diff = changed(chart, baseline, {"additionalRuleAnnotations": {"dashboard": "https://d/x"}})
    assert sorted(diff) == sorted(ALERTS)
    for k, r in diff.items():
        assert r == with_(baseline[k], annotations={"dashboard": "https://d/x"})


def test_group_additional_rule_annotations(chart, baseline):
    diff = changed(chart, baseline, {"groups": {"db": {"additionalRuleAnnotations": {"summary": "db!"}}}})
    assert diff == {("db", "DbDown"): with_(baseline[("db", "DbDown")], annotations={"summary": "db!"})}


def test_runbook_url_base(chart, baseline):
    diff = changed(chart, baseline, {"runbookUrl": "https://wiki.example.org/rb/"})
    assert sorted(diff) == sorted(ALERTS)
    assert diff[("api", "ApiDown")] == with_(baseline[("api", "ApiDown")],
                                             annotations={"runbook_url": "https://wiki.example.org/rb/knobs/#apidown"})


def test_disabled_drops_only_that_rule(chart, baseline):
    after = rules_by_name(render(chart, {"disabled": {"ApiSlow": True}})["spec"]["groups"])
    assert after == {k: v for k, v in baseline.items() if k != ("api", "ApiSlow")}
    after = rules_by_name(render(chart, {"disabled": {"ApiSlow": False}})["spec"]["groups"])
    assert after == baseline


def test_group_toggle_drops_only_that_group(chart, baseline):
    after = rules_by_name(render(chart, {"groups": {"db": {"enabled": False}}})["spec"]["groups"])
    assert after == {k: v for k, v in baseline.items() if k[0] != "db"}


def test_precedence_alert_over_group_over_global_over_spec(chart, baseline):
    """Labels: customRules.<Alert>.labels > groups.<g>.additionalRuleLabels >
    additionalRuleLabels > the spec's static labels (team: ai here)."""
    layers = {"additionalRuleLabels": {"team": "global"},
              "groups": {"api": {"additionalRuleLabels": {"team": "group"}}},
              "customRules": {"ApiDown": {"labels": {"team": "alert"}}}}
    rules = rules_by_name(render(chart, layers)["spec"]["groups"])
    assert {k: r["labels"]["team"] for k, r in rules.items()} == {
        ("api", "ApiDown"): "alert", ("api", "ApiSlow"): "group", ("api", "api:req:rate5m"): "group",
        ("db", "DbDown"): "global", ("db", "db:up:sum"): "global"}
    for k, r in rules.items():  # nothing else changed
        assert r == with_(baseline[k], labels={"team": r["labels"]["team"]})


def test_empty_string_overrides_a_lower_level(chart, baseline):
    """Regression: mergeOverwrite (mergo) skipped empty values, so an alert-level ``team: ""``
    (Prometheus drops an empty label) could not override a global ``team``."""
    layers = {"additionalRuleLabels": {"team": "global"},
              "customRules": {"ApiDown": {"labels": {"team": ""}, "annotations": {"summary": ""}}}}
    rules = rules_by_name(render(chart, layers)["spec"]["groups"])
    assert rules[("api", "ApiDown")]["labels"]["team"] == ""
    assert rules[("api", "ApiDown")]["annotations"]["summary"] == ""
    assert rules[("api", "ApiSlow")]["labels"]["team"] == "global"


def test_values_strings_reach_prometheus_exactly(chart, baseline):
    """Regression: strings from values went through toYaml, which changes "\\n", "a\\n\\n" and
    NEL and writes C1 controls raw (the manifest no longer parses). They now come back
    unchanged, as do YAML words, braces, quotes and unicode."""
    nasty = {"l1": "yes", "l2": "{{ $labels.x }}", "l3": "a\nb\n", "l4": "'\"%\\", "l5": " lead",
             "l6": "😀 é", "l7": "null", "l8": "*x", "l9": "a\u2028b\u0085c", "l10": "tab\there ",
             "l11": "\n", "l12": "a\n\n", "l13": "\x7f\x80\x9f", "l14": "\ufffe\uffff\ufeff",
             "l15": "\x00\x1b", "l16": "<&>"}
    rules = rules_by_name(render(chart, {"customRules": {"ApiDown": {"labels": nasty, "annotations": nasty}}})
                          ["spec"]["groups"])
    assert rules[("api", "ApiDown")] == with_(baseline[("api", "ApiDown")], labels=nasty, annotations=nasty)


def test_non_string_label_values_become_strings(chart, baseline):
    """With the schema skipped, a number or boolean label value is written as its string
    (the CRD accepts only strings), not as a YAML number."""
    c, _ = chart
    out = helm_run.template(c, values=[values_yaml({"prometheusRule": {"additionalRuleLabels": {"n": 5, "b": True}}})],
                            extra_args=["--skip-schema-validation"])
    rules = rules_by_name(strict_load_all(out.text)[0]["spec"]["groups"])
    assert rules[("db", "db:up:sum")]["labels"] == {"team": "ai", "n": "5", "b": "true"}


# --- metadata -------------------------------------------------------------------------


def test_metadata_uses_chart_helpers(chart):
    pr = render(chart, release="prod")
    assert pr["metadata"] == {
        "name": "prod-knobs", "namespace": "default",
        "labels": {"app.kubernetes.io/instance": "prod", "app.kubernetes.io/managed-by": "Helm",
                   "app.kubernetes.io/name": "knobs", "helm.sh/chart": "knobs-0.1.0"}}


def test_metadata_labels_and_annotations_from_values(chart, baseline):
    pr = render(chart, {"labels": {"release": "kube-prometheus-stack"}, "annotations": {"note": "x: y"}})
    assert pr["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert pr["metadata"]["annotations"] == {"note": "x: y"}
    assert rules_by_name(pr["spec"]["groups"]) == baseline


def test_values_label_equal_to_helper_label_wins_without_duplicate_key(chart):
    """Regression: the helper's labels and the values' labels were written one after the
    other, so ``app.kubernetes.io/name`` in values gave a duplicate YAML key."""
    c, _ = chart
    out = helm_run.template(c, values=[values_yaml({"prometheusRule": {"labels": {"app.kubernetes.io/name": "custom"}}})])
    assert out.text.count("app.kubernetes.io/name") == 1
    (pr,) = strict_load_all(out.text)
    assert pr["metadata"]["labels"]["app.kubernetes.io/name"] == "custom"
    assert pr["metadata"]["labels"]["app.kubernetes.io/instance"] == helm_run.DEFAULT_RELEASE


def test_metadata_without_helpers(tmp_path, helm_bin):
    c, _ = write_chart(tmp_path, {**SPEC, "app": "plainchart"}, helpers=False)
    out = helm_run.template(c, values=[values_yaml({"prometheusRule": {"labels": {"app.kubernetes.io/managed-by": "me"}}})],
                            namespace="mon")
    (pr,) = strict_load_all(out.text)
    assert pr["metadata"] == {"name": "plainchart", "namespace": "mon",
                              "labels": {"app.kubernetes.io/name": "plainchart",
                                         "app.kubernetes.io/managed-by": "me"}}


def test_metadata_name_and_namespace_from_spec(tmp_path, helm_bin):
    c, _ = write_chart(tmp_path, {**SPEC, "chart": {"name": "my-rules", "namespace": "monitoring"}})
    (pr,) = strict_load_all(helm_run.template(c, namespace="other").text)
    assert (pr["metadata"]["name"], pr["metadata"]["namespace"]) == ("my-rules", "monitoring")
