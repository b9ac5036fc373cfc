"""The site's "Open in Prometheus" links of hostile exprs, in a real browser (Debian's headless
chromium): the script links the text the page shows, so the page must show, after Markdown,
HTML and the browser, a query that runs as the alert's expr does (adversarial review of
issue 29's links: a carriage return ending a comment, a tab, NUL/STX/ETX or a bidirectional
override in a label value, a query written as an HTML ``<code>`` element and wrapped).

Locally the test skips when chromium is missing; in CI it fails instead.
"""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from urllib.parse import parse_qs, urlsplit

import pytest

from rulegen.cli import main
from rulegen.promql.compared import comparison
from rulegen.promql.syntax import parse

from helpers import REPO
from helpers.cdp import Browser
from helpers.site import mkdocs_build
from test_browser import chromium

pytestmark = pytest.mark.browser

#: alert name -> expr (YAML double-quoted escapes written by the test as Python escapes)
EXPRS = {
    "CrComment": "sum(up) # note\r> 0",
    "CrQuery": "sum(up) # note\r+ 1 > 3",
    "TabValue": 'up{job="a\tb"} == 0',
    "ControlValue": 'up{job="a\x00b\x02c\x03"} > 0',
    "RawTab": "up{job=`a\tb`} > 0",
    "Override": 'up{job="a\u202eb"} > 0',
    "Wrapped": 'up{job="x &#y long text with spaces in it, long enough to pass the width"} > 0',
}


def _yaml(s: str) -> str:
    """``s`` as a YAML double-quoted scalar (JSON's escapes are YAML's)."""
    import json
    return json.dumps(s)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    exe = chromium()
    project = tmp_path_factory.mktemp("project")
    for name in ("rules", "charts", "runbooks", "deploy", ".rulegen-sums"):
        shutil.copytree(REPO / name, project / name, symlinks=True)
    shutil.copy(REPO / "mkdocs.yml", project / "mkdocs.yml")
    shutil.copy(REPO / ".rulegen.yaml", project / ".rulegen.yaml")
    rules = "".join(f"      - alert: {name}\n        expr: {_yaml(expr)}\n        severity: warning\n"
                    f"        summary: s\n        description: d\n" for name, expr in EXPRS.items())
    (project / "rules" / "hostile.yaml").write_text(
        f"app: hostile\ngroups:\n  - name: hostile\n    rules:\n{rules}", encoding="utf-8")
    assert main(["-C", str(project), "validate"]) == 0
    assert main(["-C", str(project), "build"]) == 0
    out = tmp_path_factory.mktemp("site")
    r = mkdocs_build(project, out)
    assert r.returncode == 0, r.stderr

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(out)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with Browser(exe, tmp_path_factory.mktemp("profile")) as b:
            b.viewport(1280, 800)
            b.open(f"http://127.0.0.1:{server.server_address[1]}/hostile/", settle=0.3)
            yield b
    finally:
        server.shutdown()
        server.server_close()


def _ast(text: str) -> str:
    ast, err = parse(text)
    assert err is None, (text, err)
    return repr(ast)


@pytest.mark.parametrize("name", sorted(EXPRS))
def test_the_linked_query_is_the_one_the_alert_compares(site, name):
    """The Prometheus link after each alert's "Fires when" opens a query that parses to the
    compared side of the alert's expr, and the sentence states the comparison."""
    links = site.js("""(() => {
      const h = document.getElementById(%r);
      const out = [];
      for (let el = h.nextElementSibling; el && el.tagName !== "H2"; el = el.nextElementSibling) {
        el.querySelectorAll("a.rg-open").forEach(a => out.push(a.getAttribute("href")));
      }
      return out;
    })()""" % name.lower())
    prometheus = [h for h in links if "/graph?" in h]
    assert len(prometheus) == 1, links
    query = parse_qs(urlsplit(prometheus[0]).query)["g0.expr"][0]
    found = comparison(EXPRS[name])
    assert found is not None, name
    assert _ast(query) == _ast(found.query), (name, query)
    assert all(c.isprintable() or c == "\n" for c in query), query
