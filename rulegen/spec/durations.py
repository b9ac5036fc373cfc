"""Prometheus durations: parse, check and print them canonically.

Syntax as in the Prometheus docs ("Configuration: <duration>") and enforced by the
PrometheusRule CRD: ``^((\\d+)y)?((\\d+)w)?((\\d+)d)?((\\d+)h)?((\\d+)m)?((\\d+)s)?((\\d+)ms)?$``,
units in that order, integers only, or the single ``0``. ``1.5m``, ``90`` and ``5 m`` are rejected.
A year is 365 days, a week 7 days, as in Prometheus' model.ParseDuration.
"""

from __future__ import annotations

import functools
import re

_RE = re.compile(
    r"^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$"
)
_UNITS_MS = (
    ("y", 365 * 24 * 3600 * 1000),
    ("w", 7 * 24 * 3600 * 1000),
    ("d", 24 * 3600 * 1000),
    ("h", 3600 * 1000),
    ("m", 60 * 1000),
    ("s", 1000),
    ("ms", 1),
)


#: Longest duration Prometheus accepts: Go's time.Duration holds at most 2^63-1 nanoseconds.
MAX_MS = (2**63 - 1) // 1_000_000


class DurationError(ValueError):
    """Raised by :func:`parse_ms` for text that is not a Prometheus duration."""


def parse_ms(text: str) -> int:
    """Duration text to milliseconds. ``"1h30m"`` -> ``5400000``. The integer ``0`` (a spec's
    unquoted ``for: 0``, or ``0.0``) is zero too: Prometheus reads a YAML duration as text, and ``"0"`` is
    the one duration without a unit it accepts (model.ParseDuration).

    Raises:
        DurationError: with a sentence saying what the valid form is.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool) and text == 0:
        return 0
    if not isinstance(text, str) or text == "":
        raise DurationError("empty duration; write e.g. 5m")
    if text == "0":
        return 0
    m = _RE.match(text)
    if not m or not any(m.groups()):
        raise DurationError(f"{text!r} is not a Prometheus duration; {hint(text)}")
    ms = sum(int(g) * mult for g, (_, mult) in zip(m.groups(), _UNITS_MS) if g)
    if ms > MAX_MS:
        raise DurationError(f"{text!r} is out of range: Prometheus durations are at most "
                            f"{format_ms(MAX_MS)} (about 292 years)")
    return ms


def hint(text: str) -> str:
    """A suggestion for a wrong duration text (``"1.5m"`` -> ``write 90s``)."""
    t = str(text).strip()
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w|y)?", t)
    if m:
        num, unit = float(m.group(1)), m.group(2)
        mult = dict(_UNITS_MS)[unit] if unit is not None else 1000
        if not num * mult <= MAX_MS:  # also inf, from a number of hundreds of digits
            return "it is far longer than the longest duration Prometheus takes (about 292 years)"
        if unit is None:
            return f"add a unit: {format_ms(int(num * 1000))} if seconds were meant"
        return f"use whole units: {format_ms(int(round(num * mult)))}"
    return "use whole numbers with units y, w, d, h, m, s, ms in that order, e.g. 1h30m"


def is_valid(text) -> bool:
    """True for a valid Prometheus duration string."""
    try:
        parse_ms(text)
        return True
    except DurationError:
        return False


def format_ms(ms: int) -> str:
    """Milliseconds to canonical duration text, as Prometheus prints it: ``5400000`` -> ``1h30m``,
    ``0`` -> ``0s``."""
    if ms == 0:
        return "0s"
    out = []
    for unit, mult in _UNITS_MS:
        n, ms = divmod(ms, mult)
        if n:
            out.append(f"{n}{unit}")
    return "".join(out)


@functools.lru_cache(maxsize=4096)  # a project repeats a few durations thousands of times
def canonical(text: str) -> str:
    """Canonical form of a valid duration (``"90s"`` -> ``"1m30s"``, ``"60m"`` -> ``"1h"``)."""
    return format_ms(parse_ms(text))
