"""A real Prometheus server with days of known history, for the live tests (``tests/live``).

:func:`history` writes the OpenMetrics text of :data:`SERIES` (what each series is for is said
there); :func:`start_prometheus` turns such text into TSDB blocks with the real ``promtool tsdb
create-blocks-from openmetrics``, starts the real pinned ``prometheus`` on a free loopback
port with a private ``--storage.tsdb.path`` and waits until it answers queries;
:class:`PrometheusServer` is the running server (:attr:`~PrometheusServer.url`,
:attr:`~PrometheusServer.window`, :meth:`~PrometheusServer.stop`). The session fixture
``prometheus_server`` (``tests/conftest.py``) starts one for the whole run and always stops it.

Times: the history ends :data:`END_AGO` seconds before the server starts, on a whole
minute, and covers :data:`WINDOW_DAYS` days before that at :data:`STEP` seconds. Query the
server with explicit times inside :attr:`PrometheusServer.window` (``time=`` or ``start``/``end``):
a session can outlast the hour after the history ends, so a test that judges "now" passes a
time near :attr:`PrometheusServer.end` rather than the clock's.

Episodes (offsets in minutes from the window start, ends exclusive) are in :data:`EPISODES`;
:meth:`PrometheusServer.at` turns an offset into Unix seconds.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

#: Days of history, sample spacing (seconds) of the ordinary series, and how long before the
#: server starts the history ends (seconds; Prometheus 3 reads backfilled blocks that reach up
#: to its empty head, so the history is "now" for the hour after the start).
WINDOW_DAYS = 3
STEP = 60
END_AGO = 120
#: Spacing (seconds) of the one slowly scraped series (``rg_fixture_batch_last_success``).
SLOW_STEP = 240
#: Minutes from the window start at which the renamed metric and the vanished label value stop
#: (two days before the end).
CHANGE_AT = (WINDOW_DAYS - 2) * 24 * 60

#: Minute ranges ``[start, end)`` where a series holds its "bad" value.
EPISODES = {
    "errors": [(600, 630), (2000, 2045), (3500, 3520)],          # fires 3 times (for: 5m)
    "flap": [(1000 + 4 * i, 1002 + 4 * i) for i in range(30)],   # 1 for 2 minutes, 0 for 2, for two hours
    "kff": [(1500, 1510), (1513, 1523), (3000, 3010)],           # a 3-minute gap keep_firing_for: 5m bridges
}

#: The series written, name -> what it is for.
SERIES = {
    'up{job="api",instance="a"}': "always 1: a present metric",
    'up{job="batch",instance="b"}': "always 1: a second target (no series has job api and instance b)",
    'rg_fixture_errors_ratio{job="api",instance="a"}': "0.01, 1 during EPISODES['errors']: `> 0.5 for 5m` fires 3 times",
    'rg_fixture_latency_seconds{job="api",instance="a"}': "about 0.1: `> 1` never fires",
    'rg_fixture_requests_old_total{job="api",instance="a"}': "a counter renamed at CHANGE_AT: stops there",
    'rg_fixture_requests_total{job="api",instance="a"}': "... and continues under this name from CHANGE_AT",
    'rg_fixture_queue_depth{queue="ingest"}': "always present",
    'rg_fixture_queue_depth{queue="legacy"}': "a label value that vanished at CHANGE_AT",
    'rg_fixture_flap{job="api",instance="a"}': "flaps between 0 and 1 during EPISODES['flap']",
    'rg_fixture_kff{job="api",instance="a"}': "1 during EPISODES['kff'] (for keep_firing_for)",
    'rg_fixture_batch_last_success{job="batch"}': f"a sample every {SLOW_STEP}s (a slow scrape interval)",
}


def _inside(minute: float, ranges) -> bool:
    return any(a <= minute < b for a, b in ranges)


def _value(name: str, minute: float) -> float | None:
    """The value of series ``name`` (a key of :data:`SERIES`) ``minute`` minutes into the
    window, or None for no sample."""
    if name.startswith("up{"):
        return 1.0
    if "errors_ratio" in name:
        return 1.0 if _inside(minute, EPISODES["errors"]) else 0.01
    if "latency" in name:
        return 0.1 + (int(minute) % 7) / 100
    if "requests_old_total" in name:
        return 10.0 * minute if minute < CHANGE_AT else None
    if "requests_total" in name:
        return 10.0 * (minute - CHANGE_AT) if minute >= CHANGE_AT else None
    if "legacy" in name:
        return 3.0 if minute < CHANGE_AT else None
    if "queue_depth" in name:
        return 5.0 + int(minute) % 3
    if "flap" in name:
        return 1.0 if _inside(minute, EPISODES["flap"]) else 0.0
    if "kff" in name:
        return 1.0 if _inside(minute, EPISODES["kff"]) else 0.0
    if "batch" in name:
        return minute * 60.0
    raise KeyError(name)


def history(start: int, end: int, wide: int = 0, wide_step: int = STEP) -> str:
    """OpenMetrics text of :data:`SERIES` from ``start`` to ``end`` (Unix seconds, both whole
    minutes; ``end`` included), plus ``wide`` series ``rg_fixture_wide{instance="i<n>"}`` (a
    sine-like load per instance, for benchmarks) every ``wide_step`` seconds. Ends with ``# EOF``."""
    out = []
    for name in SERIES:
        step = SLOW_STEP if "batch" in name else STEP
        for t in range(start, end + 1, step):
            v = _value(name, (t - start) / 60)
            if v is not None:
                out.append(f"{name} {v:g} {t}\n")
    for i in range(wide):
        for t in range(start, end + 1, wide_step):
            out.append(f'rg_fixture_wide{{instance="i{i}"}} {(t // 60 + i * 7) % 100} {t}\n')
    out.append("# EOF\n")
    return "".join(out)


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class PrometheusServer:
    """A running real Prometheus (from :func:`start_prometheus`).

    Attributes:
        url: base URL, ``http://127.0.0.1:<port>`` (no trailing ``/``).
        start, end: the history window, Unix seconds (whole minutes; samples at both ends).
        data_dir: its ``--storage.tsdb.path``.
        log: the file its output goes to.
    """

    url: str
    start: int
    end: int
    data_dir: Path
    log: Path
    proc: subprocess.Popen = field(repr=False)

    @property
    def window(self) -> tuple[int, int]:
        """``(start, end)`` of the history, Unix seconds."""
        return self.start, self.end

    def at(self, minute: float) -> float:
        """Unix seconds ``minute`` minutes after the window start."""
        return self.start + minute * 60

    def stop(self) -> None:
        """Kill the server (its process group) and wait for it; safe to call twice."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc.wait(timeout=30)


def start_prometheus(prometheus_bin: Path, promtool_bin: Path, workdir: Path, *, text: str | None = None,
                     window: tuple[int, int] | None = None, rule_files: tuple = (), config_extra: str = "",
                     args: tuple = (), ready_timeout: float = 90) -> PrometheusServer:
    """Write history into a fresh TSDB under ``workdir`` and start the real Prometheus on it.

    Args:
        prometheus_bin, promtool_bin: the pinned binaries (fixtures ``prometheus_bin`` and
            ``promtool_bin``).
        workdir: a private, empty temp folder (data, config and log go there).
        text: OpenMetrics text to backfill (default :func:`history` of ``window``).
        window: ``(start, end)`` Unix seconds of the history (default: :data:`WINDOW_DAYS`
            days ending :data:`END_AGO` seconds ago, on whole minutes).
        rule_files: rule files (paths) the server loads and evaluates live.
        config_extra: YAML appended to the server's config (after ``global:`` and ``rule_files:``).
        args: extra command-line flags for ``prometheus``.
        ready_timeout: seconds to wait for ``/-/ready`` and the first query.

    Raises:
        RuntimeError: promtool failed, or the server exited or was not ready in time (its log
            tail is in the message); the server is killed first.
    """
    if window is None:
        end = (int(time.time()) - END_AGO) // 60 * 60
        window = (end - WINDOW_DAYS * 86400, end)
    start, end = window
    workdir = Path(workdir)
    data = workdir / "data"
    data.mkdir(parents=True)
    om = workdir / "history.om"
    om.write_text(history(start, end) if text is None else text, encoding="utf-8")
    made = subprocess.run([str(promtool_bin), "tsdb", "create-blocks-from", "openmetrics", "-q", str(om), str(data)],
                          capture_output=True, text=True, timeout=600)
    if made.returncode != 0:
        raise RuntimeError(f"promtool create-blocks-from openmetrics failed: {made.stderr[-2000:]}")
    om.unlink()
    cfg = workdir / "prometheus.yml"
    rules = "".join(f"  - {Path(r).resolve()}\n" for r in rule_files)
    cfg.write_text("global:\n  scrape_interval: 1m\n  evaluation_interval: 1m\n"
                   + (f"rule_files:\n{rules}" if rules else "") + config_extra, encoding="utf-8")
    log = workdir / "prometheus.log"
    last = ""
    for _attempt in range(3):  # the free port can be taken between the probe and the bind
        port = free_port()
        with open(log, "wb") as out:
            proc = subprocess.Popen([str(prometheus_bin), f"--config.file={cfg}", f"--storage.tsdb.path={data}",
                                     "--storage.tsdb.retention.time=3650d", f"--web.listen-address=127.0.0.1:{port}",
                                     *args], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    cwd=workdir, start_new_session=True)
        server = PrometheusServer(f"http://127.0.0.1:{port}", start, end, data, log, proc)
        try:
            _wait_ready(server, ready_timeout)
            return server
        except RuntimeError as e:
            server.stop()
            last = str(e)
            if "address already in use" not in last:
                break
    raise RuntimeError(last)


def _wait_ready(server: PrometheusServer, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    query = f"{server.url}/api/v1/labels"  # the blocks are loaded: their label names are there
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{server.url}/-/ready", timeout=2) as r:
                if r.status == 200:
                    with urllib.request.urlopen(query, timeout=10) as q:
                        if b'"__name__"' in q.read():
                            return
        except OSError:
            pass
        time.sleep(0.2)
    tail = server.log.read_text(encoding="utf-8", errors="replace")[-3000:]
    raise RuntimeError(f"prometheus at {server.url} was not ready within {timeout:g}s "
                       f"(exit code {server.proc.poll()}); log tail:\n{tail}")
