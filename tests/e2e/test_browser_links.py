"""The runbook site's "Open in Prometheus · Grafana" links in a real browser (Debian's headless
chromium, tests/helpers/cdp.py), issue 29: the pages mark their PromQL and hold no query
address; the site's script adds the links next to each marked query, built from the text the
page shows and the two base URLs ``rulegen build`` writes into it. Checked on the bundled
project built with ``runbooks.prometheus_url`` and ``grafana_url`` set: the exact addresses of
an alert's compared query, of a whole expr (``absent(...)``), of a long compared query (a
block), of a diagnosis block of one query per line, and of the SLO's budget left and burn
rate; once per query when the page's scripts run again (mkdocs-material's ``document$``); and
no link at all when neither URL is set (the pages the same, only the script's two lines
differ).

Locally the tests skip when chromium is missing; in CI they fail instead.
"""

from __future__ import annotations

import functools
import http.server
import json
import shutil
import threading

import pytest

from rulegen.cli import main
from rulegen.pipeline import load_project
from rulegen.render import slo_page

from helpers import REPO, encode_uri_component
from helpers.cdp import Browser
from helpers.site import mkdocs_build
from test_browser import chromium

pytestmark = pytest.mark.browser

PROMETHEUS, GRAFANA = "https://prometheus.example.com", "https://grafana.example.com"


def _serve(folder):
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """The bundled project built with both base URLs set and its site built strictly; then
    built again with neither set (its pages must not change) and that site's script put into a
    copy of the built site. Served on 127.0.0.1: (chromium, project, base URL with links,
    base URL without)."""
    exe = chromium()
    project = tmp_path_factory.mktemp("project")
    for name in ("rules", "charts", "runbooks", "deploy", ".rulegen-sums"):
        shutil.copytree(REPO / name, project / name, symlinks=True)
    shutil.copy(REPO / "mkdocs.yml", project / "mkdocs.yml")
    config = (REPO / ".rulegen.yaml").read_text(encoding="utf-8")
    assert f"  prometheus_url: {PROMETHEUS}\n" in config
    (project / ".rulegen.yaml").write_text(
        config.replace(f"  prometheus_url: {PROMETHEUS}\n", f"  prometheus_url: {PROMETHEUS}\n  grafana_url: {GRAFANA}\n"),
        encoding="utf-8")
    assert main(["-C", str(project), "build"]) == 0
    linked = tmp_path_factory.mktemp("site")
    r = mkdocs_build(project, linked)
    assert r.returncode == 0, r.stderr
    pages = {p.name: p.read_bytes() for p in (project / "runbooks").glob("*.md")}
    (project / ".rulegen.yaml").write_text(config.replace(f"  prometheus_url: {PROMETHEUS}\n", ""), encoding="utf-8")
    assert main(["-C", str(project), "build"]) == 0
    assert {p.name: p.read_bytes() for p in (project / "runbooks").glob("*.md")} == pages
    plain = tmp_path_factory.mktemp("plain") / "site"
    shutil.copytree(linked, plain)
    shutil.copy(project / "runbooks/assets/rulegen.js", plain / "assets/rulegen.js")
    servers = [_serve(linked), _serve(plain)]
    try:
        yield exe, project, servers[0][1], servers[1][1]
    finally:
        for server, _ in servers:
            server.shutdown()
            server.server_close()


@pytest.fixture(scope="module")
def browser(sites, tmp_path_factory):
    with Browser(sites[0], tmp_path_factory.mktemp("profile")) as b:
        b.viewport(1280, 800)
        yield b


#: Every link the script added, in page order: [lead words, [[label, href], ...]].
_LINKS = """Array.from(document.querySelectorAll(".rg-open-links")).map(s =>
  [s.firstChild.textContent.trim(), Array.from(s.querySelectorAll("a.rg-open"))
     .map(a => [a.textContent, a.getAttribute("href")])])"""


def _urls(query: str) -> list[list[str]]:
    """The two links of ``query``: Prometheus' expression browser (table view, the form of an
    alert's generatorURL) and Grafana Explore (the query on the default data source, the last
    hour), encoded as encodeURIComponent does."""
    panes = json.dumps({"a": {"queries": [{"refId": "A", "expr": query}], "range": {"from": "now-1h", "to": "now"}}},
                       separators=(",", ":"), ensure_ascii=False)
    return [["Prometheus", f"{PROMETHEUS}/graph?g0.expr={encode_uri_component(query)}&g0.tab=1"],
            ["Grafana", f"{GRAFANA}/explore?schemaVersion=1&panes={encode_uri_component(panes)}"]]


def _section_links(browser, anchor: str) -> list:
    """The script's links between the heading ``anchor`` and the next h2 (the section's)."""
    return browser.js("""(() => {
      const h = document.getElementById(%s);
      const out = [];
      for (let el = h.nextElementSibling; el && el.tagName !== "H2"; el = el.nextElementSibling) {
        el.querySelectorAll(".rg-open-links").forEach(s => out.push(
          [s.firstChild.textContent.trim(), Array.from(s.querySelectorAll("a.rg-open"))
             .map(a => [a.textContent, a.getAttribute("href")])]));
      }
      return out;
    })()""" % json.dumps(anchor))


