"""The texts of an SLO's generated rules that hold the objective: alert exprs, summaries and
descriptions, with the objective as numbers or as the placeholders the chart fills in."""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from ...promql.series import decimal_text
from .reading import SLO
from .windows import SLI_RECORD, BurnWindow, exhaustion_ms, human, percent

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


#: The texts as placeholders: the chart's metadata file (``rules/<app>.meta.yaml``) holds each rule's expr
#: and description written with them, and the chart template fills them in when the values
#: override the objective (``<valuesKey>.slos.<name>.objective``, see
#: :func:`objective_templates`). ``[[`` never occurs in PromQL outside a string.
OBJECTIVE_PLACEHOLDERS = ObjectiveTexts("[[objective]]", "[[budget]]", "[[objective_percent]]", "[[budget_percent]]")


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
