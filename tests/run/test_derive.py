"""``rulegen derive-tests`` (issue 14): tests written from the rule pass as written and kill the
standard mutants, one test per common shape; other shapes are left to write by hand."""

from __future__ import annotations

import json
import textwrap

import pytest
import yaml

from rulegen.cli import main
from rulegen.run.derive import Manual, analyze

HEAD = textwrap.dedent("""\
    # the team's comment, kept
    app: shapes
    groups:
      - name: shapes
        rules:
    """)

RULE = """\
      - alert: {name}   # a comment on the rule
        expr: {expr}
        for: {for_}
        severity: warning
        summary: "{{{{ $labels.job }}}} is wrong."
        description: Value {{{{ $value | humanize }}}}.
"""

SHAPES = {
    "threshold": ("QueueDeep", 'queue_depth{job="worker", queue=~"high|low"} > 80', "5m"),
    "aggregation": ("ConditionStuck",
                    'max by (namespace, name) (cond{condition="Ready", status="False", reason=~"A.*B"}) > 0', "15m"),
    "rate": ("FailuresGrowing", 'rate(failures_total{result="failed"}[10m]) > 0', "10m"),
    "increase": ("Timeouts", 'sum by (namespace, svc) (increase(timeouts_total{outcome="timeout"}[10m])) >= 3', "5m"),
    "ratio": ("ErrorRatioHigh", 'errors_total{job="api"} / requests_total{job="api"} > 0.05', "10m"),
    "rate ratio": ("ErrorRateRatio",
                   'sum by (job) (rate(errors_total{code=~"5.."}[5m])) / sum by (job) (rate(requests_total[5m])) > 0.1',
                   "5m"),
    "absent": ("TargetMissing", 'absent(up{job="svc", namespace="ai"} == 1)', "10m"),
    "and guard": ("DiskFilling",
                  'node_filesystem_avail_bytes{fstype!="tmpfs"} / node_filesystem_size_bytes{fstype!="tmpfs"} * 100 < 10 '
                  'and node_filesystem_readonly == 0', "2m"),
    "and of rates": ("ErrorsWhileBusy",
                     'rate(errors_total{job="api"}[5m]) > 0 and rate(requests_total{job="api"}[5m]) > 1', "3m"),
    "scaled ratio": ("DiskAlmostFull",
                     'node_filesystem_avail_bytes{mountpoint="/"} / node_filesystem_size_bytes{mountpoint="/"} * 100 < 10',
                     "5m"),
    "absent selector": ("MetricGone", 'absent(heartbeat{job="svc"})', "2m"),
}


RECORD = """\
      - record: {name}
        expr: {expr}
"""

RECORDS = {
    "record rate": ("job:http_errors:rate5m", 'sum by (job) (rate(http_requests_total{code=~"5.."}[5m]))'),
    "record ratio": ("job:errors:ratio", 'sum by (job) (errors{kind="hard"}) / sum by (job) (requests)'),
    "record selector": ("queue:depth:high", 'queue_depth{queue="high"}'),
}


@pytest.mark.tools
@pytest.mark.parametrize("shape", sorted(RECORDS))
def test_derived_recording_rule_tests_pass_and_kill_its_mutants(shape, project, helm_bin, promtool_bin, capsys):
    name, expr = RECORDS[shape]
    _project(project, RECORD.format(name=name, expr=json.dumps(expr)))
    assert main(["-C", str(project), "derive-tests"]) == 0
    out = capsys.readouterr().out
    assert f"{name}: 1 test(s) derived" in out, out
    code = main(["-C", str(project), "test", "--mutate"])
    out = capsys.readouterr().out
    assert code == 0, out
    survivors = [line.split("no test fails when ")[1].split(": add ")[0] for line in out.splitlines()
                 if "SURVIVED" in line]
    # a steady pace reads the same over any full window: the one thing the derived test leaves
    # open (a doubled window still reaches back before the series, so it reads less)
    assert survivors == (["range `[5m]` halved to `[2m30s]`"] if shape == "record rate" else []), out


