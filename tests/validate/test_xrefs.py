"""Cross-references (RG420, RG421) at exact positions."""

from __future__ import annotations

from rulegen.validate import validate_texts

SPEC = """\
app: {app}
groups:
  - name: {app}
    rules:
      - alert: {alert}
        expr: up == 0
        severity: warning
        summary: Down.
        description: Down.
        runbook:
          related:
            - alert: {related}
        tests:
          - name: fires
            input_series: [{{series: up, values: "0x10"}}]
            alert_rule_test:
              - eval_time: 5m
                alertname: {alertname}
                exp_alerts: [{{}}]
"""


def spec(app="demo", alert="DemoDown", related="DemoDown", alertname="DemoDown"):
    return SPEC.format(app=app, alert=alert, related=related, alertname=alertname)


def run(texts):
    res = validate_texts(texts)
    return [(f.file, f.code, f.line, f.col) for f in res.findings], res


def test_references_resolve():
    assert run({"a.yaml": spec()})[0] == []


def test_related_alert_may_live_in_another_spec():
    texts = {"a.yaml": spec(related="OtherDown"), "b.yaml": spec(app="other", alert="OtherDown", related="OtherDown",
                                                                  alertname="OtherDown")}
    assert run(texts)[0] == []


def test_related_alert_unknown_with_did_you_mean():
    found, res = run({"a.yaml": spec(related="DemoDwn")})
    assert found == [("a.yaml", "RG420", 12, 22)]
    assert res.findings[0].message == "related alert 'DemoDwn' is not defined in any spec; did you mean DemoDown?"


def test_test_alertname_must_be_in_the_same_spec():
    texts = {"a.yaml": spec(alertname="OtherDown"),
             "b.yaml": spec(app="other", alert="OtherDown", related="OtherDown", alertname="OtherDown")}
    found, res = run(texts)
    assert found == [("a.yaml", "RG421", 18, 28)]
    assert "does not define" in res.findings[0].message


def test_test_alertname_typo_suggests():
    found, res = run({"a.yaml": spec(alertname="DemoDonw")})
    assert found == [("a.yaml", "RG421", 18, 28)]
    assert res.findings[0].message.endswith("did you mean DemoDown?")
