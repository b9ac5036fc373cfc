"""The SLO section of an app's runbook page (one per entry of ``slos:``).

What whoever is paged or ticketed needs first: the objective and period with the error budget
it leaves (:func:`objective_fact`), the SLI's counters, and the burn-rate table (factor, long
and short window, the share of the budget gone when it fires, the time to exhaust the budget
at that pace, and whether it pages or opens a ticket, linked to the alert's own section).
Everything that depends on the objective is in the one "Objective" fact, one line of at most
120 characters (the rules and the table say "the error budget" and the burn factor, and the
rules read the recorded budget), so an edit of the objective changes one line of the page
(issue 29: "a one-threshold change touches one line per generated file"); the SLO's
recording rules are described here, not listed with the app's other recording rules (whose
list would show the budget rule's literal again). The section's id is
:func:`rulegen.spec.slo.section_id`; each burn-rate alert's section opens with a link to it,
so its ``runbook_url`` leads here in one click. The numbers come from
:mod:`rulegen.spec.slo` (the rules' own), never retyped.

The section's queries are marked for the site's "Open in Prometheus · Grafana" links
(:mod:`rulegen.render.code_md`), each shown once: the budget left now (:func:`budget_query`,
the "Budget left now" fact), the error ratio over each window as recorded, the burn rate over
each window now (:func:`burn_query`, the recorded error ratio over the budget the rules record,
so a chart's ``objective`` override counts), and the recorded expressions. A burn-rate alert's
section links here (its triage box's "SLO:" line) rather than repeating them.
"""

from __future__ import annotations

from decimal import Decimal

from ..spec import slo as slo_mod
from .code_md import inline_code, one_line_promql, promql_block, promql_code
from .slug import anchor


def outage(ms: int) -> str:
    """A time of total outage for people: :func:`rulegen.spec.slo.human` (``3h 36m``, at most
    two units, rounded down) from an hour up, minutes and seconds below it (``4m 19s``,
    ``25s``; ``under 1s`` below a second). ``ms``: milliseconds, >= 0."""
    if ms >= 3600_000:
        return slo_mod.human(ms)
    if ms < 1000:
        return "under 1s"
    minutes, rest = divmod(ms, slo_mod.MINUTE_MS)
    seconds = rest // 1000
    return " ".join(([f"{minutes}m"] if minutes else []) + ([f"{seconds}s"] if seconds else []))


def objective_fact(s) -> str:
    """The "Objective" fact of SLO ``s``, everything on the page that depends on its objective,
    in one line (Markdown, about 90 characters; at most 120 with the fact's ``- Objective: ``
    for objectives of up to 4 decimals and any period): the objective and period, and the
    error budget as a share of the events and as the time of total outage that spends it
    (``99.5% of events good over 30d (rolling); error budget 0.5%, **3h 36m** of total
    outage``). The time is what an on-call reader weighs a risk in; the share is what
    ``slo:error_budget:ratio`` records. The error ratio each pair fires above is the table's
    factor times this budget (the sentence over the table says so): listing it here repeated
    the table and made the fact three lines long, all of which an objective edit changed."""
    bad_ms = int(Decimal(s.period_ms) * s.budget)
    return (f"{slo_mod.decimal_text(s.objective)}% of events good over {s.period} (rolling); error budget "
            f"{slo_mod.percent(s.budget)}, **{outage(bad_ms)}** of total outage")


def budget_query(s) -> str:
    """PromQL of the share of SLO ``s``'s error budget left this period (1 untouched, 0 spent)."""
    return s.record_selector(slo_mod.REMAINING_RECORD)


def burn_query(s) -> str:
    """PromQL of SLO ``s``'s burn rate now over each window it records, one series per window
    (label ``window``: ``5m``, ``1h``, ..., and the period): the recorded error ratio over the
    recorded error budget. 1 spends exactly the budget over the period; a burn-rate pair fires
    while both its windows are above its factor. Over lines of at most 120 characters."""
    prefix = slo_mod.SLI_RECORD.format(window="")
    inner = ", ".join(f'{k}="{v}"' for k, v in s.selector_labels.items())
    return (f'label_replace(\n  {{__name__=~"{prefix}.+", {inner}}},\n'
            f'  "window", "$1", "__name__", "{prefix}(.+)"\n)\n'
            f"  / on(slo, slo_service) group_left\n{s.record_selector(slo_mod.BUDGET_RECORD)}")


