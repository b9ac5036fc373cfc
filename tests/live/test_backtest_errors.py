"""Bad servers and bad settings for ``rulegen backtest``: an unreachable URL, HTTP 500, a slow
server (timeout), a refused token, answers over the series and byte bounds, a malformed
answer and a bad expr. Each is one clear error naming the URL, no traceback, and nothing
printed on stdout (a redirected ``-o json`` file stays empty); a correct token and the headers
do reach the server; the token never appears in a message."""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.parse

import pytest

from rulegen.cli import main
from rulegen.live.backtest import replay
from rulegen.live.connect import Connection, LiveError

from helpers.prometheus import free_port
from helpers.samples import FIXTURE_SPEC_HEAD

pytestmark = pytest.mark.tools("rulegen-backtest")

GROUPS = [{"name": "g", "rules": [{"alert": "A", "expr": "up == 0", "for": "1m"}]}]
TOKEN = "s3cret-token-value"


def _matrix(n: int, start: float, end: float) -> dict:
    values = [[start, "0"]]
    return {"status": "success", "data": {"resultType": "matrix", "result": [
        {"metric": {"__name__": "up", "i": str(i)}, "values": values} for i in range(n)]}}


class _Handler(http.server.BaseHTTPRequestHandler):
    mode = "ok"
    seen: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
        form = urllib.parse.parse_qs(self.rfile.read(int(self.headers.get("Content-Length", 0))).decode())
        type(self).seen.append((self.path, self.headers, form))
        mode = type(self).mode
        if mode == "slow" or (mode == "500-and-slow" and "slow" in form["query"][0]):
            time.sleep(3)
        if mode == "500-and-slow":
            return self._send(500, b"internal error")
        if mode == "500":
            return self._send(500, b"internal error")
        if mode == "token" and self.headers.get("Authorization") != f"Bearer {TOKEN}":
            return self._send(401, b"unauthorized")
        if mode == "bad-expr":
            return self._send(400, json.dumps({"status": "error", "errorType": "bad_data",
                                               "error": "parse error: unexpected end"}).encode())
        if mode == "garbage":
            return self._send(200, b"<html>not prometheus</html>")
        start, end = float(form["start"][0]), float(form["end"][0])
        n = 50 if mode == "many" else 1
        body = json.dumps(_matrix(n, start, end)).encode()
        if mode == "huge":
            body = body[:-1] + b"," + b'"pad":"' + b"x" * 300_000 + b'"}'
        self._send(200, body)

    def _send(self, code: int, body: bytes):
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    _Handler.mode, _Handler.seen = "ok", []
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _fails(conn: Connection, match: str) -> str:
    with pytest.raises(LiveError, match=match) as e:
        replay(conn, GROUPS, 1_000_000, 1_000_600, step=60)
    msg = str(e.value)
    assert conn.url in msg and TOKEN not in msg and "Traceback" not in msg
    return msg


def test_a_healthy_server_gets_the_token_and_headers(fake):
    _Handler.mode = "token"
    conn = Connection(url=fake, token=TOKEN, headers=(("X-Scope-OrgID", "team-a"),), timeout=5)
    result = replay(conn, GROUPS, 1_000_000, 1_000_600, step=60)
    assert result.alerts[0].evaluations == 11 and result.alerts[0].episodes_total == 0
    path, headers, form = _Handler.seen[0]
    assert path == "/api/v1/query_range" and headers["X-Scope-OrgID"] == "team-a"
    assert form["query"] == ["up == 0"] and form["step"] == ["60.000"]


def test_an_unreachable_url(fake):
    _fails(Connection(url=f"http://127.0.0.1:{free_port()}", timeout=5), "cannot reach")


def test_http_500(fake):
    _Handler.mode = "500"
    _fails(Connection(url=fake, timeout=5), "answered HTTP 500")


def test_the_failure_is_reported_not_the_cancellation_it_caused(fake):
    """One alert's request fails while another's is still waiting: the helper cancels the
    waiting one, and reports the failure, not "cannot reach ...: context canceled" (what a
    server refusing connections used to print)."""
    _Handler.mode = "500-and-slow"
    groups = [{"name": "g", "rules": [{"alert": "Slow", "expr": "slow == 0"}, {"alert": "Fast", "expr": "fast == 0"}]}]
    with pytest.raises(LiveError, match="answered HTTP 500") as e:
        replay(Connection(url=fake, timeout=10), groups, 1_000_000, 1_000_600, step=60)
    assert "canceled" not in str(e.value)


def test_a_slow_server_times_out(fake):
    _Handler.mode = "slow"
    _fails(Connection(url=fake, timeout=0.5), r"did not answer within 500ms")


def test_an_invalid_token(fake, tmp_path):
    _Handler.mode = "token"
    _fails(Connection(url=fake, token="wrong-token", timeout=5), r"refused the request \(HTTP 401\).*token")


def test_too_many_series_is_bounded(fake, monkeypatch):
    _Handler.mode = "many"
    monkeypatch.setenv("RULEGEN_PROMETHEUS_MAX_SERIES", "10")
    _fails(Connection(url=fake, timeout=5), r"returned 50 series, more than --max-series 10")


def test_too_large_an_answer_is_bounded(fake, monkeypatch):
    _Handler.mode = "huge"
    monkeypatch.setenv("RULEGEN_PROMETHEUS_MAX_BYTES", "100000")
    _fails(Connection(url=fake, timeout=5), r"larger than 100000 bytes")


def test_an_answer_that_is_not_prometheus(fake):
    _Handler.mode = "garbage"
    _fails(Connection(url=fake, timeout=5), r"did not answer with a Prometheus API success response")


def test_a_refused_expr_is_that_alerts_error_not_the_runs(fake):
    _Handler.mode = "bad-expr"
    result = replay(Connection(url=fake, timeout=5), GROUPS, 1_000_000, 1_000_600, step=60)
    assert result.alerts[0].error == "bad_data: parse error: unexpected end"


SPEC = FIXTURE_SPEC_HEAD + """\
      - alert: A
        expr: up == 0
        for: 1m
        severity: warning
        summary: s
        description: d
"""


@pytest.mark.tools("rulegen-backtest", "helm")
@pytest.mark.parametrize("mode", ["500", "token"])
def test_the_command_prints_one_error_and_nothing_on_stdout(fake, tmp_path, capsys, mode):
    _Handler.mode = mode
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "fixture.yaml").write_text(SPEC, encoding="utf-8")
    token = tmp_path / "token"
    token.write_text("wrong\n", encoding="utf-8")
    code = main(["backtest", "-C", str(tmp_path), "--since", "1h", "-o", "json", "--prometheus", fake,
                 "--prometheus-bearer-token-file", str(token)])
    out, err = capsys.readouterr()
    assert (code, out) == (2, ""), err
    assert err.startswith(f"rulegen: Prometheus at {fake}: backtest failed: ") and err.count("\n") == 1, err


@pytest.mark.parametrize("argv, said", [
    (["--alert", "AA"], "no alert named AA"),
    (["--app", "fixtur"], "no spec for app(s) fixtur (did you mean fixture?)"),
    (["--app", "nope"], "no spec for app(s) nope; the project's apps: fixture\n"),
    (["--since", "0s"], "'0s' is not a positive duration"),
])
def test_unknown_names_and_bad_durations_are_usage_errors(tmp_path, capsys, argv, said):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "fixture.yaml").write_text(SPEC, encoding="utf-8")
    code = main(["backtest", "-C", str(tmp_path), "--prometheus", f"http://127.0.0.1:{free_port()}", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "" and said in err
