"""Expanding an :class:`~rulegen.spec.slo.reading.SLO` into a rule group of plain rules (the
SLI and metadata recording rules, one alert rule per window pair), and the budget rule's expr
template the chart fills in when the values override the objective."""

from __future__ import annotations


from ...promql.series import decimal_text
from ..durations import format_ms
from ..model import Group, Rule
from .reading import SLO
from .texts import BUDGET_PLACEHOLDER, alert_expr, budget_expr, objective_expr, texts
from .windows import (BUDGET_RECORD, OBJECTIVE_RECORD, REMAINING_RECORD, SLI_RECORD, BurnWindow, exhaustion_ms,
                      human)


def _runbook(slo: SLO, severity: str, w: BurnWindow, given: dict) -> dict:
    """The alert's runbook content: the spec's, with a generated opening (on the first pair of
    the alert only: the page shows a name's rules in one section) and defaults for what the
    spec leaves out."""
    pairs = [x for x in slo.windows if x.severity == severity]
    # no number here depends on the objective: the SLO's section on the page states it (and
    # the budget and the error ratios it gives) once, so an objective edit changes one line
    rules = "; ".join(
        f"{decimal_text(x.factor)}x over {x.long} and {x.short} (the {slo.period} budget lasts "
        f"{human(exhaustion_ms(slo.period_ms, x.factor))} at that pace)" for x in pairs)
    opening = (f"This alert has one rule per window pair and fires while "
               f"the error ratio over both windows of a pair is above the factor times the "
               f"error budget: {rules}. The short window lets a pair resolve within "
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
        # true whichever pair fired: the lowest factor's ratio is exceeded by every pair
        first = min(pairs, key=lambda x: x.factor)
        rb["impact"] = (f"Bad events of SLO {slo.name} are above {decimal_text(first.factor)}x the share its "
                        f"error budget allows: at this pace the {slo.period} error budget is gone in "
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


def remaining_expr(slo: SLO) -> str:
    """The expr of the budget-left rule: one minus the period's error ratio over the recorded budget."""
    period_record = SLI_RECORD.format(window=slo.period)
    return f"1 - {slo.record_selector(period_record)}\n  / {slo.record_selector(BUDGET_RECORD)}"


def objective_template(slo: SLO) -> tuple[str, str]:
    """What the chart rewrites when the values override ``slo``'s objective: the name of the
    one rule that holds it (``slo:error_budget:ratio``; every other rule of the SLO reads that
    series) and its expr with :data:`BUDGET_PLACEHOLDER` for the budget
    (``vector([[budget]])``). Filling in the SLO's own budget gives back the expanded rule's
    expr exactly (tested), so the chart renders the same bytes when the override equals the
    spec."""
    return BUDGET_RECORD, budget_expr(slo, BUDGET_PLACEHOLDER)


def expand(slo: SLO, app_labels: dict, default_component: str | None):
    """The SLO as a :class:`~rulegen.spec.model.Group`: the SLI and metadata recording rules,
    the page and ticket alerts (one rule per window pair), without tests: the generated
    tests are made on demand (:func:`rulegen.spec.slo.with_tests`), by the stage that
    runs them.

    ``default_component``: the app's ``component`` label value (None: none).
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
        # the budget first: the objective, the budget left and the alerts read its series,
        # and Prometheus evaluates a group's rules in order, each seeing the ones before
        Rule(kind="record", name=BUDGET_RECORD, expr=budget_expr(slo),
             path=slo.path + ("objective",), labels=dict(rec_labels)),
        Rule(kind="record", name=OBJECTIVE_RECORD, expr=objective_expr(slo),
             path=slo.path + ("objective",), labels=dict(rec_labels)),
        Rule(kind="record", name=period_record, expr=slo.sli_expr(slo.period),
             path=slo.path + ("period",), labels=dict(rec_labels)),
        Rule(kind="record", name=REMAINING_RECORD, expr=remaining_expr(slo),
             path=slo.path + ("period",), labels=dict(rec_labels)),
    ]
    for w in slo.windows:
        sev = entry.get(w.severity) or {}
        annotations = texts(slo, w)
        annotations.update(sev.get("annotations") or {})
        comp = sev.get("component", default_component)
        rule = Rule(kind="alert", name=slo.alert_name(w.severity), expr=alert_expr(slo, w),
                    path=slo.path + (w.severity,) if w.severity in entry else slo.path,
                    severity=sev.get("severity", "critical" if w.severity == "page" else "warning"),
                    component=comp if isinstance(comp, str) and comp else None,
                    labels={**slo_labels, **(sev.get("labels") or {}), "long": w.long, "short": w.short},
                    annotations=annotations, runbook=_runbook(slo, w.severity, w, sev.get("runbook") or {}))
        rules.append(rule)
    return Group(name=slo.group_name, path=slo.path, rules=rules)
