"""The rest of a spec whose schema errors all lie in alerts, so that one run reports them all.

A spec that fails the schema cannot be built (:func:`rulegen.spec.build_spec` needs
schema-valid data), so before this module a schema error in one alert hid every template,
PromQL, convention and test finding of the file until it was fixed: findings came in rounds.
When it is safe, :func:`partial_spec` builds the spec without the alerts that fail the schema,
and the spec checks run on the rest (the file still fails: its schema errors stand).

Safe means: every rule that fails the schema is an alert (or a rule with neither ``alert`` nor
``record``), since no other rule reads an alert (a recording rule left out would make the
alerts reading it look wrong), and the spec without those rules (and without groups left
empty by them) passes the schema, so nothing outside the alerts is broken. The partial spec
is only checked, never rendered, and project checks (duplicates across specs, cross-references)
do not see it: a reference to a left-out alert would read as a dangling one. Those that read
only recording rules, which it keeps, do (``Context.partial``: RG314, RG311-RG313 across specs).
"""

from __future__ import annotations

import dataclasses

from ..spec import LoadedFile, Spec, build_spec


def _failing_rules(data: dict) -> set | None:
    """The (group index, rule index) of every rule failing the schema, or None when one of
    them is a recording rule or the groups are not lists of mappings."""
    from .checks.schema import _validator
    bad = set()
    groups = data.get("groups")
    if not isinstance(groups, list):
        return None
    for gi, g in enumerate(groups):
        rules = g.get("rules") if isinstance(g, dict) else None
        if not isinstance(rules, list):
            return None
        for ri, r in enumerate(rules):
            if not isinstance(r, dict):
                bad.add((gi, ri))
            elif "record" in r:
                if "alert" in r or not _validator("record").is_valid(r):
                    return None
            elif "alert" not in r or not _validator("alert").is_valid(r):
                bad.add((gi, ri))
    return bad


def partial_spec(lf: LoadedFile) -> Spec | None:
    """``lf``'s spec without the alerts that fail the schema, their paths and ``source`` those
    of ``lf`` (findings land where the alerts are written), or None when that is not safe (see
    the module docstring) or no alert fails."""
    from .checks.schema import _validator
    data = lf.data
    if not isinstance(data, dict):
        return None
    bad = _failing_rules(data)
    if not bad:
        return None
    kept_groups, where = [], []  # where: (original group index, [original rule indexes])
    for gi, g in enumerate(data["groups"]):
        keep = [ri for ri in range(len(g["rules"])) if (gi, ri) not in bad]
        if keep:
            kept_groups.append({**g, "rules": [g["rules"][ri] for ri in keep]})
            where.append((gi, keep))
    pruned = {**data, "groups": kept_groups}
    if not kept_groups or not _validator().is_valid(pruned):
        return None
    spec = build_spec(dataclasses.replace(lf, data=pruned))
    spec.source = lf
    for g, (gi, keep) in zip(spec.groups, where):  # written groups come first, SLO groups after
        g.path = ("groups", gi)
        for r, ri in zip(g.rules, keep):
            r.path = g.path + ("rules", ri)
            for ti, t in enumerate(r.tests):
                t.path = r.path + ("tests", ti)
    return spec
