"""Reading an ``slos:`` entry: what is wrong with it (:func:`problems`, RG350-RG362) and the
:class:`SLO` of a valid one (:func:`read`).

Problems are returned as (path suffix, code, message, is_warning); the check module
:mod:`rulegen.validate.checks.slos` turns them into findings, and expansion skips an SLO that
has any error (validation fails the run anyway).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ...promql.series import decimal_text
from ...promql.syntax import parse
from ..durations import DurationError, parse_ms
from .windows import (BASE_PERIOD_MS, DEFAULT_PERIOD, MAX_PERIOD_MS, MIN_PERIOD_MS, BurnWindow, camel, window_text,
                      windows)

#: Labels rulegen sets on an SLO's rules (RG361), and why.
RESERVED_LABELS = {"slo": "the SLO's name, which the alerts select their recording rules by",
                   "slo_service": "the app, which the alerts select their recording rules by",
                   "long": "each burn-rate rule's long window", "short": "each burn-rate rule's short window"}
#: Metric name endings that say a metric is not a counter (RG354): units of gauges, a
#: histogram's or summary's ``_sum``, info and timestamp metrics (Prometheus naming practices).
NOT_COUNTER_SUFFIXES = ("_seconds", "_bytes", "_ratio", "_percent", "_info", "_sum", "_created",
                        "_timestamp", "_celsius", "_volts", "_amperes", "_joules", "_grams", "_meters",
                        "_temperature", "_size", "_gauge", "_current", "_last", "_up")
#: Metric name endings of a counter (RG354): ``_total`` (counters), ``_count`` and
#: ``_bucket`` (the cumulative counters of a classic histogram or summary).
COUNTER_SUFFIXES = ("_total", "_count", "_bucket")


@dataclass
class Selector:
    """A counter selector: its text as written, metric name and the text inside ``{}``."""

    text: str
    name: str
    inner: str

    def with_name(self, name: str, extra: str = "") -> str:
        """The selector with another metric name and ``extra`` matchers appended."""
        inner = ", ".join(x for x in (self.inner.strip().rstrip(",").strip(), extra) if x)
        return f"{name}{{{inner}}}" if inner else name


_SEL = re.compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{(.*)\})?\s*$", re.S)


def parse_selector(text: str) -> tuple[Selector | None, str | None]:
    """``(selector, None)`` for a plain instant vector selector with a metric name written
    first (``name{matchers}``), else ``(None, what is wrong)``. PromQL parsing by
    promql-parser."""
    ast, err = parse(text)
    if err:
        return None, f"is not valid PromQL ({err.splitlines()[0]})"
    if type(ast).__name__ != "VectorSelector":
        return None, ("must be a plain counter selector such as `http_requests_total{code=~\"5..\"}` "
                      "(no function, range or operator: rulegen adds `rate` and the windows)")
    if getattr(ast, "offset", None) is not None or getattr(ast, "at", None) is not None:
        return None, "must not use `offset` or `@`: the windows end now"
    m = _SEL.match(text)
    if not ast.name or not m:
        return None, "must start with the metric name, e.g. `http_requests_total{job=\"api\"}`"
    return Selector(text.strip(), m.group(1), m.group(2) or ""), None


def _matcher_names(sel: Selector) -> set[str]:
    ast, _ = parse(sel.text)
    return {m.name for m in ast.matchers.matchers}


def le_text(value) -> tuple[str | None, str | None]:
    """The bucket bound as Prometheus 3 writes the ``le`` label of a classic histogram
    (a float formatted with at least one decimal: ``1`` -> ``1.0``, ``0.25`` stays), and
    what is wrong when it is not a usable bound: ``(text, None)`` or ``(None, problem)``."""
    if isinstance(value, bool):
        return None, "is not a number"
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None, "is not a number"
    if math.isnan(f) or math.isinf(f):
        return None, "must be a finite bucket bound (`+Inf` counts every request: nothing is slower)"
    if f <= 0:
        return None, "must be above 0 (a request is never faster than 0)"
    text = repr(f)
    if "e" in text or "E" in text:
        return None, "is too small or too large for a bucket bound written without an exponent"
    return text, None


def objective_decimal(value) -> Decimal | None:
    """The objective (percent) as a Decimal of its shortest text (``99.5``), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    try:
        d = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        return None
    return d if d.is_finite() else None


