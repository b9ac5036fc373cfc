"""Duplicates (RG410-RG414) at exact positions; across-app severity from the config."""

from __future__ import annotations

from rulegen.config import Config
from rulegen.findings import Severity
from rulegen.validate import validate_texts

ALERT = """\
      - alert: {name}
        expr: up == 0
        severity: {severity}
        summary: Down.
        description: Down.
"""


def spec(app="demo", groups=(("demo", (("DemoDown", "warning"),)),), chart=""):
    out = f"app: {app}\n{chart}groups:\n"
    for g, alerts in groups:
        out += f"  - name: {g}\n    rules:\n"
        for name, sev in alerts:
            out += ALERT.format(name=name, severity=sev)
    return out


def run(texts, config=None):
    res = validate_texts(texts, config)
    return [(f.file, f.code, f.line, f.col) for f in res.findings], res


def test_no_duplicates():
    assert run({"a.yaml": spec(), "b.yaml": spec(app="other", groups=(("o", (("OtherDown", "warning"),)),))})[0] == []


def test_group_name_twice():
    text = spec(groups=(("demo", (("DemoDown", "warning"),)), ("demo", (("DemoSlow", "warning"),))))
    found, res = run({"a.yaml": text})
    assert found == [("a.yaml", "RG410", 10, 11)]
    assert "already used at line 3" in res.findings[0].message


def test_same_alert_same_labels_twice():
    text = spec(groups=(("demo", (("DemoDown", "warning"), ("DemoDown", "warning"))),))
    found, res = run({"a.yaml": text})
    assert found == [("a.yaml", "RG411", 10, 16)]
    assert "already defined at line 5" in res.findings[0].message


def test_same_alert_name_different_severity_is_fine():
    text = spec(groups=(("demo", (("DemoDown", "warning"), ("DemoDown", "critical"))),))
    found, _ = run({"a.yaml": text}, Config(require_runbook_for=()))
    assert found == []


def test_same_alert_in_two_groups_of_one_spec_is_a_duplicate():
    text = spec(groups=(("a", (("DemoDown", "warning"),)), ("b", (("DemoDown", "warning"),))))
    found, _ = run({"a.yaml": text})
    assert found == [("a.yaml", "RG411", 12, 16)]


def test_alert_name_across_apps_error_then_warning():
    texts = {"a.yaml": spec(), "b.yaml": spec(app="other", groups=(("o", (("DemoDown", "warning"),)),))}
    found, res = run(texts)
    assert found == [("b.yaml", "RG412", 5, 16)]
    assert res.findings[0].severity is Severity.ERROR
    assert "also defined by app 'demo' (a.yaml)" in res.findings[0].message
    _, res = run(texts, Config(duplicate_alert_across_apps="warning"))
    assert [(f.code, f.severity) for f in res.findings] == [("RG412", Severity.WARNING)]
    assert res.ok


def test_same_app_twice():
    found, _ = run({"a.yaml": spec(), "b.yaml": spec(groups=(("o", (("OtherDown", "warning"),)),))})
    assert found == [("b.yaml", "RG413", 1, 6)]


def test_same_chart_template_path():
    chart = "chart: {path: charts/demo}\n"
    texts = {"a.yaml": spec(), "b.yaml": spec(app="other", chart=chart,
                                              groups=(("o", (("OtherDown", "warning"),)),))}
    found, res = run(texts)
    assert found == [("b.yaml", "RG414", 2, 15)]
    assert "charts/demo/templates/prometheusrule.yaml" in res.findings[0].message
