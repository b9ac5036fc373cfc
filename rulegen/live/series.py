"""Series checks against a live Prometheus: the metrics and label values the rules read exist.

``rulegen check --prometheus URL`` (or with ``prometheus.url`` in ``.rulegen.yaml``) runs them
after validation passes; with no Prometheus configured they are skipped with one line saying so
(see ``docs/live.md``). Each finding points at the selector (or matcher) in the spec, ``file:line:col``, and says what
to change. The checks read a live server, so they judge the rules against *that* Prometheus'
data: a metric a staging Prometheus lacks is reported there. "Now" is the time the check runs;
"recently" is the last hour (:data:`RECENT`); the look-back is
``prometheus.lookback`` (default ``7d``).

Selectors of metrics that the project's own recording rules produce are checked through the
recording rule's own ``expr`` (its inputs), never reported as missing: a recording rule a pull
request adds has no series before it is deployed. Selectors inside an ``expr`` that does not
parse, or without a fixed metric name (``{__name__=~"..."}``), are not checked.

Requests (:mod:`rulegen.live.client`): the metric names present in the look-back and recently
(two requests in all), then one batch per metric (not per alert), only for metrics whose
selectors have label matchers or that an alert with ``for`` reads: the series present recently
(and in the look-back when a matcher finds no value), the sample spacing. Metrics are asked in
parallel (:data:`WORKERS` requests at a time).

Codes:

* ``RG900`` a selector whose metric has no series at all in the look-back, with the closest
  metric name present ("did you mean"). The rule reads nothing: an alert on it never fires
  (and ``absent()`` of it always does). Bad: ``http_request_total`` where the exporter writes
  ``http_requests_total``; good: the name the server has.
* ``RG901`` a label matcher that matches no value the metric's series have now, with the
  values present and the closest one ("did you mean"); when the value was present earlier in
  the look-back the message says it vanished (a relabelling or a renamed label value). Bad:
  ``up{job="api-server"}`` where the job is ``apiserver``; good: ``up{job="apiserver"}``.
* ``RG902`` a metric that had series in the look-back but none recently: it disappeared,
  probably renamed; the closest metric name present now is suggested. Bad: an alert on
  ``node_network_receive_bytes`` after the exporter renamed it; good:
  ``node_network_receive_bytes_total``.
* ``RG903`` a selector each of whose label matchers matches some series now, but no series
  matches them all together. Bad: ``up{job="api", instance="db-1:9100"}`` when ``db-1`` is
  scraped by another job; good: matchers one series has.
* ``RG904`` a recording rule that produces nothing: its output has no series now and its
  ``expr``, evaluated now, returns none, although every metric it reads has series: a filter
  or a join (``on``/``ignoring`` labels that never agree) drops everything. Bad:
  ``a / on(instance) b`` when ``b`` has no ``instance`` label; good: ``a / on(job) b``.
* ``RG905`` (warning) an alert whose ``for`` is shorter than the spacing of the samples of a
  metric it reads (the scrape interval, derived from the samples of the last hour): one sample
  decides whether it fires, so ``for`` smooths nothing. Bad: ``for: 1m`` on a metric scraped
  every 5m; good: ``for: 10m`` (or no ``for``).
* ``RG906`` (warning) a metric with more series than the check reads
  (``RULEGEN_PROMETHEUS_MAX_SERIES``, default 100,000): its label matchers were not checked.
  Bad: a matcher on a metric with 200,000 series at the default bound; good: the bound raised
  to read them all.
"""

from __future__ import annotations

import re
import time as _time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable

from ..findings import Finding, Severity
from ..hints import closest
from ..promql.matchers import matches, selects
from ..promql.syntax import nodes, parsed
from .client import Client, clean
from .connect import LiveError

#: Seconds that count as "recently" (and "now" for the label values): an hour.
RECENT = 3600.0
#: Parallel requests.
WORKERS = 4
#: Values shown in a message at most.
SHOWN = 5

