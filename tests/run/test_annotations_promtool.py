"""Annotations as Prometheus renders them (issue 14): a test compares only the annotations it
states, rendered by promtool's own template engine; stating none accepts any."""

from __future__ import annotations

import textwrap

import pytest

from rulegen.cli import main

SPEC = textwrap.dedent("""\
    app: bytes
    groups:
      - name: bytes
        rules:
          - alert: BytesHigh
            expr: node_bytes{job="node"} > 1000
            for: 1m
            severity: warning
            summary: '{{ $labels.job }}: {{ "{{" }} literal'
            description: >-
              {{ $value | humanize }} bytes ({{ printf "%.2f" $value }}, {{ humanize1024 $value }})
            tests:
              - name: fires
                interval: 1m
                input_series:
                  - series: node_bytes{job="node"}
                    values: "8838815x5"
                alert_rule_test:
                  - eval_time: 2m
                    exp_alerts:
                      - exp_labels: {job: node}
              - name: states the description
                interval: 1m
                input_series:
                  - series: node_bytes{job="node"}
                    values: "8838815x5"
                alert_rule_test:
                  - eval_time: 2m
                    exp_alerts:
                      - exp_labels: {job: node}
                        exp_annotations:
                          description: 8.839M bytes (8838815.00, 8.429Mi)
    """)


def _run(project, text, capsys, *args):
    for p in (project / "rules").iterdir():
        p.unlink()
    (project / "rules/bytes.yaml").write_text(text, encoding="utf-8")
    code = main(["-C", str(project), "test", *args])
    return code, capsys.readouterr()


@pytest.mark.tools
def test_value_templates_build_and_compare_as_prometheus_renders(project, helm_bin, promtool_bin, capsys):
    for p in (project / "rules").iterdir():
        p.unlink()
    (project / "rules/bytes.yaml").write_text(SPEC, encoding="utf-8")
    assert main(["-C", str(project), "build"]) == 0  # was RG601, an error that blocked build
    out = capsys.readouterr()
    assert "RG601" not in out.out + out.err
    code, out = _run(project, SPEC, capsys)
    assert code == 0, out.out + out.err
    assert "2 passed, 0 failed" in out.out


@pytest.mark.tools
def test_a_stated_annotation_that_prometheus_renders_otherwise_fails(project, helm_bin, promtool_bin, capsys):
    wrong = SPEC.replace("8.839M bytes", "8838815 bytes")
    code, out = _run(project, wrong, capsys)
    assert code == 1
    assert "1 passed, 1 failed" in out.out
    assert "FAIL [BytesHigh] states the description" in out.out
    # the diff shows Prometheus' rendering against the stated text
    assert '-  description="8838815 bytes (8838815.00, 8.429Mi)"' in out.out
    assert '+  description="8.839M bytes (8838815.00, 8.429Mi)"' in out.out


@pytest.mark.tools
def test_exact_annotations_compares_every_annotation(project, helm_bin, promtool_bin, capsys):
    head, tail = SPEC.split("- name: states the description\n")
    indent = " " * (len(head) - len(head.rstrip(" ")) + 2)
    exact = f"{head}- name: states the description\n{indent}exact_annotations: true\n{tail}"
    assert exact != SPEC
    code, out = _run(project, exact, capsys)
    assert code == 1  # the summary is not stated
    assert '+  summary="node: {{ literal"' in out.out
    stated = exact.replace("description: 8.839M", "summary: 'node: {{ literal'\n"
                           f"{indent}          description: 8.839M")
    code, out = _run(project, stated, capsys)
    assert code == 0, out.out


QUERY = textwrap.dedent("""\
    app: bytes
    groups:
      - name: bytes
        rules:
          - alert: QueueDeep
            expr: queue_depth{job="worker"} > 80
            severity: warning
            summary: deep
            description: '{{ with query "sum(queue_depth)" }}{{ . | first | value | humanize }}{{ end }} in all queues'
            tests:
              - name: says how deep all queues are
                interval: 1m
                input_series:
                  - series: queue_depth{job="worker"}
                    values: "100x5"
                  - series: queue_depth{job="other"}
                    values: "5x5"
                alert_rule_test:
                  - eval_time: 2m
                    exp_alerts:
                      - exp_labels: {job: worker}
                        exp_annotations: {description: 105 in all queues}
    """)


@pytest.mark.tools
def test_query_in_an_annotation_is_answered_from_the_test_series(project, helm_bin, promtool_bin, capsys):
    code, out = _run(project, QUERY, capsys)
    assert code == 0, out.out + out.err
    code, out = _run(project, QUERY.replace("105 in all", "100 in all"), capsys)
    assert code == 1
    assert '+  description="105 in all queues"' in out.out