def test_alert_queries_and_diagnosis_blocks_get_exact_links(sites, browser):
    """llama-swap: LlamaSwapDown compares a query with 0, so "Fires when" shows the query
    apart and its links open that query (every series, firing or not), exactly; its diagnosis
    block of two queries gets a link pair per line; LlamaSwapNoMetrics' ``absent(...)`` is
    linked whole."""
    _, _, base, _ = sites
    browser.open(base + "llama-swap/", settle=0.3)
    down = _section_links(browser, "llamaswapdown")
    compared = 'kube_deployment_status_replicas_available{namespace="ai", deployment="llama-swap"}'
    assert down[0] == ["Open in", _urls(compared)]
    assert down[0][1][0][1] == (
        "https://prometheus.example.com/graph?g0.expr=kube_deployment_status_replicas_available%7Bnamespace%3D%22ai%22"
        "%2C%20deployment%3D%22llama-swap%22%7D&g0.tab=1")
    assert down[1:3] == [["Open query 1 in", _urls(compared)],
                         ["Open query 2 in", _urls('kube_pod_container_status_terminated_reason'
                                                   '{namespace="ai", container="llama-swap"}')]]
    # the links follow the sentence that says when it fires, which shows the comparison apart
    sentence = browser.js("""document.querySelector("#llamaswapdown-fires-when").nextElementSibling.textContent""")
    assert " ".join(sentence.split()) == f"Fires when {compared} is == 0 continuously for 5m."
    whole = _section_links(browser, "llamaswapnometrics")
    assert whole[0] == ["Open in", _urls('absent(up{job="llama-swap", namespace="ai"} == 1)')]
    assert whole[0][1][1][1].startswith("https://grafana.example.com/explore?schemaVersion=1&panes=%7B%22a%22%3A%7B"
                                        "%22queries%22%3A%5B%7B%22refId%22%3A%22A%22%2C%22expr%22%3A%22absent(up")
    # every link of the page is one of these forms, at the configured base URLs
    hrefs = [href for _, pairs in browser.js(_LINKS) for _, href in pairs]
    assert len(hrefs) == 2 * 6 and all(h.startswith((PROMETHEUS + "/graph?", GRAFANA + "/explore?")) for h in hrefs)


def test_long_compared_query_and_slo_queries_get_exact_links(sites, browser):
    """noctaya: NoctayaLLMServiceDegraded's compared query is a block after its sentence (the
    links after the block, not inside the sentence); the SLO section's budget left (a list
    item: the links end it) and burn rate over each window (a block), each once on the page;
    the burn-rate alerts link their whole expr and no SLO query again."""
    _, project, base, _ = sites
    browser.open(base + "noctaya/", settle=0.3)
    degraded = _section_links(browser, "noctayallmservicedegraded")
    assert degraded[0] == ["Open in", _urls('max by (namespace, name, reason) (kube_customresource_llmservice_status'
                                            '_condition{condition="Degraded", status="True"})')]
    after = browser.js("""(() => {
      const p = document.querySelector("#noctayallmservicedegraded-fires-when").nextElementSibling;
      const block = p.nextElementSibling, links = block.nextElementSibling;
      return [p.textContent.trim().replace(/\\s+/g, " "), block.className, links.firstChild.className];
    })()""")
    assert after == ["Fires when the PromQL below is > 0 continuously for 5m:", "rg-promql highlight",
                     "rg-open-links"]
    s = next(sp for sp in load_project(project).specs if sp.slos).slos[0]
    budget = browser.js("""Array.from(document.querySelectorAll("li")).filter(li =>
      li.textContent.startsWith("Budget left now:")).map(li => [li.textContent.replace(/\\s+/g, " ").trim(),
      Array.from(li.querySelectorAll("a.rg-open")).map(a => [a.textContent, a.getAttribute("href")])])""")
    assert budget == [[f"Budget left now: {slo_page.budget_query(s)} (1 = untouched, 0 = spent, below 0 = overspent)"
                       " · Open in Prometheus · Grafana", _urls(slo_page.budget_query(s))]]
    everything = browser.js(_LINKS)
    assert everything.count(["Open in", _urls(slo_page.burn_query(s))]) == 1
    assert sum(pairs == _urls(slo_page.budget_query(s)) for _, pairs in everything) == 2  # the fact, query 8 of a block
    fast = _section_links(browser, "noctayagatewayactivationfastburn")
    assert [lead for lead, _ in fast] == ["Open in", "Open in", "Open in", "Open in"]  # 2 rules, 2 diagnosis blocks
    assert all("label_replace" not in href for _, pairs in fast for _, href in pairs)


def test_links_are_added_once_when_the_page_scripts_run_again(sites, browser):
    """mkdocs-material runs the site's script on every page its ``document$`` emits (instant
    navigation too): a second emission for the same page adds no second set of links."""
    _, _, base, _ = sites
    browser.open(base + "llama-swap/", settle=0.3)
    before = browser.js(_LINKS)
    assert before and browser.js("typeof document$ !== 'undefined' && !!document$.next")
    browser.js("document$.next(document)")
    assert browser.js(_LINKS) == before


def test_no_link_without_base_urls(sites, browser):
    """Neither ``prometheus_url`` nor ``grafana_url`` set: the same pages show every query (as
    code, copyable) and no link."""
    _, _, _, plain = sites
    for page in ("llama-swap/", "noctaya/"):
        browser.open(plain + page, settle=0.3)
        got = browser.js("""[document.querySelectorAll(".rg-open-links, a.rg-open").length,
                             document.querySelectorAll(".rg-promql, .rg-promql-lines").length,
                             typeof RG_PROMETHEUS_URL === "string" && RG_PROMETHEUS_URL, RG_GRAFANA_URL]""")
        assert got[0] == 0 and got[1] >= 4 and got[2:] == ["", ""], (page, got)
