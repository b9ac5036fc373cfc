"""Duplicates inside a spec and across specs. ``promtool check rules`` only warns about some
of these; here every one fails the run (``duplicate_alert_across_apps`` can be made a warning).

Codes:

* ``RG410`` the same group name twice in one spec. A spec is one PrometheusRule, and the
  Prometheus Operator (like Prometheus itself) refuses groups with the same name in one rule
  file. Bad: two groups named ``llama-swap``.
  Good: ``llama-swap`` and ``llama-swap-slow``.
* ``RG411`` the same rule twice in one spec: an alert (or recording rule) with the same name
  and the same labels (app, group and rule labels, severity and component) as an earlier one,
  whose series can collide with the earlier one's. That is promtool's ``duplicate-rules``
  lint (same name, same labels), narrowed to rules whose outputs can collide: two rules whose
  selectors pin a label that stays in the result to values no string satisfies on both sides
  write different series and are fine (kube-prometheus' four
  ``code_verb:apiserver_request_total:increase1h`` rules with ``code=~"2.."`` ... ``"5.."``
  under ``sum by (cluster, code, verb)``). Alerts with the same name but different labels
  (e.g. a ``warning`` and a ``critical`` threshold) are fine.
  Bad: two ``LlamaSwapDown`` alerts, both ``severity: critical``; good: one of them ``severity:
  warning``.
* ``RG412`` an alert name used by two apps. Routes, silences and runbook links are keyed by
  ``alertname``, so each app names its alerts apart. Error by default;
  ``duplicate_alert_across_apps: warning`` in ``.rulegen.yaml`` makes it a warning.
  Bad: ``alert: HighErrorRate`` in two apps; good: ``ShopHighErrorRate`` and ``CartHighErrorRate``.
* ``RG413`` two specs with the same ``app``: they would write the same chart and runbook page.
  Bad: ``app: shop`` in ``rules/shop.yaml`` and in ``rules/shop-extra.yaml``; good: ``app:
  shop-extra`` in the second.
* ``RG414`` two specs render into the same chart template file (``chart.path`` and
  ``chart.template``): the second would overwrite the first.
  Bad: two specs with ``chart: {path: charts/shop}``; good: ``chart: {path: charts/shop, template:
  extra.yaml}`` in the second.
* ``RG415`` two specs render PrometheusRules with the same name and namespace: applied
  together, one overwrites the other. Names and namespaces are compared as
  :func:`rulegen.render.helm.rule_identity` renders them: ``chart.name``/``chart.namespace``,
  else the chart's fullname helper (with ``-<template base name>`` for a template other than
  ``prometheusrule.yaml``) or the app, and the release namespace. A value that depends on
  the Helm release is only equal for specs of one chart; specs of two charts that both use
  the release namespace are not compared (their namespaces are known only at install).
  Bad: two specs with ``chart: {path: charts/tt, name: tt-rules}`` (templates
  ``prometheusrule.yaml`` and ``pr2.yaml``); good: drop ``chart.name`` from one of them (it
  is then named ``<release>-tt-pr2``) or give it another name.

RG412 and RG415 compare only apps one Prometheus loads: with ``prometheus_scopes`` in
``.rulegen.yaml`` (one scope per cluster or provider, see :mod:`rulegen.config`), the apps of
``capa`` and those of ``capz`` may share alert and PrometheusRule names (they are deployed to
different clusters), while two apps of one scope, or an app of no scope (loaded everywhere)
and any other, are compared as before. RG411 is not scoped: a spec is one PrometheusRule,
loaded whole by every Prometheus that loads it.
"""

from __future__ import annotations

from ...findings import Finding, Severity
from ...promql.labelflow import flow
from ...promql.matchers import matches

ID = "duplicates"


def check_spec(spec, ctx):
    """Yield RG410 and RG411 findings for ``spec``."""
    lf = spec.source
    seen_groups: dict[str, tuple] = {}
    for g in spec.groups:
        if g.name in seen_groups:
            first = lf.pos(seen_groups[g.name] + ("name",))
            yield lf.finding(g.path + ("name",), "RG410",
                             f"group name {g.name!r} is already used at line {first[0]}; a "
                             "PrometheusRule cannot hold two groups with the same name, so rename "
                             "or merge them", rule=g.name)
        else:
            seen_groups[g.name] = g.path
    seen_rules: dict[tuple, list] = {}
    rr = None
    for g, r in spec.rules():
        key = (r.kind, r.name, tuple(r.all_labels(spec.labels, g.labels).items()))
        earlier = seen_rules.setdefault(key, [])
        if earlier:
            if rr is None:
                from .flow import recording_rules
                rr = recording_rules([spec])
            pins = _pins(r.expr, rr)
            clash = next((other for other in earlier if not distinct(pins, _pins(other.expr, rr))), None)
            if clash is not None:
                first = lf.pos(clash.path + (r.kind,))
                if r.is_alert:
                    advice = "remove one or tell them apart with a label (e.g. severity)"
                else:
                    advice = ("they write the same series, so one overwrites the other; remove one, or "
                              "make them write different series (another name, a label in `labels:`, "
                              "or selectors pinning a label the result keeps to different values)")
                yield lf.finding(r.path + (r.kind,), "RG411",
                                 f"{'alert' if r.is_alert else 'recording rule'} {r.name!r} with the same "
                                 f"labels is already defined at line {first[0]}; {advice}", rule=r.name)
        earlier.append(r)


