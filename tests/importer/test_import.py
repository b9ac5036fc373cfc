"""``rulegen import``: exact specs from a PrometheusRule manifest, a Helm-templated
PrometheusRule and a commented rule file; notes; the round trip through the real helm."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.importer import import_paths, schema_ref, write_specs
from rulegen.importer.compare import compare_groups
from rulegen.importer.helmeval import literal_value
from rulegen.importer.helmtext import looks_like_helm, read_template
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml
from helpers.helm import write_outputs

MANIFEST = """\
# Rules for the payments service.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: payments
  namespace: shop
  labels:
    release: kube-prometheus-stack
spec:
  groups:
    - name: payments.rules
      interval: 1m
      limit: 10
      rules:
        - record: job:payments_errors:rate5m
          expr: sum by (job) (rate(payments_errors_total[5m]))
        # Fires when the error rate stays high.
        - alert: PaymentsErrorRateHigh
          expr: job:payments_errors:rate5m > 0.1
          for: 10m  # matches the SLO window
          keep_firing_for: 5m
          labels:
            severity: critical
            priority: 5
            team: "off"
          annotations:
            summary: "Payments errors high on {{ $labels.job }}"
            description: |
              Error rate is {{ $value }}.
              Check the payment gateway.
            runbook_url: https://wiki.example.com/payments
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: other
"""

MANIFEST_SPEC = """\
# yaml-language-server: $schema={ref}
# Imported by `rulegen import` from manifest.yaml.
# Rules for the payments service.
app: payments
component: false
chart:
  name: payments
  namespace: shop
  runbook_url: false
groups:
  - name: payments.rules
    interval: 1m
    limit: 10
    rules:
      - record: job:payments_errors:rate5m
        expr: sum by (job) (rate(payments_errors_total[5m]))
      # Fires when the error rate stays high.
      - alert: PaymentsErrorRateHigh
        expr: job:payments_errors:rate5m > 0.1
        for: 10m  # matches the SLO window
        keep_firing_for: 5m
        severity: critical
        labels:
          priority: "5"
          team: "off"
        summary: "Payments errors high on {{{{ $labels.job }}}}"
        description: |
          Error rate is {{{{ $value }}}}.
          Check the payment gateway.
        annotations:
          runbook_url: https://wiki.example.com/payments
"""

HELM_TEMPLATE = """\
{{- if .Values.prometheusRule.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ include "checkout.fullname" . }}
  labels:
    {{- include "checkout.labels" . | nindent 4 }}
spec:
  groups:
    - name: checkout
      rules:
        {{- /* one alert per rule; more to come */}}
        - alert: CheckoutDown
          expr: up{job="checkout"} == 0
          for: 5m
          labels:
            severity: warning
            component: api
          annotations:
            summary: "Checkout down on {{`{{`}} $labels.instance }}"
            description: '{{ "{{" }} $labels.job }} down for {{ print "{{" }} $value }}s.'
{{- end }}
"""

HELM_SPEC = """\
# yaml-language-server: $schema={ref}
# Imported by `rulegen import` from mychart/templates/prometheusrule.yaml.
app: checkout
chart:
  runbook_url: false
groups:
  - name: checkout
    rules:
      - alert: CheckoutDown
        expr: up{{job="checkout"}} == 0
        for: 5m
        severity: warning
        component: api
        summary: "Checkout down on {{{{ $labels.instance }}}}"
        description: '{{{{ $labels.job }}}} down for {{{{ $value }}}}s.'
"""

PLAIN = """\
# Team: storage.
groups:
  # Node-level alerts.
  - name: node
    rules:
      # Disk fills within a day at the current rate.
      - alert: NodeDiskFillingUp
        expr: predict_linear(node_filesystem_avail_bytes[6h], 24 * 3600) < 0
        for: 1h
        labels:
          severity: warning  # paging would be too noisy
        annotations:
          summary: Disk on {{ $labels.instance }} fills within 24h
      - record: instance:node_cpu:ratio
        # mean over all CPUs
        expr: avg by (instance) (rate(node_cpu_seconds_total{mode!="idle"}[5m]))
