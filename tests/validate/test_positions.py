"""Findings inside YAML flow mappings and sequences point at the offending key or value, not at
the mapping's `{` or its first key (nor at the alert's name)."""

from __future__ import annotations

from rulegen.spec import load_text
from rulegen.validate import validate_texts

SPEC = """\
app: demo
{app_labels}groups:
  - name: demo
{group_labels}    rules:
      - alert: DemoDown
        expr: up == 0
        for: 5m
{labels}        summary: Demo is down.
        description: up is 0.
"""


def _found(code: str, labels: str = "", group_labels: str = "", app_labels: str = "") -> list:
    text = SPEC.format(labels=labels, group_labels=group_labels, app_labels=app_labels)
    return [(f.line, f.col, f.message) for f in validate_texts({"rules/demo.yaml": text}).findings
            if f.code == code]


def test_rg204_a_bad_label_name_points_at_that_key_in_flow_and_block_style():
    msg = "`labels`: 'bad key' is no label name (names match ^[a-zA-Z_][a-zA-Z0-9_]*$); rename the key to `bad_key`"
    assert _found("RG204", '        labels: {severity: warning, "bad key": x}\n') == [(8, 37, msg)]
    assert _found("RG204", '        labels:\n          severity: warning\n          "bad key": x\n') == [(10, 11, msg)]
    assert _found("RG204", '        severity: warning\n        annotations: {runbook: x, "a-b": y}\n') == [
        (9, 35, "`annotations`: 'a-b' is no annotation name (names match ^[a-zA-Z_][a-zA-Z0-9_]*$); rename the key "
                "to `a_b`")]
    # no new name is offered that the mapping already has
    assert _found("RG204", '        labels: {severity: warning, a_b: x, "a-b": y}\n') == [
        (8, 45, "`labels`: 'a-b' is no label name (names match ^[a-zA-Z_][a-zA-Z0-9_]*$); rename the key")]


def test_rg501_points_at_the_severity_label_wherever_it_is_written():
    msg = ("severity 'critcal' is not one of critical, warning, info (conventions.severities in "
           ".rulegen.yaml); did you mean critical?")
    assert _found("RG501", "        labels: {team: a, severity: critcal}\n") == [(8, 37, msg)]
    assert _found("RG501", group_labels="    labels: {severity: critcal}\n") == [(4, 24, msg)]
    assert _found("RG501", app_labels="labels: {team: a, severity: critcal}\n") == [(2, 29, msg)]
    assert _found("RG501", "        severity: critcal\n") == [(8, 19, msg)]
    # no severity at all: at the alert's name
    assert _found("RG501") == [(5, 16, "alert has no severity; add `severity:` with one of critical, warning, info")]


def test_the_loader_maps_flow_collections_member_by_member():
    text = 'a: {x: 1, y: [1, {z: 2}], v: {\n    m: n,\n    "k k": p}}\nb: [ {c: d}, [e, f], g ]\n'
    lf = load_text(text, "x.yaml")
    assert lf.positions[("a", "y", 1, "z")] == (1, 22)
    assert lf.key_positions[("a", "y", 1, "z")] == (1, 19)
    assert lf.positions[("a", "v", "k k")] == (3, 12)
    assert lf.key_positions[("a", "v", "k k")] == (3, 5)
    assert [lf.positions[("b", i)] for i in range(3)] == [(4, 6), (4, 14), (4, 22)]
    assert lf.positions[("b", 1, 1)] == (4, 18)
