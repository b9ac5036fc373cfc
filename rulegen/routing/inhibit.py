"""Inhibitions as code: the specs' ``inhibited_by:`` declarations.

An alert (the symptom) may say it is a symptom of another alert (the cause)::

    - alert: LlamaSwapNoMetrics
      inhibited_by: {alert: LlamaSwapDown, equal: [namespace]}

Alertmanager then mutes the symptom while the cause fires with the same values of the
``equal`` labels (an inhibit rule: source = the cause, target = the symptom). rulegen renders
these rules into the symptom's chart as an AlertmanagerConfig
(:mod:`rulegen.render.inhibit_chart`); the pages and the alert index show cause -> symptoms
from these declarations only.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Declared:
    """One ``inhibited_by:`` entry: ``symptom`` alert (of ``spec``, rule ``rule``) is muted while
    ``cause`` fires with equal values of the labels ``equal``."""

    spec: object
    rule: object
    cause: str
    equal: tuple
    path: tuple

    @property
    def symptom(self) -> str:
        return self.rule.name


def declarations(specs) -> list[Declared]:
    """Every ``inhibited_by:`` entry of ``specs``, in spec order (each once per alert name)."""
    out, seen = [], set()
    for spec in specs:
        for _, r in spec.rules():
            for inh in r.inhibited_by if r.is_alert else ():
                key = (spec.app, r.name, inh.cause, inh.equal)
                if key not in seen:
                    seen.add(key)
                    out.append(Declared(spec, r, inh.cause, inh.equal, inh.path))
    return out


def causes_and_symptoms(specs) -> tuple[dict, dict]:
    """``(symptoms, causes)``: cause name -> its symptoms' names, and symptom name -> its
    causes' names, each sorted, from the declarations of ``specs``."""
    symptoms: dict = {}
    causes: dict = {}
    for d in declarations(specs):
        if d.cause == d.symptom:
            continue
        symptoms.setdefault(d.cause, set()).add(d.symptom)
        causes.setdefault(d.symptom, set()).add(d.cause)
    return ({k: sorted(v) for k, v in symptoms.items()}, {k: sorted(v) for k, v in causes.items()})


def inhibit_rules(spec) -> list[dict]:
    """The inhibit rules of ``spec``'s symptoms, in AlertmanagerConfig form
    (``monitoring.coreos.com/v1alpha1``: ``sourceMatch``/``targetMatch`` lists of
    ``{name, value, matchType}``, ``equal``), in spec order; a self-inhibition is left out."""
    out = []
    for d in declarations([spec]):
        if d.cause == d.symptom:
            continue
        rule = {"sourceMatch": [{"name": "alertname", "value": d.cause, "matchType": "="}],
                "targetMatch": [{"name": "alertname", "value": d.symptom, "matchType": "="}]}
        if d.equal:
            rule["equal"] = list(d.equal)
        if rule not in out:
            out.append(rule)
    return out
