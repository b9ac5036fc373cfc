""""Open in Prometheus" on the runbook site (issue 27 item 4): every alert's expr (the query it
compares with a number, or the whole expr), every PromQL block, the SLO's budget left and burn
rate over each window are marked for the site's script, which links them (issue 29: the pages
hold no query address); on by default once ``prometheus.url`` is set; the SLO queries evaluated
by the real Prometheus to give the numbers they promise."""

from __future__ import annotations

import pytest

from rulegen.cli import main
from rulegen.live.client import Client
from rulegen.live.connect import Connection
from rulegen.pipeline import load_project
from rulegen.promql.compared import compared_query
from rulegen.promql.syntax import parse
from rulegen.render import slo_page

from helpers import REPO, marked_queries


def test_the_bundled_site_marks_every_alert_query_and_promql_block():
    """Each alert's marked query is the one its expr compares with a number (issue 29), or its
    whole expr when it compares nothing with a number; the bundled specs have both; every
    query of a section's PromQL blocks is marked; and the pages hold no query address."""
    loaded = load_project(REPO, None)
    kinds = set()
    for spec in loaded.specs:
        page = (REPO / "runbooks" / f"{spec.app}.md").read_text(encoding="utf-8")
        assert "g0.expr=" not in page and "/explore?" not in page
        marked = set(marked_queries(page))
        for _, rule in spec.rules():
            if rule.is_alert:
                query = compared_query(rule.expr)
                kinds.add(query is not None)
                assert (query or rule.expr.strip()) in marked, (spec.app, rule.name)
        for blocks in [s.get("blocks") or [] for s in spec.runbook.get("sections") or []]:
            for b in blocks:
                if "promql" in b:
                    qs = b["promql"] if isinstance(b["promql"], list) else [b["promql"]]
                    assert all(q.strip() in marked for q in qs)
        for q in marked:
            assert parse(q)[1] is None or "<" in q, q  # each link opens PromQL (placeholders aside)
    assert kinds == {True, False}


def test_the_slo_section_shows_budget_left_and_burn_rate_once():
    """The SLO's budget left and burn rate over each window are shown, marked, once: in its
    section, not again under each burn-rate alert (issue 29: each alert repeated the budget
    link and its pair's)."""
    page = (REPO / "runbooks" / "noctaya.md").read_text(encoding="utf-8")
    loaded = load_project(REPO, None)
    s = next(s for s in next(sp for sp in loaded.specs if sp.slos).slos)
    qs = marked_queries(page)
    assert qs.count(slo_page.burn_query(s)) == 1 and page.count("label_replace(") == 1
    section = page[page.index(f"## SLO: {s.name}"):]
    section = section[:section.index("\n## ", 1)]
    assert slo_page.budget_query(s) in marked_queries(section) and slo_page.burn_query(s) in marked_queries(section)
    for sev in ("page", "ticket"):
        alert = page[page.index(f"## {s.alert_name(sev)} "):]
        alert = alert[:alert.index("<!-- /notes -->")]
        assert "label_replace(" not in alert and "**Now:**" not in alert
        assert f"**SLO:** [{s.name}](#slo-{s.name}) (budget left and burn rates now, burn-rate table)" in alert


def test_prometheus_url_is_the_default_and_runbooks_prometheus_url_overrides(project):
    """The base URL is one line of the site's script; the pages do not change with it."""
    pages = lambda: {p.name: p.read_bytes() for p in (project / "runbooks").glob("*.md")}  # noqa: E731
    js = project / "runbooks/assets/rulegen.js"
    (project / ".rulegen.yaml").write_text("prometheus:\n  url: http://prometheus.internal:9090\n")
    assert main(["-C", str(project), "build"]) == 0
    assert 'var RG_PROMETHEUS_URL = "http://prometheus.internal:9090";\n' in js.read_text()
    before, script = pages(), js.read_text().split("\n")
    (project / ".rulegen.yaml").write_text("prometheus:\n  url: http://prometheus.internal:9090\n"
                                           "runbooks:\n  prometheus_url: https://prometheus.example.org\n")
    assert main(["-C", str(project), "build"]) == 0
    assert pages() == before
    changed = [(a, b) for a, b in zip(script, js.read_text().split("\n")) if a != b]
    assert changed == [('var RG_PROMETHEUS_URL = "http://prometheus.internal:9090";',
                        'var RG_PROMETHEUS_URL = "https://prometheus.example.org";')]
    (project / ".rulegen.yaml").write_text("checks: {}\n")
    assert main(["-C", str(project), "build"]) == 0
    assert 'var RG_PROMETHEUS_URL = "";\nvar RG_GRAFANA_URL = "";\n' in js.read_text() and pages() == before


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
            f"slo:sli_error:ratio_rate{s.period}{{{labels}}} 0.003 {end}",
            f"slo:sli_error:ratio_rate{w.long}{{slo=\"other\",slo_service=\"{s.app}\",team=\"x\"}} 0.5 {end}",
            f"slo:error_budget:ratio{{{labels}}} 0.001 {end}",
            f"slo:period_error_budget_remaining:ratio{{{labels}}} 0.25 {end}"]
    server = start_prometheus(prometheus_bin, promtool_bin, tmp_path, text="\n".join(rows) + "\n# EOF\n",
                              window=(end - 60, end))
    try:
        client = Client(Connection(url=server.url))
        burn = client.query(slo_page.burn_query(s), end)["result"]
        got = {r["metric"]["window"]: round(float(r["value"][1]), 6) for r in burn}
        assert got == {w.long: 10.0, w.short: 2.0, s.period: 3.0}
        assert all("__name__" not in r["metric"] for r in burn)
        left = client.query(slo_page.budget_query(s), end)["result"]
        assert [float(r["value"][1]) for r in left] == [0.25]
    finally:
        server.stop()
