"""The live connection (:mod:`rulegen.live.connect`, :mod:`rulegen.live.client`, the
``prometheus:`` section of :mod:`rulegen.config`): settings checked as hostile input, and every
way a request can fail is one clear line naming the URL, never a traceback or the token."""

from __future__ import annotations

import http.server
import json
import threading
import time
from pathlib import Path

import pytest

from rulegen.config import CONFIG_FILE, load_config, parse_config
from rulegen.findings import RulegenError
from rulegen.live.client import Client
from rulegen.live.connect import SKIPPED, Connection, LiveError, resolve
from rulegen.live.options import CliOptions

TOKEN = "s3cr3t-token-value"


# -- settings ---------------------------------------------------------------------------------

def test_no_prometheus_configured_resolves_to_none():
    assert resolve(Path("."), parse_config({}).prometheus) is None
    assert "skipped" in SKIPPED and "--prometheus" in SKIPPED


def test_the_section_is_read_with_defaults(tmp_path):
    (tmp_path / CONFIG_FILE).write_text("prometheus:\n  url: https://prom.example.com/\n"
                                        "  headers: {X-Scope-OrgID: team-a}\n  lookback: 2d\n")
    cfg = load_config(tmp_path)
    assert cfg.prometheus.url == "https://prom.example.com"
    assert cfg.prometheus.timeout == 30.0 and cfg.prometheus.lookback == 2 * 86400
    # the runbook links default to the live URL...
    assert cfg.prometheus_url == "https://prom.example.com"
    # ...and runbooks.prometheus_url still overrides it (a public address for readers)
    cfg = parse_config({"prometheus": {"url": "http://10.0.0.1:9090"},
                        "runbooks": {"prometheus_url": "https://prom.example.com"}})
    assert cfg.prometheus_url == "https://prom.example.com" and cfg.prometheus.url == "http://10.0.0.1:9090"


@pytest.mark.parametrize("section, words", [
    ({"url": "file:///etc/passwd"}, "http:// or https://"),
    ({"url": "ftp://prom.example.com"}, "http:// or https://"),
    ({"url": "https://user:pw@prom.example.com"}, "user info"),
    ({"url": "https://prom.example.com/?x=1"}, "query"),
    ({"url": "https://prom example.com"}, "http:// or https://"),
    ({"url": 5}, "http:// or https://"),
    # the runbook links default to it: a URL their script cannot use made them vanish silently
    ({"url": "https://prom.example.com/a;b"}, "letters and digits"),
    ({"url": "https://prom.example.com/'x'"}, "letters and digits"),
    ({"url": "https://pröm.example.com"}, "letters and digits"),
    ({"bearer_token_file": "/etc/shadow"}, "RG740"),
    ({"bearer_token_file": "../secrets/token"}, "RG741"),
    ({"ca_file": ".git/config"}, "RG743"),
    ({"headers": {"Authorization": "Bearer x"}}, "token file"),
    ({"headers": {"X-A": "a\r\nX-Injected: 1"}}, "one line"),
    ({"headers": {"bad name": "x"}}, "not an HTTP header name"),
    ({"timeout": "soon"}, "not a Prometheus duration"),
    ({"timeout": "0s"}, "positive"),
    ({"lookback": 7}, "positive"),
    ({"urls": "x"}, "unknown key"),
])
def test_bad_settings_are_usage_errors(section, words):
    with pytest.raises(RulegenError, match=words):
        parse_config({"prometheus": section})


def test_the_password_of_a_url_is_never_echoed():
    with pytest.raises(RulegenError) as e:
        parse_config({"prometheus": {"url": "https://user:hunter2@prom.example.com"}})
    assert "hunter2" not in str(e.value)


