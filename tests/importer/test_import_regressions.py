"""``rulegen import`` regressions: Go-template text outside Helm kept byte for byte, no crash
with ``--app`` on unreadable files, rulegen's own generated files recognised, rules that
Prometheus rejects skipped alike, and exact note positions and wording."""

from __future__ import annotations

import textwrap

import pytest
import yaml

from rulegen.cli import main
from rulegen.importer import import_paths, schema_ref, write_specs
from rulegen.importer.compare import compare_groups
from rulegen.importer.helmtext import looks_like_helm
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml

from helpers import REPO
from helpers.helm import write_outputs

#: Go-template escapes and a comment that Prometheus itself evaluates in a plain rule file.
ESCAPES = """\
groups:
  - name: g
    rules:
      - alert: JobWritten
        expr: up == 0
        labels:
          severity: warning
        annotations:
          summary: 'Write {{ "{{" }} $labels.job }} to print the job'
          description: 'Literal {{`{{ $value }}`}} shown'
      - alert: FoldedText
        expr: up == 0
        labels:
          severity: info
        annotations:
          summary: Folded text {{ "{{" }} literal
          description: >
            On {{ $labels.instance }}, {{ print "{{" }} x }}
            and {{/* a template comment */}} {{ printf "%s" "{{" }}.
          note: "{{- /* trim */ -}} kept"
"""

ESCAPES_RULES = """\
    rules:
      - alert: JobWritten
        expr: up == 0
        severity: warning
        summary: 'Write {{ "{{" }} $labels.job }} to print the job'
        description: 'Literal {{`{{ $value }}`}} shown'
      - alert: FoldedText
        expr: up == 0
        severity: info
        summary: Folded text {{ "{{" }} literal
        description: |
          On {{ $labels.instance }}, {{ print "{{" }} x }} and {{/* a template comment */}} {{ printf "%s" "{{" }}.
        annotations:
          note: "{{- /* trim */ -}} kept"
"""

MANIFEST = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: escapes
spec:
""" + textwrap.indent(ESCAPES, "  ")


def _annotations(groups):
    return {r["alert"]: r["annotations"] for g in groups for r in g["rules"]}


def test_plain_rule_file_keeps_go_template_escapes_byte_for_byte(tmp_path):
    (tmp_path / "esc.yml").write_text(ESCAPES, encoding="utf-8")
    out = tmp_path / "rules"
    res = import_paths([tmp_path / "esc.yml"], out_dir=out, display_base=tmp_path)
    assert res.specs[0].text == (
        f"# yaml-language-server: $schema={schema_ref(out, out.parent)}\n"
        "# Imported by `rulegen import` from esc.yml.\n"
        "app: esc\ncomponent: false\nchart:\n  runbook_url: false\ngroups:\n  - name: g\n" + ESCAPES_RULES)
    assert res.notes == []   # no "written without Helm escaping": Helm never reads this file
    spec = yaml.safe_load(res.specs[0].text)["groups"][0]["rules"]
    assert spec[0]["summary"] == 'Write {{ "{{" }} $labels.job }} to print the job'
    assert spec[0]["description"] == "Literal {{`{{ $value }}`}} shown"
    assert spec[1]["summary"] == 'Folded text {{ "{{" }} literal'


def test_prometheusrule_manifest_keeps_go_template_escapes_byte_for_byte(tmp_path):
    (tmp_path / "esc.yaml").write_text(MANIFEST, encoding="utf-8")
    out = tmp_path / "rules"
    res = import_paths([tmp_path / "esc.yaml"], out_dir=out, display_base=tmp_path)
    assert res.specs[0].text == (
        f"# yaml-language-server: $schema={schema_ref(out, out.parent)}\n"
        "# Imported by `rulegen import` from esc.yaml.\n"
        "app: escapes\ncomponent: false\nchart:\n  name: escapes\n  runbook_url: false\ngroups:\n  - name: g\n"
        + ESCAPES_RULES)
    assert res.notes == []


def test_helm_template_still_reads_escapes_as_helm_prints_them(tmp_path):
    """The same text in a chart's templates/ is a Helm template: Helm prints `{{` for each escape."""
    chart = tmp_path / "c"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: c\nversion: 1.0.0\n", encoding="utf-8")
    (chart / "templates" / "rules.yaml").write_text(MANIFEST, encoding="utf-8")
    res = import_paths([chart], out_dir=tmp_path / "rules", display_base=tmp_path)
    rules = yaml.safe_load(res.specs[0].text)["groups"][0]["rules"]
    assert rules[0]["summary"] == "Write {{ $labels.job }} to print the job"
    assert rules[0]["description"] == "Literal {{ $value }} shown"
    # Helm prints `Folded text {{ literal`, a template Prometheus cannot parse: the rule is skipped
    assert [r["alert"] for r in rules] == ["JobWritten"]
    assert [(n.line, n.code, n.rule) for n in res.notes if n.code == "RG806"] == [(21, "RG806", "FoldedText")]
    assert "unclosed action" in [n for n in res.notes if n.code == "RG806"][0].message


