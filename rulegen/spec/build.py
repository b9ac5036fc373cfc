"""Building the spec model (:mod:`rulegen.spec.model`) from schema-valid spec data.

Rule groups as written, then one group per SLO (:mod:`rulegen.spec.slo`), after them. Building
generates no test: an SLO's tests are made by the stage that runs them
(:func:`rulegen.spec.slo.with_tests`).
"""

from __future__ import annotations

from .loader import LoadedFile
from .model import (DEFAULT_GATES, DEFAULT_TEMPLATE, DEFAULT_VALUES_KEY, Chart, Group, Inhibition, Param, Rule, Spec, Test,
                    param_text, substitute)


def _component(value) -> str | None:
    """The ``component`` label value of an alert: ``false`` (or an empty string) means none."""
    return value if isinstance(value, str) and value else None


def _params(data: dict) -> dict:
    """The ``params:`` of an alert (schema-valid) as :class:`Param` objects by name."""
    out = {}
    for name, v in data.items():
        desc = ""
        if isinstance(v, dict):
            desc, v = v.get("description") or "", v["default"]
        out[name] = Param(name, param_text(v), "duration" if isinstance(v, str) else "number", desc)
    return out


def _inhibitions(value, path: tuple) -> tuple:
    """The ``inhibited_by:`` of an alert (schema-valid: one entry or a list) as :class:`Inhibition`."""
    if value is None:
        return ()
    if isinstance(value, dict):
        return (Inhibition(value["alert"], tuple(value.get("equal") or ()), path),)
    return tuple(Inhibition(v["alert"], tuple(v.get("equal") or ()), path + (i,)) for i, v in enumerate(value))


def build_spec(lf: LoadedFile) -> Spec:
    """Turn schema-valid data into a :class:`Spec`. The data must have passed the schema."""
    d = lf.data
    app = d["app"]
    c = d.get("chart") or {}
    chart = Chart(
        path=c.get("path", f"charts/{app}").rstrip("/"),
        template=c.get("template", DEFAULT_TEMPLATE),
        name=c.get("name"),
        namespace=c.get("namespace"),
        gates=tuple(c.get("gates", DEFAULT_GATES)),
        values_key=c.get("values_key", DEFAULT_VALUES_KEY),
        runbook_url=c.get("runbook_url", True),
    )
    # ``component``: a string names the label; ``false`` (spec- or alert-level) means no
    # component label, which ``rulegen import`` writes so rendered rules equal the originals.
    default_component = d.get("component", app)
    groups = []
    for gi, g in enumerate(d.get("groups") or []):
        gp = ("groups", gi)
        rules = []
        for ri, r in enumerate(g["rules"]):
            rp = gp + ("rules", ri)
            kind = "alert" if "alert" in r else "record"
            annotations = {}
            if kind == "alert":
                for k in ("summary", "description"):
                    if k in r:
                        annotations[k] = r[k]
                annotations.update(r.get("annotations") or {})
            params = _params(r.get("params") or {}) if kind == "alert" else {}
            rules.append(Rule(
                kind=kind,
                name=r[kind],
                expr=substitute(r["expr"], {p.name: p.default for p in params.values()}) if params else r["expr"],
                expr_template=r["expr"] if params else None,
                params=params,
                path=rp,
                for_=r.get("for"),
                keep_firing_for=r.get("keep_firing_for"),
                severity=r.get("severity"),
                component=_component(r.get("component", default_component)) if kind == "alert" else None,
                labels=dict(r.get("labels") or {}),
                annotations=annotations,
                runbook=r.get("runbook") or {},
                tests=[Test(t["name"], t, rp + ("tests", ti)) for ti, t in enumerate(r.get("tests") or [])],
                equivalent_mutants={e["mutant"]: e["reason"] for e in r.get("equivalent_mutants") or []},
                routes_to=tuple(r.get("routes_to") or ()),
                inhibited_by=_inhibitions(r.get("inhibited_by"), rp + ("inhibited_by",)),
            ))
        groups.append(Group(name=g["name"], path=gp, rules=rules, interval=g.get("interval"),
                            query_offset=g.get("query_offset"), limit=g.get("limit"),
                            labels=dict(g.get("labels") or {})))
    # SLOs expand into ordinary rule groups after the written ones (rulegen.spec.slo); one
    # that fails its checks is left out (validation reports it and fails the run). Their
    # tests are not generated here: the test stage asks for them (slo.with_tests)
    slos = []
    if d.get("slos"):
        from . import slo  # (a spec without SLOs never imports the SLO package)
    for si, entry in enumerate(d.get("slos") or []):
        s = slo.read(app, si, entry)
        if s is None:
            continue
        group = slo.expand(s, dict(d.get("labels") or {}), _component(default_component))
        group.slo = s.name
        groups.append(group)
        slos.append(s)
    return Spec(app=app, title=d.get("title", app), chart=chart, groups=groups,
                labels=dict(d.get("labels") or {}), runbook=d.get("runbook") or {}, source=lf,
                promtool=dict(d.get("promtool") or {}), slos=slos)
