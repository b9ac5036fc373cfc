"""The chart's metadata file (``rules/<app>.meta.yaml``, :mod:`rulegen.render.chart_meta`):
plain YAML keyed by names, never positions, no line over 120 characters, read by the chart
template with ``fromYaml``; long texts through the real helm and promtool (issue 29)."""

from __future__ import annotations

import difflib
import subprocess

import pytest
import yaml

from rulegen.render import helm as helm_render
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run

from helpers.helm import SITE, make_spec, rules_by_name, strict_load_all, write_chart

LONG = "sum by (job) (rate(http_requests_total{job=\"shop\", code=~\"5..\"}[5m])) / " * 3 + "[[threshold]]"
SPEC = {"app": "shop", "groups": [{"name": "shop", "rules": [
    {"alert": "ShopErrors", "expr": "errors > [[warn]]", "params": {"warn": 0.1}, "severity": "warning"},
    {"alert": "ShopErrors", "expr": "errors > [[crit]]", "params": {"crit": 0.5}, "severity": "critical"},
    {"alert": "ShopLong", "expr": LONG, "params": {"threshold": 2}, "severity": "warning",
     "summary": "A summary: " + "long words, " * 20 + "end.",
     "description": "No place to cut " + "x" * 150},
]}], "slos": [{"name": "checkout", "objective": 99.5, "sli": {"events": {
    "bad": "http_requests_total{job=\"shop\", code=~\"5..\"}", "total": "http_requests_total{job=\"shop\"}"}}}]}


def _meta(data) -> str:
    from pathlib import Path
    return helm_render.render_meta_file(make_spec(data), Path("/nonexistent"), SITE, ["# h"])


def test_meta_file_is_keyed_by_names_and_fits_in_120_characters():
    meta = _meta(SPEC)
    assert max(len(line) for line in meta.splitlines()) <= 120
    doc = yaml.safe_load(meta)
    assert doc["rules"] == "shop.rules.yaml" and doc["template"] == "prometheusrule.yaml"
    assert set(doc["params"]["shop"]) == {"ShopErrors", "ShopErrors#2", "ShopLong"}  # 2nd of a name: #2
    assert doc["params"]["shop"]["ShopErrors#2"] == {"expr": "errors > [[crit]]", "defaults": {"crit": "0.5"}}
    assert "".join(doc["params"]["shop"]["ShopLong"]["expr"]) == LONG  # pieces, joined by the template
    slo = doc["slos"]["checkout"]
    assert slo["group"] == "shop-slo-checkout" and slo["ticket"] == "ShopCheckoutSlowBurn"
    # the one rule that holds the objective (as the budget): every other rule reads its series
    assert slo == {"group": "shop-slo-checkout", "ticket": "ShopCheckoutSlowBurn",
                   "budgetRule": "slo:error_budget:ratio", "budgetExpr": "vector([[budget]])"}


def test_inserting_an_alert_adds_lines_and_changes_none():
    """Keyed by names: an alert added before the others adds its own lines; no other line of
    the metadata file changes (with positions, every later key moved)."""
    before = _meta(SPEC)
    data = yaml.safe_load(yaml.safe_dump(SPEC))
    data["groups"].insert(0, {"name": "first", "rules": [
        {"alert": "First", "expr": "x > [[t]]", "params": {"t": 1}, "severity": "warning"}]})
    data["groups"][1]["rules"].insert(0, {"alert": "Zero", "expr": "z > [[t]]", "params": {"t": 1},
                                          "severity": "warning"})
    diff = [d for d in difflib.ndiff(before.splitlines(), _meta(data).splitlines()) if d[:1] in "+-"]
    assert not [d for d in diff if d.startswith("-")], diff
    assert len(diff) == 9  # the group "first" (1 line) and two alerts (4 lines each)


def test_changing_a_default_changes_one_line_of_each_generated_file(tmp_path):
    data = yaml.safe_load(yaml.safe_dump(SPEC))
    data["groups"][0]["rules"][0]["params"]["warn"] = 0.2
    for render in (helm_render.render_rules_file, helm_render.render_meta_file):
        a = render(make_spec(SPEC), tmp_path, SITE, ["# h"]).splitlines()
        b = render(make_spec(data), tmp_path, SITE, ["# h"]).splitlines()
        assert len(a) == len(b) and sum(x != y for x, y in zip(a, b)) == 1, render


@pytest.mark.tools
def test_long_texts_and_pieces_render_exactly_through_helm_and_promtool(tmp_path, helm_bin, promtool_bin):
    """The folded summary, the unfoldable description and the expr written in pieces reach
    the PrometheusRule byte for byte, with the defaults and with params from values; the rules
    file passes promtool as it is and, but for the spec's own lines, fits in 120 characters."""
    chart, spec = write_chart(tmp_path, SPEC)
    rules_file = chart / "rules" / "shop.rules.yaml"
    long_lines = [ln for ln in rules_file.read_text().splitlines() if len(ln) > 120]
    assert long_lines == ["            " + "x" * 150]  # one word longer than a line: on a line of its own
    proc = subprocess.run([str(promtool_bin), "check", "rules", str(rules_file)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rule = SPEC["groups"][0]["rules"][2]
    knob = {"prometheusRule": {"customRules": {"ShopLong": {"params": {"threshold": 3}}}}}
    for values, threshold in (([], "2"), ([values_yaml(knob)], "3")):
        out = helm_run.template(chart, values=values)
        (pr,) = [d for d in strict_load_all(out.text) if d.get("kind") == "PrometheusRule"]
        got = rules_by_name(pr["spec"]["groups"])[("shop", "ShopLong")]
        assert got["expr"] == LONG.replace("[[threshold]]", threshold)
        assert got["annotations"]["summary"] == rule["summary"]
        assert got["annotations"]["description"] == rule["description"]
