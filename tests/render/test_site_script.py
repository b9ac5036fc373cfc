"""The site's script and its PromQL links (issue 29): the base URLs are two lines of the
generated ``runbooks/assets/rulegen.js``, from ``.rulegen.yaml`` (which any pull request can
edit): nothing but an http(s) address of URL characters gets in, and nothing in one can end
its string literal. The script builds each link from the text the page shows, in the URL forms
of Prometheus' expression browser and Grafana Explore (run by node here; in a browser by
tests/e2e/test_browser.py)."""

from __future__ import annotations

import json
import shutil
import subprocess
import pytest

from rulegen.config import parse_config
from rulegen.findings import RulegenError
from rulegen.render.runbook_index import query_link_config, render_asset

from helpers import encode_uri_component

#: What a PR could write as a base URL: other schemes, quotes and backslashes that would end the
#: literal, line separators JavaScript reads as line ends, markup, spaces, non-ASCII.
HOSTILE = [
    'https://x";globalThis.pwned=1;"',
    "https://x\\\";globalThis.pwned=1;//",
    "javascript:alert(1)",
    "JAVASCRIPT:globalThis.pwned=1",
    "data:text/html,<script>globalThis.pwned=1</script>",
    "https://x\u2028globalThis.pwned=1",
    "https://x\u2029globalThis.pwned=1",
    "https://x\nglobalThis.pwned=1",
    "https://x</script><script>globalThis.pwned=1</script>",
    "https://x'+(globalThis.pwned=1)+'",
    "https://x`${globalThis.pwned=1}`",
    " https://x",
    "https://x y",
    "https://é.example",
    "//x.example",
    "",
]
#: Base URLs that are fine, as the script gets them (a trailing slash dropped).
FINE = {"https://prometheus.example.com": "https://prometheus.example.com",
        "https://p.example.com/prom/": "https://p.example.com/prom",
        "http://[::1]:9090": "http://[::1]:9090",
        "https://grafana.example.com/sub/path": "https://grafana.example.com/sub/path"}


def _node():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    return node


def _run_script(script: str, expression: str = "null"):
    """Run the site's script ``script`` in a fresh node context (module mode: it sets its
    configuration and exports its functions, touches no page) and return what the page's
    globals hold: the two base URLs, ``pwned`` (set only if a value ran as code) and the
    JSON value of ``expression`` (over ``exports``)."""
    harness = (
        "const vm = require('vm');\n"
        "const box = {module: {exports: {}}, window: {}, document: {}};\n"
        "vm.createContext(box);\n"
        "vm.runInContext(require('fs').readFileSync(0, 'utf8'), box);\n"
        "const exports = box.module.exports;\n"
        f"const value = {expression};\n"
        "process.stdout.write(JSON.stringify({p: box.RG_PROMETHEUS_URL, g: box.RG_GRAFANA_URL,\n"
        "  pwned: box.pwned === undefined ? null : String(box.pwned), value: value}));\n")
    r = subprocess.run([_node(), "-e", harness], input=script, capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("value", HOSTILE)
def test_a_hostile_base_url_never_runs_or_ends_the_literal(value):
    """Given straight to the renderer (config loading refuses them first, below), a hostile
    base URL is written as "" (no link): each configuration line stays one plain ``var`` of a
    string literal, and running the script sets nothing else."""
    lines = query_link_config(value, value).split("\n")
    assert lines[1:] == ['var RG_PROMETHEUS_URL = "";', 'var RG_GRAFANA_URL = "";']
    got = _run_script(render_asset("rulegen.js", ["/* header */"], [], (value, value)))
    assert (got["p"], got["g"], got["pwned"]) == ("", "", None)


def test_the_literal_escapes_whatever_a_valid_address_holds():
    """Even of the characters an address may hold, none can end the literal or a script
    element; the value read back is the address. (``&``, ``(``, ``)`` and ``;`` are no longer
    a base URL's: the literal escapes ``&`` like ``<`` and ``>`` anyway.)"""
    from rulegen.render.runbook_index import js_string
    url = "https://x.example:8443/a-b_c.d~e/f%20g+h:i"
    lines = query_link_config(url, None).split("\n")
    assert lines[1] == f'var RG_PROMETHEUS_URL = "{url}";'
    assert _run_script(render_asset("rulegen.js", ["/* header */"], [], (url, None)))["p"] == url
    assert js_string("https://x.example/a&b=(c)*;d<>") == '"https://x.example/a\\u0026b=(c)*;d\\u003c\\u003e"'
    assert query_link_config("https://x.example/a&b=(c)*;d", None).split("\n")[1] == 'var RG_PROMETHEUS_URL = "";'


@pytest.mark.parametrize("value", sorted(FINE))
def test_a_base_url_is_one_line_of_the_script(value):
    script = render_asset("rulegen.js", ["/* header */"], [], (value, None))
    assert f'\nvar RG_PROMETHEUS_URL = "{FINE[value]}";\nvar RG_GRAFANA_URL = "";\n' in script
    assert _run_script(script)["p"] == FINE[value]


@pytest.mark.parametrize("value", [v for v in HOSTILE if v])
def test_config_refuses_a_hostile_base_url(value):
    """``.rulegen.yaml`` refuses every hostile value with the key's name, before any page or
    script is written (the prometheus_url, grafana_url and alertmanager_url alike)."""
    for key in ("prometheus_url", "grafana_url", "alertmanager_url"):
        with pytest.raises(RulegenError) as e:
            parse_config({"runbooks": {key: value}})
        assert f"runbooks.{key} must be an http:// or https:// URL" in str(e.value)
    for value, want in FINE.items():
        assert parse_config({"runbooks": {"grafana_url": value}}).grafana_url == want


def test_the_script_builds_the_prometheus_and_grafana_forms_of_a_query():
    """The two URL forms, built from the query text as the page shows it: Prometheus'
    expression browser in table view (``/graph?g0.expr=...&g0.tab=1``, as an alert's
    generatorURL), Grafana Explore with the query on the default data source, the last hour
    (``/explore?schemaVersion=1&panes=<JSON>``); a base URL the script refuses gives no link."""
    query = 'sum by (job) (rate(http_requests_total{code=~"5..", path="/a b"}[5m])) # é\n  / 2'
    got = _run_script(render_asset("rulegen.js", ["/* header */"], []), (
        "[exports.queryUrls(%s, 'https://p.example.com/', 'https://g.example.com'),"
        " exports.queryUrls('up', '', 'javascript:alert(1)'), exports.queryUrls('up', 'https://x\"y', null)]"
        % json.dumps(query)))["value"]
    panes = json.dumps({"a": {"queries": [{"refId": "A", "expr": query}], "range": {"from": "now-1h", "to": "now"}}},
                       separators=(",", ":"), ensure_ascii=False)
    assert got[0] == [
        ["Prometheus", f"https://p.example.com/graph?g0.expr={encode_uri_component(query)}&g0.tab=1"],
        ["Grafana", f"https://g.example.com/explore?schemaVersion=1&panes={encode_uri_component(panes)}"]]
    assert got[0][0][1].startswith("https://p.example.com/graph?g0.expr=sum%20by%20(job)%20(rate(http_requests_total"
                                   "%7Bcode%3D~%225..%22%2C%20path%3D%22%2Fa%20b%22%7D%5B5m%5D))%20%23%20%C3%A9%0A")
    assert got[1] == [] and got[2] == []
