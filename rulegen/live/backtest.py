"""Backtesting alerting rules: how often would they have fired on a live Prometheus's history.

:func:`replay` runs ``rulegen-backtest`` (``tools/rulegen-backtest``, built by
``scripts/install-tools.sh`` from the pinned Prometheus module), which evaluates every alerting
rule of a rule file at every step of a past window with Prometheus' own ``rules.AlertingRule``
(``for``, ``keep_firing_for``, templated labels, the group's ``limit`` and ``query_offset``),
reading the expr's value at each step from the server. Its JSON answer becomes a
:class:`Backtest`: per alert, the firing episodes, total firing time, longest episode and
distinct label sets (lists bounded; the counts are always complete).

The connection (:class:`rulegen.live.connect.Connection`) reaches the helper through files in
a private temporary folder (token, headers, CA bundle): nothing secret is on its command line.
The helper prints its JSON only when the whole replay succeeded; any failure (unreachable
server, HTTP 5xx, a timeout, a refused token, an answer over the size bounds) is a
:class:`rulegen.live.connect.LiveError` naming the URL, and nothing is written.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import time as _time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..findings import RulegenError
from ..fs.read import positive_env
from ..tools import find, process
from .client import DEFAULT_MAX_BYTES, DEFAULT_MAX_SERIES, MAX_BYTES_ENV, MAX_SERIES_ENV, clean
from .connect import Connection, LiveError

#: The helper program (a name of :data:`rulegen.tools.find.NAMES`).
TOOL = "rulegen-backtest"
#: Most episodes and label sets listed per alert (all are counted).
MAX_EPISODES = 1000
MAX_LABEL_SETS = 100
#: Seconds the whole replay may take (``$RULEGEN_BACKTEST_TIMEOUT`` overrides).
TIMEOUT_ENV = "RULEGEN_BACKTEST_TIMEOUT"
DEFAULT_TIMEOUT = 1800


@dataclass(frozen=True)
class Episode:
    """One firing episode of one label set.

    Attributes:
        start: first evaluation (Unix seconds) at which the alert was firing.
        end: first evaluation at which it no longer was, or the last evaluation of the window
            when ``ongoing``.
        labels: the alert's labels (``alertname`` included).
    """

    start: float
    end: float
    ongoing: bool
    labels: dict

    @property
    def seconds(self) -> float:
        """Length in seconds."""
        return self.end - self.start


@dataclass
class AlertReplay:
    """The replay of one alerting rule (one rule of one group: a name used twice is two).

    Attributes:
        group, alert, index: the rule group, the alert name, the rule's position in the group.
        expr: the expr as Prometheus formats it.
        rule_labels: the rule's own labels (group labels merged; templates not expanded).
        step: evaluation step in seconds.
        evaluations: evaluations made.
        episodes_total, firing_seconds, longest_seconds, label_sets_total: complete counts.
        episodes: the first episodes by start time (at most the ``max_episodes`` asked for;
            ``episodes_truncated`` says when some were left out).
        label_sets: distinct firing label sets (at most ``max_label_sets``).
        eval_errors, first_eval_error: evaluations Prometheus' rule refused (a duplicate label
            set after templating, the group's ``limit``), as the server would log them.
        error: the server refused the expr itself (HTTP 400/422), or None.
    """

    group: str
    alert: str
    index: int
    expr: str
    step: float
    evaluations: int
    episodes_total: int
    firing_seconds: float
    longest_seconds: float
    label_sets_total: int
    rule_labels: dict = field(default_factory=dict)
    episodes: list[Episode] = field(default_factory=list)
    episodes_truncated: bool = False
    label_sets: list[dict] = field(default_factory=list)
    label_sets_truncated: bool = False
    eval_errors: int = 0
    first_eval_error: str | None = None
    error: str | None = None


@dataclass
class Backtest:
    """The result of :func:`replay`: the window (Unix seconds) and one entry per alerting rule."""

    url: str
    start: float
    end: float
    alerts: list[AlertReplay]


def window(since: float, step: float, now: float | None = None) -> tuple[float, float]:
    """``(start, end)`` Unix seconds of the last ``since`` seconds, ``end`` on a whole ``step``
    (seconds) at or before ``now`` (default: the current time), so reruns reuse the same
    evaluation times."""
    now = _time.time() if now is None else now
    end = math.floor(now / step) * step
    return end - since, end


def _stamp(text: str) -> float:
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def _shown(labels) -> dict:
    """Labels from the server (label values, templated rule labels: a pull request can name
    the server) as they may be printed or put in a review comment: control characters of names
    and values replaced (:func:`rulegen.live.client.clean`), values at most 1,000 characters."""
    return {clean(k, 200): clean(v, 1000) for k, v in dict(labels).items()}


def parse(doc: dict, url: str) -> Backtest:
    """The helper's JSON document as a :class:`Backtest`.

    Raises:
        LiveError: the document does not have the helper's shape.
    """
    try:
        alerts = []
        for a in doc["alerts"]:
            eps = [Episode(_stamp(e["start"]), _stamp(e["end"]), bool(e["ongoing"]), _shown(e["labels"]))
                   for e in a["episodes"]]
            alerts.append(AlertReplay(
                group=str(a["group"]), alert=str(a["alert"]), index=int(a["index"]), expr=str(a["expr"]),
                step=float(a["step_seconds"]), evaluations=int(a["evaluations"]),
                episodes_total=int(a["episodes_total"]), firing_seconds=float(a["firing_seconds"]),
                longest_seconds=float(a["longest_seconds"]), label_sets_total=int(a["label_sets_total"]),
                rule_labels=_shown(a.get("rule_labels") or {}),
                episodes=eps, episodes_truncated=bool(a["episodes_truncated"]),
                label_sets=[_shown(s) for s in a["label_sets"]], label_sets_truncated=bool(a["label_sets_truncated"]),
                eval_errors=int(a["eval_errors"]), first_eval_error=clean(a["first_eval_error"], 500) if a.get("first_eval_error") else None,
                error=clean(a["error"], 500) if a.get("error") else None))
        return Backtest(url=url, start=_stamp(doc["start"]), end=_stamp(doc["end"]), alerts=alerts)
    except (KeyError, TypeError, ValueError) as e:
        raise LiveError(f"{TOOL} answered a document rulegen cannot read ({type(e).__name__}: {clean(e, 120)})") from None


def _seconds_flag(s: float) -> str:
    return f"{s:.3f}s"


def replay(conn: Connection, groups: list[dict], start: float, end: float, *, step: float | None = None,
           alerts=(), root: Path | None = None, per_step: bool = False, max_episodes: int = MAX_EPISODES,
           max_label_sets: int = MAX_LABEL_SETS, timeout: float | None = None) -> Backtest:
    """Replay the alerting rules of ``groups`` (a rule file's ``groups:``, e.g. a rendered
    PrometheusRule's ``spec.groups``) on the Prometheus ``conn`` names, from ``start`` to
    ``end`` (Unix seconds) every ``step`` seconds (None: each group's ``interval``, else 60).

    Args:
        alerts: only alerts of these names (empty: all).
        root: the project being checked (the helper is never taken from inside it).
        per_step: one instant query per step instead of range queries (slow; same result).
        max_episodes, max_label_sets: bounds of the lists per alert (counts stay complete).
        timeout: seconds for the whole replay (default ``$RULEGEN_BACKTEST_TIMEOUT`` or 1800).

    Raises:
        LiveError: the helper is missing, or the replay failed (the message names the URL and
            says why: unreachable, HTTP status, timeout, refused token, too large an answer).
    """
    try:
        tool = find.require(TOOL, root)
    except RulegenError as e:
        raise LiveError(str(e)) from None
    timeout = timeout or positive_env(TIMEOUT_ENV, DEFAULT_TIMEOUT, " of seconds")
    with tempfile.TemporaryDirectory(prefix="rulegen-backtest-") as tmp:
        d = Path(tmp)
        rules = d / "rules.yaml"
        rules.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False, allow_unicode=True), encoding="utf-8")
        args = [tool, "--rules", rules, "--url", conn.url, "--start", f"{start:.3f}", "--end", f"{end:.3f}",
                "--timeout", _seconds_flag(conn.timeout),
                "--max-response-bytes", positive_env(MAX_BYTES_ENV, DEFAULT_MAX_BYTES, " of bytes"),
                "--max-series", positive_env(MAX_SERIES_ENV, DEFAULT_MAX_SERIES, " of series"),
                "--max-episodes", max_episodes, "--max-label-sets", max_label_sets,
                "--parallel", max(2, min(8, os.cpu_count() or 2))]
        if step:
            args += ["--step", f"{max(1, round(step * 1000))}ms"]
        if per_step:
            args.append("--per-step")
        for a in alerts:
            args += ["--alert", a]
        if conn.token is not None:
            _private(d / "token", conn.token)
            args += ["--bearer-token-file", d / "token"]
        if conn.headers:
            _private(d / "headers", "".join(f"{k}: {v}\n" for k, v in conn.headers))
            args += ["--headers-file", d / "headers"]
        if conn.ca_pem is not None:
            _private(d / "ca.pem", conn.ca_pem)
            args += ["--ca-file", d / "ca.pem"]
        try:
            proc = process.run(args, cwd=d, timeout=timeout)
        except process.TimeoutExpired:
            raise LiveError(f"Prometheus at {conn.url}: the backtest took longer than {timeout:g}s "
                            f"(${TIMEOUT_ENV}); shorten --since or use a larger --step") from None
    if proc.returncode != 0:
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        why = lines[-1].removeprefix(f"{TOOL}: ") if lines else f"exit status {proc.returncode}"
        raise LiveError(f"Prometheus at {conn.url}: backtest failed: {clean(why)}")
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        raise LiveError(f"{TOOL} printed no JSON document") from None
    return parse(doc, conn.url)


def _private(path: Path, text: str) -> None:
    """Write ``text`` to a new file only its owner can read."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