_STRINGS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`')
_COMMENT = re.compile(r"#[^\n]*")


@dataclass(frozen=True)
class LiveRule:
    """A rule as the series checks read it (made by the caller from a spec).

    Attributes:
        file: the spec's path as findings show it.
        name: the alert or recording rule name.
        is_alert: alert (True) or recording rule.
        expr: the ``expr`` text (parameters filled with their defaults).
        for_s: the alert's ``for`` in seconds (0 when none).
        locate: offset in ``expr`` -> ``(line, col)`` in ``file`` (1-based).
        for_pos: ``(line, col)`` of the ``for`` value (the rule's own position when none).
        text: the ``expr`` as written when it differs from ``expr`` (``[[name]]`` parameters):
            offsets handed to ``locate`` are found in it; None: ``expr`` itself.
    """

    file: str
    name: str
    is_alert: bool
    expr: str
    for_s: float = 0.0
    locate: Callable[[int], tuple[int, int]] = field(default=lambda offset: (0, 0), compare=False, repr=False)
    for_pos: tuple = (0, 0)
    text: str | None = None


@dataclass
class _Selector:
    rule: LiveRule
    metric: str
    matchers: list          # (label, op, value), the metric name not among them
    offset: int             # of the metric name in expr
    matcher_offsets: list   # offset of each matcher, in the order of ``matchers``


@dataclass
class _Facts:
    """What the server says about one metric."""

    recent: list | None = None      # label sets of its series recently (None: not asked)
    earlier: list | None = None     # ... in the whole look-back
    too_many: bool = False
    interval: float | None = None   # seconds between samples (median series)


def duration(seconds: float) -> str:
    """Seconds as a short Prometheus duration: ``604800`` -> ``7d``, ``90`` -> ``1m30s``."""
    s = int(round(seconds))
    out = ""
    for unit, n in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        if s >= n:
            out += f"{s // n}{unit}"
            s %= n
    return out or "0s"


def _masked(expr: str) -> str:
    """``expr`` with string literals and comments blanked (same length)."""
    text = _STRINGS.sub(lambda m: m.group()[0] + " " * (len(m.group()) - 2) + m.group()[-1]
                        if len(m.group()) > 1 else " ", expr)
    return _COMMENT.sub(lambda m: " " * len(m.group()), text)


def selectors(rule: LiveRule, recorded: set) -> list[_Selector]:
    """The selectors of ``rule.expr`` with a fixed metric name that is not one of the project's
    recording rules (``recorded``), in text order, each with the offsets of its name and
    matchers; ``[]`` when the expr does not parse."""
    ast = parsed(rule.expr)
    if ast is None:
        return []
    written = rule.text or rule.expr
    masked = _masked(written)
    seen: dict[str, int] = {}
    out = []
    for node in nodes(ast):
        if type(node).__name__ != "VectorSelector" or not node.name or node.name in recorded:
            continue
        if node.matchers.or_matchers:
            continue  # `{a="1" or b="2"}`: not checked
        k = seen.get(node.name, 0)
        seen[node.name] = k + 1
        hits = [m.start() for m in re.finditer(rf"(?<![\w:]){re.escape(node.name)}(?![\w:])", masked)]
        at = hits[k] if k < len(hits) else (hits[0] if hits else 0)
        ms = [(m.name, _op(m), m.value) for m in node.matchers.matchers]
        out.append(_Selector(rule, node.name, ms, at, [_matcher_offset(written, masked, at, m) for m in ms]))
    return out


def _op(m) -> str:
    from ..promql.matchers import op_text
    return op_text(m)


def _matcher_offset(expr: str, masked: str, at: int, m: tuple) -> int:
    """Offset of matcher ``m`` (label, op, value) in the braces after offset ``at``."""
    end = masked.find("}", at)
    end = len(expr) if end < 0 else end
    for hit in re.finditer(rf"(?<![\w]){re.escape(m[0])}\s*{re.escape(m[1])}", expr[at:end]):
        return at + hit.start()
    return at


class _Run:
    """One run of the checks over ``rules`` (see :func:`check_series`)."""

    def __init__(self, client: Client, rules: list[LiveRule], now: float, lookback: float, recent: float):
        self.client, self.rules, self.now, self.lookback, self.recent = client, rules, now, lookback, recent
        self.recording: dict = {}  # recorded name -> its first recording rule (the one followed)
        for r in rules:
            if not r.is_alert:
                self.recording.setdefault(r.name, r)
        self.recorded = set(self.recording)
        self.sels = [s for r in rules for s in selectors(r, self.recorded)]
        self.names_earlier = set(client.label_values("__name__", now - lookback, now))
        self.names_recent = set(client.label_values("__name__", now - recent, now))
        self.facts: dict[str, _Facts] = {}

    def gather(self) -> None:
        """Ask the server about every metric that needs more than its name (in parallel)."""
        by_metric: dict[str, list[_Selector]] = {}
        for s in self.sels:
            by_metric.setdefault(s.metric, []).append(s)
        todo = [(m, ss) for m, ss in sorted(by_metric.items()) if m in self.names_recent
                and any(s.matchers or (s.rule.is_alert and s.rule.for_s > 0) for s in ss)]
        if not todo:
            return
        with ThreadPoolExecutor(max_workers=min(WORKERS, len(todo))) as pool:
            for metric, facts in zip([m for m, _ in todo], pool.map(lambda t: self._ask(*t), todo)):
                self.facts[metric] = facts

    def _ask(self, metric: str, sels: list[_Selector]) -> _Facts:
        f = _Facts()
        sel = _selector_text(metric)
        if any(s.matchers for s in sels):
            f.recent = self._series(sel, self.now - self.recent, f)
            if f.recent is not None and not all(self._selected(s, f.recent) for s in sels if s.matchers):
                f.earlier = self._series(sel, self.now - self.lookback, f)
        if any(s.rule.is_alert and s.rule.for_s > 0 for s in sels):
            f.interval = self._spacing(sel, f.recent)
        return f

    def _spacing(self, sel: str, recent: list | None) -> float | None:
        """The median time between the samples of the last hour of one series of the metric
        (the first the server lists): its scrape interval. None when it has fewer than 3."""
        one = recent[:1] if recent else self.client.series([sel], self.now - self.recent, self.now, limit=1)
        if not one:
            return None
        got = self.client.query(_exact(one[0]) + f"[{int(self.recent)}s]", self.now)
        try:
            stamps = sorted(float(t) for t, _ in got["result"][0]["values"])
        except (KeyError, IndexError, TypeError, ValueError):
            return None
        gaps = sorted(b - a for a, b in zip(stamps, stamps[1:]))
        return gaps[len(gaps) // 2] if len(gaps) >= 2 else None

    def _series(self, sel: str, start: float, f: _Facts) -> list | None:
        try:
            return self.client.series([sel], start, self.now)
        except LiveError as e:
            if "more than" not in str(e):
                raise
            f.too_many = True
            return None

    @staticmethod
    def _selected(s: _Selector, series: list) -> bool:
        return any(selects(s.matchers, labels) is not False for labels in series)

    # -- findings ---------------------------------------------------------------------------

    def findings(self) -> list[Finding]:
        out = []
        warned: set = set()
        for s in self.sels:
            out.extend(self._metric(s, warned))
        out.extend(self._recording())
        return out

    def _f(self, rule: LiveRule, pos: tuple, code: str, msg: str, sev=Severity.ERROR) -> Finding:
        return Finding(rule.file, pos[0], pos[1], code, sev, msg, rule.name)

    def _metric(self, s: _Selector, warned: set):
        m, pos = s.metric, s.rule.locate(s.offset)
        where = f"on {self.client.url}"
        if m not in self.names_earlier:
            near = clean(closest(m, self.names_recent) or "", 120)
            yield self._f(s.rule, pos, "RG900",
                          f"`{m}` has no series in the last {duration(self.lookback)} {where}, so this selector reads "
                          "nothing" + (f"; did you mean `{near}`?" if near else
                                       "; use the name the exporter writes (see the metric list in Prometheus)"))
            return
        if m not in self.names_recent:
            near = clean(closest(m, self.names_recent) or "", 120)
            yield self._f(s.rule, pos, "RG902",
                          f"`{m}` had series in the last {duration(self.lookback)} but none in the last "
                          f"{duration(self.recent)} {where}: it disappeared" +
                          (f"; renamed? `{near}` is present now: read that" if near else
                           "; if it was renamed, read the new name (or drop the rule)"))
            return
        facts = self.facts.get(m)
        if facts is None:
            return
        if facts.too_many and (m, "many") not in warned:
            warned.add((m, "many"))
            yield self._f(s.rule, pos, "RG906",
                          f"`{m}` has more series {where} than the check reads (RULEGEN_PROMETHEUS_MAX_SERIES), "
                          "so its label matchers were not checked", Severity.WARNING)
        if s.matchers and facts.recent is not None and not self._selected(s, facts.recent):
            yield self._matcher_finding(s, facts)
        if s.rule.is_alert and facts.interval and 0 < s.rule.for_s < facts.interval \
                and (s.rule, m, "for") not in warned:
            warned.add((s.rule, m, "for"))
            gap = duration(facts.interval)
            yield self._f(s.rule, s.rule.for_pos, "RG905",
                          f"`for: {duration(s.rule.for_s)}` is shorter than the {gap} between samples of `{m}` "
                          f"{where}: one sample decides whether the alert fires, so `for` smooths nothing; make it at "
                          f"least {gap} (two intervals ride out one bad sample) or remove it", Severity.WARNING)

    def _matcher_finding(self, s: _Selector, facts: _Facts) -> Finding:
        where = f"on {self.client.url}"
        for (label, op, value), off in zip(s.matchers, s.matcher_offsets):
            now_values = sorted({labels.get(label, "") for labels in facts.recent})
            if any(matches(op, value, v) is not False for v in now_values):
                continue
            text = f'{label}{op}"{value}"'
            shown = ", ".join(f'"{clean(v, 60)}"' for v in now_values[:SHOWN] if v) or "none"
            more = f" and {len(now_values) - SHOWN} more" if len(now_values) > SHOWN else ""
            before = {labels.get(label, "") for labels in facts.earlier or ()}
            gone = [v for v in sorted(before - set(now_values)) if matches(op, value, v)]
            near = closest(value, [v for v in now_values if v]) if op in ("=", "=~") else None
            if gone:
                why = (f"matched `{label}=\"{clean(gone[0], 60)}\"` earlier in the last {duration(self.lookback)}, "
                       f"which vanished in the last {duration(self.recent)}")
            else:
                why = f"matches no value of `{label}` that `{s.metric}` has {where}"
            fix = f"; did you mean \"{clean(near, 60)}\"?" if near else "; use a value present"
            return self._f(s.rule, s.rule.locate(off), "RG901",
                           f"`{clean(text, 120)}` {why} (values now: {shown}{more}){fix}")
        return self._f(s.rule, s.rule.locate(s.offset), "RG903",
                       f"each matcher of this `{s.metric}` selector matches some series {where}, but no series "
                       "matches them all together, so it selects nothing; compare with a series the server has")

    def _recording(self):
        for rule in self.rules:
            if rule.is_alert or rule.name in self.names_recent:
                continue
            metrics = self._inputs(rule.name)
            if metrics is None or not metrics or not metrics <= self.names_recent:
                continue  # inputs missing: RG900/RG902 report them at their selectors
            got = self.client.query(rule.expr, self.now)
            if got.get("result"):
                continue  # it would produce series: not deployed yet, which is fine
            yield self._f(rule, rule.locate(0), "RG904",
                          f"recording rule {rule.name} produces nothing: `{rule.name}` has no series on "
                          f"{self.client.url} and its expr returns none now although every metric it reads "
                          f"({', '.join(sorted(metrics)[:SHOWN])}) has series; a filter or a join (on/ignoring "
                          "labels the sides do not share) drops everything: run each side of the expr in "
                          "Prometheus and compare their labels")

    def _inputs(self, name: str) -> set | None:
        """The metrics recording rule ``name`` reads, through the project's other recording
        rules; None when one of them does not parse or reads a metric without a fixed name.
        Followed with a list of names to read, not recursion: a chain of recording rules
        (each reading the one before) is as long as a project makes it."""
        out: set = set()
        seen: set = set()
        todo = [name]
        while todo:
            current = todo.pop()
            if current in seen or current not in self.recording:
                continue
            seen.add(current)
            ast = parsed(self.recording[current].expr)
            if ast is None:
                return None
            for node in nodes(ast):
                if type(node).__name__ != "VectorSelector":
                    continue
                if not node.name:
                    return None
                if node.name in self.recorded:
                    todo.append(node.name)
                else:
                    out.add(node.name)
        return out


