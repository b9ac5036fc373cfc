"""The replay is proven equal to live evaluation: a second real Prometheus scrapes a small
exporter in this process every second and evaluates the same rules live (``interval: 1s``,
``query_offset: 3s``, so a sample still being written is never read); afterwards the backtest
of the same rules on the same server, on the same evaluation times (the group's own phase,
read from ``/api/v1/rules``), must report exactly the firing episodes the server recorded in
``ALERTS``: a periodic alert with ``for``, a flapping one, ``keep_firing_for`` bridging gaps,
one that never fires, and a templated label."""

from __future__ import annotations

import http.server
import json
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from rulegen.live.backtest import replay
from rulegen.live.connect import Connection

from helpers.prometheus import start_prometheus

pytestmark = pytest.mark.tools("prometheus", "promtool", "rulegen-backtest")

#: Seconds the live server evaluates the rules for, and the delay before the pattern starts.
RUN = 45
QUIET = 8
#: The group's query_offset in seconds: a scrape in flight for less than this is never read half-way.
OFFSET = 3

GROUP = {"name": "live", "interval": "1s", "query_offset": f"{OFFSET}s", "rules": [
    {"alert": "LiveThree", "expr": 'rg_live{s="three"} > 0.5', "for": "2s",
     "labels": {"copy": "{{ $labels.s }}-x"}},
    {"alert": "LiveFlap", "expr": 'rg_live{s="flap"} > 0.5'},
    {"alert": "LiveKff", "expr": 'rg_live{s="kff"} > 0.5', "keep_firing_for": "3s"},
    {"alert": "LiveNever", "expr": 'rg_live{s="never"} > 0.5'},
]}


def _value(series: str, t: float) -> float:
    """The exporter's value of ``rg_live{s=series}`` ``t`` seconds after the pattern starts."""
    if t < 0 or series == "never":
        return 0.0
    k = int(t)
    if series == "three":   # 1 for 6 s of every 13 s
        return 1.0 if k % 13 < 6 else 0.0
    if series == "flap":    # 1 for 2 s, 0 for 2 s
        return 1.0 if k % 4 < 2 else 0.0
    if series == "kff":     # 1 for 4 s, 0 for 2 s (bridged), ... and 0 for 7 s (not bridged)
        return 1.0 if k % 15 in (0, 1, 2, 3, 6, 7) else 0.0
    raise KeyError(series)


class _Exporter(http.server.BaseHTTPRequestHandler):
    t0 = 0.0

    def do_GET(self):  # noqa: N802 (http.server's name)
        t = time.time() - self.t0
        body = "".join(f'rg_live{{s="{s}"}} {_value(s, t)}\n' for s in ("three", "flap", "kff", "never")).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _get(url: str, path: str, **params) -> dict:
    with urllib.request.urlopen(f"{url}{path}?{urllib.parse.urlencode(params)}", timeout=20) as r:
        return json.loads(r.read())["data"]


def _alerts(url: str, at: float) -> list:
    return _get(url, "/api/v1/query", query='ALERTS{alertstate="firing"}[5m]', time=f"{at:.3f}")["result"]


def _live_episodes(result: list, step: int, last: int) -> dict:
    """{(alertname, labels...): [(start, end or None)]} (milliseconds) from the server's own
    ``ALERTS`` samples ``result`` (written at evaluation time minus the query offset)."""
    out: dict = {}
    for s in result:
        labels = {k: v for k, v in s["metric"].items() if k not in ("alertstate", "__name__")}
        # + query_offset: the evaluation time, in milliseconds
        ts = [round(float(t) * 1000) + OFFSET * 1000 for t, _ in s["values"]]
        runs, begin = [], ts[0]
        for a, b in zip(ts, ts[1:] + [None]):
            if b is None or b - a > step * 1.5:
                runs.append((begin, None if a == last else a + step))
                begin = b
        out[tuple(sorted(labels.items()))] = runs
    return out


def test_backtest_reports_what_prometheus_evaluated_live(prometheus_bin, promtool_bin, backtest_bin, tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Exporter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump({"groups": [GROUP]}), encoding="utf-8")
    now = int(time.time()) // 60 * 60
    prom = None
    try:
        _Exporter.t0 = time.time() + 3600  # all zero until the server runs
        prom = start_prometheus(
            prometheus_bin, promtool_bin, tmp_path / "prom", text=f'up{{job="seed"}} 1 {now - 600}\n# EOF\n',
            window=(now - 600, now - 600), rule_files=(rules,),
            config_extra=("scrape_configs:\n  - job_name: live\n    scrape_interval: 1s\n"
                          f"    static_configs:\n      - targets: ['127.0.0.1:{server.server_address[1]}']\n"))
        _Exporter.t0 = time.time() + QUIET
        time.sleep(QUIET + RUN)
        groups = _get(prom.url, "/api/v1/rules", type="alert")["groups"]
        last_eval = datetime.fromisoformat(groups[0]["lastEvaluation"][:23] + "+00:00").timestamp()
        # the group's evaluation grid (its phase within the second) from the ALERTS samples
        phase = (round(float(_alerts(prom.url, last_eval)[0]["values"][0][0]) * 1000) + OFFSET * 1000) % 1000
        last = (round(last_eval * 1000) - phase) // 1000 * 1000 + phase
        # the samples of the evaluations up to `last` (later ones may have run meanwhile)
        found = _alerts(prom.url, (last - OFFSET * 1000) / 1000)
        live = _live_episodes(found, 1000, last)
        start = last - (RUN + QUIET // 2) * 1000  # on the group's evaluation grid, before the pattern starts
        result = replay(Connection(url=prom.url, timeout=30), [GROUP], start / 1000, last / 1000, step=1)
    finally:
        if prom is not None:
            prom.stop()
        server.shutdown()
    replayed = {}
    for a in result.alerts:
        for e in a.episodes:
            key = tuple(sorted(e.labels.items()))
            replayed.setdefault(key, []).append((round(e.start * 1000), None if e.ongoing else round(e.end * 1000)))
    names = {dict(k)["alertname"] for k in live}
    assert names == {"LiveThree", "LiveFlap", "LiveKff"}, live
    assert replayed == live
    by = {a.alert: a for a in result.alerts}
    assert by["LiveNever"].episodes_total == 0
    assert by["LiveFlap"].episodes_total >= 8 and by["LiveThree"].episodes_total >= 2
    assert dict(by["LiveThree"].episodes[0].labels)["copy"] == "three-x"
    # keep_firing_for: 3s bridges the 2-second gaps, not the 7-second ones
    assert all(e.seconds >= 8 for e in by["LiveKff"].episodes if not e.ongoing)
