"""Duplicates inside a spec and across specs. ``promtool check rules`` only warns about some
of these; here every one fails the run (``duplicate_alert_across_apps`` can be made a warning).

Codes:

* ``RG410`` the same group name twice in one spec. A spec is one PrometheusRule, and the
  Prometheus Operator (like Prometheus itself) refuses groups with the same name in one rule
  file. Bad: two groups named ``llama-swap``.
* ``RG411`` the same rule twice in one spec: an alert (or recording rule) with the same name
  and the same labels (app, group and rule labels, severity and component) as an earlier one.
  Both would produce the same series, so one silently overwrites the other. Alerts with the
  same name but different labels (e.g. a ``warning`` and a ``critical`` threshold) are fine.
* ``RG412`` an alert name used by two apps. Routes, silences and runbook links are keyed by
  ``alertname``, so each app names its alerts apart. Error by default;
  ``duplicate_alert_across_apps: warning`` in ``.rulegen.yaml`` makes it a warning.
* ``RG413`` two specs with the same ``app``: they would write the same chart and runbook page.
* ``RG414`` two specs render into the same chart template file (``chart.path`` and
  ``chart.template``): the second would overwrite the first.
"""

from __future__ import annotations

from ...findings import Finding, Severity

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
    seen_rules: dict[tuple, tuple] = {}
    for g, r in spec.rules():
        key = (r.kind, r.name, tuple(r.all_labels(spec.labels, g.labels).items()))
        if key in seen_rules:
            first = lf.pos(seen_rules[key] + (r.kind,))
            yield lf.finding(r.path + (r.kind,), "RG411",
                             f"{'alert' if r.is_alert else 'recording rule'} {r.name!r} with the same "
                             f"labels is already defined at line {first[0]}; remove one or tell "
                             "them apart with a label (e.g. severity)", rule=r.name)
        else:
            seen_rules[key] = r.path


def check_project(specs, ctx):
    """Yield RG412-RG414 findings across ``specs`` (reported on the later spec, in file order)."""
    apps: dict[str, object] = {}
    templates: dict[str, object] = {}
    alerts: dict[str, tuple] = {}
    sev = Severity(ctx.config.duplicate_alert_across_apps)
    for spec in sorted(specs, key=lambda s: s.file):
        lf = spec.source
        if spec.app in apps:
            yield lf.finding(("app",), "RG413", f"app {spec.app!r} is also defined in "
                             f"{apps[spec.app].file}; each app has one spec")
        else:
            apps[spec.app] = spec
        tp = spec.chart.template_path
        if tp in templates and templates[tp].app != spec.app:
            path = ("chart", "path") if "path" in (lf.data.get("chart") or {}) else ("app",)
            yield lf.finding(path, "RG414", f"renders into {tp}, like {templates[tp].file}; give "
                             "one of them another chart.path or chart.template")
        else:
            templates.setdefault(tp, spec)
        local: set[str] = set()
        for r in spec.alerts():
            if r.name in local:
                continue
            local.add(r.name)
            other = alerts.get(r.name)
            if other is not None and other[0] != spec.app:
                line, col = lf.pos(r.path + ("alert",))
                yield Finding(lf.path, line, col, "RG412", sev,
                              f"alert {r.name!r} is also defined by app {other[0]!r} "
                              f"({other[1]}); alert names are global in Alertmanager routes, "
                              "silences and runbook links, so prefix it with the app", r.name)
            else:
                alerts.setdefault(r.name, (spec.app, spec.file))