def test_a_config_token_file_is_read_inside_the_project_only(tmp_path):
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "token").write_text(TOKEN + "\n")
    conn = resolve(tmp_path, parse_config({"prometheus": {"url": "http://h:9090",
                                                          "bearer_token_file": "ci/token"}}).prometheus)
    assert conn.token == TOKEN and TOKEN not in repr(conn) and conn.source == CONFIG_FILE
    outside = tmp_path.parent / "outside-token"
    outside.write_text(TOKEN)
    (tmp_path / "ci" / "link").symlink_to(outside)
    with pytest.raises(LiveError, match="RG742") as e:
        resolve(tmp_path, parse_config({"prometheus": {"url": "http://h:9090", "bearer_token_file": "ci/link"}}).prometheus)
    assert TOKEN not in str(e.value)


def test_command_line_secrets_go_only_to_a_command_line_url(tmp_path):
    token = tmp_path / "token"
    token.write_text(TOKEN)
    settings = parse_config({"prometheus": {"url": "https://attacker.example.com"}}).prometheus
    with pytest.raises(LiveError, match="only to a URL given with --prometheus"):
        resolve(tmp_path, settings, CliOptions(bearer_token_file=str(token)))
    with pytest.raises(LiveError, match="only to a URL given with --prometheus"):
        resolve(tmp_path, settings, CliOptions(headers=(("X-Key", "k"),)))
    conn = resolve(tmp_path, settings, CliOptions(url="https://prom.internal", bearer_token_file=str(token),
                                                  headers=(("X-Key", "k"),), timeout="5s"))
    assert (conn.url, conn.token, conn.headers, conn.timeout, conn.source) == (
        "https://prom.internal", TOKEN, (("X-Key", "k"),), 5.0, "--prometheus")


@pytest.mark.parametrize("content, words", [("", "is empty"), ("two words", "visible ASCII"),
                                            ("a\nb", "visible ASCII"), ("tok\x1b[31m", "visible ASCII")])
def test_a_bad_token_file_is_refused_without_echoing_it(tmp_path, content, words):
    token = tmp_path / "token"
    token.write_text(content)
    with pytest.raises(LiveError, match=words) as e:
        resolve(tmp_path, parse_config({}).prometheus, CliOptions(url="http://h", bearer_token_file=str(token)))
    assert content.strip() == "" or content not in str(e.value)


def test_missing_files_and_bad_cli_values_are_clear(tmp_path):
    base = parse_config({}).prometheus
    with pytest.raises(LiveError, match="does not exist"):
        resolve(tmp_path, base, CliOptions(url="http://h", bearer_token_file=str(tmp_path / "nope")))
    with pytest.raises(LiveError, match="--prometheus"):
        resolve(tmp_path, base, CliOptions(url="gopher://h"))
    with pytest.raises(LiveError, match="--prometheus-timeout"):
        resolve(tmp_path, base, CliOptions(url="http://h", timeout="fast"))
    with pytest.raises(LiveError, match="not valid PEM"):
        (tmp_path / "ca.pem").write_text("not a certificate")
        Client(resolve(tmp_path, base, CliOptions(url="https://h", ca_file=str(tmp_path / "ca.pem"))))


# -- a tiny local HTTP server that misbehaves on demand -------------------------------------------

class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "ok"
    seen: list = []

    def log_message(self, *a):  # quiet
        pass

    def _answer(self):
        # read the request's body (a POSTed query) first, as an HTTP server does: a socket closed
        # with unread data in it is reset, and the reset discards the answer the client had not
        # read yet (the huge answer failed now and then with "connection reset by peer")
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode = type(self).mode
        type(self).seen.append({k.lower(): v for k, v in self.headers.items()})
        if mode == "slow":
            time.sleep(3)
        if mode == "500":
            return self._send(500, {"status": "error", "errorType": "internal", "error": "boom\x1b[2J"})
        if mode == "401":
            ok = self.headers.get("Authorization") == "Bearer right"
            if not ok:
                return self._send(401, {"status": "error", "errorType": "unauthorized", "error": "bad token"})
        if mode == "redirect":
            self.send_response(302)
            self.send_header("Location", "http://elsewhere.example.com/api/v1/query")
            self.end_headers()
            return None
        if mode == "html":
            return self._send(200, None, b"<html>login</html>")
        if mode == "huge":
            result = [{"metric": {"i": str(i)}, "value": [1, "1"]} for i in range(5000)]
            return self._send(200, {"status": "success", "data": {"resultType": "vector", "result": result}})
        if mode == "bad_query":
            return self._send(400, {"status": "error", "errorType": "bad_data", "error": "parse error"})
        return self._send(200, {"status": "success", "data": {"resultType": "vector", "result": []}})

    def _send(self, code, doc, raw=None):
        body = raw if raw is not None else json.dumps(doc).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer


