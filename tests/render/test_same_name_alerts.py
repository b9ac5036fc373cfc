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


def _section(page: str, name: str) -> str:
    start = page.index(f"## {name} {{ #")
    end = page.find("\n## ", start + 1)
    return page[start:end if end > 0 else len(page)]


def test_each_rule_of_a_name_shows_its_summary_and_description_once(tmp_path):
    # a third rule whose summary is the first one's: said once; each description once, and the
    # rules are counted ("A second", "A third"), not all called the second
    third = SPEC.rstrip("\n") + "\n" + textwrap.indent(textwrap.dedent("""\
        - alert: DiskFull
          expr: disk_used_ratio > 0.99
          severity: info
          summary: Disk almost full.
          description: Over 99%.
        """), "      ")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/disk.yaml").write_text(third)
    assert main(["-C", str(tmp_path), "build"]) == 0
    section = _section((tmp_path / "runbooks/disk.md").read_text(), "DiskFull")
    for text in ("Disk almost full.", "Disk full.", "Over 80%.", "Over 95%.", "Over 99%."):
        assert section.count(text) == 1, text
    assert "A second rule with this name, severity **critical**" in section
    assert "A third rule with this name, severity **info**" in section


SLO_SPEC = textwrap.dedent("""\
    app: shop
    slos:
      - name: availability
        objective: 99.5
        description: Requests that do not fail.
        sli:
          events:
            bad: http_requests_total{job="shop", code=~"5.."}
            total: http_requests_total{job="shop"}
    """)


def test_an_slo_alert_section_shows_each_pairs_summary_once_and_the_index_ones(tmp_path):
    # trial: the FastBurn section showed only the 6x pair's summary while the alert index showed
    # the 14.4x pair's, which the section never did
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/shop.yaml").write_text(SLO_SPEC)
    assert main(["-C", str(tmp_path), "build"]) == 0
    page = (tmp_path / "runbooks/shop.md").read_text()
    index = (tmp_path / "runbooks/alerts.md").read_text()
    for name, pairs in (("ShopAvailabilityFastBurn", ("14.4x too fast \\(over 1h and 5m\\)",
                                                      "6x too fast \\(over 6h and 30m\\)")),
                        ("ShopAvailabilitySlowBurn", ("3x too fast \\(over 1d and 2h\\)", "in 30d \\(over 3d and 6h\\)"))):
        section = " ".join(_section(page, name).split())
        for summary in pairs:
            assert section.count(summary) == 1, (name, summary)
        # the index shows the first rule's summary, which the section states once, beside its rule
        entry = " ".join(index[index.index(f"[{name}]"):].split("\n- ")[0].split())
        assert pairs[0] in entry and pairs[1] not in entry
        first_rule = section.index("### Fires when")
        assert first_rule < section.index(pairs[0]) < section.index("rule with this name") < section.index(pairs[1])
    fast = " ".join(_section(page, "ShopAvailabilityFastBurn").split())
    assert fast.count("above 14.4 times its error budget") == 1 and fast.count("above 6 times its error budget") == 1