def ratio_objective_problem(written, obj: Decimal) -> str:
    """The RG350 message for an objective ``obj`` (percent) in (0, 1]: a ratio written where a
    percentage is meant (no SLO targets 1% or less of good events; read as a percentage, the
    budget would be 99% or more and no burn-rate pair could fire). The fix is the value times
    100, unless that is 100 (a ratio of 1 leaves no budget)."""
    percent = obj * 100
    if percent >= 100:
        return (f"objective {written} reads as {written}% of events good: a ratio written where a percentage "
                "is meant, and as a ratio it is 100%, which leaves no error budget; write the "
                "percentage of good events below 100, e.g. objective: 99.9")
    return (f"objective {written} reads as {written}% of events good (an error budget of "
            f"{decimal_text(100 - obj)}%, so the SLO never pages): a ratio written where a percentage is "
            f"meant; write objective: {decimal_text(percent)}")


def problems(entry: dict) -> list[tuple[tuple, str, str, bool]]:
    """What is wrong with one schema-shaped ``slos[]`` entry: ``(path suffix, code, message,
    warning)`` tuples, path suffixes relative to the entry. Codes RG350-RG358 and RG360 (documented in
    :mod:`rulegen.validate.checks.slos`)."""
    out: list = []
    if not isinstance(entry, dict):
        return out
    obj = objective_decimal(entry.get("objective"))
    if "objective" in entry and obj is not None and Decimal(0) < obj <= Decimal(1):
        out.append((("objective",), "RG350", ratio_objective_problem(entry["objective"], obj), False))
    elif "objective" in entry and obj is not None and not Decimal(0) < obj < Decimal(100):
        out.append((("objective",), "RG350",
                    f"objective {entry['objective']} is not a percentage between 0 and 100 (both "
                    "excluded); write the share of good events, e.g. 99.5 for 99.5%", False))
    period_ms = None
    if isinstance(entry.get("period"), str):
        try:
            period_ms = parse_ms(entry["period"])
        except DurationError as e:
            out.append((("period",), "RG351", f"period: {e}; SLO periods are whole days or weeks, "
                        "e.g. 30d or 28d", False))
        else:
            if not MIN_PERIOD_MS <= period_ms <= MAX_PERIOD_MS:
                out.append((("period",), "RG352", f"period {entry['period']} is outside 1d..400d; "
                            "SLO periods are days to a quarter or a year, e.g. 30d or 28d", False))
    sli = entry.get("sli")
    if isinstance(sli, dict):
        out.extend(_sli_problems(sli))
    for where in ((), ("page",), ("ticket",)):
        holder = entry
        for k in where:
            holder = holder.get(k) if isinstance(holder, dict) else None
        labels = holder.get("labels") if isinstance(holder, dict) else None
        for key in (labels if isinstance(labels, dict) else {}):
            if key in RESERVED_LABELS:
                out.append((where + ("labels", key), "RG361",
                            f"label `{key}` is set by rulegen on the SLO's rules ({RESERVED_LABELS[key]}); "
                            "a different value here would part the alerts from the series they read: "
                            "remove it or use another name", False))
    page, ticket = entry.get("page"), entry.get("ticket")
    if isinstance(page, dict) and isinstance(ticket, dict) and isinstance(page.get("alert"), str) \
            and page.get("alert") == ticket.get("alert"):
        out.append((("ticket", "alert"), "RG362", f"the ticket alert has the page alert's name "
                    f"{page['alert']}: the knobs and tests of one would act on the other; name it apart "
                    f"(e.g. {page['alert']}Slow)", False))
    if obj is not None and Decimal(1) < obj < Decimal(100):  # at or below 1: RG350 above
        budget = (Decimal(100) - obj) / Decimal(100)
        every = windows(period_ms if period_ms and MIN_PERIOD_MS <= period_ms <= MAX_PERIOD_MS else BASE_PERIOD_MS)
        dead = [w for w in every if w.factor * budget >= 1]
        if dead:
            pairs = ", ".join(f"the {decimal_text(w.factor)}x {w.severity} pair ({w.long}/{w.short}, above "
                              f"{decimal_text(w.factor * budget)})" for w in dead)
            whole = [sev for sev in ("page", "ticket") if all(w in dead for w in every if w.severity == sev)]
            out.append((("objective",), "RG358",
                        f"with objective {entry['objective']} {pairs} need{'s' if len(dead) == 1 else ''} an "
                        "error ratio above 1, which cannot happen, so "
                        + ("it never fires" if len(dead) == 1 else "they never fire")
                        + (f" (the {' and '.join(whole)} alert never fires at all)" if whole else "")
                        + "; raise the objective", True))
    return out