def _quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _exact(labels: dict) -> str:
    """A selector of exactly the series with ``labels`` (``__name__`` included)."""
    return "{" + ", ".join(f"{k}={_quote(str(v))}" for k, v in sorted(labels.items())) + "}"


def _selector_text(metric: str) -> str:
    """A selector of every series of ``metric`` (any name, quoted)."""
    return "{__name__=" + _quote(metric) + "}"


def check_series(client: Client, rules: list[LiveRule], now: float | None = None, lookback: float | None = None,
                 recent: float = RECENT) -> list[Finding]:
    """Run the series checks (RG900-RG906, see the module docstring) of ``rules`` against the
    Prometheus of ``client``.

    Args:
        client: a :class:`rulegen.live.client.Client`.
        rules: every rule of the project (its recording rules say which metrics are its own).
        now: the time the checks judge, Unix seconds (default: the current time).
        lookback: seconds to look back (default: the connection's ``lookback``).
        recent: seconds that count as "recently" (default :data:`RECENT`).

    Returns:
        The findings, in rule order.

    Raises:
        LiveError: a request failed (the message names the URL).
    """
    now = _time.time() if now is None else now
    lookback = client.conn.lookback if lookback is None else lookback
    run = _Run(client, rules, now, max(lookback, recent), recent)
    run.gather()
    return run.findings()
