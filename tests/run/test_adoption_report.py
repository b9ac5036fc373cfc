"""The adoption report (issue 26 item 6): the weakest alerts' tests first, in a few lines, and
the alerts without tests offered to ``rulegen derive-tests``."""

from __future__ import annotations

from rulegen.run.adoption import SHOWN, declared_report, mutation_report, untested
from rulegen.run.mutation import RuleScore
from rulegen.validate import validate_texts

FULL = """
        tests:
          - name: boundary
            interval: 1m
            input_series:
              - series: up{job="a"}
                values: "0x10"
            alert_rule_test:
              - eval_time: 4m
                exp_alerts: []
              - eval_time: 5m
                exp_alerts:
                  - exp_labels: {job: a, severity: warning}
"""
FIRES_ONLY = """
        tests:
          - name: fires
            interval: 1m
            input_series:
              - series: up{job="b"}
                values: "0x10"
            alert_rule_test:
              - eval_time: 6m
                exp_alerts:
                  - exp_labels: {job: b, severity: warning}
"""


def _specs(n_untested: int = 1):
    rules = ""
    for name, job, tests in (("FullyTested", "a", FULL), ("FiresOnly", "b", FIRES_ONLY)) + tuple(
            (f"Untested{i}", "c", "") for i in range(n_untested)):
        rules += (f"      - alert: {name}\n        expr: up{{job=\"{job}\"}} == 0\n        for: 5m\n"
                  f"        severity: warning\n        summary: s\n        description: d\n{tests.lstrip(chr(10))}")
    res = validate_texts({"rules/shop.yaml": f"app: shop\ngroups:\n  - name: shop\n    rules:\n{rules}"})
    assert res.ok, res.findings
    return res.specs


def test_declared_report_names_the_weak_and_the_untested():
    lines = declared_report(_specs())
    assert lines[0].startswith("adoption report: 2 of 3 alert(s) have tests; 1 state a firing and a non-firing case")
    assert lines[1] == "  weak: shop FiresOnly: needs a non-firing case and a case on each side of the `for` boundary"
    assert lines[2].startswith("  no test: 1 alert(s) (shop Untested0): `rulegen derive-tests`")
    assert len(lines) == 3 and not any("FullyTested" in x for x in lines)


def test_report_stays_short():
    specs = _specs(n_untested=40)
    assert untested(specs)[:2] == [("shop", "Untested0"), ("shop", "Untested1")]
    [line] = [x for x in declared_report(specs) if "no test:" in x]
    assert "(shop Untested0, shop Untested1, shop Untested2 and 37 more)" in line


def test_mutation_report_ranks_weakest_first():
    specs = _specs(0)
    rows = [RuleScore("shop", "FullyTested", 6, 6, 0), RuleScore("shop", "FiresOnly", 1, 6, 0)]
    lines = mutation_report(specs, rows)
    assert lines[:3] == ["mutation score by alert, weakest first (2 of 2 shown):",
                         "   17% shop FiresOnly: 1/6 mutants killed",
                         "  100% shop FullyTested: 6/6 mutants killed"]
    assert "1 alert(s) have surviving mutants" in lines[3]
    many = [RuleScore("shop", "FiresOnly", i, 20, 0) for i in range(SHOWN + 5)]
    assert len([x for x in mutation_report(specs, many) if "mutants killed" in x]) == SHOWN