def _project(project, rules: str) -> None:
    for p in (project / "rules").iterdir():
        p.unlink()
    (project / "rules/shapes.yaml").write_text(HEAD + rules, encoding="utf-8")


@pytest.mark.tools
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_derived_tests_pass_and_kill_the_standard_mutants(shape, project, helm_bin, promtool_bin, capsys):
    name, expr, for_ = SHAPES[shape]
    _project(project, RULE.format(name=name, expr=json.dumps(expr), for_=for_))
    assert main(["-C", str(project), "derive-tests"]) == 0
    out = capsys.readouterr().out
    assert f"{name}: " in out and "test(s) derived" in out, out
    text = (project / "rules/shapes.yaml").read_text()
    assert text.startswith(HEAD + f"      - alert: {name}   # a comment on the rule\n")
    if shape == "rate ratio":
        # the one mutant derived tests cannot kill, said when they are written
        assert ("ErrorRateRatio: note: `> 0.1` against `>= 0.1` is not pinned: a ratio of two rates "
                "cannot be fed exactly the threshold") in out
    if shape == "and of rates":
        assert "ErrorsWhileBusy: note: the windows of `rate`/`increase` inside `and` are not pinned" in out
    code = main(["-C", str(project), "test", "--min-coverage", "100", "--min-mutation-score", "100"])
    out = capsys.readouterr().out
    assert "0 failed" in out.splitlines()[-1]
    if shape in ("rate ratio", "and of rates"):
        # what derived tests do not pin, said when they are written (see above and the README)
        survivors = [line.split("no test fails when ")[1].split(": add ")[0] for line in out.splitlines()
                     if "SURVIVED" in line]
        assert survivors == (["`> 0.1` becomes `>= 0.1`"] if shape == "rate ratio" else
                             ["range `[5m]` halved to `[2m30s]`", "range `[5m]` doubled to `[10m]`"]), out
        assert code == 1
        return
    assert code == 0, out
    assert "mutation score:" in out and "(100%)" in out and "SURVIVED" not in out


def test_derive_keeps_the_rest_of_the_spec_byte_for_byte(project, capsys):
    rules = (RULE.format(name="QueueDeep", expr='queue_depth{job="worker"} > 80', for_="5m")
             + "\n      # a comment between rules\n"
             + RULE.format(name="Weird", expr="up == 0 or absent(up)", for_="1m")
             + "        tests:\n"
               "          - name: hand-written\n"
               "            input_series: []\n"
               "            alert_rule_test: [{eval_time: 1m, exp_alerts: [{exp_labels: {}}]}]\n"
             + RULE.format(name="Other", expr="max_over_time(x[5m]) > 1", for_="1m"))
    _project(project, rules)
    before = (project / "rules/shapes.yaml").read_text()
    assert main(["-C", str(project), "derive-tests"]) == 0
    out = capsys.readouterr().out
    after = (project / "rules/shapes.yaml").read_text()
    # QueueDeep got tests right after its last line; the rule with tests is left alone; the
    # one whose shape is not derivable is reported with its line and reason
    assert "rules/shapes.yaml:6: QueueDeep: 3 test(s) derived" in out
    assert ("rules/shapes.yaml:24: Other: write this one by hand: `max_over_time(x[5m])` is not a "
            "selector or the rate/increase of one") in out
    assert "Weird" not in out
    head, rest = after.split("        tests:\n", 1)
    assert head == before.split("\n      # a comment between rules")[0]
    block, tail = rest.split("\n\n      # a comment between rules", 1)
    assert "\n      # a comment between rules" + tail == before[before.index("\n      # a comment between rules"):]
    assert "          - name: fires when the value is 120 for `for`, not before" in block
    assert '                values: "120x10"' in block
    assert "                  - exp_labels: {job: worker}" in block
    data = yaml.safe_load(after)
    assert [len(r.get("tests", [])) for r in data["groups"][0]["rules"]] == [3, 1, 0]


