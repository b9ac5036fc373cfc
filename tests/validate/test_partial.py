"""Findings in one run, not in rounds: an alert that fails the schema is left out and the rest
of the spec is checked (templates, PromQL, conventions), when that is safe."""

from __future__ import annotations

from rulegen.validate import validate_texts

SPEC = """\
app: demo
groups:
  - name: first
    rules:
      - alert: DemoDown
        expr: up == 0
        for: 5m
        severity: warning
        summary: Demo is down.
        description: up is 0.
{bad}
  - name: second
    rules:
      - alert: DemoSlow
        expr: rate(x[5m]) > 1
        for: 5m
        severity: {severity}
        summary: Demo is slow on {{{{ $labels.instance }}
        description: x.
"""

BAD_ALERT = "        bogus: 1"
BAD_RECORD = """      - record: job:x:rate5m
        expr: rate(x[5m])
        bogus: 1"""


def _codes(bad: str, severity: str = "warning") -> list:
    res = validate_texts({"rules/demo.yaml": SPEC.format(bad=bad, severity=severity)})
    assert not res.specs  # the file still fails: nothing is rendered from it
    return [(f.line, f.col, f.code) for f in res.findings]


def test_a_schema_error_and_a_template_error_are_reported_in_one_run():
    assert _codes(BAD_ALERT) == [(11, 9, "RG201"), (18, 55, "RG305")]


def test_every_later_check_runs_on_the_rest_with_the_positions_as_written():
    # a whole group left out (its only alert fails): the next group's findings keep their lines
    text = SPEC.format(bad=BAD_ALERT, severity="critcal")
    found = [(f.line, f.col, f.code) for f in validate_texts({"rules/demo.yaml": text}).findings]
    assert (17, 19, "RG501") in found and (18, 55, "RG305") in found and (11, 9, "RG201") in found


def test_a_failing_alert_is_not_checked_twice_and_its_findings_are_the_schemas():
    found = _codes(BAD_ALERT.replace("bogus: 1", "keep_firing_for: [5m]"))
    assert [c for _, _, c in found].count("RG202") == 1
    assert all(line >= 7 for line, _, _ in found)


def test_a_recording_rule_failing_the_schema_still_blocks_the_other_checks():
    """Alerts may read the recording rule: checked without it they would look wrong."""
    assert _codes("\n" + BAD_RECORD) == [(14, 9, "RG201")]


def test_an_error_outside_the_rules_still_blocks_the_other_checks():
    text = SPEC.format(bad="", severity="warning").replace("app: demo", "app: Demo App")
    found = [f.code for f in validate_texts({"rules/demo.yaml": text}).findings]
    assert found == ["RG204"]


RECORDED = """\
app: shop
groups:
  - name: shop
    rules:
      - record: job:http_requests_errors:ratio_rate5m
        expr: sum by (job) (rate(http_requests_total{code=~"5.."}[5m])) / sum by (job) (rate(http_requests_total[5m]))
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 5m
        severity: warning
        SUMMARY: Shop is down.
        description: x.
      - alert: ShopErrors
        expr: job:http_request_errors:ratio_rate5m > 0.05
        for: 5m
        severity: warning
        summary: Shop errors on {{ $labels.code }}.
        description: x.
"""


def test_a_schema_error_in_one_alert_does_not_hide_another_alerts_missing_recording_rule():
    """Regression (a new-user trial): with a misspelt key in ShopDown, the misspelt recording
    rule name of ShopErrors (RG314, with its "did you mean") was not reported, only in the
    next round, although the spec checks of the rest ran. The checks across specs that read
    only recording rules (which the rest keeps) now run on the rest too, as they do on a whole
    spec; its own label checks (RG311, `code` read from a rule that does not exist) as before."""
    whole = validate_texts({"rules/shop.yaml": RECORDED.replace("SUMMARY", "summary")}).findings
    expected = [(f.line, f.col, f.code, f.message) for f in whole]
    assert [c for _, _, c, _ in expected] == ["RG314"]
    assert "did you mean job:http_requests_errors:ratio_rate5m" in expected[0][3]
    res = validate_texts({"rules/shop.yaml": RECORDED.replace("SUMMARY", "sumary")})
    assert not res.specs
    found = [(f.line, f.col, f.code, f.message) for f in res.findings]
    assert [c for _, _, c, _ in found] == ["RG201", "RG314"]
    assert found[1] == expected[0]  # the same finding as on the whole spec


def test_the_rest_is_checked_against_the_other_specs_recording_rules():
    """A rule of the rest reading another spec's recording rule is not reported missing (its
    labels are checked against it: `code` is summed away, RG311), and one of another spec
    reading a recording rule the rest keeps is not either (it was: RG314 "no rule records")."""
    other = """\
app: billing
groups:
  - name: billing
    rules:
      - record: job:http_request_errors:ratio_rate5m
        expr: sum by (job) (rate(errors_total[5m]))
      - alert: BillingReadsShop
        expr: job:http_requests_errors:ratio_rate5m > 0.05
        for: 5m
        severity: warning
        summary: Billing.
        description: x.
"""
    res = validate_texts({"rules/shop.yaml": RECORDED.replace("SUMMARY", "sumary"), "rules/billing.yaml": other})
    assert [(f.file, f.line, f.code) for f in res.findings] == [
        ("rules/shop.yaml", 11, "RG201"), ("rules/shop.yaml", 17, "RG311")]
