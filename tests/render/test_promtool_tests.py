"""promtool test files from specs (issue 6): completion of expectations, warnings, notation."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from rulegen.render.promtool_tests import NotExpandable, expand, render_test_file
from rulegen.spec import load_text
from rulegen.validate import validate
from rulegen.promql.series import ValuesError
from rulegen.promql.series import expand as expand_values

from helpers import REPO


@pytest.mark.parametrize("template,labels,want", [
    ("{{ $labels.pod }} down", {"pod": "p-1"}, "p-1 down"),
    ("{{$labels.pod}}", {"pod": "x"}, "x"),
    ("{{ .Labels.pod }}", {"pod": "x"}, "x"),
    ('{{ index $labels "pod" }}', {"pod": "x"}, "x"),
    ("{{ $labels.missing }}", {}, ""),  # Prometheus: missingkey=zero (checked with promtool)
    ("a  {{- $labels.x -}}  b", {"x": "X"}, "aXb"),
    ("{{/* note */}}plain", {}, "plain"),
    ("no template", {}, "no template"),
    ("{{ $externalURL }}/x", {}, "http://e/x"),
])
def test_expand_simple_templates(template, labels, want):
    assert expand(template, labels, {}, "http://e") == want


@pytest.mark.parametrize("template", ["{{ $value }}", "{{ humanize $value }}", "{{ if $labels.x }}y{{ end }}",
                                      "{{ $labels.x | toUpper }}"])
def test_expand_refuses_what_it_cannot_evaluate(template):
    with pytest.raises(NotExpandable):
        expand(template, {"x": "1"})


def test_expand_values_counts_steps():
    assert expand_values("0x3") == ["n"] * 4
    assert expand_values("1+1x2 _ stale") == ["n", "n", "n", "_", "stale"]
    assert expand_values("_x2 1 -2.5e3 Inf NaN") == ["_", "_", "n", "n", "n", "n"]
    assert expand_values("{{schema:0 sum:1 count:1}}x2") == ["n"] * 3
    with pytest.raises(ValuesError):
        expand_values("1,2,3")


SPEC = textwrap.dedent("""\
    app: demo
    groups:
      - name: demo
        rules:
          - alert: DemoDown
            expr: up{job="demo"} == 0
            for: 5m
            severity: warning
            labels: {team: core}
            summary: Demo {{ $labels.instance }} is down.
            description: up is {{ $value }} on {{ $labels.instance }}.
            tests:
              - name: fires
                interval: 1m
                input_series:
                  - series: up{job="demo", instance="a:1"}
                    values: "0x10"
                alert_rule_test:
                  - eval_time: 6m
                    exp_alerts:
                      - exp_labels: {job: demo, instance: "a:1"}
                        exp_annotations: {description: up is 0 on a:1.}
    """)


def _spec(text):
    res = validate([load_text(text, "rules/demo.yaml")])
    return res


def test_expected_alerts_hold_the_labels_completed_and_only_the_stated_annotations():
    res = _spec(SPEC)
    assert [f.code for f in res.findings] == []
    text = render_test_file(res.specs[0], "https://rb.example/", ["# header"])
    doc = yaml.safe_load(text)
    assert doc["rule_files"] == ["rules.yaml"]
    assert doc["evaluation_interval"] == "1m"
    t = doc["tests"][0]
    assert t["name"] == "DemoDown: fires"
    art = t["alert_rule_test"][0]
    assert art["alertname"] == "DemoDown"
    assert art["exp_alerts"] == [{
        "exp_labels": {"component": "demo", "instance": "a:1", "job": "demo", "severity": "warning", "team": "core"},
        "exp_annotations": {"description": "up is 0 on a:1."},
    }]


def test_exact_annotations_adds_the_generated_runbook_url():
    res = _spec(SPEC.replace("            interval: 1m\n", "            interval: 1m\n"
                             "            exact_annotations: true\n", 1))
    assert [f.code for f in res.findings] == []
    doc = yaml.safe_load(render_test_file(res.specs[0], "https://rb.example/", ["# header"]))
    assert doc["tests"][0]["alert_rule_test"][0]["exp_alerts"][0]["exp_annotations"] == {
        "description": "up is 0 on a:1.", "runbook_url": "https://rb.example/demo/#demodown"}


def test_annotation_with_value_needs_no_expectation_and_builds():
    """Issue 14: `$value` in an annotation no longer stops validation or build (was RG601)."""
    res = _spec(SPEC.replace("                    exp_annotations: {description: up is 0 on a:1.}\n", ""))
    assert [f.code for f in res.findings] == []
    doc = yaml.safe_load(render_test_file(res.specs[0], "https://rb.example/", ["# header"]))
    assert doc["tests"][0]["alert_rule_test"][0]["exp_alerts"][0]["exp_annotations"] == {}


def test_annotation_filters_keep_what_each_group_states():
    from rulegen.render.promtool_tests import annotation_filters, filter_annotations
    res = _spec(SPEC)
    filters = annotation_filters(res.specs[0])
    labels = (("component", "demo"), ("instance", "a:1"), ("job", "demo"), ("severity", "warning"),
              ("team", "core"))
    assert filters == {"DemoDown: fires": {"DemoDown": ((labels, ("description",)),)}}
    groups = [{"name": "g", "rules": [
        {"alert": "DemoDown", "expr": "x", "annotations": {"summary": "s", "description": "d"}},
        {"alert": "Other", "expr": "y", "annotations": {"summary": "s"}},
        {"record": "r", "expr": "z"}]}]
    assert filter_annotations(groups, filters["DemoDown: fires"]) == [{"name": "g", "rules": [
        {"alert": "DemoDown", "expr": "x", "annotations": {"description": "d"}},
        {"alert": "Other", "expr": "y"},
        {"record": "r", "expr": "z"}]}]
    assert filter_annotations(groups, {"DemoDown": ((labels, None),)})[0]["rules"][0]["annotations"] == {
        "summary": "s", "description": "d"}
    assert groups[0]["rules"][0]["annotations"] == {"summary": "s", "description": "d"}  # copy


@pytest.mark.parametrize("old,new,code,line", [
    ("interval: 1m", "interval: 10m", "RG602", 14),
    ("eval_time: 6m", "eval_time: 30m", "RG603", 19),
    ('values: "0x10"', 'values: "0x5 _x10"', "RG605", 17),
    ('values: "0x10"', 'values: "0,1"', "RG607", 17),
    ('expr: up{job="demo"} == 0', 'expr: rate(up{job="demo"}[1m]) == 0', "RG604", 14),
])
def test_test_warnings(old, new, code, line):
    res = _spec(SPEC.replace(old, new))
    got = [(f.code, f.line) for f in res.findings if f.code.startswith("RG6")]
    assert got == [(code, line)]


def test_test_without_assertion_rg606():
    text = SPEC.split("            alert_rule_test:")[0]
    res = _spec(text)
    assert [(f.code, f.line, f.col) for f in res.findings] == [("RG606", 13, 13)]


def test_undefined_variable_is_reported_once_by_the_template_check():
    """Regression: `{{ $label.instance }}` also produced an RG601 with the wrong fix."""
    res = _spec(SPEC.replace("summary: Demo {{ $labels.instance }} is down.",
                             "summary: Demo {{ $label.instance }} is down."))
    assert [f.code for f in res.findings] == ["RG306"]


# --- label templates (M1): expanded like Prometheus, with the series' labels ------------------

TIERS = textwrap.dedent("""\
    app: tiers
    groups:
      - name: tiers
        rules:
          - alert: TiersDown
            expr: up{job="api"} == 0
            for: 1m
            severity: warning
            labels:
              tier: "{{ $labels.job }}-x"
              shard: "{{ $labels.nope }}"
              origin: "{{ $externalLabels.cluster }}"
            summary: "{{ $labels.job }} down [{{ $labels.severity }}]"
            description: "Tier [{{ $labels.tier }}]."
            tests:
              - name: fires
                interval: 1m
                external_labels: {cluster: eu1}
                input_series:
                  - series: up{job="api", instance="a:1"}
                    values: "0x5"
                alert_rule_test:
                  - eval_time: 2m
                    exp_alerts:
                      - exp_labels: {job: api, instance: "a:1"}
          - alert: TiersLoud
            expr: up{job="api"} == 0
            severity: warning
            labels:
              loud: "{{ $labels.job | toUpper }}"
            summary: Loud.
            description: Loud.
            tests:
              - name: fires
                input_series:
                  - series: up{job="api"}
                    values: "0x5"
                alert_rule_test:
                  - eval_time: 2m
                    exp_alerts:
                      - exp_labels: {job: api, loud: API}
    """)

TIERS_EXPECTED = {
    # tier expanded with the series' job; shard expands to "" and is dropped, as Prometheus
    # drops empty labels; origin from the test's external_labels
    "exp_labels": {"component": "tiers", "instance": "a:1", "job": "api", "origin": "eu1",
                   "severity": "warning", "tier": "api-x"},
    # annotations: only those stated (none here); Prometheus renders them
    "exp_annotations": {},
}


def test_label_templates_are_expanded_with_the_series_labels():
    res = _spec(TIERS)
    # the spec reads rule labels and a label no series has on purpose: RG312 and RG610 warn
    assert [(f.code, f.line) for f in res.findings] == [("RG312", 13), ("RG312", 14), ("RG610", 25)]
    doc = yaml.safe_load(render_test_file(res.specs[0], "https://rb.example/", ["# header"]))
    assert doc["tests"][0]["alert_rule_test"][0]["exp_alerts"] == [TIERS_EXPECTED]
    loud = doc["tests"][1]["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"]
    assert loud == {"component": "tiers", "job": "api", "loud": "API", "severity": "warning"}


def test_label_template_that_cannot_be_expanded_must_be_written_out_rg601():
    res = _spec(TIERS.replace("                  - exp_labels: {job: api, loud: API}",
                              "                  - exp_labels: {job: api}"))
    got = [(f.code, f.severity.value, f.line, f.col, f.rule, f.message) for f in res.findings
           if f.code == "RG601"]
    assert got == [("RG601", "warning", 41, 21, "TiersLoud",  # the exp_alerts entry
                    "label `loud` uses `{{$labels.job | toUpper}}`, which rulegen cannot expand; "
                    "write `exp_labels: {loud: ...}` in the test")]
    # a warning: the test file is still written, without the label, so promtool shows it
    doc = yaml.safe_load(render_test_file(res.specs[0], "https://rb.example/", ["# header"]))
    assert doc["tests"][1]["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"] == {
        "component": "tiers", "job": "api", "severity": "warning"}


@pytest.mark.tools
def test_label_templates_pass_the_real_promtool(project, helm_bin, promtool_bin, capsys):
    from rulegen.cli import main

    for p in (project / "rules").iterdir():
        p.unlink()
    (project / "rules/tiers.yaml").write_text(TIERS, encoding="utf-8")
    assert main(["-C", str(project), "test"]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out


@pytest.mark.tools
def test_a_promtool_run_past_its_time_limit_stops_with_a_message(project, helm_bin, promtool_bin, capsys, monkeypatch):
    # regression: a promtool run past TIMEOUT_S ended `rulegen test` in a TimeoutExpired traceback
    from rulegen.cli import main
    from rulegen.tools import promtool
    monkeypatch.setattr(promtool, "TIMEOUT_S", 0.001)
    assert main(["-C", str(project), "test", "--app", "llama-swap"]) == 2
    err = capsys.readouterr().err
    assert "promtool test rules did not finish within 0.001 s" in err and "Traceback" not in err


# -- the test file's YAML: libyaml's emitter only where it writes what PyYAML's writes (issue 25)

_OPTS = dict(sort_keys=False, allow_unicode=True, width=100000, default_flow_style=False)


@pytest.mark.parametrize("text", ["x", "a: b", "- x", "'q'", '"q"', "#c", "a #b", " lead", "trail ", "1", "1.5", "yes",
                                  "null", "~", "a\nb", "a\n\nb\n", "\n", "{x}", "[x]", "@x", "`x`", "%x", "!x",
                                  "&x", "*x", "|x", ">x", "?", "? x", ":", "x:", "a: ", "--- x", "...", "-", "a\\b"])
def test_plain_ascii_strings_dump_the_same_with_libyaml(text):
    from rulegen.render.promtool_tests import _plain_ascii
    doc = {"tests": [{"name": text, "input_series": [{"series": text, "values": "1x3"}],
                      "alert_rule_test": [{"exp_alerts": [{"exp_annotations": {"k": text, text: "v"}}]}]}]}
    assert _plain_ascii(doc)
    assert yaml.dump(doc, Dumper=yaml.CSafeDumper, **_OPTS) == yaml.safe_dump(doc, **_OPTS)


@pytest.mark.parametrize("text", ["", "a\rb", "caf\u00e9", "\U0001F600", "a\tb", "\ufeffx", "a\u2028b", "\x85"])
def test_other_strings_keep_pyyaml_s_emitter(text):
    # libyaml writes some of these differently (an empty key as '' instead of ? '', a CR key
    # as ? "a\rb", emoji unescaped): such a doc must not be given to it
    from rulegen.render.promtool_tests import _plain_ascii
    assert not _plain_ascii({"tests": [{"exp_annotations": {text: "v"}}]})
    assert not _plain_ascii({"tests": [{"exp_annotations": {"k": text}}]})


def test_bundled_test_files_are_what_pyyaml_writes():
    from rulegen.pipeline import load_project
    repo = REPO
    loaded = load_project(repo)
    done = 0
    from rulegen.spec import slo
    # the committed files (declared tests; a spec with SLOs has a note among the header
    # comments) and what `rulegen test` runs (the SLOs' generated tests added)
    for spec in [s for x in loaded.specs for s in (x, slo.with_tests(x))]:
        text = render_test_file(spec, "https://runbooks.example.com/", ["# header"])
        if text is None:
            continue
        body = "".join(line for line in text.splitlines(True) if not line.startswith("#"))
        assert body == yaml.safe_dump(yaml.safe_load(body), **_OPTS), spec.file
        done += 1
    assert done == 6