def section(s, values_key: str, md_text) -> dict:
    """Template data of SLO ``s`` (a :class:`rulegen.spec.slo.SLO`); ``md_text``: the
    renderer's plain-text escape. Keys: ``id``, ``title``, ``description`` (Markdown), ``facts``
    (pairs of Markdown cells), ``rows`` (the burn-rate table), ``records`` (PromQL block of
    one query per line), ``burn`` (PromQL block: :func:`burn_query`),
    ``group_rules`` (Markdown paragraphs: the SLO's recording rules, without the budget's
    literal), ``meaning`` (Markdown paragraphs)."""
    if s.kind == "latency":
        sli = (f"requests slower than `le=\"{s.le}\"` over all requests: "
               + " over ".join(inline_code(one_line_promql(c)) for c in s.counters()))
    else:
        word = "bad" if s.kind == "bad" else "good"
        sli = (f"{word} events {inline_code(one_line_promql(s.events.text))} over all events "
               f"{inline_code(one_line_promql(s.total.text))}"
               + (" (error ratio = 1 - good/total)" if s.kind == "good" else ""))
    names = {sev: s.alert_name(sev) for sev in ("page", "ticket")}
    group = s.group_name
    facts = [
        # the one line that states the objective and what follows from it (see the docstring)
        ("Objective", objective_fact(s)),
        ("SLI", sli),
        ("Rule group", inline_code(group)),
        ("Knobs", f"`{values_key}.slos.{s.name}.enabled: false` turns the SLO off, `.ticket: false` keeps "
                  f"the pages only, `.objective: <percent>` sets another objective for the alerts (this page and "
                  f"the generated tests keep the spec's)"),
        ("Budget left now", promql_code(budget_query(s)) + " (1 = untouched, 0 = spent, below 0 = overspent)"),
    ]
    rows = []
    for w in s.windows:
        name = names[w.severity]
        spent = w.factor * Decimal(w.long_ms) / Decimal(s.period_ms)
        rows.append({
            "factor": f"{slo_mod.decimal_text(w.factor)}x",
            "long": w.long, "short": w.short,
            "spent": slo_mod.percent(spent.quantize(Decimal("0.0001"))),
            "exhaust": slo_mod.human(slo_mod.exhaustion_ms(s.period_ms, w.factor)),
            "alert": f"{w.severity}: [{md_text(name)}](#{anchor(name)})",
        })
    records = "\n".join(s.record_selector(slo_mod.SLI_RECORD.format(window=slo_mod.format_ms(ms)))
                        for ms in s.record_windows())
    first_window = slo_mod.format_ms(s.record_windows()[0])
    period_record = slo_mod.SLI_RECORD.format(window=s.period)
    group_rules = [
        f"The rule group {inline_code(group)} records these, and one more rule holds the objective: "
        f"{inline_code(slo_mod.BUDGET_RECORD)}, the error budget as a ratio (the chart's `objective` knob "
        f"rewrites it). The objective {inline_code(slo_mod.OBJECTIVE_RECORD)} is one minus it, and each "
        f"burn-rate alert compares a window's error ratio with the factor times it. Each "
        f"{inline_code(slo_mod.SLI_RECORD.format(window='<window>'))}, here over {first_window}:",
        promql_block(s.sli_expr(first_window)),
        f"The error ratio over the whole period, {inline_code(period_record)}, is the same over "
        f"{s.period}; the budget left, {inline_code(slo_mod.REMAINING_RECORD)}, is:",
        promql_block(slo_mod.remaining_expr(s)),
    ]
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
        "records": promql_block(records, lines=True),
        "burn": promql_block(burn_query(s)),
        "group_rules": group_rules,
        "meaning": meaning,
        "first_alert": names["page"],
    }


def burn_pairs(r, pairs: dict) -> list[dict]:
    """The burn-rate pair of SLO alert rule ``r`` (``pairs``: (alert, long, short) -> (SLO,
    window)), as the triage box lists it: ``key`` (``long=1h short=5m``, the alert's labels, which
    the page's script matches against the URL's query string) and ``text`` (Markdown); [] for
    any other rule."""
    found = pairs.get((r.name, r.labels.get("long"), r.labels.get("short")))
    if found is None:
        return []
    s, w = found
    return [{"key": f"long={w.long} short={w.short}",
             "text": f"**{slo_mod.decimal_text(w.factor)}x** over {w.long} and {w.short}: budget gone in "
                     f"{slo_mod.human(slo_mod.exhaustion_ms(s.period_ms, w.factor))}"}]
