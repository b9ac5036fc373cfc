"""Duplicates (RG410-RG415) at exact positions; across-app severity from the config."""

from __future__ import annotations

import pytest

from rulegen.config import Config
from rulegen.findings import Severity
from rulegen.spec import load_text
from rulegen.validate import Context, validate, validate_texts

from helpers.helm import HELPERS_TPL

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


# --- RG415: two specs, one PrometheusRule name and namespace --------------------------------

def test_same_prometheusrule_name_in_one_chart_rg415():
    texts = {"a.yaml": spec(app="tt", chart="chart: {path: charts/tt, name: tt-rules}\n"),
             "b.yaml": spec(app="tt2", chart="chart: {path: charts/tt, template: pr2.yaml, name: tt-rules}\n",
                            groups=(("o", (("OtherDown", "warning"),)),))}
    found, res = run(texts)
    assert found == [("b.yaml", "RG415", 2, 52)]
    assert res.findings[0].message == (
        "renders the PrometheusRule tt-rules in namespace <release namespace of charts/tt>, like "
        "a.yaml; applied together one would overwrite the other, so give one of them another "
        "chart.name (or chart.namespace); if the two apps are loaded by different Prometheus servers "
        "(one per cluster or provider), list each one's apps under `prometheus_scopes` in .rulegen.yaml")


def test_same_static_name_and_namespace_in_two_charts_rg415():
    texts = {"a.yaml": spec(app="aa", chart="chart:\n  name: shared\n  namespace: mon\n"),
             "b.yaml": spec(app="bb", chart="chart:\n  name: shared\n  namespace: mon\n",
                            groups=(("o", (("OtherDown", "warning"),)),))}
    found, res = run(texts)
    assert found == [("b.yaml", "RG415", 3, 9)]
    assert "PrometheusRule shared in namespace mon, like a.yaml" in res.findings[0].message


@pytest.mark.parametrize("chart_a,chart_b", [
    # one chart, different names
    ("chart: {path: charts/tt, name: a}\n", "chart: {path: charts/tt, template: pr2.yaml, name: b}\n"),
    # same name, other namespace
    ("chart: {name: x, namespace: one}\n", "chart: {name: x, namespace: two}\n"),
    # same name in two charts, each in its release namespace: unknown until install
    ("chart: {name: x}\n", "chart: {name: x}\n"),
    # no helper on disk: each is named after its app
    ("chart: {path: charts/tt}\n", "chart: {path: charts/tt, template: pr2.yaml}\n"),
])
def test_distinct_prometheusrule_names_are_fine(chart_a, chart_b):
    texts = {"a.yaml": spec(app="aa", chart=chart_a),
             "b.yaml": spec(app="bb", chart=chart_b, groups=(("o", (("OtherDown", "warning"),)),))}
    assert run(texts)[0] == []


def _chart_with_fullname(root, name="tt"):
    t = root / "charts" / name / "templates"
    t.mkdir(parents=True)
    (root / "charts" / name / "Chart.yaml").write_text(f"apiVersion: v2\nname: {name}\nversion: 0.1.0\n")
    (t / "_helpers.tpl").write_text(HELPERS_TPL.replace("NAME", name))


def _validate_in(root, texts):
    files = [load_text(text, path) for path, text in texts.items()]
    res = validate(files, Context(root=root))
    return [(f.file, f.code, f.line, f.col) for f in res.findings], res


def test_fullname_helper_names_each_template_apart(tmp_path):
    """The tester's layout: rules/tt.yaml and rules/sub/tt2.yaml in charts/tt, whose
    _helpers.tpl defines tt.fullname: the second is <release>-tt-pr2, so no RG415."""
    _chart_with_fullname(tmp_path)
    texts = {"rules/tt.yaml": spec(app="tt"),
             "rules/sub/tt2.yaml": spec(app="tt2", chart="chart: {path: charts/tt, template: pr2.yaml}\n",
                                        groups=(("o", (("OtherDown", "warning"),)),))}
    assert _validate_in(tmp_path, texts)[0] == []


def test_template_names_that_make_one_suffix_rg415(tmp_path):
    _chart_with_fullname(tmp_path)
    texts = {"rules/a.yaml": spec(app="aa", chart="chart: {path: charts/tt, template: a_b.yaml}\n"),
             "rules/b.yaml": spec(app="bb", chart="chart: {path: charts/tt, template: A-B.yaml}\n",
                                  groups=(("o", (("OtherDown", "warning"),)),))}
    found, res = _validate_in(tmp_path, texts)
    assert found == [("rules/b.yaml", "RG415", 2, 36)]
    assert res.findings[0].message.startswith(
        "renders the PrometheusRule <fullname of charts/tt>-a-b in namespace <release namespace of "
        "charts/tt>, like rules/a.yaml;")


RECORDS = """\
app: kps
groups:
  - name: kube-apiserver-availability.rules
    rules:
{rules}"""


def records(*exprs, name="code_verb:apiserver_request_total:increase1h"):
    return RECORDS.format(rules="".join(f"      - record: {name}\n        expr: '{e}'\n" for e in exprs))


def test_recording_rules_whose_selectors_pin_a_kept_label_apart_are_not_duplicates():
    # regression: kube-prometheus' four code_verb rules (code=~"2.." ... "5..") were RG411 errors
    base = 'sum by (cluster, code, verb) (increase(apiserver_request_total{{job="apiserver",code=~"{c}"}}[1h]))'
    found, res = run({"a.yaml": records(*(base.format(c=c) for c in ("2..", "3..", "4..", "5..")))})
    assert found == []


