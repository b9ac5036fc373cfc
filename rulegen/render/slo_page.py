"""The SLO section of an app's runbook page (one per entry of ``slos:``).

What whoever is paged or ticketed needs first: the objective and period, the error budget in
bad minutes and in events per period, the SLI's counters, and the burn-rate table (factor,
long and short window, the error ratio that trips it, the share of the budget gone when it
fires, the time to exhaust the budget at that pace, and whether it pages or opens a ticket,
linked to the alert's own section). The section's id is
:func:`rulegen.spec.slo.section_id`; each burn-rate alert's section opens with a link to it,
so its ``runbook_url`` leads here in one click. The numbers come from
:mod:`rulegen.spec.slo` (the rules' own), never retyped.
"""

from __future__ import annotations

from decimal import Decimal

from ..spec import slo as slo_mod
from .slug import anchor


def _thousands(d: Decimal) -> str:
    """``5`` / ``0.5`` / ``1,000``: a count of events, without trailing zeros."""
    text = slo_mod.decimal_text(d)
    whole, _, frac = text.partition(".")
    whole = f"{int(whole):,}"
    return f"{whole}.{frac}" if frac else whole


def section(s, values_key: str, md_text, inline_code, fence) -> dict:
    """Template data of SLO ``s`` (a :class:`rulegen.spec.slo.SLO`); the renderer's Markdown
    helpers are passed in. Keys: ``id``, ``title``, ``description`` (Markdown), ``facts``
    (pairs of Markdown cells), ``rows`` (the burn-rate table), ``records`` (PromQL block),
    ``meaning`` (Markdown paragraphs)."""
    minutes = Decimal(s.period_ms) / Decimal(slo_mod.MINUTE_MS)
    bad_minutes = minutes * s.budget
    per = Decimal(1) / s.budget
    budget_text = (f"{slo_mod.percent(s.budget)} of events: **{_thousands(bad_minutes.quantize(Decimal('0.1')))} bad "
                   f"minutes** per {s.period} ({slo_mod.human(int(bad_minutes * slo_mod.MINUTE_MS))} of total "
                   f"outage), or "
                   f"**{_thousands((Decimal(1000) * s.budget).normalize())} bad of every 1,000 events** "
                   f"({_thousands((Decimal(1_000_000) * s.budget).normalize())} per million)")
    if per == per.to_integral_value():
        budget_text += f", one in {_thousands(per)}"
    if s.kind == "latency":
        sli = (f"requests slower than `le=\"{s.le}\"` over all requests: "
               + " over ".join(inline_code(c) for c in s.counters()))
    else:
        word = "bad" if s.kind == "bad" else "good"
        sli = (f"{word} events {inline_code(s.events.text)} over all events {inline_code(s.total.text)}"
               + (" (error ratio = 1 - good/total)" if s.kind == "good" else ""))
    names = {sev: s.alert_name(sev) for sev in ("page", "ticket")}
    group = s.group_name
    facts = [
        ("Objective", f"{slo_mod.decimal_text(s.objective)}% of events good over {s.period} (rolling)"),
        ("SLI", sli),
        ("Error budget", budget_text),
        ("Rule group", inline_code(group)),
        ("Knobs", f"`{values_key}.slos.{s.name}.enabled: false` turns the SLO off, `.ticket: false` keeps "
                  f"the pages only, `.objective: <percent>` sets another objective for the alerts (this page and "
                  f"the generated tests keep the spec's {slo_mod.decimal_text(s.objective)}%)"),
        ("Budget left now", inline_code(s.record_selector(slo_mod.REMAINING_RECORD))
         + " (1 = untouched, 0 = spent, below 0 = overspent)"),
    ]
    rows = []
    for w in s.windows:
        name = names[w.severity]
        spent = w.factor * Decimal(w.long_ms) / Decimal(s.period_ms)
        rows.append({
            "factor": f"{slo_mod.decimal_text(w.factor)}x",
            "long": w.long, "short": w.short,
            "ratio": slo_mod.percent(w.factor * s.budget),
            "spent": slo_mod.percent(spent.quantize(Decimal("0.0001"))),
            "exhaust": slo_mod.human(slo_mod.exhaustion_ms(s.period_ms, w.factor)),
            "alert": f"{w.severity}: [{md_text(name)}](#{anchor(name)})",
        })
    records = "\n".join(s.record_selector(slo_mod.SLI_RECORD.format(window=slo_mod.format_ms(ms)))
                        for ms in s.record_windows())
    fastest = s.windows[0]
    meaning = [
        f"**{md_text(names['page'])} (page)** means the budget goes in days at this pace "
        f"({slo_mod.human(slo_mod.exhaustion_ms(s.period_ms, fastest.factor))} at "
        f"{slo_mod.decimal_text(fastest.factor)}x): act now. Its short window makes it resolve within "
        f"minutes of the errors stopping, so a page that stays is a burn that goes on.",
        f"**{md_text(names['ticket'])} (ticket)** means a slow, steady burn that would spend the "
        f"budget within the period: fix it within working days, not at night.",
        "Either way, find what changed when the burn began (rollout, config, dependency, traffic), "
        "compare the windows below to see whether it is still going, and check the budget left "
        "before deciding how much risk the fix may take.",
    ]
    return {
        "id": slo_mod.section_id(s.name),
        "title": f"SLO: {md_text(s.name)}",
        "description": (s.entry.get("description") or "").strip(),
        "facts": facts,
        "rows": rows,
        "records": fence(records, "promql"),
        "meaning": meaning,
        "first_alert": names["page"],
    }