"""

PLAIN_SPEC = """\
# yaml-language-server: $schema={ref}
# Imported by `rulegen import` from plain.rules.yml.
# Team: storage.
app: plain-rules
component: false
chart:
  runbook_url: false
groups:
  # Node-level alerts.
  - name: node
    rules:
      # Disk fills within a day at the current rate.
      - alert: NodeDiskFillingUp
        expr: predict_linear(node_filesystem_avail_bytes[6h], 24 * 3600) < 0
        for: 1h
        severity: warning  # paging would be too noisy
        summary: Disk on {{{{ $labels.instance }}}} fills within 24h
      - record: instance:node_cpu:ratio
        # mean over all CPUs
        expr: avg by (instance) (rate(node_cpu_seconds_total{{mode!="idle"}}[5m]))
"""



def _tree(tmp_path: Path) -> Path:
    (tmp_path / "manifest.yaml").write_text(MANIFEST, encoding="utf-8")
    (tmp_path / "plain.rules.yml").write_text(PLAIN, encoding="utf-8")
    chart = tmp_path / "mychart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: checkout\nversion: 1.0.0\n", encoding="utf-8")
    (chart / "values.yaml").write_text("prometheusRule:\n  enabled: true\n", encoding="utf-8")
    (chart / "templates" / "prometheusrule.yaml").write_text(HELM_TEMPLATE, encoding="utf-8")
    return tmp_path


def _notes(result):
    return [(n.file, n.line, n.code, n.severity.value, n.rule) for n in result.notes]


def test_prometheusrule_manifest_exact_spec(tmp_path):
    root = _tree(tmp_path)
    out = root / "rules"
    res = import_paths([root / "manifest.yaml"], out_dir=out, display_base=root)
    assert [s.app for s in res.specs] == ["payments"]
    assert res.specs[0].text == MANIFEST_SPEC.format(ref=schema_ref(out, out.parent))
    assert (res.specs[0].alerts, res.specs[0].records) == (1, 1)
    assert _notes(res) == [
        ("manifest.yaml", 24, "RG804", "warning", "PaymentsErrorRateHigh"),  # priority: 5 -> "5"
        ("manifest.yaml", 33, "RG805", "warning", ""),                      # the ConfigMap
    ]
    # metadata.labels (a ruleSelector's `release:`) are chart settings now, not a note
    assert res.specs[0].chart_labels == {"release": "kube-prometheus-stack"}
    assert "imported as the string '5'" in res.notes[0].message
    assert res.ok


def test_helm_template_exact_spec(tmp_path):
    root = _tree(tmp_path)
    out = root / "rules"
    res = import_paths([root / "mychart"], out_dir=out, display_base=root)
    assert [s.app for s in res.specs] == ["checkout"]   # the chart's name: metadata.name is computed
    assert res.specs[0].text == HELM_SPEC.format(ref=schema_ref(out, out.parent))
    src = "mychart/templates/prometheusrule.yaml"
    assert _notes(res) == [
        # (no RG803: the if-wrapper is true with the chart's values.yaml, prometheusRule.enabled)
        (src, 5, "RG802", "warning", ""),   # name from include: the chart's default is used
        (src, 7, "RG802", "warning", ""),   # labels from include: not readable, metadata only
    ]
    assert res.ok


def test_plain_rule_file_keeps_comments_exact_spec(tmp_path):
    root = _tree(tmp_path)
    out = root / "rules"
    res = import_paths([root / "plain.rules.yml"], out_dir=out, display_base=root)
    assert res.specs[0].text == PLAIN_SPEC.format(ref=schema_ref(out, out.parent))
    assert res.notes == []


def test_cli_writes_refuses_overwrite_and_forces(tmp_path, capsys):
    root = _tree(tmp_path)
    assert main(["-C", str(root), "import", "plain.rules.yml", "manifest.yaml"]) == 0
    assert sorted(p.name for p in (root / "rules").iterdir()) == ["payments.yaml", "plain-rules.yaml"]
    assert main(["-C", str(root), "validate", "rules"]) in (0, 1)  # conventions may flag; schema must pass
    err = capsys.readouterr()
    assert "RG2" not in err.out and "RG1" not in err.out
    (root / "rules" / "plain-rules.yaml").write_text("# mine\n", encoding="utf-8")
    assert main(["-C", str(root), "import", "plain.rules.yml"]) == 1
    assert "RG809" in capsys.readouterr().err
    assert (root / "rules" / "plain-rules.yaml").read_text(encoding="utf-8") == "# mine\n"
    assert main(["-C", str(root), "import", "plain.rules.yml", "--force"]) == 0
    assert (root / "rules" / "plain-rules.yaml").read_text(encoding="utf-8").startswith("# yaml-language-server")
    assert main(["-C", str(root), "import", "missing.yaml"]) == 2


def test_app_option_merges_and_renames_duplicate_groups(tmp_path):
    root = _tree(tmp_path)
    (root / "again.yml").write_text(PLAIN, encoding="utf-8")
    res = import_paths([root / "plain.rules.yml", root / "again.yml"], app="storage", out_dir=root / "rules",
                       display_base=root)
    assert [s.app for s in res.specs] == ["storage"]
    data = yaml.safe_load(res.specs[0].text)
    assert [g["name"] for g in data["groups"]] == ["node", "node-2"]
    assert [(n.file, n.line, n.code) for n in res.notes] == [("again.yml", 4, "RG808")]


def test_same_file_name_in_two_folders_gets_folder_prefix(tmp_path):
    for d in ("redis", "mysql"):
        (tmp_path / d).mkdir()
        (tmp_path / d / "exporter.yml").write_text(PLAIN, encoding="utf-8")
    res = import_paths([tmp_path], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert sorted(s.app for s in res.specs) == ["mysql-exporter", "redis-exporter"]


def test_what_has_no_place_is_reported(tmp_path):
    src = tmp_path / "odd.yaml"
    src.write_text(textwrap.dedent("""\
        groups:
          - name: g
            partial_response_strategy: warn
            rules:
              - record: a:b:c
                expr: up
                for: 0s
              - alert: NoExpr
              - alert: BadFor
                expr: up == 0
                for: 1.5m
              - alert: BadLabel
                expr: up == 0
                labels:
                  bad-name: x
              - alert: Good
                expr: up == 0
                labels:
                  enabled: true
          - name: empty
            rules: []
        """), encoding="utf-8")
    res = import_paths([src], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [(n.line, n.code, n.severity.value, n.rule) for n in res.notes] == [
        (3, "RG805", "warning", "g"),         # partial_response_strategy (Thanos)
        (7, "RG805", "warning", "a:b:c"),     # for: 0s on a recording rule: no effect, not imported
        (8, "RG806", "error", "NoExpr"),      # no expr: skipped
        (11, "RG806", "error", "BadFor"),     # 1.5m: the whole rule skipped
        (15, "RG806", "error", "BadLabel"),   # bad-name: the whole rule skipped
        (19, "RG804", "warning", "Good"),     # true -> "true"
        (21, "RG805", "warning", "empty"),    # empty group
    ]
    assert res.notes[3].message == ("alert `BadFor` skipped: `for` '1.5m' is not a Prometheus duration "
                                    "(Prometheus rejects it too)")
    data = yaml.safe_load(res.specs[0].text)
    assert data["groups"][0]["rules"] == [{"record": "a:b:c", "expr": "up"},
                                          {"alert": "Good", "expr": "up == 0", "labels": {"enabled": "true"}}]
    assert not res.ok


@pytest.mark.parametrize("body, out", [
    ('`{{`', "{{"), ('"{{"', "{{"), ('print "{{"', "{{"), ('printf "%s x %%" "{{"', "{{ x %"),
    ('"{{ $labels.x }}"', "{{ $labels.x }}"), ('.Values.x', None), ('printf "%.2f" $value', None),
])
def test_helm_literal_forms(body, out):
    assert literal_value(body) == out


def test_helm_reader_keeps_lines_and_reports_values():
    text = ('{{- if .Values.on }}\nx: "{{`{{`}} $value }}"\ny: {{ .Values.y }}\n'
            '{{- range .Values.extra }}\n- {{ . }}\n{{- end }}\n{{- else }}\nz: 1\n{{- end }}\n')
    ht = read_template(text)
    assert ht.text.split("\n") == ["", 'x: "{{ $value }}"', "y: __helm_0__", "", "", "", "", "", "", ""]
    assert ht.placeholders == {0: (3, "{{ .Values.y }}")}
    assert [(n.line, n.level) for n in ht.notes] == [(4, "error"), (7, "warning")]
    assert ht.assumed_true == [1]


def test_prometheus_templates_alone_are_not_helm():
    assert not looks_like_helm('summary: "{{ $labels.x }} {{ printf \\"%.2f\\" $value }}"')
    assert not looks_like_helm('summary: "{{`{{`}} $labels.x }}"')  # an escape Prometheus evaluates too
    assert looks_like_helm("name: {{ .Release.Name }}")


def test_compare_reports_each_difference():
    orig = [{"name": "g", "rules": [{"alert": "A", "expr": "up==0", "for": "0m", "labels": {"severity": "x"}}]}]
    same = [{"name": "g", "rules": [{"alert": "A", "expr": "up == 0", "labels": {"severity": "x"},
                                     "annotations": {"runbook_url": "https://r/a"}}]}]
    assert compare_groups(orig, same) == (1, [])
    other = [{"name": "g", "rules": [{"alert": "A", "expr": "up == 1", "for": "1m",
                                      "labels": {"severity": "x", "component": "a"}}]}]
    eq, diffs = compare_groups(orig, other)
    assert eq == 0
    assert [d.what.split(":")[0] for d in diffs] == ["expr", "labels", "for"]


@pytest.mark.tools
def test_round_trip_through_real_helm(tmp_path, helm_bin):
    """Import, render the chart (rulegen's planner), helm template: rules equal the originals,
    recording rule, keep_firing_for, group interval/limit and component: false included."""
    from rulegen.pipeline import load_project
    from rulegen.render import plan
    from rulegen.tools import helm

    root = _tree(tmp_path)
    res = import_paths([root / "manifest.yaml", root / "plain.rules.yml", root / "mychart"],
                       out_dir=root / "project" / "rules", display_base=root)
    assert res.ok
    proj = root / "project"
    write_specs(res, proj / "rules")
    loaded = load_project(proj)
    outputs, _ = plan(loaded.specs, proj)
    write_outputs(proj, outputs)
    rendered_rules = {}
    for spec in loaded.specs:
        r = helm.template(proj / spec.chart.path, values=[values_yaml(gate_values(spec.chart.gates))])
        rendered_rules[spec.app] = r.rule_groups()
        if spec.app == "payments":
            assert [p["metadata"]["name"] for p in r.prometheus_rules()] == ["payments"]
    originals = {
        "payments": list(yaml.safe_load_all(MANIFEST))[0]["spec"]["groups"],
        "plain-rules": yaml.safe_load(PLAIN)["groups"],
        "checkout": [{"name": "checkout", "rules": [{
            "alert": "CheckoutDown", "expr": 'up{job="checkout"} == 0', "for": "5m",
            "labels": {"severity": "warning", "component": "api"},
            "annotations": {"summary": "Checkout down on {{ $labels.instance }}",
                            "description": "{{ $labels.job }} down for {{ $value }}s."}}]}],
    }
    for app, groups in originals.items():
        assert compare_groups(groups, rendered_rules[app]) == (len(groups[0]["rules"]), []), app