def _sli_problems(sli: dict) -> list[tuple[tuple, str, str, bool]]:
    """:func:`problems` of an entry's ``sli`` (RG353-RG357, RG360), path suffixes relative to
    the entry."""
    out: list = []
    kinds = [k for k in ("events", "latency") if k in sli]
    if len(kinds) != 1:
        out.append((("sli",), "RG356", "give exactly one of `sli.events` (a ratio of two counters) "
                    "and `sli.latency` (a histogram bucket)" + (f", not both" if kinds else ""), False))
    ev = sli.get("events")
    if isinstance(ev, dict):
        given = [k for k in ("bad", "good") if k in ev]
        if len(given) != 1:
            out.append((("sli", "events"), "RG356", "give exactly one of `bad` and `good` next "
                        "to `total`" + (", not both" if given else ""), False))
        for key in ("bad", "good", "total"):
            if isinstance(ev.get(key), str):
                out.extend(_counter_problems(ev[key], ("sli", "events", key), key, COUNTER_SUFFIXES))
    lat = sli.get("latency")
    if isinstance(lat, dict):
        if isinstance(lat.get("histogram"), str):
            probs = _counter_problems(lat["histogram"], ("sli", "latency", "histogram"), "histogram",
                                      ("_bucket",))
            out.extend(probs)
            if not probs:
                sel, _ = parse_selector(lat["histogram"])
                if "le" in _matcher_names(sel):
                    out.append((("sli", "latency", "histogram"), "RG357",
                                "histogram selector must not match `le`: give the bound as "
                                "`sli.latency.le`, rulegen adds the matcher", False))
        if "le" in lat:
            text, why = le_text(lat["le"])
            if why:
                out.append((("sli", "latency", "le"), "RG355", f"le {lat['le']!r} {why}", False))
            elif isinstance(lat["le"], str) and lat["le"].strip() != text:
                out.append((("sli", "latency", "le"), "RG355",
                            f"le {lat['le']!r} is not written as Prometheus 3 stores the bucket bound, "
                            f"so the selector would match no series; write le: \"{text}\"", False))
    return out


def _counter_problems(text: str, path: tuple, key: str, suffixes: tuple) -> list:
    sel, why = parse_selector(text)
    if why:
        return [(path, "RG353", f"`{key}` {why}", False)]
    if suffixes == ("_bucket",) and not sel.name.endswith("_bucket"):
        return [(path, "RG360", f"`histogram` selects {sel.name}, not a histogram's `_bucket` series; "
                 f"write {sel.name.removesuffix('_count').removesuffix('_sum')}_bucket (rulegen reads "
                 "its `_count` series for the total)", False)]
    if not sel.name.endswith(suffixes) and (sel.name == "up" or sel.name.endswith(NOT_COUNTER_SUFFIXES)):
        # only names that say they are something else: some exporters name counters without
        # a suffix (nginx-ingress's nginx_ingress_controller_requests), and they are fine
        return [(path, "RG354", f"`{key}` selects {sel.name}, which is named like a gauge or a unit, not "
                 f"a counter (counters end in {', '.join(suffixes)}); SLIs count events with rate(), "
                 "which needs a counter", False)]
    return []


