"""SLOs: an ``slos:`` entry of a spec expanded into ordinary rules, tests and page facts.

An SLO becomes one rule group, ``<app>-slo-<name>``, of plain :class:`~rulegen.spec.model.Rule`
objects with their promtool tests (:class:`~rulegen.spec.model.Test`), so the rest of the
pipeline (validation, the chart and its knobs, promtool tests, runbook pages) treats them like
rules written by hand. The method is the Google SRE workbook's, chapter "Alerting on SLOs"
(multiwindow, multi-burn-rate alerts):

* **SLI recording rules** ``slo:sli_error:ratio_rate<window>``: the share of bad events over
  each window the alerts read, from counters (``events``: bad/total or good/total) or from a
  histogram (``latency``: requests slower than the bucket ``le`` over all requests, i.e.
  ``1 - bucket{le}/count``);
* **burn-rate alerts**: a window pair fires when the error ratio over *both* its long and its
  short window is above ``factor x error budget``. For a 30-day period the pairs are the
  workbook's, and equal Sloth's default 30d set (slok/sloth,
  ``internal/alert/windows/google-30d.yaml``): page at 14.4x over 1h and 5m or 6x over 6h
  and 30m; ticket at 3x over 1d and 2h or 1x over 3d and 6h (:data:`WORKBOOK_30D`);
* **other periods** keep the factors and scale every window by ``period / 30d``, rounded to
  the minute (at least 1m): Pyrra's rule (pyrra-dev/pyrra, ``slo/rules.go`` ``Windows``,
  which scales a 28-day base the same way). A factor is a multiple of the budget's own
  pace, so the pair still fires when the same share of the period's budget
  (``factor x long / period``: 2%, 5%, 10%, 10%) has been spent, and a steady burn at the
  factor still exhausts the budget in ``period / factor``;
* **metadata recording rules**: ``slo:objective:ratio``, ``slo:error_budget:ratio``, the
  error ratio over the whole period ``slo:sli_error:ratio_rate<period>`` (the SLI over the
  period's window, request-weighted, as Pyrra computes it; Sloth averages the 5m ratio
  instead) and
  ``slo:period_error_budget_remaining:ratio`` (``1 - period ratio / budget``; negative once
  the budget is spent).

Each window pair is its own alert rule carrying ``long`` and ``short`` labels (Pyrra's
shape); the two page pairs share the page alert's name and the two ticket pairs the ticket
alert's. The chart values have a knob per SLO (``slos.<name>``): ``enabled: false`` drops the
whole SLO, ``ticket: false`` its ticket alert, and ``objective`` replaces the objective in
every text that holds it (:func:`objective_templates`; the generated tests and the runbook
page keep the spec's).

Durations are Prometheus duration strings; this module works in milliseconds internally.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation

from ..promql.matchers import matches, op_text
from ..promql.series import decimal_text, exact_number, series_text
from ..promql.syntax import parse
from .durations import DurationError, format_ms, parse_ms
from .model import Group, Rule, Test

MINUTE_MS = 60_000
DAY_MS = 24 * 60 * MINUTE_MS
#: The period the workbook's windows are written for.
BASE_PERIOD_MS = 30 * DAY_MS
DEFAULT_PERIOD = "30d"
#: Shortest window of a burn-rate pair (see :func:`windows`).
MIN_WINDOW_MS = 2 * MINUTE_MS
#: Shortest and longest period accepted (RG352): below a day the short windows round to the
#: scrape interval; above 400 days a counter's history rarely exists.
MIN_PERIOD_MS = DAY_MS
MAX_PERIOD_MS = 400 * DAY_MS
#: Names of the generated recording rules (Sloth's names).
SLI_RECORD = "slo:sli_error:ratio_rate{window}"
OBJECTIVE_RECORD = "slo:objective:ratio"
BUDGET_RECORD = "slo:error_budget:ratio"
REMAINING_RECORD = "slo:period_error_budget_remaining:ratio"
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


@dataclass(frozen=True)
class BurnWindow:
    """One window pair of a multiwindow, multi-burn-rate alert.

    Attributes:
        severity: ``page`` or ``ticket`` (which of the SLO's two alerts it belongs to).
        factor: burn rate, a multiple of the budget's pace (1 = the budget lasts exactly the period).
        long_ms, short_ms: the two windows, in milliseconds.
    """

    severity: str
    factor: Decimal
    long_ms: int
    short_ms: int

    @property
    def long(self) -> str:
        """The long window as a Prometheus duration (``1h``)."""
        return format_ms(self.long_ms)

    @property
    def short(self) -> str:
        """The short window as a Prometheus duration (``5m``)."""
        return format_ms(self.short_ms)


#: The SRE workbook's windows for a 30-day period (Sloth's default 30d set).
WORKBOOK_30D = (
    BurnWindow("page", Decimal("14.4"), 3600_000, 5 * MINUTE_MS),
    BurnWindow("page", Decimal("6"), 6 * 3600_000, 30 * MINUTE_MS),
    BurnWindow("ticket", Decimal("3"), DAY_MS, 2 * 3600_000),
    BurnWindow("ticket", Decimal("1"), 3 * DAY_MS, 6 * 3600_000),
)


def windows(period_ms: int) -> tuple[BurnWindow, ...]:
    """The window pairs for an SLO period of ``period_ms`` milliseconds: :data:`WORKBOOK_30D`
    with every window scaled by ``period / 30d`` and rounded to the nearest minute, factors
    unchanged (Pyrra's rule; see the module docstring). A window is at least
    :data:`MIN_WINDOW_MS` (2m): ``rate()`` needs two samples in its window, which a 1m window
    with the common 1m scrape and evaluation interval does not always hold."""
    def scale(ms: int) -> int:
        minutes = Decimal(ms) * Decimal(period_ms) / Decimal(BASE_PERIOD_MS) / MINUTE_MS
        return max(MIN_WINDOW_MS // MINUTE_MS, int(minutes.to_integral_value(rounding="ROUND_HALF_UP"))) * MINUTE_MS
    return tuple(BurnWindow(w.severity, w.factor, scale(w.long_ms), scale(w.short_ms)) for w in WORKBOOK_30D)


def window_text(ms: int) -> str:
    """A window as a Prometheus duration, whole days as days (``30d``, not ``4w2d``)."""
    if ms % DAY_MS == 0:
        return f"{ms // DAY_MS}d"
    return format_ms(ms)


def exhaustion_ms(period_ms: int, factor: Decimal) -> int:
    """How long a steady burn at ``factor`` takes to spend a whole period's budget (ms)."""
    return int(Decimal(period_ms) / factor)


def human(ms: int) -> str:
    """A duration for people: ``2d 2h``, ``5h``, ``30m`` (at most two units, rounded down)."""
    parts = []
    for unit, size in (("d", DAY_MS), ("h", 3600_000), ("m", MINUTE_MS)):
        n, ms = divmod(ms, size)
        if n:
            parts.append(f"{n}{unit}")
    return " ".join(parts[:2]) or "0m"


def camel(text: str) -> str:
    """``gateway-availability`` -> ``GatewayAvailability``."""
    return "".join(p[:1].upper() + p[1:] for p in re.split(r"[^A-Za-z0-9]+", text) if p)


# ---------------------------------------------------------------------------------------------
# Reading an SLO entry. Problems are returned as (path suffix, code, message, is_warning); the
# check module rulegen.validate.checks.slos turns them into findings, and expansion skips an
# SLO that has any error (validation fails the run anyway).


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


def problems(entry: dict) -> list[tuple[tuple, str, str, bool]]:
    """What is wrong with one schema-shaped ``slos[]`` entry: ``(path suffix, code, message,
    warning)`` tuples, path suffixes relative to the entry. Codes RG350-RG358 and RG360 (documented in
    :mod:`rulegen.validate.checks.slos`)."""
    out: list = []
    if not isinstance(entry, dict):
        return out
    obj = objective_decimal(entry.get("objective"))
    if "objective" in entry and obj is not None and not Decimal(0) < obj < Decimal(100):
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
    if obj is not None and Decimal(0) < obj < Decimal(100):
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


# ---------------------------------------------------------------------------------------------
# Expansion


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


# ---------------------------------------------------------------------------------------------
# Series for the generated tests: label sets that a selector matches (or does not)

def matchers(sel: Selector) -> list[tuple[str, str, str]]:
    """``(label, op, value)`` of each matcher of ``sel`` (op one of ``= != =~ !~``)."""
    ast, _ = parse(sel.text)
    return [(m.name, op_text(m), m.value) for m in ast.matchers.matchers]


def _ok(value: str, op: str, want: str) -> bool:
    """The matcher ``op want`` accepts ``value`` for sure (a regex Python does not read like
    RE2 accepts nothing here: a series is never chosen on a guess)."""
    return matches(op, want, value) is True


def selects(sel: Selector, metric: str, labels: dict) -> bool:
    """Whether series ``metric{labels}`` is selected by ``sel`` (a missing label is ``""``)."""
    return metric == sel.name and all(_ok(labels.get(n, ""), op, v) for n, op, v in matchers(sel))


_CLASS = re.compile(r"\\d|\\w|\.|\[\^?([^\]])[^\]]*\]")


def _stand_in(alt: str) -> str:
    """A string a simple regex alternative matches: each class (``\\d``, ``.``, ``[45]``) by a
    character of it, ``{n}`` repeats written out, ``?``/``*`` parts dropped, ``+`` parts once."""
    def one(m: re.Match) -> str:
        t = m.group(0)
        if t == "\\d" or t == ".":
            return "0"
        if t == "\\w":
            return "a"
        return m.group(1) if not t.startswith("[^") else "~"
    text = alt.strip("^$")
    text = re.sub(r"(\\.|\.|\[[^\]]*\]|[^\\])\{(\d+)(?:,\d*)?\}", lambda m: m.group(1) * int(m.group(2)), text)
    text = re.sub(r"(\\.|\.|\[[^\]]*\]|[^\\])[?*]", "", text)
    text = text.replace("+", "")
    return _CLASS.sub(one, text).replace("\\", "")


def _candidates(ms: list[tuple[str, str, str]]) -> list[str]:
    # the values a matcher names are candidates either way: a value that makes a negative
    # matcher fail is what a series outside that selector needs
    out = [v for _, op, v in ms if op in ("=", "!=")]
    for _, op, v in ms:
        if op in ("=~", "!~"):
            out.extend(_stand_in(alt) for alt in v.split("|"))
    return out + ["ok", "other", "x", "", "0"]


def sample_labels(sel: Selector, unlike: Selector | None = None) -> dict | None:
    """Labels of a series ``sel`` selects (and, with ``unlike``, that ``unlike`` does not),
    found among the matchers' own values and a few stand-ins; None when none is found."""
    ms = matchers(sel)
    names = sorted({n for n, _, _ in ms} | ({n for n, _, _ in matchers(unlike)} if unlike else set()))
    names = [n for n in names if n != "__name__"]
    chosen: dict = {}
    for n in names:
        own = [m for m in ms if m[0] == n]
        value = next((c for c in _candidates(own) if all(_ok(c, op, v) for _, op, v in own)), None)
        if value is None:
            return None
        if value:
            chosen[n] = value
    if unlike is None or not selects(unlike, sel.name, chosen):
        return chosen
    # change one label the other selector constrains, keeping this selector's matchers true
    other = matchers(unlike)
    for n in names:
        own = [m for m in ms if m[0] == n]
        for c in _candidates(own + [m for m in other if m[0] == n]):
            if not all(_ok(c, op, v) for _, op, v in own):
                continue
            trial = {k: v for k, v in chosen.items() if k != n}
            if c:
                trial[n] = c
            if not selects(unlike, sel.name, trial):
                return trial
    return None


# ---------------------------------------------------------------------------------------------
# Scenarios: input series for a burn that changes over time, and what Prometheus computes

#: Events per minute in generated test series, and where every counter starts (far from zero,
#: so rate()'s extrapolation is never cut short at a counter's zero point and the error ratio
#: over a window is exactly the ratio of the increases).
EVENTS_PER_MIN = 1000
COUNTER_START = 1_000_000
#: A burn "at" a factor is this much above it, "just under" this much below.
MARGIN = Decimal("0.02")


@dataclass
class Scenario:
    """Test input: ``segments`` of (minutes, error ratio) or (minutes, error ratio, pace) one
    after another, sampled every ``step`` minutes from 0 to :attr:`horizon` minutes (segment
    lengths are multiples of ``step``). ``pace`` multiplies :data:`EVENTS_PER_MIN` for that
    segment (default 1): traffic that changes pace tells a ratio whose numerator and
    denominator read different windows from the real one. Long scenarios sample every few
    minutes: promtool then reads far fewer samples per evaluation, and windows of hours still
    hold dozens."""

    slo: SLO
    segments: list[tuple]
    step: int = 1
    series: list[tuple[str, dict, list[Decimal]]] = field(default_factory=list)  # metric, labels, increments per step

    @property
    def horizon(self) -> int:
        """Minutes from the first sample to the last."""
        return sum(seg[0] for seg in self.segments)

    @property
    def interval(self) -> str:
        """The test's ``interval`` (time between input samples)."""
        return f"{self.step}m"

    def errors(self) -> list[Decimal]:
        """The error ratio of each step's events (index i: from sample i to i+1)."""
        return [seg[1] for seg in self.segments for _ in range(seg[0] // self.step)]

    def events(self) -> list[Decimal]:
        """The number of events of each step (index i: from sample i to i+1)."""
        per_step = Decimal(EVENTS_PER_MIN * self.step)
        return [per_step * Decimal(seg[2] if len(seg) > 2 else 1)
                for seg in self.segments for _ in range(seg[0] // self.step)]

    def build(self) -> Scenario:
        """Choose the physical series (see :func:`sample_labels`) and their increments.

        Raises:
            ValueError: no series could be found that the SLI's selectors tell apart.
        """
        s = self.slo
        errs = list(zip(self.errors(), self.events()))
        if s.kind == "latency":
            labels = sample_labels(s.total)
            if labels is None:
                raise ValueError(f"no series matches {s.total.text}")
            base = s.total.name[: -len("_bucket")]
            self.series = [
                (s.total.name, {**labels, "le": s.le}, [(1 - e) * n for e, n in errs]),
                (s.total.name, {**labels, "le": "+Inf"}, [n for _, n in errs]),
                (base + "_count", labels, [n for _, n in errs]),
            ]
            return self
        ev_labels = sample_labels(s.events)
        rest_labels = sample_labels(s.total, unlike=s.events)
        if ev_labels is None or rest_labels is None:
            raise ValueError(f"no series tell {s.events.text} and {s.total.text} apart")
        share = (lambda e: e) if s.kind == "bad" else (lambda e: 1 - e)
        inside = selects(s.total, s.events.name, ev_labels)  # the events are part of the total
        self.series = [
            (s.events.name, ev_labels, [share(e) * n for e, n in errs]),
            (s.total.name, rest_labels, [(1 - share(e)) * n if inside else n for e, n in errs]),
        ]
        return self

    def values(self, incs: list[Decimal]) -> list[float]:
        """A counter's value at every sample, from its increments per step."""
        out = [float(COUNTER_START)]
        for x in incs:
            out.append(out[-1] + float(x))
        return out

    def input_series(self) -> list[dict]:
        """promtool ``input_series`` in expanding notation, one ``a+bxn`` run per segment."""
        out = []
        for metric, labels, incs in self.series:
            parts, value, i = [], Decimal(COUNTER_START), 0
            for k, (minutes, *_) in enumerate(self.segments):
                steps = minutes // self.step
                inc = incs[i] if steps else Decimal(0)
                if k == 0:
                    parts.append(f"{exact_number(value)}+{exact_number(inc)}x{steps}")
                    value += inc * steps
                else:
                    value += inc
                    parts.append(f"{exact_number(value)}+{exact_number(inc)}x{steps - 1}")
                    value += inc * (steps - 1)
                i += steps
            out.append({"series": series_text(metric, dict(sorted(labels.items()))), "values": " ".join(parts)})
        return out

    def _sums(self, sel: Selector, extra: dict | None = None) -> list[float]:
        """The sum of the series ``sel`` selects (and that carry ``extra``) at every sample."""
        sums = [0.0] * (self.horizon // self.step + 1)
        for metric, labels, incs in self.series:
            if selects(sel, metric, labels) and all(labels.get(k) == v for k, v in (extra or {}).items()):
                sums = [a + b for a, b in zip(sums, self.values(incs))]
        return sums

    def _cumulative(self) -> tuple[list[float], list[float]]:
        """(events counted by the SLI's numerator, all events) at every sample, summed over
        the series each selector selects; made once."""
        if "_cum" not in self.__dict__:
            s = self.slo
            if s.kind == "latency":
                bucket = Selector(s.total.text, s.total.name, s.total.inner)
                count_sel, _ = parse_selector(s.total.with_name(s.total.name[: -len("_bucket")] + "_count"))
                self._cum = (self._sums(bucket, {"le": s.le}), self._sums(count_sel))
            else:
                self._cum = (self._sums(s.events), self._sums(s.total))
        return self._cum

    def ratio(self, at: int, window_min: int) -> float | None:
        """The SLI error ratio Prometheus records at minute ``at`` over ``window_min`` minutes:
        the samples in ``(at - window, at]`` (left-open, Prometheus 3), None with fewer than
        two. Every series has the same sample times, so rate()'s extrapolation scales all
        alike and the ratio of rates is the ratio of the increases."""
        last = min(at // self.step, self.horizon // self.step)
        first = max(0, (at - window_min) // self.step + 1)
        if first >= last:
            return None
        num, den = self._cumulative()
        share = (num[last] - num[first]) / (den[last] - den[first])
        return share if self.slo.kind == "bad" else 1 - share

    def firing(self, at: int, severity: str) -> list[BurnWindow]:
        """The window pairs of ``severity`` whose alert rule fires at minute ``at``.

        Raises:
            ValueError: a ratio is so close to a threshold that float rounding could decide.
        """
        out = []
        for w in self.slo.windows:
            if w.severity != severity:
                continue
            thr = float(w.factor * self.slo.budget)
            ok = True
            for win in (w.long_ms, w.short_ms):
                r = self.ratio(at, win // MINUTE_MS)
                if r is None:
                    ok = False
                    continue
                if abs(r - thr) <= thr * 1e-6:
                    raise ValueError(f"error ratio {r} too close to the threshold {thr} at {at}m")
                ok = ok and r > thr
            if ok:
                out.append(w)
        return out


# ---------------------------------------------------------------------------------------------
# Expansion into rules and tests


def section_id(name: str) -> str:
    """Heading id of the SLO's section on the runbook page (``slo-<name>``)."""
    return f"slo-{name}"


def threshold_text(w: BurnWindow, budget: Decimal | str) -> str:
    """The alert threshold as PromQL, ``(14.4 * 0.005)``: factor times error budget (a ratio,
    or its text: :data:`OBJECTIVE_PLACEHOLDERS` writes ``(14.4 * [[budget]])``)."""
    return f"({decimal_text(w.factor)} * {budget if isinstance(budget, str) else decimal_text(budget)})"


@dataclass(frozen=True)
class ObjectiveTexts:
    """How the objective appears in the generated rules, as text: ``objective`` and ``budget``
    as ratios (``0.995``, ``0.005``: in exprs), ``objective_percent`` and ``budget_percent``
    (``99.5``, ``0.5``: in the generated descriptions)."""

    objective: str
    budget: str
    objective_percent: str
    budget_percent: str

    @staticmethod
    def of(slo: "SLO") -> "ObjectiveTexts":
        """The texts of ``slo``'s own objective."""
        return ObjectiveTexts(decimal_text(slo.objective / 100), decimal_text(slo.budget),
                              decimal_text(slo.objective), decimal_text(slo.budget * 100))


#: The texts as placeholders: the rules file's ``# rulegen-slo:`` line holds each rule's expr
#: and description written with them, and the chart template fills them in when the values
#: override the objective (``<valuesKey>.slos.<name>.objective``, see
#: :func:`objective_templates`). ``[[`` never occurs in PromQL outside a string.
OBJECTIVE_PLACEHOLDERS = ObjectiveTexts("[[objective]]", "[[budget]]", "[[objective_percent]]", "[[budget_percent]]")


def percent(d: Decimal) -> str:
    """A ratio as a percentage for people: ``Decimal('0.005')`` -> ``0.5%``."""
    return decimal_text(d * 100) + "%"


def _alert_expr(slo: SLO, w: BurnWindow, texts: ObjectiveTexts | None = None) -> str:
    thr = threshold_text(w, (texts or ObjectiveTexts.of(slo)).budget)
    return (f"{slo.record_selector(SLI_RECORD.format(window=w.long))} > {thr}\n"
            f"and on ()\n"
            f"{slo.record_selector(SLI_RECORD.format(window=w.short))} > {thr}")


def _default_texts(slo: SLO, w: BurnWindow, texts: ObjectiveTexts | None = None) -> tuple[str, str]:
    nums = texts or ObjectiveTexts.of(slo)
    exhaust = human(exhaustion_ms(slo.period_ms, w.factor))
    spent = percent(w.factor * Decimal(w.long_ms) / Decimal(slo.period_ms))
    summary = (f"SLO {slo.name} of {slo.app} is burning its error budget {decimal_text(w.factor)}x "
               f"too fast (over {w.long} and {w.short}).")
    description = (f"The share of bad events of SLO {slo.name} ({nums.objective_percent}% good over "
                   f"{slo.period}) has been above {decimal_text(w.factor)} times the {nums.budget_percent}% "
                   f"budget over both the last {w.long} and the last {w.short}: {spent} of the {slo.period} "
                   f"budget went in {w.long}, and at this pace all of it goes in {exhaust}.")
    return summary, description


def _texts(slo: SLO, w: BurnWindow) -> dict:
    """The ``summary`` and ``description`` of pair ``w``'s alert rule: the spec's, else generated."""
    sev = slo.entry.get(w.severity) or {}
    summary, description = _default_texts(slo, w)
    return {"summary": sev.get("summary", summary), "description": sev.get("description", description)}


def _runbook(slo: SLO, severity: str, w: BurnWindow, given: dict) -> dict:
    """The alert's runbook content: the spec's, with a generated opening (on the first pair of
    the alert only: the page shows a name's rules in one section) and defaults for what the
    spec leaves out."""
    pairs = [x for x in slo.windows if x.severity == severity]
    rules = "; ".join(
        f"{decimal_text(x.factor)}x over {x.long} and {x.short} (error ratio above "
        f"{percent(x.factor * slo.budget)}: the {slo.period} budget lasts "
        f"{human(exhaustion_ms(slo.period_ms, x.factor))} at that pace)" for x in pairs)
    opening = (f"This alert has one rule per window pair and fires while "
               f"the error ratio over both windows of a pair is above the factor times the "
               f"{percent(slo.budget)} budget: {rules}. The short window lets a pair resolve within "
               f"that window of the errors stopping.")
    rb = dict(given)
    rb["explanation"] = opening + ("\n\n" + given["explanation"].strip() if given.get("explanation") else "")
    if "diagnosis" not in given:
        rb["diagnosis"] = [{"title": "PromQL: the error ratio over each window, next to the budget:",
                            "promql": [slo.record_selector(SLI_RECORD.format(window=format_ms(ms)))
                                       for ms in slo.record_windows()]
                            + [slo.record_selector(REMAINING_RECORD)]}]
    if "resolution" not in given:
        rb["resolution"] = (
            ["Find what changed when the burn began (a rollout, a config change, a dependency) "
             "and roll it back or fix it forward, in Git."] if severity == "page" else
            ["Plan the fix within working hours: at this pace the budget lasts days, not hours.",
             "If the budget is spent on purpose (planned work), say so where the team tracks SLOs."])
    if "impact" not in given:
        first = pairs[0]
        rb["impact"] = (f"More than {percent(first.factor * slo.budget)} of the events SLO {slo.name} counts "
                        f"are bad (the objective allows {percent(slo.budget)}): at this pace the "
                        f"{slo.period} error budget is gone in "
                        f"{human(exhaustion_ms(slo.period_ms, first.factor))}"
                        + (" or less." if severity == "page" else "."))
    if "causes" not in given:
        rb["causes"] = ["A rollout or config change that makes requests fail or slow.",
                        "A dependency that fails or slows down.",
                        "A traffic shift onto a failing path."]
    if "do_not" not in given:
        rb["do_not"] = (f"silence it for the rest of the {slo.period} or loosen the objective to make it stop: "
                        "find and fix (or roll back) what burns the budget.")
    if w != pairs[0]:
        # the page shows the first pair's section for all pairs of the name; the others carry
        # the same content but no related links (a broken link would be reported per rule)
        return {k: v for k, v in rb.items() if k not in ("explanation", "related")}
    return rb


def _objective_expr(slo: SLO, texts: ObjectiveTexts | None = None) -> str:
    return f"vector({(texts or ObjectiveTexts.of(slo)).objective})"


def _budget_expr(slo: SLO, texts: ObjectiveTexts | None = None) -> str:
    return f"vector({(texts or ObjectiveTexts.of(slo)).budget})"


def _remaining_expr(slo: SLO, texts: ObjectiveTexts | None = None) -> str:
    period_record = SLI_RECORD.format(window=slo.period)
    return f"1 - {slo.record_selector(period_record)} / {(texts or ObjectiveTexts.of(slo)).budget}"


def objective_templates(slo: SLO) -> dict[int, dict[str, str]]:
    """What depends on the objective in the group :func:`expand` makes, written with
    :data:`OBJECTIVE_PLACEHOLDERS`: rule index in the group -> ``{"expr": ...}`` and, for an
    alert whose description is generated (not the spec's), ``"description"``. The objective
    and budget recording rules, the budget left, and each window pair's alert. Filling the
    placeholders with :meth:`ObjectiveTexts.of` gives back exactly the expanded rules'
    texts (tested), so the chart renders the same bytes when the override equals the spec."""
    ph = OBJECTIVE_PLACEHOLDERS
    n = len(slo.record_windows())
    out: dict[int, dict[str, str]] = {n: {"expr": _objective_expr(slo, ph)}, n + 1: {"expr": _budget_expr(slo, ph)},
                                      n + 3: {"expr": _remaining_expr(slo, ph)}}
    for i, w in enumerate(slo.windows):
        entry = {"expr": _alert_expr(slo, w, ph)}
        sev = slo.entry.get(w.severity) or {}
        if "description" not in sev and "description" not in (sev.get("annotations") or {}):
            entry["description"] = _default_texts(slo, w, ph)[1]
        out[n + 4 + i] = entry
    return out


def expand(slo: SLO, app_labels: dict, default_component: str | None):
    """The SLO as a :class:`~rulegen.spec.model.Group`: the SLI and metadata recording rules,
    the page and ticket alerts (one rule per window pair), and their generated tests.

    ``default_component``: the app's ``component`` label value (None: none).

    Raises:
        ValueError: no test series could be made for the SLI's selectors (the validation check
            reports it as RG359 first).
    """
    entry = slo.entry
    slo_labels = dict(entry.get("labels") or {})
    rec_labels = {**slo_labels, **slo.selector_labels}
    rules: list = []
    for ms in slo.record_windows():
        win = format_ms(ms)
        rules.append(Rule(kind="record", name=SLI_RECORD.format(window=win), expr=slo.sli_expr(win),
                          path=slo.path + ("sli",), labels=dict(rec_labels)))
    period_record = SLI_RECORD.format(window=slo.period)
    rules += [
        Rule(kind="record", name=OBJECTIVE_RECORD, expr=_objective_expr(slo),
             path=slo.path + ("objective",), labels=dict(rec_labels)),
        Rule(kind="record", name=BUDGET_RECORD, expr=_budget_expr(slo),
             path=slo.path + ("objective",), labels=dict(rec_labels)),
        Rule(kind="record", name=period_record, expr=slo.sli_expr(slo.period),
             path=slo.path + ("period",), labels=dict(rec_labels)),
        Rule(kind="record", name=REMAINING_RECORD, expr=_remaining_expr(slo),
             path=slo.path + ("period",), labels=dict(rec_labels)),
    ]
    first_alert: dict = {}
    for w in slo.windows:
        sev = entry.get(w.severity) or {}
        annotations = _texts(slo, w)
        annotations.update(sev.get("annotations") or {})
        comp = sev.get("component", default_component)
        rule = Rule(kind="alert", name=slo.alert_name(w.severity), expr=_alert_expr(slo, w),
                    path=slo.path + (w.severity,) if w.severity in entry else slo.path,
                    severity=sev.get("severity", "critical" if w.severity == "page" else "warning"),
                    component=comp if isinstance(comp, str) and comp else None,
                    labels={**slo_labels, **(sev.get("labels") or {}), "long": w.long, "short": w.short},
                    annotations=annotations, runbook=_runbook(slo, w.severity, w, sev.get("runbook") or {}))
        rules.append(rule)
        first_alert.setdefault(w.severity, rule)
    for sev, items in tests(slo).items():
        target = rules[0] if sev == "record" else first_alert[sev]
        for i, (name, data) in enumerate(items):
            target.tests.append(Test(name, {"name": name, **data}, target.path + ("tests", i)))
    return Group(name=slo.group_name, path=slo.path, rules=rules)


_TESTS: dict = {}


def tests(slo: SLO) -> dict[str, list[tuple[str, dict]]]:
    """:func:`make_tests`, made once per SLO (validation and expansion both ask; callers must
    not change the result). Keyed by what the tests depend on: the app and the entry."""
    import json
    key = (slo.app, slo.index, json.dumps(slo.entry, sort_keys=True, default=str))
    if key not in _TESTS:
        if len(_TESTS) > 4096:
            _TESTS.clear()
        _TESTS[key] = make_tests(slo)
    return _TESTS[key]


def make_tests(slo: SLO) -> dict[str, list[tuple[str, dict]]]:
    """The generated promtool tests of ``slo`` by the rule they sit under (``page``,
    ``ticket``, ``record``): ``(name, test data in the spec's test format)``.

    For every window pair, a steady burn just above its factor makes it fire by the end of its
    short window, and one just under leaves it quiet (the 1x pair: a 1x burn never pages and
    tickets only on the longest windows); for each page pair, the page resolves within its
    short window once the errors stop; the recording rules equal independently written
    formulas. What fires when is computed by :class:`Scenario` as Prometheus computes it.

    Raises:
        ValueError: see :meth:`Scenario.build`.
    """
    out: dict = {"page": [], "ticket": [], "record": []}
    names = {sev: slo.alert_name(sev) for sev in ("page", "ticket")}
    series_labels = {"slo": slo.name, "slo_service": slo.app}

    # Same-name rules (the two pairs of one alert) may differ in their annotations: a test
    # states the annotations in which a pair differs from the first pair of its name
    texts = {w: _texts(slo, w) for w in slo.windows}
    first = {sev: next(w for w in slo.windows if w.severity == sev) for sev in ("page", "ticket")}

    def expected(w: BurnWindow) -> dict:
        out = {"exp_labels": {**series_labels, "long": w.long, "short": w.short}}
        differ = {k: v for k, v in texts[w].items() if v != texts[first[w.severity]][k]}
        if differ:
            out["exp_annotations"] = differ
        return out

    def expect(sc: Scenario, at: int) -> list[dict]:
        return [{"eval_time": format_ms(at * MINUTE_MS) if at else "0s", "alertname": names[sev],
                 "exp_alerts": [expected(w) for w in sc.firing(at, sev)]}
                for sev in ("page", "ticket")]

    def steady(burn: Decimal, minutes: int) -> Scenario:
        return Scenario(slo, [(minutes, min(Decimal(1), burn * slo.budget))]).build()

    for w in slo.windows:
        short = w.short_ms // MINUTE_MS
        f = decimal_text(w.factor)
        verb = "pages" if w.severity == "page" else "opens a ticket"
        if w.factor * slo.budget >= 1:  # can never fire (RG358): its quiet case only
            sc = steady(w.factor * (1 - MARGIN), short)
            out[w.severity].append((f"a burn just under {f}x does not fire on {w.long} and {w.short}",
                                    {"interval": "1m", "input_series": sc.input_series(),
                                     "alert_rule_test": expect(sc, short)}))
            continue
        sc = steady(w.factor * (1 + MARGIN), short)
        title = (f"a 1x burn never pages and opens a ticket on the {w.long} and {w.short} windows only"
                 if w.factor == 1 else f"a burn at {f}x {verb} on {w.long} and {w.short} within {w.short}")
        # 1m: the first evaluation with two samples in both windows, when the alert (which
        # has no `for`) must already fire
        checks = ([{"eval_time": "0s", "alertname": names[w.severity], "exp_alerts": []}]
                  + (expect(sc, 1) if short > 1 else []) + expect(sc, short))
        _require(sc, short, w, True)
        out[w.severity].append((title, {"interval": "1m", "input_series": sc.input_series(),
                                        "alert_rule_test": checks}))
        sc = steady(w.factor * (1 - MARGIN), short)
        _require(sc, short, w, False)
        out[w.severity].append((f"a burn just under {f}x does not fire on {w.long} and {w.short}",
                                {"interval": "1m", "input_series": sc.input_series(),
                                 "alert_rule_test": expect(sc, short)}))
        out[w.severity].extend(_window_tests(slo, w, expect))
        out[w.severity].append(_boundary_test(slo, w, names[w.severity], expected(w)))
        if w.severity == "page":
            burning = 2 * short
            sc = Scenario(slo, [(burning, min(Decimal(1), w.factor * (1 + MARGIN) * slo.budget)),
                                (short, Decimal(0))]).build()
            _require(sc, burning, w, True)
            _require(sc, burning + short, w, False)
            out["page"].append((f"the {w.long}/{w.short} page resolves within {w.short} of the errors stopping",
                                {"interval": "1m", "input_series": sc.input_series(),
                                 "alert_rule_test": expect(sc, burning) + expect(sc, burning + short)}))
    out["record"].append(("recording rules equal independently written formulas", _record_test(slo)))
    return out


def _window_tests(slo: SLO, w: BurnWindow, expect) -> list[tuple[str, dict]]:
    """Each window of pair ``w`` decides on its own. After a clean history (twice the short
    window), a burn at 2.5x the factor fills the short window at once but fires only when
    the long window's ratio crosses the factor: quiet just before, firing just after. After
    a burn as long as the short window, a short window just under the factor keeps the pair
    quiet and one just over fires. (The long window then covers the series' whole history,
    which Prometheus rates as it would a full window.)"""
    long_m, short_m = w.long_ms // MINUTE_MS, w.short_ms // MINUTE_MS
    # hours of history: sample every few minutes (see Scenario), at most 5m (the lookback)
    step = next(n for n in (5, 2, 1) if long_m % n == 0 and short_m % n == 0) if short_m >= 60 else 1
    thr = float(w.factor * slo.budget)
    hot = min(Decimal(1), w.factor * Decimal("1.5") * slo.budget)
    if float(hot) <= thr * 1.05:
        return []
    out = []
    clean = min(long_m, 2 * short_m) // step * step
    fast = min(Decimal(1), w.factor * Decimal("2.5") * slo.budget)  # crosses after 4/3 of the short window
    probe = Scenario(slo, [(clean, Decimal(0)), (long_m, fast)], step).build()
    quiet = fire = None
    for k in range(short_m, long_m + 1, step):
        r_long = probe.ratio(clean + k, long_m)
        if r_long is not None and r_long < thr * (1 - float(MARGIN) / 2):
            quiet = k
        elif r_long is not None and r_long > thr * (1 + float(MARGIN) / 2):
            fire = k
            break
    if quiet is not None and fire is not None:
        sc = Scenario(slo, [(clean, Decimal(0)), (fire, fast)], step).build()
        _require(sc, clean + quiet, w, False)
        _require(sc, clean + fire, w, True)
        out.append((f"a new burn fires on {w.long} and {w.short} only once the {w.long} window crosses "
                    f"{decimal_text(w.factor)}x",
                    {"interval": sc.interval, "input_series": sc.input_series() + _decoys(slo, w, sc),
                     "alert_rule_test": expect(sc, clean + quiet) + expect(sc, clean + fire)}))
    under = min(Decimal(1), w.factor * (1 - MARGIN) * slo.budget)
    over = min(Decimal(1), w.factor * (1 + MARGIN) * slo.budget)
    sc = Scenario(slo, [(short_m, hot), (short_m, under), (short_m, over)], step).build()
    if w not in sc.firing(2 * short_m, w.severity) and w in sc.firing(3 * short_m, w.severity):
        out.append((f"after a burn, the {w.short} window decides: quiet just under "
                    f"{decimal_text(w.factor)}x, firing just over",
                    {"interval": sc.interval, "input_series": sc.input_series() + _decoys(slo, w, sc),
                     "alert_rule_test": expect(sc, 2 * short_m) + expect(sc, 3 * short_m)}))
    return out


def _boundary_test(slo: SLO, w: BurnWindow, alertname: str, expected: dict) -> tuple[str, dict]:
    """Pair ``w``'s recording-rule series fed directly: each window in turn exactly at the
    threshold (the float the alert computes, written so it reads back equal) while the other burns at twice
    it, then both at twice it. ``>`` keeps the alert quiet at the threshold; ``>=`` would not."""
    # the float Prometheus computes for the alert's `(factor * budget)`, as text that reads back the same
    thr, hot = exact_number(float(w.factor) * float(slo.budget)), decimal_text(2 * w.factor * slo.budget)
    long_rec = slo.record_selector(SLI_RECORD.format(window=w.long))
    short_rec = slo.record_selector(SLI_RECORD.format(window=w.short))
    if long_rec == short_rec:  # short periods: both windows scaled to the 2m floor, one series
        return (f"exactly at {decimal_text(w.factor)}x on {w.long} does not fire",
                {"interval": "1m", "input_series": [{"series": long_rec, "values": f"{thr}x6 {hot}x6"}],
                 "alert_rule_test": [{"eval_time": "5m", "alertname": alertname, "exp_alerts": []},
                                     {"eval_time": "12m", "alertname": alertname, "exp_alerts": [expected]}]})
    quiet = [{"eval_time": t, "alertname": alertname, "exp_alerts": []} for t in ("2m", "7m")]
    return (f"exactly at {decimal_text(w.factor)}x on {w.long} or {w.short} does not fire",
            {"interval": "1m",
             "input_series": [{"series": long_rec, "values": f"{thr}x4 {hot}x9"},
                              {"series": short_rec, "values": f"{hot}x4 {thr}x4 {hot}x4"}],
             "alert_rule_test": quiet + [{"eval_time": "12m", "alertname": alertname,
                                          "exp_alerts": [expected]}]})


def _decoys(slo: SLO, w: BurnWindow, sc: Scenario) -> list[dict]:
    """Recording-rule series of pair ``w``'s windows that belong to another SLO of the app and
    to this SLO's name in another app, all bad (error ratio 1) from start to end of ``sc``.
    The alert must ignore them: in the tests above one window of the pair burns and the other
    does not, so an alert that lost its ``slo`` or ``slo_service`` matcher on the quiet window
    (``and on ()`` keeps any match) would fire, or fire with the decoy's labels."""
    out = []
    for window in (w.long, w.short):
        record = SLI_RECORD.format(window=window)
        for labels in ({**slo.selector_labels, "slo": slo.name + "-other"},
                       {**slo.selector_labels, "slo_service": slo.app + "-other"}):
            out.append({"series": series_text(record, dict(sorted(labels.items()))),
                        "values": f"1x{sc.horizon // sc.step}"})
    return out


def _require(sc: Scenario, at: int, w: BurnWindow, fires: bool) -> None:
    if (w in sc.firing(at, w.severity)) != fires:
        raise ValueError(f"generated scenario does not {'fire' if fires else 'stay quiet'} for the "
                         f"{w.long}/{w.short} pair at {at}m")


def _record_test(slo: SLO) -> dict:
    """A burn that changes (2x for 30m, then 20x, capped at all-bad) while traffic triples,
    and, at 1h and at 32m (a window's length decides the mix there), each SLI recording rule
    against the ratio of ``increase()`` sums (PromQL written apart from the rules) and
    against the ratio computed here; the objective, budget, period ratio and budget left
    against their values. The traffic change matters: at a steady pace the total's rate is
    the same over every window, so a denominator reading the wrong window would go unseen."""
    budget = float(slo.budget)
    sc = Scenario(slo, [(30, min(Decimal(1), 2 * slo.budget), 1),
                        (30, min(Decimal(1), 20 * slo.budget), 3)]).build()
    at = sc.horizon
    checks = []
    # at 1h, and at 32m: 2m after the burn changed pace, so a window half or twice as long
    # as the rule's holds another mix of the two burns
    for ms in slo.record_windows() + [slo.period_ms]:
        win = window_text(ms) if ms == slo.period_ms else format_ms(ms)
        rec = slo.record_selector(SLI_RECORD.format(window=win))
        for t in ([at, 32] if ms < slo.period_ms else [at]):
            when = format_ms(t * MINUTE_MS)
            checks.append({"expr": f"count(abs({rec} - on () ({_independent(slo, win)})) < 1e-12)",
                           "eval_time": when, "exp_samples": [{"labels": "{}", "value": 1}]})
            checks.append({"expr": f"count(abs({rec} - {exact_number(sc.ratio(t, ms // MINUTE_MS))}) < 1e-9)",
                           "eval_time": when, "exp_samples": [{"labels": "{}", "value": 1}]})
    mean = sc.ratio(at, slo.period_ms // MINUTE_MS)
    for expr in (f"{slo.record_selector(OBJECTIVE_RECORD)} == {decimal_text(slo.objective / 100)}",
                 f"{slo.record_selector(BUDGET_RECORD)} == {decimal_text(slo.budget)}",
                 f"abs({slo.record_selector(REMAINING_RECORD)} - {exact_number(1 - mean / budget)}) < 1e-9"):
        checks.append({"expr": f"count({expr})", "eval_time": "1h",
                       "exp_samples": [{"labels": "{}", "value": 1}]})
    return {"interval": "1m", "input_series": sc.input_series(), "promql_expr_test": checks}


def _independent(slo: SLO, window: str) -> str:
    """The error ratio over ``window`` written apart from :meth:`SLO.sli_expr`: ratios of
    ``increase()`` sums, and for a latency SLI the ``+Inf`` bucket in place of ``_count``."""
    if slo.kind == "bad":
        return f"sum(increase({slo.events.text}[{window}])) / sum(increase({slo.total.text}[{window}]))"
    if slo.kind == "good":
        return (f"(sum(increase({slo.total.text}[{window}])) - sum(increase({slo.events.text}[{window}])))"
                f" / sum(increase({slo.total.text}[{window}]))")
    le = slo.total.with_name(slo.total.name, f'le="{slo.le}"')
    inf = slo.total.with_name(slo.total.name, 'le="+Inf"')
    return (f"(sum(increase({inf}[{window}])) - sum(increase({le}[{window}])))"
            f" / sum(increase({inf}[{window}]))")
