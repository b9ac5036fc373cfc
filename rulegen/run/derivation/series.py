"""Candidate series for derived tests: label sets that a selector's matchers accept (or that
miss one matcher), values on each side of a threshold, and what ``rate``/``increase`` read
from counter samples, as Prometheus computes it."""

from __future__ import annotations

import math
import re

from ...promql.matchers import matches, op_text
from ...promql.series import series_text, short_number
from .shape import _TRUTH, Manual, Shape, Side

# --- labels ---------------------------------------------------------------------------------

def _pick(m, accept: bool) -> str:
    """A label value the matcher ``m`` accepts (``accept``) or refuses (for the near-miss
    series): the matcher's own value or ``other``, or for a regex the first candidate that
    it decides as wanted.

    Raises:
        Manual: no candidate is decided as wanted (or the regex is one rulegen does not read
            like RE2).
    """
    op = op_text(m)
    if op in ("=", "!="):
        return m.value if (op == "=") == accept else ("other" if m.value != "other" else "another")
    if (op == "=~") == accept:  # a value the regex matches
        cands = [*_alternatives(m.value), "x", "a", "1"] + ([""] if accept else [])
    else:
        cands = ["other", "another", "x-other"] + ([] if accept else ["zz"])
    got = next((c for c in cands if matches(op, m.value, c) is accept), None)
    if got is None:
        raise Manual(f"no label value found that matches `{m}`" if accept
                     else f"no label value found that `{m}` refuses")
    return got


def _label_matchers(sides: list):
    """(side, matcher) for every label matcher of ``sides`` (the metric name left out)."""
    for side in sides:
        for m in side.matchers:
            if m.name != "__name__":
                yield side, m


def _alternatives(regex: str) -> list[str]:
    """Literal alternatives of a regular expression like ``a|b|c`` (``Probe.*Failed`` gives
    ``ProbeFailed`` and ``ProbexFailed``)."""
    out = []
    for alt in regex.split("|"):
        alt = alt.strip("()")
        plain = alt.replace(".*", "").replace(".+", "x")
        out += [plain.replace(".", "0"), plain, alt.replace(".*", "x").replace(".+", "x")]
    return [a for a in out if not re.search(r"[\\\[\](){}?*+^$]", a)]


def _labels(side: Side, by: list | None) -> dict:
    """Series labels for ``side``: what its matchers require, plus a value for each ``by`` label."""
    out: dict = {}
    for _, m in _label_matchers([side]):
        v = _pick(m, True)
        if v != "" and op_text(m) in ("=", "=~"):
            out[m.name] = v  # a missing label already satisfies `!=` and `!~`
    for label in by or []:
        out.setdefault(label, f"{label}-1")
    return out


def _near_misses(sides: list, labels: dict) -> list[tuple[Side, dict]]:
    """Per label matcher of ``sides``, the side and ``labels`` with that one label changed to
    a value the matcher refuses: a series that misses only that matcher."""
    return [(side, {**labels, m.name: _pick(m, False)}) for side, m in _label_matchers(sides)]


def _near_series(shape: Shape, owner: Side, inputs: list[tuple[Side, str]]) -> list[tuple[Side, str]]:
    """Of the input series a value needs, those a near-miss of ``owner``'s matcher gets: all
    of them (a ratio's sides match one-to-one, so each needs its partner), except for an
    aggregated ratio, where a partner would be summed into the real series' group."""
    if shape.kind == "ratio" and shape.by is not None:
        return [(s, v) for s, v in inputs if s is owner]
    return inputs


def _series(name: str | None, labels: dict) -> str:
    if not name:
        raise Manual("a selector without a metric name")
    return series_text(name, labels)


# --- values ---------------------------------------------------------------------------------

def _sides_of(op: str, n: float, exact: bool = True) -> tuple[list[float], list[float]]:
    """(values that fire, values that do not) for ``x op n``: the boundary value on its side
    (``exact``; otherwise half a step past it, for values the test data cannot hit exactly),
    and one step away on the other; a step is |n| / 2, or 1 for 0."""
    d = abs(n) / 2 if n else 1.0
    if not exact:
        n_fire = {">=": n + d / 2, "<=": n - d / 2}.get(op, n)
        n_quiet = {">": n - d / 2, "<": n + d / 2}.get(op, n)
        table = {
            ">": ([n + d], [n_quiet]), ">=": ([n_fire], [n - d]), "<": ([n - d], [n_quiet]),
            "<=": ([n_fire], [n + d]),
        }
        if op not in table:
            raise Manual(f"`{op}` against a value the test data cannot hit exactly")
        return table[op]
    table = {
        ">": ([n + d], [n, n - d]), ">=": ([n], [n - d]), "<": ([n - d], [n, n + d]), "<=": ([n], [n + d]),
        "==": ([n], [n - d, n + d]), "!=": ([n - d, n + d], [n]),
    }
    fire, quiet = table[op]
    assert all(_TRUTH[op](v, n) for v in fire) and not any(_TRUTH[op](v, n) for v in quiet)
    return fire, quiet


