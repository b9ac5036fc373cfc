"""Adversarial review of ``.rulegen.yaml``'s ``runbooks.prometheus_url``, ``grafana_url`` and
``alertmanager_url`` (a pull request can edit them): the base URL of every link the runbook
site makes. An address must say where it leads to a reviewer of the diff, and whatever it
holds must not change the page around the link."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest

from rulegen.cli import main
from rulegen.config import parse_config
from rulegen.findings import RulegenError
from rulegen.render.runbook_index import query_link_config
from rulegen.render.safe import to_html

#: Addresses whose host is not what a reviewer reads first: user info (the real host is after
#: the ``@``), and RFC 3986 sub-delimiters in the host, which ended the page's Markdown link and
#: started one of their own (``)[text](https://...``).
DECEPTIVE = [
    "https://prometheus.example.com@evil.example",
    "https://prometheus.example.com:443@evil.example/prom",
    "https://user:secret@prometheus.example.com",
    "https://am.example.com)[Open*a*silence*here](https://evil.example/x",
    "https://prometheus.example.com*x",
    "https://prometheus.example.com;x=1",
    "https://[::1]]:9090",
]


@pytest.mark.parametrize("value", DECEPTIVE)
def test_config_refuses_an_address_whose_host_is_not_plain(value):
    for key in ("prometheus_url", "grafana_url", "alertmanager_url"):
        with pytest.raises(RulegenError) as e:
            parse_config({"runbooks": {key: value}})
        assert f"runbooks.{key} must be an http:// or https:// URL" in str(e.value)


@pytest.mark.parametrize("value", DECEPTIVE)
def test_the_site_script_gets_no_such_address(value):
    """Given to the renderer past the config (the ``prometheus.url`` fallback is checked by
    another rule), such an address is written as "" (no link)."""
    assert query_link_config(value, value).split("\n")[1:] == ['var RG_PROMETHEUS_URL = "";',
                                                               'var RG_GRAFANA_URL = "";']


class _Links(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[tuple[str, str]] = []
        self._href = None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")
            self.links.append((self._href, ""))

    def handle_data(self, data):
        if self._href is not None:
            self.links[-1] = (self.links[-1][0], self.links[-1][1] + data)

    def handle_endtag(self, tag):
        if tag == "a":
            self._href = None


@pytest.mark.parametrize("path", ["/a)b", "/a(b", "/a*b*", "/a[b]", "/a!b", "/a;b=c", "/a&b", "/a'b",
                                  "/a,b", "/a$b", "/a@b", "/a%zz"])
def test_config_refuses_a_path_character_markdown_reads(path):
    """RFC 3986 allows ``( ) * ! $ & ' + , ; = @`` in a path, but the silence link is a Markdown
    link of the page: a ``)`` ended it early (the link lost the form's path, the rest was text,
    ``*`` emphasis). A base URL's path holds unreserved characters, ``/``, ``:``, ``+`` and
    ``%XX`` escapes (anything else is written as its escape)."""
    for key in ("prometheus_url", "grafana_url", "alertmanager_url"):
        with pytest.raises(RulegenError):
            parse_config({"runbooks": {key: "https://am.example.com" + path}})


def test_every_address_the_config_accepts_is_one_whole_silence_link(project):
    """Built with an address of every kind of character a base URL may hold, the page's silence
    link opens that address's form: one link, its whole text."""
    am = "https://am-1.example_x.com:9093/a-b_c.d~e/f%20g+h:i"
    assert parse_config({"runbooks": {"alertmanager_url": am}}).alertmanager_url == am
    config = project / ".rulegen.yaml"
    config.write_text(config.read_text(encoding="utf-8").replace(
        "  alertmanager_url: https://alertmanager.example.com\n", f"  alertmanager_url: {am}\n"), encoding="utf-8")
    assert f"alertmanager_url: {am}" in config.read_text(encoding="utf-8")
    assert main(["-C", str(project), "build"]) == 0
    parser = _Links()
    parser.feed(to_html((project / "runbooks/llama-swap.md").read_text(encoding="utf-8")))
    silences = [(href, text) for href, text in parser.links if "silence" in text.lower() or "/#/silences" in href]
    assert silences
    for href, text in silences:
        assert text == "Open a silence in Alertmanager"
        assert href.replace("\n", "").startswith(am + "/#/silences/new?filter=%7Balertname%3D%22"), href


def test_the_script_itself_refuses_such_an_address():
    """The script checks a base URL again before it links anything (a hand-edited
    rulegen.js): the same rule as the config's."""
    import json
    import shutil
    import subprocess

    from rulegen.render.runbook_index import render_asset
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    fine = ["https://prometheus.example.com", "http://[::1]:9090/prom/", "https://p.example.com:8443/a/b"]
    harness = ("const vm = require('vm'); const box = {module: {exports: {}}, window: {}, document: {}};\n"
               "vm.createContext(box); vm.runInContext(require('fs').readFileSync(0, 'utf8'), box);\n"
               f"process.stdout.write(JSON.stringify({json.dumps(DECEPTIVE + fine)}.map(box.module.exports.baseUrl)));")
    r = subprocess.run([node, "-e", harness], input=render_asset("rulegen.js", ["/* header */"], []),
                       capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [""] * len(DECEPTIVE) + [
        "https://prometheus.example.com", "http://[::1]:9090/prom", "https://p.example.com:8443/a/b"]


#: Addresses of base-URL characters that are no address: a bracketed host that is not an IPv6
#: address, a port past 65535. They passed the config and then failed `rulegen check` as
#: "check failed: ValueError: ..." (urllib's words, no file named), and made dead links on the site.
NOT_AN_ADDRESS = ["http://[:::::]:9090", "http://[1.2.3.4]", "http://[::1::2]/prom", "https://prometheus.example.com:65536",
                  "http://127.0.0.1:99999"]


@pytest.mark.parametrize("value", NOT_AN_ADDRESS)
def test_config_refuses_a_host_or_port_no_client_can_reach(value):
    for key in ("prometheus_url", "grafana_url", "alertmanager_url"):
        with pytest.raises(RulegenError) as e:
            parse_config({"runbooks": {key: value}})
        assert f"runbooks.{key} must be an http:// or https:// URL" in str(e.value)
    with pytest.raises(RulegenError) as e:
        parse_config({"prometheus": {"url": value}})
    assert "prometheus.url: " in str(e.value) and "is not an http:// or https:// URL" in str(e.value)
    assert query_link_config(value, value).split("\n")[1:] == ['var RG_PROMETHEUS_URL = "";',
                                                               'var RG_GRAFANA_URL = "";']


def test_config_keeps_every_reachable_host_and_port():
    for value in ("http://[::1]:9090", "http://[::ffff:10.0.0.1]:65535/prom", "https://p.example.com:1/a",
                  "http://[2001:db8::1]"):
        assert parse_config({"runbooks": {"prometheus_url": value}}).prometheus_url == value
        assert parse_config({"prometheus": {"url": value}}).prometheus.url == value