@pytest.mark.parametrize("a,b,dup", [
    ('sum by (code) (x{code=~"2.."})', 'sum by (code) (x{code=~"5.."})', False),
    ('sum by (code) (x{code="500"})', 'sum by (code) (x{code=~"4.."})', False),
    ('sum by (code) (x{code="500"})', 'sum by (code) (x{code!="500"})', False),
    ('up{job="a"} == 0', 'up{job="b"} == 0', False),
    ('sum by (code) (x{code=~"2..|3.."})', 'sum by (code) (x{code=~"5.."})', False),
    ('sum(x{code=~"2.."})', 'sum(x{code=~"5.."})', True),  # code is aggregated away: same series
    ('sum by (code) (x{code=~"5.."})', 'sum by (code) (x{code=~"50."})', True),  # overlap
    ('sum by (code) (x{code=~"(2|3).."})', 'sum by (code) (x{code=~"5.."})', True),  # not known: a duplicate
    ('sum without (code) (x{code="2"})', 'sum without (code) (x{code="5"})', True),
    ('x{code="2"} / ignoring (code) y', 'x{code="5"} / ignoring (code) y', True),
    ("sum(x)", "sum(y)", True),
])
def test_recording_rule_duplicates_when_outputs_can_collide(a, b, dup):
    found, res = run({"a.yaml": records(a, b, name="job:x:sum")})
    assert found == ([("a.yaml", "RG411", 7, 17)] if dup else [])
    if dup:
        assert res.findings[0].message == (
            "recording rule 'job:x:sum' with the same labels is already defined at line 5; they write the "
            "same series, so one overwrites the other; remove one, or make them write different series "
            "(another name, a label in `labels:`, or selectors pinning a label the result keeps to different "
            "values)")


def test_alerts_whose_selectors_pin_different_jobs_are_not_duplicates():
    text = spec(groups=(("demo", (("DemoDown", "warning"), ("DemoDown", "warning"))),))
    text = text.replace("expr: up == 0", 'expr: up{job="a"} == 0', 1)
    # up == 0 may return job="a" too: the outputs can collide
    assert run({"a.yaml": text})[0] == [("a.yaml", "RG411", 10, 16)]
    assert run({"a.yaml": text.replace("expr: up == 0", 'expr: up{job="b"} == 0')})[0] == []


# --- prometheus_scopes: only apps one Prometheus loads collide (issue 26) ----------------------

def _providers(extra: dict | None = None) -> dict:
    """The same app rendered once per provider: same alert and PrometheusRule names."""
    chart = "chart:\n  name: shared-rules\n  namespace: monitoring\n"
    texts = {f"{app}.yaml": spec(app=app, chart=chart) for app in ("demo-capa", "demo-capz")}
    texts.update(extra or {})
    return texts


SCOPES = {"capa": ("*-capa",), "capz": ("demo-capz",)}


def test_same_names_in_two_prometheus_scopes_pass():
    found, res = run(_providers(), Config(prometheus_scopes=SCOPES))
    assert found == []
    assert res.ok


def test_same_names_without_scopes_still_collide():
    found, res = run(_providers())
    assert found == [("demo-capz.yaml", "RG415", 3, 9), ("demo-capz.yaml", "RG412", 8, 16)]
    assert all("prometheus_scopes" in f.message for f in res.findings)


def test_same_names_in_one_scope_still_collide():
    found, res = run(_providers(), Config(prometheus_scopes={"all": ("demo-*",), "capz": ("demo-capz",)}))
    assert [f[1] for f in found] == ["RG415", "RG412"]
    assert all("both loaded by the Prometheus of scope all" in f.message for f in res.findings)


def test_an_app_in_no_scope_collides_with_every_scope():
    # a third app common to all clusters (no scope names it) is loaded by each Prometheus
    common = spec(app="common", groups=(("c", (("DemoDown", "warning"),)),))
    found, res = run(_providers({"zz-common.yaml": common}), Config(prometheus_scopes=SCOPES))
    assert found == [("zz-common.yaml", "RG412", 5, 16)]
    assert "also defined by app 'demo-capa'" in res.findings[0].message


def test_rule_twice_in_one_spec_is_not_scoped():
    # a spec is one PrometheusRule, loaded whole: scopes do not separate its groups
    text = spec(app="demo-capa", groups=(("a", (("DemoDown", "warning"),)), ("b", (("DemoDown", "warning"),))))
    found, _ = run({"a.yaml": text}, Config(prometheus_scopes=SCOPES))
    assert [f[1] for f in found] == ["RG411"]


@pytest.mark.parametrize("raw, message", [
    ({"prometheus_scopes": {"capa": []}}, "list the apps this Prometheus loads"),
    ({"prometheus_scopes": {"capa": ["Shop_X"]}}, "not an app name or pattern: 'Shop_X'"),
    ({"prometheus_scopes": {"bad name": ["x"]}}, "is not a scope name"),
    ({"prometheus_scopes": ["capa"]}, "prometheus_scopes must be a mapping"),
])
def test_prometheus_scopes_config_errors(raw, message):
    from rulegen.config import parse_config
    from rulegen.findings import RulegenError
    with pytest.raises(RulegenError, match=message):
        parse_config(raw)


def test_scopes_of_and_share_prometheus():
    from rulegen.config import parse_config
    c = parse_config({"prometheus_scopes": {"capa": ["*-capa", "shared"], "capz": ["*-capz", "shared"]}})
    assert (c.scopes_of("shop-capa"), c.scopes_of("other")) == (frozenset({"capa"}), None)
    assert c.scopes_of("shared") == frozenset({"capa", "capz"})
    assert not c.share_prometheus("shop-capa", "shop-capz")
    assert c.share_prometheus("shop-capa", "shared") and c.share_prometheus("shop-capz", "other")