def _rate_at(k: int, pace: float, step_s: int, range_s: int) -> float | None:
    """The per-second rate Prometheus reads at the k-th evaluation (t = k steps) from a counter
    growing by ``pace * step_s`` per sample from t = 0 (extrapolation as in the Prometheus
    docs for rate(): a window not covered to its start is extrapolated by half a sample
    interval); None before two samples are in the window."""
    first_k = max(0, math.floor(k - range_s / step_s) + 1)
    samples = k - first_k + 1
    if samples < 2:
        return None
    sampled = (k - first_k) * step_s
    to_start = first_k * step_s - (k * step_s - range_s)
    avg = sampled / (samples - 1)
    if to_start >= avg * 1.1:
        to_start = avg / 2
    if first_k == 0:
        to_start = 0  # the counter starts at 0: no extrapolation below zero
    return pace * (sampled + to_start) / range_s




def _reading(vals: list[float], k: int, step_s: int, range_s: int, func: str) -> float | None:
    """What ``rate``/``increase`` over ``range_s`` reads at t = k steps from counter samples
    ``vals`` (one per step from t = 0), extrapolated as the Prometheus docs describe for
    rate(): to the window's start by up to 1.1 average sample intervals (else half of one),
    never below the counter's zero; None with fewer than two samples in the window."""
    first = max(0, math.floor(k - range_s / step_s) + 1)
    if k - first < 1 or k >= len(vals):
        return None
    result = vals[k] - vals[first]
    sampled = (k - first) * step_s
    avg = sampled / (k - first)
    to_start = first * step_s - (k * step_s - range_s)
    if to_start >= avg * 1.1:
        to_start = avg / 2
    if result > 0 and vals[first] >= 0:
        to_start = min(to_start, sampled * vals[first] / result)
    value = result * (sampled + to_start) / sampled
    return value / range_s if func == "rate" else value


def _firing(series, step_s, range_s, func, op, n, for_k) -> tuple[list[bool], list]:
    """Per evaluation, whether the alert fires (``for`` counted in evaluations), and the
    readings: of one counter, or the ratio of two (``series`` holds one or two sample lists)."""
    out, readings, since = [], [], None
    for k in range(len(series[0])):
        rs = [_reading(vals, k, step_s, range_s, func) for vals in series]
        r = None if None in rs or len(rs) == 2 and rs[1] == 0 else rs[0] if len(rs) == 1 else rs[0] / rs[1]
        readings.append(r)
        cond = r is not None and _TRUTH[op](r, n)
        since = (since if since is not None else k) if cond else None
        out.append(cond and k - since >= for_k)
    return out, readings



def _compared(shape: Shape, v: float) -> float:
    """What a scaled comparison sees when the test feeds ``v``, computed the way the query
    does (for a ratio of gauges: ``v * 100`` over 100, then the scale)."""
    x = float(short_number(v * 100)) / 100 if shape.kind == "ratio" and not shape.sides[0].func else v
    return x * shape.scale


def _dyadic(x: float) -> float:
    """``x`` rounded to a multiple of 1/64: promtool adds a counter's step sample after
    sample, and a step like 0.9 drifts (12 steps make 10.800000000000002), so a series
    written flat afterwards at 10.8 would read as a counter reset."""
    return max(round(x * 64), 1) / 64


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-9


def _exact(v: float, side: Side, step_s: int) -> bool:
    """Whether a counter read as ``v`` (a rate, or an increase over the window) grows by a
    whole number per sample and its window holds whole samples: then Prometheus reads ``v``
    exactly once the window is full, and a boundary value can be tested."""
    pace = v / side.range_s if side.func == "increase" else v
    return _whole(pace * step_s) and side.range_s % step_s == 0



def _counter(v: float, side: Side, step_s: int, total: int, per_window: bool = True) -> str:
    """promtool values for a counter whose rate (or increase over the side's window) is ``v``."""
    pace = v / side.range_s if side.func == "increase" and per_window else v
    step = pace * step_s
    return f"0+{short_number(step)}x{total}" if step else f"0x{total}"


def _start(shape: Shape, v: float, step_s: int) -> int:
    """First evaluation (in steps from 0) at which the compared value reads ``v`` on the
    same side of the threshold as ``v`` itself."""
    if shape.kind == "value" or shape.kind == "ratio" and not shape.sides[0].func:
        return 0
    side = shape.sides[0]
    op, n = shape.op, shape.threshold
    pace = v / side.range_s if side.func == "increase" else v
    pace = float(short_number(pace * step_s)) / step_s  # the step as the test writes it (12 digits)
    if shape.kind == "ratio":
        return 1  # both sides ramp alike: the ratio is right from two samples on
    want = _TRUTH[op](v, n)
    prev = None
    for k in range(1, 10_000):
        r = _rate_at(k, pace, step_s, side.range_s)
        if r is None:
            continue
        got = r * side.range_s if side.func == "increase" else r
        if _TRUTH[op](got, n) == want and _steady(k, pace, step_s, side, op, n, want):
            # the reading that crosses, and the one before it, must be clear of the threshold
            # (or exact): a float a hair off would move the `for` boundary by an interval
            for x in (got, prev):
                if x is not None and x != n and abs(x - n) < 1e-6 * max(1.0, abs(n)):
                    raise Manual("the counter's reading crosses the threshold too close to an "
                                 "evaluation to place the `for` boundary")
            return k
        prev = got
    raise Manual("the rate never settles on the wanted side")


def _steady(k, pace, step_s, side, op, n, want) -> bool:
    for j in range(k, k + side.range_s // step_s + 2):
        r = _rate_at(j, pace, step_s, side.range_s)
        got = r * side.range_s if side.func == "increase" else r
        if _TRUTH[op](got, n) != want:
            return False
    return True