def test_dry_run_writes_nothing(project, capsys):
    _project(project, RULE.format(name="QueueDeep", expr='queue_depth{job="worker"} > 80', for_="5m"))
    before = (project / "rules/shapes.yaml").read_text()
    assert main(["-C", str(project), "derive-tests", "--dry-run"]) == 0
    assert "tests:" in capsys.readouterr().out
    assert (project / "rules/shapes.yaml").read_text() == before


@pytest.mark.parametrize("expr,reason", [
    ("up == 0 or absent(up)", "the expr is not `<series> <comparison> <number>`, `absent(...)` or two of "
                              "those joined by `and`"),
    ("x > bool 1", "the comparison uses `bool`, `on` or `ignoring`"),
    ("a / on (job) b > 1", "a binary operation other than a plain ratio `a / b`"),
    ("topk(3, x) > 1", "the aggregation `topk` is not one of avg, max, min, sum"),
    ("rate(x[5m]) < 0", "a counter's rate is never negative: the comparison cannot tell anything"),
    ("x offset 5m > 1", "the selector uses `offset` or `@`"),
])
def test_other_shapes_are_left_to_write_by_hand(expr, reason):
    with pytest.raises(Manual) as e:
        analyze(expr)
    assert str(e.value) == reason


def test_derive_on_the_bundled_noctaya_spec_skips_its_generated_slo_rules(project, capsys):
    """Issue 29 item 6: `derive-tests` without arguments on the bundled specs (noctaya has
    `slos:`) used to insert `tests:` at the SLO's generated rules (RG102 "tests" appears twice,
    nothing written). Rules generated from `slos:` are not the spec's text: none is derived
    into, none is listed as "write by hand", and a written rule beside them still is."""
    noctaya = project / "rules/noctaya.yaml"
    # a written rule without tests next to the SLO, so something is derived in that spec
    text = noctaya.read_text(encoding="utf-8")
    assert "\nslos:\n" in text and "\ngroups:\n" in text
    extra = ("  - name: noctaya-derive\n    rules:\n      - alert: NoctayaQueueDeep\n"
             "        expr: noctaya_queue_depth{job=\"gateway\"} > 80\n        for: 5m\n"
             "        severity: warning\n        summary: Queue deep.\n        description: Queue deep.\n")
    noctaya.write_text(text.replace("\ngroups:\n", "\ngroups:\n" + extra, 1), encoding="utf-8")
    before = {p.name: p.read_text(encoding="utf-8") for p in (project / "rules").iterdir()}
    assert main(["-C", str(project), "derive-tests"]) == 0
    out, err = capsys.readouterr()
    assert "RG102" not in out + err and err == ""
    generated = ("slo:", "NoctayaGatewayActivationFastBurn", "NoctayaGatewayActivationSlowBurn")
    assert not [line for line in out.splitlines() if "write this one by hand" in line
                and any(g in line for g in generated)]
    assert "NoctayaQueueDeep: " in out and "test(s) derived" in out
    assert "1 rule(s) given derived tests, 0 to write by hand, 15 generated from slos: (tested by " \
        "their generated tests)" in out
    after = noctaya.read_text(encoding="utf-8")
    # the only change is the tests block of the written alert; the slos: block is untouched
    assert after.count("tests:") == before["noctaya.yaml"].count("tests:") + 1
    assert after.split("\nslos:\n")[1] == before["noctaya.yaml"].split("\nslos:\n")[1]
    assert main(["-C", str(project), "validate"]) == 0
    # asking for a generated alert by name says where its tests come from, and writes nothing
    capsys.readouterr()
    assert main(["-C", str(project), "derive-tests", "--alert", "NoctayaGatewayActivationFastBurn"]) == 0
    out = capsys.readouterr().out
    assert "NoctayaGatewayActivationFastBurn: generated from SLO gateway-activation" in out
    assert noctaya.read_text(encoding="utf-8") == after