@pytest.mark.parametrize("text, helm", [
    ('summary: \'{{ "{{" }} $labels.job }}\'', False),              # escape: Prometheus' own syntax
    ("summary: '{{`{{ $value }}`}}'", False),
    ('summary: "{{ print \\"{{\\" }}"', False),
    ("summary: x {{/* comment */}}", False),
    ('summary: "{{`{{ .Values.x }}`}}"', False),                     # .Values only inside a string
    ('summary: "{{ $labels.x | humanize }}"', False),
    ('summary: "{{ .Values.x }}"', True),                            # Helm-only object
    ("summary: '{{ include \"x\" . | quote }}'", True),             # Helm-only functions
    ("name: {{ .Release.Name }}", True),
    ('name: {{ template "x.fullname" . }}', True),                   # an action where YAML wants a value
    ("{{- if true }}\na: 1\n{{- end }}", True),                      # a line only Helm makes YAML of
    ("a: [", False),                                                  # broken YAML, no action
])
def test_what_makes_a_file_a_helm_template(text, helm):
    assert looks_like_helm(text) is helm


@pytest.mark.tools
def test_plain_escapes_round_trip_through_real_helm(tmp_path, helm_bin):
    """Import, render, `helm template`: Prometheus gets the original annotation bytes."""
    from rulegen.pipeline import load_project
    from rulegen.render import plan
    from rulegen.tools import helm

    (tmp_path / "esc.yml").write_text(ESCAPES, encoding="utf-8")
    (tmp_path / "esc.yaml").write_text(MANIFEST, encoding="utf-8")
    proj = tmp_path / "project"
    res = import_paths([tmp_path / "esc.yml", tmp_path / "esc.yaml"], out_dir=proj / "rules", display_base=tmp_path)
    assert res.ok and len(res.specs) == 2
    write_specs(res, proj / "rules")
    loaded = load_project(proj)
    # schema and template checks pass (both apps hold the same alert names: RG412 is expected)
    assert [f for f in loaded.findings if f.code.startswith(("RG1", "RG2", "RG305", "RG306", "RG308"))] == []
    outputs, _ = plan(loaded.specs, proj)
    write_outputs(proj, outputs)
    original = yaml.safe_load(ESCAPES)["groups"]
    for spec in loaded.specs:
        rendered = helm.template(proj / spec.chart.path, values=[values_yaml(gate_values(spec.chart.gates))]).rule_groups()
        assert compare_groups(original, rendered) == (2, []), spec.app
        got = _annotations(rendered)
        assert got["JobWritten"]["summary"] == 'Write {{ "{{" }} $labels.job }} to print the job'
        assert got["JobWritten"]["description"] == "Literal {{`{{ $value }}`}} shown"
        assert got["FoldedText"]["summary"] == 'Folded text {{ "{{" }} literal'


# --- H2: --app with files that hold no rule groups -------------------------------------------

