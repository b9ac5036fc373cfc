"""Owners: who is paged for an alert (the spec's ``runbook.owner``, else the project's
defaults under ``owners:`` in ``.rulegen.yaml``; see :mod:`rulegen.spec.owners`).

Codes:

* ``RG515`` an alert of a severity listed in ``owners.require_for`` (``.rulegen.yaml``) has no
  owner: neither its ``runbook.owner``, nor the app's, nor a default of the project
  (``owners.apps.<app>``, ``owners.labels.<label>.<value>``) names a team, so whoever is paged
  cannot tell whose it is. Reported at the alert, naming it. Bad: a critical alert of app
  ``shop`` with ``require_for: [critical]`` and no owner anywhere; good: ``owners: {apps: {shop:
  {team: payments}}}`` or ``runbook: {owner: {team: payments}}``.
* ``RG516`` (warning) the alert's labels (app, group or rule ``labels:``) set the owner label
  (``owners.label``, e.g. ``team``) to another team than its owner (``runbook.owner.team`` or
  the project's default), so routing by the label pages one team and the page names another.
  The label as written is kept. Bad: ``labels: {team: search}`` with ``runbook: {owner: {team:
  payments}}``; good: both ``payments``, or no ``team`` label (rulegen adds it).
* ``RG518`` (warning) a ``commands`` block's ``examples`` names a value its commands do not
  hold, so the page marks the wrong text as an example (or a renamed value is no longer
  marked). Bad: ``examples: [servng]`` with ``inferencecache doctor -n serving``; good:
  ``examples: [serving]``.
* ``RG517`` (warning) ``owners.apps`` in ``.rulegen.yaml`` names an app no spec of the project
  has (a typo, or an app that was renamed), so its alerts get no default owner. Bad:
  ``apps: {noctya: ...}``; good: ``apps: {noctaya: ...}``.
"""

from __future__ import annotations

import difflib

from ...config import CONFIG_FILE
from ...findings import Finding, Severity
from ...spec.owners import resolve

ID = "owners"


def check_spec(spec, ctx):
    """Yield RG515 and RG516 for the alerts of ``spec``."""
    defaults = ctx.config.owners
    lf = spec.source
    for g, r in spec.rules():
        if not r.is_alert:
            continue
        res = resolve(spec, g, r, defaults)
        static = r.all_labels(spec.labels, g.labels)
        sev = static.get("severity")
        if res.owner is None and sev in defaults.require_for:
            yield lf.finding(r.path + ("alert",), "RG515",
                             f"{sev} alert {r.name} has no owner (owners.require_for in {CONFIG_FILE}): set "
                             f"runbook.owner on the alert or the app, or a default under owners.apps.{spec.app} "
                             f"in {CONFIG_FILE}", rule=r.name)
        label = defaults.label
        if label and res.owner is not None and label in static and static[label] != res.owner["team"]:
            yield lf.finding(r.path + ("alert",), "RG516",
                             f"alert {r.name} carries {label}={static[label]!r} but its owner is "
                             f"{res.owner['team']!r} ({'the spec' if res.source == 'spec' else res.source + ' in ' + CONFIG_FILE}); "
                             f"routing by {label} would page another team than the page names: make them agree",
                             rule=r.name, severity=Severity.WARNING)


def _blocks(node, path: tuple):
    """(path, block) of every runbook block with ``examples`` under ``node`` (the spec's data)."""
    if isinstance(node, dict):
        if "commands" in node and isinstance(node.get("examples"), list):
            yield path, node
        for k, v in node.items():
            yield from _blocks(v, path + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _blocks(v, path + (i,))


def check_file(lf, ctx):
    """Yield RG518 for example values a ``commands`` block does not hold."""
    for path, block in _blocks(lf.data, ()):
        text = block.get("commands")
        for i, value in enumerate(block["examples"]):
            if isinstance(value, str) and isinstance(text, str) and value not in text:
                yield lf.finding(path + ("examples", i), "RG518",
                                 f"example value {value!r} is not in the block's commands, so nothing is "
                                 "marked; name a value the commands hold", severity=Severity.WARNING)


def check_project(specs, ctx):
    """Yield RG517 for ``owners.apps`` entries no spec of the project has (the project's
    other specs, ``ctx.reference``, count when only some files are validated)."""
    apps = {s.app for s in list(specs) + list(getattr(ctx, "reference", None) or [])}
    if not apps:
        return
    for app in sorted(ctx.config.owners.apps):
        if app not in apps:
            near = difflib.get_close_matches(app, sorted(apps), n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]}?" if near else f"; apps: {', '.join(sorted(apps))}"
            yield Finding(CONFIG_FILE, 1, 1, "RG517", Severity.WARNING,
                          f"owners.apps.{app} names no app of the project, so it sets no owner{hint}")
