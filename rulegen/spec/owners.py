"""Who owns an alert: the spec's ``runbook.owner``/``escalation``, else the project's defaults.

The defaults are ``owners:`` of ``.rulegen.yaml`` (:class:`OwnerDefaults`, parsed by
:mod:`rulegen.config`)::

    owners:
      label: team               # every alert carries its owner's team as this label
      require_for: [critical]   # RG515: an alert of these severities must resolve to an owner
      apps:                     # per app (the spec's ``app``)
        noctaya: {team: serving, chat: "#serving", paging: serving-oncall, escalation: "..."}
      labels:                   # per label value: every ``team=ml`` alert belongs to ml
        team:
          ml: {chat: "#ml"}     # ``team`` defaults to the value (ml)

An alert's owner is the first of: the alert's ``runbook.owner``, the app's ``runbook.owner``
(the spec's own, :func:`rulegen.spec.triage.effective`), the ``labels`` entry of a label the
alert carries as a rule label (app, group or rule labels; label names in the order the
config lists them), the ``apps`` entry of its app. ``escalation`` is resolved the same way,
on its own (a spec may name its owner and leave the escalation to the project). Which one won
is kept (:attr:`Resolved.source`), so the page can say where the owner comes from.

:func:`add_owner_label` puts the owner's team into the alert's labels when ``label`` is set
(before the checks run, so every check, the chart and the generated tests see the label the
PrometheusRule carries).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .triage import effective

#: The keys of one default entry.
ENTRY_KEYS = ("team", "chat", "paging", "escalation")


@dataclass(frozen=True)
class OwnerDefaults:
    """``owners:`` of ``.rulegen.yaml``.

    Attributes:
        label: the alert label that carries the owner's team (``team``), or None: no label.
        require_for: severities whose alerts must resolve to an owner (RG515).
        apps: app -> entry (``team`` required, ``chat``, ``paging``, ``escalation`` optional).
        labels: label name -> label value -> entry (``team`` defaults to the value), in the
            order the config lists them.
    """

    label: str | None = None
    require_for: tuple = ()
    apps: dict = field(default_factory=dict)
    labels: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Resolved:
    """An alert's owner and escalation after the defaults.

    Attributes:
        owner: ``{team, chat?, paging?}`` or None when neither spec nor config names one.
        escalation: Markdown text or None.
        source: where ``owner`` comes from: ``spec``, ``label <name>=<value>``, ``app <app>``
            (the last two: ``.rulegen.yaml``), or ``""`` when there is none.
        escalation_source: the same for ``escalation``.
    """

    owner: dict | None
    escalation: str | None
    source: str = ""
    escalation_source: str = ""


def _entries(spec, static: dict, defaults: OwnerDefaults):
    """(source, entry) of the config entries that apply to an alert with rule labels
    ``static`` of ``spec``, most specific first."""
    for label, by_value in defaults.labels.items():
        value = static.get(label)
        if isinstance(value, str) and value in by_value:
            yield f"label {label}={value}", {"team": value, **by_value[value]}
    if spec.app in defaults.apps:
        yield f"app {spec.app}", defaults.apps[spec.app]


def resolve(spec, group, rule, defaults: OwnerDefaults | None) -> Resolved:
    """The owner and escalation of alert ``rule`` (in ``group`` of ``spec``); see the module
    docstring for the order. ``defaults`` None: the spec's only."""
    tf = effective(spec, rule)
    owner, esc = tf.get("owner"), tf.get("escalation")
    src = "spec" if owner else ""
    esc_src = "spec" if esc else ""
    if defaults is not None and (owner is None or esc is None):
        static = rule.all_labels(spec.labels, group.labels)
        for where, entry in _entries(spec, static, defaults):
            if owner is None and entry.get("team"):
                owner = {k: entry[k] for k in ("team", "chat", "paging") if entry.get(k)}
                src = where
            if esc is None and entry.get("escalation"):
                esc, esc_src = entry["escalation"], where
    return Resolved(owner, esc, src, esc_src)


def add_owner_label(spec, defaults: OwnerDefaults | None) -> list[tuple]:
    """Give every alert of ``spec`` the label ``defaults.label`` set to its owner's team,
    unless its app, group or rule labels already set it (changes the rules in place).

    Returns (group, rule, value set by the spec, owner's team) for every alert whose spec
    sets the label to another value than its owner's team (RG516)."""
    if defaults is None or not defaults.label:
        return []
    name = defaults.label
    out = []
    for g, r in spec.rules():
        if not r.is_alert:
            continue
        owner = resolve(spec, g, r, defaults).owner
        static = r.all_labels(spec.labels, g.labels)
        if owner is None:
            continue
        if name in static:
            if static[name] != owner["team"]:
                out.append((g, r, static[name], owner["team"]))
            continue
        r.labels[name] = owner["team"]
    return out