@pytest.mark.parametrize("name, data, line, message", [
    ("a.yml", b"groups: [\n", 2, "not valid YAML"),
    ("e.yml", b"\xff\xfe", 1, "not UTF-8 text (byte 0xff at offset 0)"),
    ("n.yml", b"groups:\n  - name: ok\n    rules: []\n\xff\n", 4, "not UTF-8 text (byte 0xff at offset 35)"),
])
def test_app_option_on_unreadable_file_is_a_finding(tmp_path, capsys, name, data, line, message):
    (tmp_path / name).write_bytes(data)
    res = import_paths([tmp_path / name], app="foo", out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [(n.file, n.line, n.col, n.code, n.severity.value) for n in res.notes] == [
        (name, line, 1, "RG801", "error")]
    assert message in res.notes[0].message
    assert res.specs == []
    assert main(["-C", str(tmp_path), "import", name, "--app", "foo"]) == 1
    err = capsys.readouterr().err
    assert f"{name}:{line}:1: error RG801" in err and "Traceback" not in err


def test_app_option_with_one_good_and_one_bad_file(tmp_path):
    (tmp_path / "a.yml").write_text("groups: [\n", encoding="utf-8")
    (tmp_path / "ok.yml").write_text("groups:\n  - name: g\n    rules:\n      - record: a:b:c\n        expr: up\n",
                                     encoding="utf-8")
    res = import_paths([tmp_path / "a.yml", tmp_path / "ok.yml"], app="foo", out_dir=tmp_path / "rules",
                       display_base=tmp_path)
    assert [s.app for s in res.specs] == ["foo"]
    assert [(n.file, n.line, n.code) for n in res.notes] == [("a.yml", 2, "RG801")]


# --- M6: rulegen's own generated files ----------------------------------------------------------



def test_generated_chart_is_recognised_one_note_per_file(capsys):
    res = import_paths([REPO / "charts" / "llama-swap"], out_dir=REPO / "rules", display_base=REPO)
    assert res.specs == []
    assert [(n.file, n.line, n.col, n.code, n.severity.value) for n in res.notes] == [
        ("charts/llama-swap/templates/prometheusrule.yaml", 1, 1, "RG801", "warning"),
        ("charts/llama-swap/templates/servicemonitor.yaml", 2, 1, "RG805", "warning"),
    ]
    # the template is copied from rulegen's package (the chart's rules file names the spec)
    assert res.notes[0].message.startswith("generated by rulegen from rulegen's templates/helm/prometheusrule.yaml: "
                                           "nothing to import;")
    assert res.notes[1].message == "a ServiceMonitor is not a rule file or a PrometheusRule; skipped"
    assert res.ok


def test_generated_rule_file_is_recognised(tmp_path):
    """Any generated file (here a `--format rules` style YAML file) names its spec."""
    (tmp_path / "gen.yaml").write_text(
        "# Code generated by rulegen from rules/shop.yaml. DO NOT EDIT.\n# rulegen-checksum: sha256:" + "0" * 64
        + "\ngroups:\n  - name: g\n    rules:\n      - record: a:b:c\n        expr: up\n", encoding="utf-8")
    res = import_paths([tmp_path / "gen.yaml"], app="shop", out_dir=tmp_path / "rules", display_base=tmp_path)
    assert res.specs == []
    assert [(n.file, n.line, n.code, n.severity.value) for n in res.notes] == [("gen.yaml", 1, "RG801", "warning")]
    assert "generated by rulegen from rules/shop.yaml" in res.notes[0].message


# --- M4: every rule Prometheus rejects is skipped the same way -----------------------------------

REJECTED = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: first
spec:
  groups:
    - name: a
      rules:
        - record: "bad name"
          expr: up
        - record: job:up:sum
          expr: sum by (job) (up)
---
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: second
spec:
  groups:
    - name: b
      rules:
        - alert: Broken
          expr: up{
        - alert: ListLabel
          expr: up == 0
          labels:
            a: [1, 2]
        - alert: NameLabel
          expr: up == 0
          labels:
            __name__: x
        - alert: BadTemplate
          expr: up == 0
          annotations:
            summary: "{{ $label.job }}"
        - alert: BadFunc
          expr: up == 0
          annotations:
            description: "{{ $value | humanise }}"
        - record: rec:with:annotations
          expr: up
          annotations:
            a: b
        - record: rec:with:for
          expr: up
          keep_firing_for: 5m
        - alert: BadKeep
          expr: up == 0
          keep_firing_for: [5m]
        - alert: Kept
          expr: up == 0
          labels:
            severity: info
          annotations:
            summary: "__helm_0__ {{ $labels.job }}"
    - name: c
      interval: 1x
      rules:
        - alert: InBadGroup
          expr: up == 0
"""


def test_every_rule_prometheus_rejects_is_skipped_with_rg806_at_its_line(tmp_path):
    from rulegen.validate import validate_texts

    (tmp_path / "m.yaml").write_text(REJECTED, encoding="utf-8")
    res = import_paths([tmp_path / "m.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [(n.line, n.col, n.code, n.severity.value, n.rule, n.message) for n in res.notes] == [
        (9, 1, "RG806", "error", "bad name", "record `bad name` skipped: recording rule name 'bad name' is not a "
         "valid metric name ([a-zA-Z_:][a-zA-Z0-9_:]*) (Prometheus rejects it too)"),
        (23, 1, "RG806", "error", "Broken", "alert `Broken` skipped: `expr` does not parse as PromQL: unexpected "
         "end of input inside braces (Prometheus rejects it too)"),
        (27, 1, "RG806", "error", "ListLabel", "alert `ListLabel` skipped: label `a` is a list, not a string "
         "(Prometheus rejects it too)"),
        (31, 1, "RG806", "error", "NameLabel", "alert `NameLabel` skipped: label name `__name__` is reserved for "
         "the metric name (Prometheus rejects it too)"),
        (35, 1, "RG806", "error", "BadTemplate", "alert `BadTemplate` skipped: annotation `summary` is a template "
         "that does not parse: undefined variable $label (Prometheus rejects it too)"),
        (39, 1, "RG806", "error", "BadFunc", "alert `BadFunc` skipped: annotation `description` is a template "
         "that does not parse: function humanise not defined (Prometheus rejects it too)"),
        (42, 1, "RG806", "error", "rec:with:annotations", "record `rec:with:annotations` skipped: `annotations` "
         "are not allowed on a recording rule (Prometheus rejects it too)"),
        (46, 1, "RG806", "error", "rec:with:for", "record `rec:with:for` skipped: `keep_firing_for` is not "
         "allowed on a recording rule (Prometheus rejects it too)"),
        (49, 1, "RG806", "error", "BadKeep", "alert `BadKeep` skipped: `keep_firing_for` is a list, not a "
         "Prometheus duration (Prometheus rejects it too)"),
        (57, 1, "RG806", "error", "c", "group `c` skipped: group `interval` '1x' is not a Prometheus duration "
         "(Prometheus rejects it too)"),
    ]
    assert not res.ok
    specs = {s.app: yaml.safe_load(s.text) for s in res.specs}
    assert specs["first"]["groups"] == [{"name": "a", "rules": [{"record": "job:up:sum",
                                                                  "expr": "sum by (job) (up)"}]}]
    # in a PrometheusRule that is not a Helm template, __helm_0__ is plain text, kept as it is
    assert specs["second"]["groups"] == [{"name": "b", "rules": [{
        "alert": "Kept", "expr": "up == 0", "severity": "info", "summary": "__helm_0__ {{ $labels.job }}"}]}]
    # what was written passes rulegen validate: nothing Prometheus rejects got through
    checked = validate_texts({f"rules/{s.app}.yaml": s.text for s in res.specs})
    assert [f for f in checked.findings if f.is_error and f.code.startswith(("RG1", "RG2", "RG3", "RG40"))] == []


@pytest.mark.parametrize("text, line", [
    ("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n        labels: &a {x: *a}\n", 6),
    ("groups: &g\n  - name: g\n    rules: *g\n", 3),
    ("groups:\n  - name: g\n    rules:\n      - &r\n        record: a:b:c\n        expr: up\n"
     "        labels: {x: [*r]}\n", 7),
])
def test_self_referencing_alias_is_an_error(tmp_path, text, line):
    (tmp_path / "s.yml").write_text(text, encoding="utf-8")
    res = import_paths([tmp_path / "s.yml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert res.specs == []
    assert [(n.line, n.code, n.severity.value) for n in res.notes] == [(line, "RG801", "error")]
    assert "contains itself" in res.notes[0].message
    assert "empty (null)" not in res.notes[0].message


def test_ordinary_aliases_still_import(tmp_path):
    (tmp_path / "s.yml").write_text(
        "groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n        labels: &l {team: x}\n"
        "      - alert: B\n        expr: up == 0\n        labels: *l\n", encoding="utf-8")
    res = import_paths([tmp_path / "s.yml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert res.notes == []
    assert [r["labels"] for r in yaml.safe_load(res.specs[0].text)["groups"][0]["rules"]] == [{"team": "x"}] * 2


# --- L1: positions and wording ------------------------------------------------------------------

def test_no_note_at_line_zero(tmp_path):
    (tmp_path / "b.yml").write_text("# nothing but a comment\n", encoding="utf-8")
    (tmp_path / "big.yml").write_text("groups: []\n", encoding="utf-8")
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "same.yml").write_text(
        "# c\n\ngroups:\n  - name: g\n    rules:\n      - record: a:b:c\n        expr: up\n", encoding="utf-8")
    (tmp_path / "y").mkdir()
    (tmp_path / "y" / "same.yml").write_text(
        "\ngroups:\n  - name: h\n    rules:\n      - record: a:b:c\n        expr: up\n", encoding="utf-8")
    res = import_paths([tmp_path], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [(n.file, n.line, n.col, n.code) for n in res.notes] == [
        ("b.yml", 1, 1, "RG801"),        # no rule groups
        ("b.yml", 1, 1, "RG807"),        # its comment has nowhere to go
        ("big.yml", 1, 1, "RG810"),      # app `big`: no rule to import (not RG801: one code, one meaning)
        ("x/same.yml", 3, 1, "RG808"),   # renamed x-same: at its `groups:` line
        ("y/same.yml", 2, 1, "RG808"),
    ]
    assert all(n.line >= 1 and n.col >= 1 for n in res.notes)
    write_specs(res, tmp_path / "rules")
    write_specs(res, tmp_path / "rules")
    assert [(n.line, n.col, n.code) for n in res.notes[-2:]] == [(1, 1, "RG809"), (1, 1, "RG809")]


def test_plain_file_prometheus_template_gets_no_helm_note(tmp_path):
    (tmp_path / "p.yml").write_text(
        'groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n        labels:\n'
        '          severity: info\n        annotations:\n          summary: "{{ $labels.x }} {{ \\"{{\\" }}"\n',
        encoding="utf-8")
    res = import_paths([tmp_path / "p.yml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert res.notes == []
    assert yaml.safe_load(res.specs[0].text)["groups"][0]["rules"][0]["summary"] == '{{ $labels.x }} {{ "{{" }}'
