"""The test Prometheus (:mod:`helpers.prometheus`) holds the history its docstring promises,
as the real server answers it: the live tests and the backtests rely on these facts."""

from __future__ import annotations

import pytest

from rulegen.live.client import Client
from rulegen.live.connect import Connection

from helpers.prometheus import CHANGE_AT, EPISODES, SLOW_STEP, STEP

pytestmark = pytest.mark.tools("prometheus", "promtool")


def _runs(client, expr: str, server) -> list[tuple[float, float]]:
    """Minute ranges [start, end) where ``expr`` returns a series, stepping a minute."""
    start, end = server.window
    got = client.query_range(expr, start, end, STEP)["result"]
    minutes = sorted({round((float(t) - start) / 60) for r in got for t, _ in r["values"]})
    runs: list = []
    for m in minutes:
        if runs and runs[-1][1] == m:
            runs[-1][1] = m + 1
        else:
            runs.append([m, m + 1])
    return [tuple(r) for r in runs]


def test_the_history_is_as_documented(prometheus_server):
    server = prometheus_server
    client = Client(Connection(url=server.url))
    assert _runs(client, "rg_fixture_errors_ratio > 0.5", server) == EPISODES["errors"]
    assert _runs(client, "rg_fixture_latency_seconds > 1", server) == []
    assert _runs(client, "rg_fixture_kff > 0", server) == EPISODES["kff"]
    assert len(_runs(client, "rg_fixture_flap > 0", server)) == len(EPISODES["flap"]) == 30
    # the renamed metric and the vanished label value stop at CHANGE_AT: the last sample, a minute
    # before, stays visible for the 5m look-back delta (left-open)
    old = _runs(client, "rg_fixture_requests_old_total", server)
    assert old[0][0] == 0 and old[-1][1] == CHANGE_AT + 4
    new = _runs(client, "rg_fixture_requests_total", server)
    assert new[0][0] == CHANGE_AT and new[-1][1] == (server.end - server.start) // 60 + 1
    assert _runs(client, 'rg_fixture_queue_depth{queue="legacy"}', server)[-1][1] == CHANGE_AT + 4
    # the slow series: a sample every SLOW_STEP seconds
    got = client.query(f"count_over_time(rg_fixture_batch_last_success[{SLOW_STEP * 10}s])", server.end)
    assert float(got["result"][0]["value"][1]) == 10


def test_the_client_endpoints_on_the_real_server(prometheus_server):
    server = prometheus_server
    client = Client(Connection(url=server.url))
    start, end = server.window
    assert {"__name__", "job", "instance", "queue"} <= set(client.labels(start, end))
    assert client.label_values("queue", start, end) == ["ingest", "legacy"]
    assert client.label_values("queue", end - 3600, end) == ["ingest"]
    assert client.label_values("job", start, end, ['rg_fixture_batch_last_success']) == ["batch"]
    assert client.series(['rg_fixture_queue_depth'], start, end) == [
        {"__name__": "rg_fixture_queue_depth", "queue": "ingest"},
        {"__name__": "rg_fixture_queue_depth", "queue": "legacy"}]
    assert len(client.series(['{__name__=~"rg_fixture_.*"}'], start, end, limit=2)) == 2
    got = client.query_range("rg_fixture_kff", end - 600, end, 60)
    assert got["resultType"] == "matrix" and len(got["result"][0]["values"]) == 11
    assert client.metadata() == {}  # backfilled blocks carry no metadata (nothing is scraped)
