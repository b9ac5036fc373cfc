"""The texts of an SLO's generated rules: the budget recording rule (the one place the
objective is written), the burn-rate alert exprs that read it, summaries and descriptions.

The objective is written once, as the error budget in the ``slo:error_budget:ratio`` recording
rule (``vector(0.005)`` for 99.5%); every other rule reads that series: the objective
(``1 - budget``), the budget left, and each burn-rate alert (``ratio > 14.4 * budget``). So an
edit of the objective changes one line of the rules file, and the chart's objective knob
rewrites one expr. The budget is the literal rather than the objective because
``14.4 * 0.005`` is then the very float the old literal thresholds gave (``1 - 0.995`` is
``0.0050000000000000044`` in float64), and ``1 - 0.005`` gives back ``0.995`` exactly.
"""

from __future__ import annotations

from decimal import Decimal

from ...promql.series import decimal_text
from .reading import SLO
from .windows import BUDGET_RECORD, SLI_RECORD, BurnWindow, exhaustion_ms, human, percent

#: The placeholder of the budget in the chart's metadata file (``rules/<app>.meta.yaml``):
#: the template writes the budget of ``<valuesKey>.slos.<name>.objective`` there. ``[[``
#: never occurs in PromQL outside a string.
BUDGET_PLACEHOLDER = "[[budget]]"


def section_id(name: str) -> str:
    """Heading id of the SLO's section on the runbook page (``slo-<name>``)."""
    return f"slo-{name}"


def budget_text(slo: SLO) -> str:
    """The error budget as PromQL number text: ``0.005`` for 99.5%."""
    return decimal_text(slo.budget)


def budget_expr(slo: SLO, budget: str | None = None) -> str:
    """The expr of the ``slo:error_budget:ratio`` rule: ``vector(0.005)``; ``budget``: the
    text to write in place of the SLO's own budget (:data:`BUDGET_PLACEHOLDER`)."""
    return f"vector({budget_text(slo) if budget is None else budget})"


def objective_expr(slo: SLO) -> str:
    """The expr of the ``slo:objective:ratio`` rule: one minus the recorded budget."""
    return f"1 - {slo.record_selector(BUDGET_RECORD)}"


def threshold_text(slo: SLO, w: BurnWindow) -> str:
    """The alert threshold as PromQL: the factor times the recorded budget,
    ``14.4 * slo:error_budget:ratio{slo="...", slo_service="..."}``. The budget series
    carries the same labels as the SLI series it is compared with (both are the SLO's
    recording rules, whole-SLO sums with the same rule labels), so the comparison matches
    them one to one without ``on()``."""
    return f"{decimal_text(w.factor)} * {slo.record_selector(BUDGET_RECORD)}"


def alert_expr(slo: SLO, w: BurnWindow) -> str:
    """The expr of pair ``w``'s alert rule: the error ratio over the long window above the
    threshold, and over the short window too."""
    thr = threshold_text(slo, w)
    return (f"{slo.record_selector(SLI_RECORD.format(window=w.long))}\n  > {thr}\n"
            f"and on ()\n"
            f"{slo.record_selector(SLI_RECORD.format(window=w.short))}\n  > {thr}")


def default_texts(slo: SLO, w: BurnWindow) -> tuple[str, str]:
    """The generated ``summary`` and ``description`` of pair ``w``'s alert rule. Neither
    states the objective (the runbook page does, once): they say what the pair measures."""
    exhaust = human(exhaustion_ms(slo.period_ms, w.factor))
    spent = percent(w.factor * Decimal(w.long_ms) / Decimal(slo.period_ms))
    f = decimal_text(w.factor)
    # the slowest pair's 1x (the SRE workbook's 3d/6h) is the pace that spends the budget exactly
    # over the period: not "1x too fast"
    pace = f"{f}x too fast" if w.factor > 1 else f"at the pace that spends all of it in {slo.period}"
    summary = f"SLO {slo.name} of {slo.app} is burning its error budget {pace} (over {w.long} and {w.short})."
    above = "" if w.factor == 1 else f"{f} times "
    description = (f"The share of bad events of SLO {slo.name} has been above {above}"
                   f"its error budget over both the last {w.long} and the last {w.short}: {spent} of the "
                   f"{slo.period} budget went in {w.long}, and at this pace all of it goes in {exhaust}.")
    return summary, description


def texts(slo: SLO, w: BurnWindow) -> dict:
    """The ``summary`` and ``description`` of pair ``w``'s alert rule: the spec's, else generated."""
    sev = slo.entry.get(w.severity) or {}
    summary, description = default_texts(slo, w)
    return {"summary": sev.get("summary", summary), "description": sev.get("description", description)}