def _pins(expr, rr):
    f = flow(expr, rr)
    return f.pinned if f.known else {}


def distinct(a: dict, b: dict) -> bool:
    """True when two rules' results, whose labels are pinned by selector matchers as ``a`` and
    ``b`` say (:attr:`rulegen.promql.labelflow.Flow.pinned`: label -> (op, value) pairs),
    can never be the same series: some label kept in both is pinned to values no string
    satisfies on both sides (``code=~"2.."`` and ``code=~"5.."``)."""
    return any(_disjoint(a[k], b[k]) for k in a.keys() & b.keys())


def _disjoint(ma: tuple, mb: tuple) -> bool:
    for x, y in ((ma, mb), (mb, ma)):
        for op, v in x:
            if op == "=" and any(matches(o, w, v) is False for o, w in y):
                return True
    pa = _prefixes(ma)
    pb = _prefixes(mb)
    if pa is None or pb is None:
        return False
    return all(not (p.startswith(q) or q.startswith(p)) for p in pa for q in pb)


_META = set(".[](){}*+?|^$\\")


def _prefixes(ms: tuple) -> list[str] | None:
    """Literal prefixes that every value accepted by the ``=``/``=~`` matchers of ``ms`` starts
    with (one per top-level alternative of a regex), or None when they are not known."""
    for op, v in ms:
        if op == "=":
            return [v]
        if op != "=~":
            continue
        alts, depth, cur = [], 0, ""
        for c in v:
            if c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            if c == "|" and depth == 0:
                alts.append(cur)
                cur = ""
            else:
                cur += c
        alts.append(cur)
        out = []
        for alt in alts:
            pre = ""
            for i, c in enumerate(alt):
                if c in _META:
                    if c in "?*{" and pre:
                        pre = pre[:-1]
                    break
                pre += c
            if not pre:
                return None
            out.append(pre)
        return out
    return None


def check_project(specs, ctx):
    """Yield RG412-RG415 findings across ``specs`` (reported on the later spec, in file order);
    RG412 and RG415 only between apps that share a Prometheus
    (:meth:`rulegen.config.Config.share_prometheus`)."""
    from ...render.helm import rule_identity

    config = ctx.config
    apps: dict[str, object] = {}
    templates: dict[str, object] = {}
    rule_names: dict[tuple, list] = {}
    alerts: dict[str, list] = {}
    sev = Severity(config.duplicate_alert_across_apps)
    for spec in sorted(specs, key=lambda s: s.file):
        lf = spec.source
        if spec.app in apps:
            yield lf.finding(("app",), "RG413", f"app {spec.app!r} is also defined in "
                             f"{apps[spec.app].file}; each app has one spec, so merge the two "
                             "specs or give one another `app`")
        else:
            apps[spec.app] = spec
        tp = spec.chart.template_path
        if tp in templates and templates[tp].app != spec.app:
            path = ("chart", "path") if "path" in (lf.data.get("chart") or {}) else ("app",)
            yield lf.finding(path, "RG414", f"renders into {tp}, like {templates[tp].file}; give "
                             "one of them another chart.path or chart.template")
        else:
            templates.setdefault(tp, spec)
            ident = rule_identity(spec, ctx.root)
            earlier = rule_names.setdefault(ident, [])
            other = next((o for o in earlier if o.app != spec.app and config.share_prometheus(o.app, spec.app)), None)
            earlier.append(spec)
            if other is not None:
                chart = lf.data.get("chart") or {}
                path = next((("chart", k) for k in ("name", "template", "path") if k in chart), ("app",))
                yield lf.finding(path, "RG415", f"renders the PrometheusRule {ident[0]} in namespace "
                                 f"{ident[1]}, like {other.file}{_where(config, other.app, spec.app)}; applied "
                                 "together one would overwrite the other, so give one of them another chart.name "
                                 f"(or chart.namespace){_scope_hint(config)}")
        local: set[str] = set()
        for r in spec.alerts():
            if r.name in local:
                continue
            local.add(r.name)
            earlier = alerts.setdefault(r.name, [])
            other = next((o for o in earlier if o[0] != spec.app and config.share_prometheus(o[0], spec.app)), None)
            if other is not None:
                line, col = lf.pos(r.path + ("alert",))
                yield Finding(lf.path, line, col, "RG412", sev,
                              f"alert {r.name!r} is also defined by app {other[0]!r} "
                              f"({other[1]}){_where(config, other[0], spec.app)}; alert names are global in "
                              "Alertmanager routes, silences and runbook links, so prefix it with the app"
                              f"{_scope_hint(config)}", r.name)
            if not any(o[0] == spec.app for o in earlier):
                earlier.append((spec.app, spec.file))


def _where(config, a: str, b: str) -> str:
    """`` (both loaded by the Prometheus of scope capa)`` when scopes are set, else ``""``."""
    if not config.prometheus_scopes:
        return ""
    sa, sb = config.scopes_of(a), config.scopes_of(b)
    if sa is None and sb is None:
        return " (neither is in a prometheus_scopes scope, so every Prometheus loads both)"
    shared = sorted((sa or sb) & (sb or sa))
    return f" (both loaded by the Prometheus of scope {', '.join(shared)})"


def _scope_hint(config) -> str:
    """The way out when the two apps are deployed to different clusters."""
    return ("; if the two apps are loaded by different Prometheus servers (one per cluster or provider), "
            "list each one's apps under `prometheus_scopes` in .rulegen.yaml")
