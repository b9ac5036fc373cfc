"""The routing line of each alert's triage box: who it notifies (Alertmanager's own routing of
the project's configuration, :mod:`rulegen.routing.project`) and the alerts it is a cause or
a symptom of (the specs' ``inhibited_by:`` only, :mod:`rulegen.routing.inhibit`).
"""

from __future__ import annotations

from pathlib import Path

from ..findings import RulegenError
from ..routing import inhibit
from ..routing.project import route_project
from .runbook import alert_index, inline_code, md_text, related_link


def page_lines(specs, root: Path, config) -> dict:
    """App -> alert name -> the Markdown of its routing line ("" when there is nothing to say).

    Notifies: the receivers Alertmanager routes the alert to, null receivers marked; absent
    when the project names no Alertmanager configuration, or it cannot be used (validation
    reports that, RG950/RG954)."""
    routed = None
    try:
        routing = route_project(specs, root, config)
        if routing is not None:
            routed = (routing, routing.by_alert())
    except RulegenError:
        routed = None
    symptoms, causes = inhibit.causes_and_symptoms(specs)
    equal = {(d.cause, d.symptom): d.equal for d in inhibit.declarations(specs)}
    index = alert_index(specs)
    out: dict = {}
    for spec in specs:
        lines = out.setdefault(spec.app, {})
        for r in spec.alerts():
            if r.name in lines:
                continue
            parts = []
            if routed is not None:
                parts.append("**Notifies:** " + _receivers(routed[1].get(r.name, ()), routed[0]))
            if causes.get(r.name):
                parts.append("**Symptom of:** " + ", ".join(
                    related_link(c, spec, index) + _same(equal.get((c, r.name))) for c in causes[r.name])
                    + " (muted while it fires)")
            if symptoms.get(r.name):
                parts.append("**Mutes:** " + ", ".join(related_link(s, spec, index) + _same(equal.get((r.name, s)))
                                                       for s in symptoms[r.name]))
            lines[r.name] = " · ".join(parts)
    return out


def _same(labels) -> str:
    return f" (same {', '.join(inline_code(x) for x in labels)})" if labels else ""


def _receivers(names, routing) -> str:
    if not names:
        return "*nothing*"
    shown = []
    for n in names:
        note = " (notifies nobody)" if n in routing.null else " (default route)" if n == routing.default else ""
        shown.append(inline_code(n) + md_text(note))
    return ", ".join(shown)
