"""Routing and inhibitions: who each alert notifies, proven with Alertmanager's own code.

With ``alertmanager.config`` in ``.rulegen.yaml``, every alert's label set
(:mod:`rulegen.routing.labelsets`: rule labels, the chart's knob defaults, the labels its expr
pins) is routed through that configuration by Alertmanager's ``config`` and ``dispatch``
packages (``rulegen-amroute``); see docs/routing.md.

Codes:

* ``RG950`` the Alertmanager configuration cannot be used: Alertmanager refuses it (its own
  error, reported at the file), or it is missing, outside the project or not UTF-8. Bad: a
  route naming ``receiver: pager`` that ``receivers:`` does not define; good: define it.
* ``RG951`` ``routes_to`` names a receiver the configuration does not define (with "did you
  mean"). Bad: ``routes_to: [team-noctaya-pagr]``; good: ``routes_to: [team-noctaya-pager]``.
* ``RG952`` ``routes_to`` differs from the receivers Alertmanager routes the alert to (the
  message names both). Bad: ``routes_to: [pager]`` for an alert whose labels fall through to
  ``default``; good: the route the configuration gives it, or a route for its labels.
* ``RG953`` an alert of a paging severity (``alertmanager.paging_severities``, default
  ``[critical]``) reaches only the root route's default receiver or receivers that notify
  nobody (no notifier configured, or listed in ``alertmanager.null_receivers``): it pages no
  one. Bad: ``severity: critical`` and no route matching it; good: a route sending it to a
  pager receiver.
* ``RG954`` routing could not be checked: ``rulegen-amroute`` (built by
  ``scripts/install-tools.sh``) is missing or failed. Bad: ``alertmanager.config`` set on a
  machine without the pinned tools; good: run ``scripts/install-tools.sh`` first.
* ``RG955`` (warning) ``alertmanager.null_receivers`` in ``.rulegen.yaml`` names a receiver
  the configuration does not define (with "did you mean"): a receiver meant to count as
  paging nobody does not, so RG953 stays quiet about alerts it swallows. Bad:
  ``null_receivers: [blackhol]``; good: ``null_receivers: [blackhole]``.
* ``RG960`` ``inhibited_by.alert`` names no alert of any spec (with "did you mean"). Bad:
  ``inhibited_by: {alert: LlamaSwapDwn}``; good: ``{alert: LlamaSwapDown}``.
* ``RG961`` an ``inhibited_by.equal`` label that the cause or the symptom can never carry
  (label flow: the expr drops it and no rule label sets it): Alertmanager compares it as
  empty on that side, so the inhibition mutes the symptom for every cause, or never. Also
  ``alertname``, which always differs between two alerts. Bad: ``equal: [instance]`` with a
  cause of ``sum by (namespace) (...)``; good: ``equal: [namespace]``.
* ``RG962`` an alert names itself in ``inhibited_by``. Bad: ``LlamaSwapDown`` inhibited by
  ``LlamaSwapDown``; good: name the cause.
"""

from __future__ import annotations

from ...findings import Finding, RulegenError, Severity
from ...hints import did_you_mean
from ...promql import labelflow
from ...routing import inhibit

ID = "routing"


def check_project(specs, ctx):
    """Yield RG950-RG955 (when ``alertmanager.config`` is set) and RG960-RG962."""
    reference = list(getattr(ctx, "reference", None) or [])
    yield from _inhibitions(specs, reference)
    config = ctx.config
    if not config.alertmanager_config or getattr(ctx, "at_ref", False):
        # a Git ref's specs are not routed through the working tree's configuration: `rulegen
        # diff` routes each side through its own (rulegen.gitops.routing_diff)
        return
    # imported here: only a project that names its Alertmanager configuration is routed
    from ...routing.project import ConfigProblem, route_project
    try:
        routing = route_project(specs, ctx.root, config, reference)
    except ConfigProblem as e:
        yield Finding(e.path, 1, 1, "RG950", Severity.ERROR,
                      f"{e.message}; rulegen routes every alert through this file, so fix it (or "
                      "alertmanager.config in .rulegen.yaml)")
        return
    except RulegenError as e:
        yield Finding(config.alertmanager_config, 1, 1, "RG954", Severity.ERROR,
                      f"routing not checked: {e}")
        return
    yield from _routes(specs, routing, config)
    for name in config.null_receivers:
        if name not in routing.receivers:
            yield Finding(".rulegen.yaml", 1, 1, "RG955", Severity.WARNING,
                          f"alertmanager.null_receivers names {name!r}, which {routing.config} does not define"
                          f"{did_you_mean(name, sorted(routing.receivers))}; alerts routed to a receiver "
                          "that pages nobody are then not reported (RG953)")


