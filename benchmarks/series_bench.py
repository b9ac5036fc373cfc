"""Benchmark: the live series checks (RG900-RG906) of 1,000 alerts against the real pinned
Prometheus on a loopback port.

    python benchmarks/series_bench.py [--alerts 1000] [--metrics 500] [--hours 6]

What it does (about a minute, most of it writing the history):

1. writes ``--hours`` of history at a 1-minute spacing for ``--metrics`` metrics of 2 series
   each (``bench_m<i>{job="j0"|"j1"}``) into a fresh TSDB with ``promtool tsdb
   create-blocks-from openmetrics`` and starts the pinned ``prometheus`` on it
   (:mod:`helpers.prometheus`, the live tests' fixture);
2. makes ``--alerts`` alerts (alert ``i`` reads ``bench_m<i mod metrics>{job="j<i mod 2>"}``
   with ``for: 5m``; one in 20 reads a misspelt name, one in 20 a label value that does not
   exist) and runs :func:`rulegen.live.series.check_series` on them, timing it (best of 3);
3. as the baseline, in the same process and against the same server, times as many single
   ``count(up)`` queries, one after another, as the check made requests: the round trips
   alone. Prints both and their ratio (the check runs up to 4 requests at a time).

The issue's target: series checks of 1,000 alerts under 10 s on 2 cores. Nothing here fails on
a time; no unit test asserts one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))

from helpers.prometheus import start_prometheus  # noqa: E402

from rulegen.live.client import Client  # noqa: E402
from rulegen.live.connect import Connection  # noqa: E402
from rulegen.live.series import LiveRule, check_series  # noqa: E402
from rulegen.tools import find  # noqa: E402


def history(metrics: int, start: int, end: int) -> str:
    out = []
    for i in range(metrics):
        for job in ("j0", "j1"):
            name = f'bench_m{i}{{job="{job}"}}'
            out.extend(f"{name} {(t // 60 + i) % 50} {t}\n" for t in range(start, end + 1, 60))
    out.append("# EOF\n")
    return "".join(out)


def alerts(n: int, metrics: int) -> list[LiveRule]:
    out = []
    for i in range(n):
        metric = f"bench_m{i % metrics}" + ("x" if i % 20 == 7 else "")
        job = "j9" if i % 20 == 13 else f"j{i % 2}"
        out.append(LiveRule(file="rules/bench.yaml", name=f"Bench{i}", is_alert=True,
                            expr=f'{metric}{{job="{job}"}} > 40', for_s=300.0,
                            locate=lambda off, i=i: (i + 1, off + 1), for_pos=(i + 1, 1)))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--alerts", type=int, default=1000)
    ap.add_argument("--metrics", type=int, default=500)
    ap.add_argument("--hours", type=int, default=6)
    a = ap.parse_args()
    prom, promtool = find.require("prometheus", REPO), find.require("promtool", REPO)
    end = (int(time.time()) - 60) // 60 * 60
    start = end - a.hours * 3600
    with tempfile.TemporaryDirectory(prefix="rulegen-series-bench-") as tmp:
        t0 = time.perf_counter()
        server = start_prometheus(prom, promtool, Path(tmp), text=history(a.metrics, start, end), window=(start, end))
        print(f"history: {a.metrics * 2} series x {a.hours}h written and served in {time.perf_counter() - t0:.1f}s")
        try:
            rules = alerts(a.alerts, a.metrics)
            best, requests, found = None, 0, []
            for _ in range(3):
                client = Client(Connection(url=server.url))
                t0 = time.perf_counter()
                found = check_series(client, rules)
                took = time.perf_counter() - t0
                best = took if best is None else min(best, took)
                requests = client.requests
            base_client = Client(Connection(url=server.url))
            t0 = time.perf_counter()
            for _ in range(requests):
                base_client.query("count(up)", end)
            base = time.perf_counter() - t0
        finally:
            server.stop()
    codes = {c: sum(f.code == c for f in found) for c in sorted({f.code for f in found})}
    print(f"series checks of {a.alerts} alerts on {a.metrics} metrics: {best:.2f}s (best of 3), "
          f"{requests} requests, findings {codes}")
    print(f"baseline, {requests} sequential count(up) queries: {base:.2f}s; ratio {best / base:.2f} "
          "(target: the check under 10s)")


if __name__ == "__main__":
    main()