class _Server(http.server.ThreadingHTTPServer):
    """The test server; a client that hangs up first (the tests' timeouts and size bounds do)
    is expected, not an error to print: its traceback, printed by the handler thread seconds
    later, landed in whichever test ran then (a "slow" answer written after the client's 1 s
    timeout failed the next test's "no Traceback on stderr")."""

    def handle_error(self, request, client_address):
        import sys
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


@pytest.fixture
def fake():
    """A local HTTP server on a free loopback port; set ``fake.mode``."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.mode = "ok"
    _Handler.seen = []
    server.url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _client(url, **kw):
    return Client(Connection(url=url, timeout=kw.pop("timeout", 5.0), token=kw.pop("token", None),
                             headers=kw.pop("headers", ())), **kw)


@pytest.mark.parametrize("mode, words", [
    ("500", r"answered HTTP 500 .*: boom\?\[2J"),
    ("bad_query", "HTTP 400 .*parse error"),
    ("redirect", "redirect, which rulegen does not follow"),
    ("html", "did not answer with JSON"),
])
def test_bad_answers_are_one_clear_line(fake, mode, words):
    _Handler.mode = mode
    with pytest.raises(LiveError, match=words) as e:
        _client(fake.url).query("up", 1)
    assert str(e.value).startswith(f"Prometheus at {fake.url}: ") and "\n" not in str(e.value)


def test_an_invalid_token_is_a_401_naming_the_token_file_not_its_content(fake):
    _Handler.mode = "401"
    with pytest.raises(LiveError, match="HTTP 401.*check the bearer token") as e:
        _client(fake.url, token="wrong-secret").query("up", 1)
    assert "wrong-secret" not in str(e.value)
    with pytest.raises(LiveError, match="no bearer token given"):
        _client(fake.url).query("up", 1)
    assert _client(fake.url, token="right").query("up", 1) == {"resultType": "vector", "result": []}


def test_headers_and_token_are_sent(fake):
    _client(fake.url, token="right", headers=(("X-Scope-OrgID", "team-a"),)).query("up", 1)
    sent = _Handler.seen[-1]
    assert sent["authorization"] == "Bearer right" and sent["x-scope-orgid"] == "team-a"


def test_a_slow_server_times_out(fake):
    _Handler.mode = "slow"
    t0 = time.monotonic()
    with pytest.raises(LiveError, match="no answer .*within 0.5s"):
        _client(fake.url, timeout=0.5).query("up", 1)
    assert time.monotonic() - t0 < 3


def test_huge_answers_are_bounded(fake):
    _Handler.mode = "huge"
    with pytest.raises(LiveError, match="larger than 1000 bytes"):
        _client(fake.url, max_bytes=1000).query("up", 1)
    with pytest.raises(LiveError, match="more than 100 series"):
        _client(fake.url, max_series=100).query("up", 1)
    assert len(_client(fake.url).query("up", 1)["result"]) == 5000


def test_refused_and_unresolvable_addresses(fake):
    from helpers.prometheus import free_port
    with pytest.raises(LiveError, match="connection refused"):
        _client(f"http://127.0.0.1:{free_port()}").query("up", 1)
    with pytest.raises(LiveError, match="does not resolve|cannot connect"):
        _client("http://no-such-host.invalid").query("up", 1)


@pytest.fixture
def tls_server(tmp_path):
    """The fake server behind TLS with a certificate for 127.0.0.1 signed by a fresh CA
    (openssl); yields (url, CA file)."""
    import shutil
    import ssl
    import subprocess
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    run = lambda *a: subprocess.run(["openssl", *a], cwd=tmp_path, capture_output=True, check=True)  # noqa: E731
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem", "-days", "2",
        "-subj", "/CN=rulegen test CA")
    run("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "srv.key", "-out", "srv.csr", "-subj", "/CN=127.0.0.1")
    (tmp_path / "ext.cnf").write_text("subjectAltName=IP:127.0.0.1\n")
    run("x509", "-req", "-in", "srv.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-out", "srv.pem",
        "-days", "2", "-extfile", "ext.cnf")
    server = _Server(("127.0.0.1", 0), _Handler)
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(tmp_path / "srv.pem", tmp_path / "srv.key")
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    _Handler.mode = "ok"
    try:
        yield f"https://127.0.0.1:{server.server_address[1]}", tmp_path / "ca.pem"
    finally:
        server.shutdown()
        server.server_close()


def test_https_with_the_ca_bundle_and_without(tls_server, tmp_path):
    url, ca = tls_server
    conn = resolve(tmp_path, parse_config({}).prometheus, CliOptions(url=url, ca_file=str(ca)))
    assert Client(conn).query("up", 1) == {"resultType": "vector", "result": []}
    with pytest.raises(LiveError, match=f"Prometheus at {url}: TLS failed: .*CERTIFICATE_VERIFY_FAILED"):
        Client(Connection(url=url, timeout=5)).query("up", 1)
    # the CA file named in .rulegen.yaml, inside the project
    (tmp_path / "ci").mkdir()
    (tmp_path / "ci" / "ca.pem").write_bytes(ca.read_bytes())
    conn = resolve(tmp_path, parse_config({"prometheus": {"url": url, "ca_file": "ci/ca.pem"}}).prometheus)
    assert Client(conn).query("up", 1)["result"] == []


@pytest.mark.parametrize("mode, words", [("401", "answered HTTP 401 Unauthorized: bad token (check the bearer token"),
                                         ("500", "answered HTTP 500"), ("slow", "no answer from")])
def test_check_stops_with_one_line_and_writes_nothing(project, fake, tmp_path, capsys, mode, words):
    from rulegen.cli import main
    _Handler.mode = mode
    token = tmp_path / "token"
    token.write_text(TOKEN)
    before = {p: p.read_bytes() for p in project.rglob("*") if p.is_file()}
    code = main(["-C", str(project), "check", "--prometheus", fake.url, "--prometheus-bearer-token-file", str(token),
                 "--prometheus-timeout", "1s"])
    out, err = capsys.readouterr()
    assert code == 2 and TOKEN not in out + err and "Traceback" not in err
    assert err.startswith(f"rulegen: Prometheus at {fake.url}: ") and words in err and err.count("\n") == 1
    assert {p: p.read_bytes() for p in project.rglob("*") if p.is_file()} == before


def test_server_text_is_cleaned_for_the_terminal():
    from rulegen.live.client import clean
    assert clean("a\x1b[31mb\u202ec\nd") == "a?[31mb?c?d"
    assert clean("x" * 400).endswith("...") and len(clean("x" * 400)) == 303


def test_a_hostile_metric_name_from_the_server_reaches_no_message_raw():
    from rulegen.live.series import LiveRule, check_series

    class Hostile:
        url = "http://h"
        conn = Connection(url="http://h")

        def label_values(self, name, start, end, matchers=()):
            return ["http_requests_total\x1b]8;;http://evil\x07"]

        def series(self, *a, **k):
            return []

        def query(self, *a, **k):
            return {"resultType": "vector", "result": []}

    rule = LiveRule(file="rules/a.yaml", name="A", is_alert=True, expr="http_request_total > 0")
    (f,) = check_series(Hostile(), [rule], now=1000.0)
    assert f.code == "RG900" and "\x1b" not in f.message and "\x07" not in f.message