def _routes(specs, routing, config):
    by_key = {(a.file, a.path): a for a in routing.alerts}
    defined = sorted(routing.receivers)
    for spec in specs:
        lf = spec.source
        for _, r in spec.rules():
            a = by_key.get((spec.file, r.path))
            if a is None:
                continue
            wanted = list(r.routes_to)
            unknown = [x for x in wanted if x not in routing.receivers]
            for x in unknown:
                yield lf.finding(r.path + ("routes_to", wanted.index(x)), "RG951",
                                 f"routes_to names receiver {x!r}, which {routing.config} does not define"
                                 f"{did_you_mean(x, defined) or f' (receivers: {_names(defined)})'}", r.name)
            if wanted and not unknown and list(a.receivers) != wanted:
                yield lf.finding(r.path + ("routes_to",), "RG952",
                                 f"routes_to says {_names(wanted)}, but Alertmanager routes {r.name} "
                                 f"({_labels(a.labels)}) to {_names(a.receivers)} with {routing.config}; "
                                 "fix the route or routes_to", r.name)
            if a.severity in config.paging_severities and not routing.pages(a, config.paging_severities):
                why = "the default receiver" if a.receivers == (routing.default,) else "receivers that notify nobody"
                yield lf.finding(r.path, "RG953",
                                 f"severity {a.severity} pages, but Alertmanager routes {r.name} "
                                 f"({_labels(a.labels)}) only to {_names(a.receivers)} ({why}) with "
                                 f"{routing.config}: nobody is paged; add a route for it", r.name)


def _names(names) -> str:
    return ", ".join(names) if names else "nothing"


def _labels(labels: dict) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items())) + "}"


def _inhibitions(specs, reference):
    everyone = list(specs) + reference
    alerts: dict = {}
    for spec in everyone:
        for g, r in spec.rules():
            if r.is_alert:
                alerts.setdefault(r.name, []).append((spec, g, r))
    flows = None
    for d in inhibit.declarations(specs):
        lf = d.spec.source
        if d.cause == d.symptom:
            yield lf.finding(d.path + ("alert",), "RG962", f"{d.symptom} names itself as its cause in "
                             "inhibited_by; name the alert that causes it", d.symptom)
            continue
        if d.cause not in alerts:
            yield lf.finding(d.path + ("alert",), "RG960", f"inhibited_by names alert {d.cause!r}, which "
                             f"no spec defines{did_you_mean(d.cause, alerts)}", d.symptom)
            continue
        if flows is None:
            from ...routing.project import recording_rules
            flows = labelflow.Analyzer(recording_rules(everyone))
        for i, label in enumerate(d.equal):
            why = _cannot_carry(label, [(d.spec, g, d.rule) for g, r in d.spec.rules() if r is d.rule], flows) \
                if label != "alertname" else "alertname always differs between two alerts"
            side = "the symptom " + d.symptom
            if why is None and label != "alertname":
                why, side = _cannot_carry(label, alerts[d.cause], flows), "the cause " + d.cause
            if why is not None:
                yield lf.finding(d.path + ("equal", i), "RG961",
                                 f"inhibited_by.equal names {label!r}, which {side} never carries ({why}): "
                                 "Alertmanager compares it as empty there, so the inhibition mutes every "
                                 f"{d.symptom} while any {d.cause} fires, or none; use a label both carry",
                                 d.symptom)


def _cannot_carry(label: str, rules, flows) -> str | None:
    """Why none of ``rules`` ((spec, group, rule) of one alert name) ever carries ``label``, or
    None when one may (a rule label, or the expr keeps it or may)."""
    reasons = []
    for spec, g, r in rules:
        if label in r.all_labels(spec.labels, g.labels):
            return None
        fl = flows.flow(r.expr)
        if fl.carries(label) is not False:
            return None
        reasons.append(fl.why_not(label) or "its expr drops it")
    return reasons[0] if reasons else None
