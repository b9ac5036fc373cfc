"""SLO windows and burn-rate arithmetic: the window pairs of a period, durations for people.

The method (the SRE workbook's multiwindow, multi-burn-rate alerts, Sloth's 30d pairs,
Pyrra's scaling for other periods) is described in :mod:`rulegen.spec.slo`.

Durations are Prometheus duration strings; this module works in milliseconds internally.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from ...promql.series import decimal_text
from ..durations import format_ms

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



def percent(d: Decimal) -> str:
    """A ratio as a percentage for people: ``Decimal('0.005')`` -> ``0.5%``."""
    return decimal_text(d * 100) + "%"
