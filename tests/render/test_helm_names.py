"""PrometheusRule names when several specs share a chart (see rulegen.render.helm): with the
chart's fullname helper, a spec rendering into a template other than prometheusrule.yaml is
named ``<fullname>-<template base name>``, so two specs never render one name (the tester's
case: both rendered ``<release>-tt`` and one overwrote the other on apply)."""

from __future__ import annotations

import pytest

from rulegen.cli import main
from rulegen.render.helm import chart_settings, name_suffix, render_template
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run

from helpers.helm import HELPERS_TPL, SITE, make_spec

TT = """\
app: {app}
{chart}groups:
  - name: {app}
    rules:
      - alert: {alert}
        expr: up{{job="{app}"}} == 0
        severity: warning
        summary: Down.
        description: Down.
"""


def _project(root):
    (root / "rules/sub").mkdir(parents=True)
    (root / "rules/tt.yaml").write_text(TT.format(app="tt", chart="chart: {path: charts/tt}\n", alert="TtDown"))
    (root / "rules/sub/tt2.yaml").write_text(
        TT.format(app="tt2", chart="chart: {path: charts/tt, template: pr2.yaml}\n", alert="Tt2Down"))
    (root / "charts/tt/templates").mkdir(parents=True)
    (root / "charts/tt/Chart.yaml").write_text("apiVersion: v2\nname: tt\nversion: 0.1.0\n")
    (root / "charts/tt/templates/_helpers.tpl").write_text(HELPERS_TPL.replace("NAME", "tt"))


@pytest.mark.parametrize("template,want", [
    ("prometheusrule.yaml", None), ("pr2.yaml", "pr2"), ("Extra_Rules.yaml", "extra-rules"),
    ("a..b.yaml", "a-b"), ("_.yaml", "app"),
])
def test_name_suffix(template, want):
    spec = make_spec({"app": "app", "chart": {"path": "charts/app", "template": template}, "groups": []})
    assert name_suffix(spec) == want


def test_chart_settings_append_the_suffix(tmp_path):
    """The rules file's settings line tells the template to append the suffix (the template
    itself is the same in every chart)."""
    _project(tmp_path)
    spec = make_spec({"app": "tt2", "chart": {"path": "charts/tt", "template": "pr2.yaml"},
                      "groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up"}]}]})
    got = chart_settings(spec, tmp_path, SITE)
    assert (got["template"], got["fullname"], got["nameSuffix"]) == ("pr2.yaml", "tt.fullname", "pr2")
    default = make_spec({"app": "tt", "chart": {"path": "charts/tt"},
                         "groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up"}]}]})
    got = chart_settings(default, tmp_path, SITE)
    assert (got["fullname"], "nameSuffix" in got) == ("tt.fullname", False)
    assert render_template(spec) == render_template(default)


@pytest.mark.tools
def test_two_specs_in_one_chart_render_two_prometheusrules(tmp_path, helm_bin, capsys):
    _project(tmp_path)
    assert main(["-C", str(tmp_path), "validate"]) == 0
    assert main(["-C", str(tmp_path), "build"]) == 0
    capsys.readouterr()
    out = helm_run.template(tmp_path / "charts/tt", release="rel", namespace="mon",
                            values=[values_yaml({"enabled": True, "monitoring": {"enabled": True}})])
    got = sorted((pr["metadata"]["name"], pr["metadata"]["namespace"],
                  [r["alert"] for g in pr["spec"]["groups"] for r in g["rules"]])
                 for pr in out.prometheus_rules())
    assert got == [("rel-tt", "mon", ["TtDown"]), ("rel-tt-pr2", "mon", ["Tt2Down"])]


def test_two_specs_in_one_chart_share_values_and_check_settles(tmp_path, capsys):
    """Both specs' keys land in the one values.yaml (the second merges into the first's
    result, not into the disk's), the plan has one output per path, and check is clean right
    after build (it used to flip-flop: each build rewrote values.yaml with one spec's keys)."""
    from ruamel.yaml import YAML

    from rulegen.pipeline import load_project, plan_project

    _project(tmp_path)
    outputs, _ = plan_project(load_project(tmp_path, None), "helm")
    paths = [o.path for o in outputs]
    assert len(paths) == len(set(paths))
    assert main(["-C", str(tmp_path), "build"]) == 0
    values = YAML(typ="safe").load((tmp_path / "charts/tt/values.yaml").read_text())
    assert values["prometheusRule"]["groups"] == {"tt": {"enabled": True}, "tt2": {"enabled": True}}
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "check"]) == 0
    # two rules files and their metadata files, the chart library (Chart.yaml, _rulegen.tpl), the
    # chart's link to it and the two site assets more than the old layout; the four sum files (the
    # two apps', the site's, the library's: issue 29)
    assert capsys.readouterr().out == "check: 21 generated file(s) up to date\n"
