"""The chart's AlertmanagerConfig holding the inhibit rules its specs declare.

A spec whose alerts say ``inhibited_by:`` (:mod:`rulegen.routing.inhibit`) gets
``<chart>/templates/alertmanagerconfig-<app>.yaml``: a ``monitoring.coreos.com/v1alpha1``
``AlertmanagerConfig`` (Prometheus Operator) whose ``spec.inhibitRules`` mute each symptom
while its cause fires with equal ``equal`` labels. It renders only when every gate of the spec's
chart is true and ``<valuesKey>.inhibitRules.enabled`` is not false; ``<valuesKey>.inhibitRules
.labels`` label the resource (for the Alertmanager's ``alertmanagerConfigSelector``).

The Prometheus Operator adds ``namespace="<the resource's namespace>"`` to both sides of every
inhibit rule of an AlertmanagerConfig (its default ``alertmanagerConfigMatcherStrategy``
``OnNamespace``): the rules then apply to alerts carrying that ``namespace`` label only.
"""

from __future__ import annotations

import json

from ..routing import inhibit
from . import ownership
from .yamltext import helm_literal

#: The values knob (under ``<valuesKey>``, only in a chart with inhibit rules), its comment in
#: values.yaml and its schema.
KNOB = "inhibitRules"
KNOB_COMMENT = "The AlertmanagerConfig of the inhibit rules (inhibited_by): {enabled, labels}."
KNOB_SCHEMA = {"type": "object", "additionalProperties": False,
               "description": "The AlertmanagerConfig of the inhibit rules the specs declare (inhibited_by).",
               "properties": {"enabled": {"type": "boolean"},
                              "labels": {"type": "object", "additionalProperties": {"type": "string"}}}}


def template_path(spec) -> str:
    """``<chart>/templates/alertmanagerconfig-<app>.yaml``."""
    return f"{spec.chart.path}/templates/alertmanagerconfig-{spec.app}.yaml"


def has_rules(spec) -> bool:
    """True when ``spec`` declares an inhibit rule (so its chart gets the template and knob)."""
    return bool(inhibit.inhibit_rules(spec))


def render(spec) -> str | None:
    """The template text, or None when ``spec`` declares no
    inhibit rule. Names and labels are JSON strings (JSON is YAML) made Helm-literal
    (:func:`rulegen.render.yamltext.helm_literal`): an alert name may be any string Prometheus
    accepts, ``{{`` included, and Helm outputs it as text, never runs it."""
    rules = inhibit.inhibit_rules(spec)
    if not rules:
        return None
    q = json.dumps  # a string literal inside a Helm action (``{{`` there is text)

    def text(value) -> str:  # a JSON value in the template's text: Helm-literal
        return helm_literal(json.dumps(value))

    gates = " ".join(q(g) for g in spec.chart.gates)
    lines = [
        ownership.comment("helm", ownership.notice(spec.file)),
        "{{- /*",
        f"Inhibit rules of {spec.app} (inhibited_by: in its spec) as an AlertmanagerConfig of the Prometheus",
        "Operator. Renders when every gate of the chart is true and "
        f"{spec.chart.values_key}.{KNOB}.enabled is not false;",
        f"{spec.chart.values_key}.{KNOB}.labels label it (the Alertmanager's alertmanagerConfigSelector).",
        "The operator adds namespace=<this namespace> to both sides of each rule.",
        "*/}}",
        f"{{{{- $gates := include \"rulegen.v3.gates\" (list .Values (list {gates})) }}}}",
        f"{{{{- $m := dict }}}}{{{{ include \"rulegen.v3.maps\" (list $m .Values {q(spec.chart.values_key)}) }}}}",
        f"{{{{- $k := dict }}}}{{{{ include \"rulegen.v3.maps\" (list $k (get $m {q(spec.chart.values_key)}) "
        f"{q(KNOB)}) }}}}",
        f"{{{{- $inh := get $k {q(KNOB)} }}}}",
        "{{- $l := dict }}{{ include \"rulegen.v3.maps\" (list $l $inh \"labels\") }}",
        "{{- if and (eq $gates \"true\") (ne (toString (get $inh \"enabled\")) \"false\") }}",
        "apiVersion: monitoring.coreos.com/v1alpha1",
        "kind: AlertmanagerConfig",
        "metadata:",
        f"  name: {{{{ printf \"%s-%s\" .Release.Name {q(spec.app + '-inhibit-rules')} | trunc 63 | trimSuffix \"-\" "
        "| toJson }}",
        "  namespace: " + (text(spec.chart.namespace) if spec.chart.namespace else "{{ .Release.Namespace | toJson }}"),
        "  labels:",
        f"    app.kubernetes.io/name: {text(spec.app)}",
        "    app.kubernetes.io/managed-by: {{ .Release.Service | toJson }}",
        "    {{- range $name, $value := $l.labels }}",
        "    {{ $name | toJson }}: {{ $value | toString | toJson }}",
        "    {{- end }}",
        "spec:",
        "  inhibitRules:",
    ]
    for r in rules:
        lines.append(f"    - sourceMatch: {text(r['sourceMatch'])}")
        lines.append(f"      targetMatch: {text(r['targetMatch'])}")
        if r.get("equal"):
            lines.append(f"      equal: {text(r['equal'])}")
    lines.append("{{- end }}")
    return "\n".join(lines) + "\n"