@dataclass
class SLO:
    """One valid SLO, ready to expand.

    Attributes:
        app: the spec's app; name: the SLO's name; index: its position in ``slos``.
        objective: percent (``Decimal('99.5')``); period_ms: the period in milliseconds.
        kind: ``bad``, ``good`` or ``latency``; total/events: selectors (see :meth:`sli_expr`).
        le: bucket bound text (latency only).
        windows: the window pairs (:func:`windows`).
        entry: the spec data of the entry, as written.
    """

    app: str
    name: str
    index: int
    objective: Decimal
    period_ms: int
    kind: str
    total: Selector
    events: Selector | None
    le: str | None
    windows: tuple[BurnWindow, ...]
    entry: dict = field(default_factory=dict)

    @property
    def path(self) -> tuple:
        """Position of the entry in the spec data, for findings."""
        return ("slos", self.index)

    @property
    def period(self) -> str:
        """The period as a Prometheus duration in days where whole (``30d``)."""
        return window_text(self.period_ms)

    @property
    def budget(self) -> Decimal:
        """The error budget as a ratio (``0.005`` for 99.5%)."""
        return (Decimal(100) - self.objective) / Decimal(100)

    @property
    def group_name(self) -> str:
        """The rule group the SLO expands into: ``<app>-slo-<name>``."""
        return f"{self.app}-slo-{self.name}"

    @property
    def selector_labels(self) -> dict:
        """The labels that tell this SLO's recording-rule series apart."""
        return {"slo": self.name, "slo_service": self.app}

    def record_selector(self, record: str) -> str:
        """A selector of this SLO's series of recording rule ``record``."""
        inner = ", ".join(f'{k}="{v}"' for k, v in self.selector_labels.items())
        return f"{record}{{{inner}}}"

    def alert_name(self, severity: str) -> str:
        """The name of the ``page`` or ``ticket`` alert: the spec's ``alert``, else
        ``<App><Name>FastBurn``/``SlowBurn`` (the app left out where the name would pass 40
        characters)."""
        given = (self.entry.get(severity) or {}).get("alert")
        if given:
            return given
        base = camel(self.name)
        app = camel(self.app)
        suffix = "FastBurn" if severity == "page" else "SlowBurn"
        # the app in front keeps names apart across apps (RG412), unless that makes the name
        # longer than the 40 characters RG402 asks for
        if not base.startswith(app) and len(app + base + suffix) <= 40:
            base = app + base
        return base + suffix

    def record_windows(self) -> list[int]:
        """Every window an alert reads, shortest first (ms)."""
        return sorted({w.long_ms for w in self.windows} | {w.short_ms for w in self.windows})

    def sli_expr(self, window: str) -> str:
        """PromQL of the error ratio over ``window``."""
        if self.kind == "bad":
            return f"sum(rate({self.events.text}[{window}]))\n/\nsum(rate({self.total.text}[{window}]))"
        if self.kind == "good":
            return f"1 - (\n  sum(rate({self.events.text}[{window}]))\n  /\n  sum(rate({self.total.text}[{window}]))\n)"
        base = self.total.name[: -len("_bucket")]
        good = self.total.with_name(self.total.name, f'le="{self.le}"')
        count = self.total.with_name(base + "_count")
        return f"1 - (\n  sum(rate({good}[{window}]))\n  /\n  sum(rate({count}[{window}]))\n)"

    def counters(self) -> list[str]:
        """The counter selectors the SLI reads, as written in PromQL (for the page)."""
        if self.kind == "latency":
            base = self.total.name[: -len("_bucket")]
            return [self.total.with_name(self.total.name, f'le="{self.le}"'), self.total.with_name(base + "_count")]
        return [self.events.text, self.total.text]


def read(app: str, index: int, entry: dict) -> SLO | None:
    """The :class:`SLO` of a schema-valid ``slos[index]`` entry, or None when
    :func:`problems` finds an error in it."""
    if any(not warn for *_, warn in problems(entry)):
        return None
    sli = entry["sli"]
    le = None
    if "events" in sli:
        ev = sli["events"]
        kind = "bad" if "bad" in ev else "good"
        events, _ = parse_selector(ev[kind])
        total, _ = parse_selector(ev["total"])
    else:
        kind = "latency"
        events = None
        total, _ = parse_selector(sli["latency"]["histogram"])
        le, _ = le_text(sli["latency"]["le"])
    period_ms = parse_ms(entry.get("period", DEFAULT_PERIOD))
    return SLO(app=app, name=entry["name"], index=index, objective=objective_decimal(entry["objective"]),
               period_ms=period_ms, kind=kind, total=total, events=events, le=le,
               windows=windows(period_ms), entry=entry)
