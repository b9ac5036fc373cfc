"""Input series for an SLO's generated tests, and what Prometheus computes from them.

Label sets that a selector matches (or does not: :func:`sample_labels`), and
:class:`Scenario`: a burn that changes over time as promtool input series, with the error
ratio over any window and the window pairs that fire at any minute.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from decimal import Decimal

from ...promql.matchers import matches, op_text
from ...promql.series import exact_number, series_text
from ...promql.syntax import parse
from .reading import SLO, Selector, parse_selector
from .windows import MINUTE_MS, BurnWindow

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
