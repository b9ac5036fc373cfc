""""Open in Prometheus" on the runbook site (issue 27 item 4): every alert's expr (each rule of
a name too), every PromQL block, and an SLO alert's budget left and burn rate of its window
pair; on by default once ``prometheus.url`` is set; the SLO queries evaluated by the real
Prometheus to give the numbers they promise."""

from __future__ import annotations

import re
import urllib.parse
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.live.client import Client
from rulegen.live.connect import Connection
from rulegen.pipeline import load_project
from rulegen.promql.compared import compared_query
from rulegen.promql.syntax import parse
from rulegen.render import slo_page

from helpers import REPO, links

LINK = re.compile(r"https://prometheus\.example\.com/graph\?g0\.expr=([^&]*)&g0\.tab=1")


def _queries(page: str) -> list[str]:
    """The queries of the page's "Open in Prometheus" links (a Markdown link, or rulegen's HTML
    link whose long address goes on over lines: helpers.links)."""
    return [urllib.parse.unquote(m.group(1)) for label, url in links(page)
            if label == "Prometheus" and (m := LINK.fullmatch(url))]


def test_the_bundled_site_links_every_alert_expr_and_promql_block():
    """Each alert's link opens the value its expr compares with a number (issue 29), or its
    whole expr when it compares nothing with a number; the bundled specs have both."""
    loaded = load_project(REPO, None)
    kinds = set()
    for spec in loaded.specs:
        page = (REPO / "runbooks" / f"{spec.app}.md").read_text(encoding="utf-8")
        linked = set(_queries(page))
        for _, rule in spec.rules():
            if rule.is_alert:
                query = compared_query(rule.expr)
                kinds.add(query is not None)
                assert (query or rule.expr.strip()) in linked, (spec.app, rule.name)
        for blocks in [s.get("blocks") or [] for s in spec.runbook.get("sections") or []]:
            for b in blocks:
                if "promql" in b:
                    qs = b["promql"] if isinstance(b["promql"], list) else [b["promql"]]
                    assert all(q.strip() in linked for q in qs)
        for q in linked:
            assert parse(q)[1] is None or "<" in q, q  # each link opens PromQL (placeholders aside)
    assert kinds == {True, False}


def test_slo_alerts_get_budget_and_pair_links():
    page = (REPO / "runbooks" / "noctaya.md").read_text(encoding="utf-8")
    loaded = load_project(REPO, None)
    spec = next(s for s in loaded.specs if s.slos)
    s = spec.slos[0]
    qs = _queries(page)
    assert slo_page.budget_query(s) in qs
    for w in s.windows:  # each pair (each rule of the page and ticket alerts) has its burn-rate link
        assert slo_page.pair_query(s, w.long, w.short) in qs
        assert f"burn rate of this pair ({w.long} and {w.short} windows" in page


def test_prometheus_url_is_the_default_and_runbooks_prometheus_url_overrides(project):
    (project / ".rulegen.yaml").write_text("prometheus:\n  url: http://prometheus.internal:9090\n")
    assert main(["-C", str(project), "build"]) == 0
    assert "http://prometheus.internal:9090/graph?g0.expr=" in (project / "runbooks/llama-swap.md").read_text()
    (project / ".rulegen.yaml").write_text("prometheus:\n  url: http://prometheus.internal:9090\n"
                                           "runbooks:\n  prometheus_url: https://prometheus.example.org\n")
    assert main(["-C", str(project), "build"]) == 0
    page = (project / "runbooks/llama-swap.md").read_text()
    assert "https://prometheus.example.org/graph?g0.expr=" in page and "prometheus.internal" not in page
    (project / ".rulegen.yaml").write_text("checks: {}\n")
    assert main(["-C", str(project), "build"]) == 0
    assert "g0.expr=" not in (project / "runbooks/llama-swap.md").read_text()


@pytest.mark.tools("prometheus", "promtool")
def test_the_slo_link_queries_give_budget_left_and_burn_rates(prometheus_bin, promtool_bin, tmp_path):
    from helpers.prometheus import start_prometheus
    spec = next(s for s in load_project(REPO, None).specs if s.slos)
    s = spec.slos[0]
    w = s.windows[0]
    labels = 'slo="%s",slo_service="%s",team="x"' % (s.name, s.app)
    end = 1_700_000_000
    rows = [f"slo:sli_error:ratio_rate{w.long}{{{labels}}} 0.01 {end}",
            f"slo:sli_error:ratio_rate{w.short}{{{labels}}} 0.002 {end}",
            f"slo:error_budget:ratio{{{labels}}} 0.001 {end}",
            f"slo:period_error_budget_remaining:ratio{{{labels}}} 0.25 {end}"]
    server = start_prometheus(prometheus_bin, promtool_bin, tmp_path, text="\n".join(rows) + "\n# EOF\n",
                              window=(end - 60, end))
    try:
        client = Client(Connection(url=server.url))
        burn = client.query(slo_page.pair_query(s, w.long, w.short), end)["result"]
        got = {r["metric"]["window"]: round(float(r["value"][1]), 6) for r in burn}
        assert got == {w.long: 10.0, w.short: 2.0}
        left = client.query(slo_page.budget_query(s), end)["result"]
        assert [float(r["value"][1]) for r in left] == [0.25]
    finally:
        server.stop()
