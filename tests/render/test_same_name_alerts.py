"""Two rules with one alert name (a warning and a critical threshold): one runbook section,
the right expectations in tests, a clean check (regression: check failed with RG716)."""

from __future__ import annotations

import textwrap

from rulegen.cli import main

SPEC = textwrap.dedent("""\
    app: disk
    groups:
      - name: disk
        rules:
          - alert: DiskFull
            expr: disk_used_ratio > 0.8
            for: 5m
            severity: warning
            summary: Disk almost full.
            description: Over 80%.
            tests:
              - name: warning only
                input_series:
                  - series: disk_used_ratio{dev="sda"}
                    values: "0.85x10"
                alert_rule_test:
                  - eval_time: 4m
                    exp_alerts: []
                  - eval_time: 6m
                    exp_alerts:
                      - exp_labels: {dev: sda}
          - alert: DiskFull
            expr: disk_used_ratio > 0.95
            for: 5m
            severity: critical
            summary: Disk full.
            description: Over 95%.
            runbook: {causes: [logs], resolution: [rotate logs]}
            tests:
              - name: both fire
                input_series:
                  - series: disk_used_ratio{dev="sda"}
                    values: "0.99x10"
                alert_rule_test:
                  - eval_time: 4m
                    exp_alerts: []
                  - eval_time: 6m
                    exp_alerts:
                      - exp_labels: {dev: sda}
                      - exp_labels: {dev: sda, severity: warning}
                        exp_annotations: {summary: Disk almost full., description: Over 80%.}
    """)


def test_same_name_alerts_share_one_section_and_check_is_clean(tmp_path, capsys, helm_bin, promtool_bin):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/disk.yaml").write_text(SPEC)
    assert main(["-C", str(tmp_path), "build"]) == 0
    page = (tmp_path / "runbooks/disk.md").read_text()
    assert page.count("## DiskFull { #diskfull }") == 1
    # the second rule's expr and `for` once each, in its "Fires when" (as the first rule's)
    assert ("A second rule with this name, severity **critical**: Fires when `disk_used_ratio`{ .rg-promql }\n"
            "is `> 0.95`\ncontinuously for **5m**.\n") in page
    assert page.count("0.95") == 1 and page.count("continuously for **5m**") == 2
    assert page.count("<!-- notes:DiskFull -->") == 1
    # regression: the second rule's summary and runbook content were dropped
    assert "**Summary (critical):** Disk full." in page
    assert "1. logs" in page and "- rotate logs" in page
    assert main(["-C", str(tmp_path), "check"]) == 0
    capsys.readouterr()
    # the critical rule's test completes its own labels (severity critical) for the first alert
    assert main(["-C", str(tmp_path), "test"]) == 0
    assert "2 passed, 0 failed" in capsys.readouterr().out


def test_chart_without_fullname_helper_names_the_rule_after_the_app(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/disk.yaml").write_text(SPEC)
    assert main(["-C", str(tmp_path), "build"]) == 0
    page = (tmp_path / "runbooks/disk.md").read_text()
    assert "renders the PrometheusRule `disk` in the release namespace" in page
