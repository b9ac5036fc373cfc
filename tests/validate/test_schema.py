"""Schema findings (RG201-RG205, RG302) at exact positions."""

from __future__ import annotations

from rulegen.validate import validate_texts


def run(rules: str):
    text = "app: demo\ngroups:\n  - name: demo\n    rules:\n" + rules
    res = validate_texts({"a.yaml": text})
    return [(f.code, f.line, f.col) for f in res.findings], res


GOOD = """\
      - alert: DemoDown
        expr: up == 0
        severity: warning
        summary: Down.
        description: Down.
"""


def test_good_rule():
    assert run(GOOD)[0] == []


def test_unknown_key_with_did_you_mean():
    found, res = run(GOOD.replace("severity:", "severty:"))
    assert found == [("RG201", 7, 9)]  # a schema error stops the later checks of the file
    assert res.findings[0].message == "unknown key `severty`; did you mean `severity`?"


def test_wrong_type_and_missing_field():
    found, res = run("      - alert: DemoDown\n        for: 5\n")
    assert found == [("RG203", 5, 9), ("RG302", 6, 14)]
    assert res.findings[0].message == "`expr` is required here; add `expr:`"
    assert res.findings[1].message == "`for`: 5 is a number, not a Prometheus duration; add a unit: 5s if seconds were meant"


def test_number_for_a_duration_says_which_duration_to_write():
    """Regression: `for: 90` said `quote it: "90"`, which then failed as RG302."""
    found, res = run(GOOD + "        for: 90\n")
    assert found == [("RG302", 10, 14)]
    assert res.findings[0].message == "`for`: 90 is a number, not a Prometheus duration; add a unit: 1m30s if seconds were meant"



def test_duration_syntax():
    found, res = run(GOOD + "        for: 1.5m\n")
    assert found == [("RG302", 10, 14)]
    assert "use whole units: 1m30s" in res.findings[0].message


def test_rule_with_both_alert_and_record():
    found, res = run("      - alert: DemoDown\n        record: a:b:c\n        expr: up\n")
    assert found == [("RG205", 5, 9)]
    assert "both `alert` and `record`" in res.findings[0].message


def test_rule_with_neither():
    found, res = run("      - expr: up\n")
    assert found == [("RG205", 5, 9)]
    assert "neither `alert` nor `record`" in res.findings[0].message


def test_recording_rule_checked_against_its_own_keys():
    found, res = run("      - record: job:up:sum\n        expr: sum(up)\n        for: 5m\n")
    assert found == [("RG201", 7, 9)]
    assert res.findings[0].message.startswith("unknown key `for`")


def test_rule_that_is_not_a_mapping_is_one_type_error():
    found, res = run("      - 5\n")
    assert found == [("RG202", 5, 9)]


def test_every_pattern_of_the_spec_schema_is_said_in_words_with_a_fix():
    """A new pattern in schema.json needs its words and fix in _PATTERNS, or its RG204 falls
    back to quoting the regex (durations have their own code, RG302)."""
    import json

    from rulegen.validate.checks.schema import _PATTERNS, pattern_fix
    from helpers import REPO

    patterns = set()

    def walk(node):
        if isinstance(node, dict):
            patterns.update(v for k, v in node.items() if k == "pattern" and isinstance(v, str))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(json.loads((REPO / "rulegen/spec/schema.json").read_text(encoding="utf-8")))
    assert {p for p in patterns if "([0-9]+)ms" not in p} <= set(_PATTERNS)
    fixes = {p: pattern_fix(p, v) for p, v in [
        ("^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", "Shop Front!"), ("^[a-zA-Z_][a-zA-Z0-9_]*$", "2xx-rate"),
        ("^[A-Z_][A-Z0-9_]*$", "my pod"), ("^[A-Za-z_][A-Za-z0-9_]*(\\.[A-Za-z_][A-Za-z0-9_]*)*$", "monitoring.is-on"),
        ("^[A-Za-z0-9_.-]+\\.yaml$", "rules file.yml"), ("^https?://[^\\s]+$", "grafana.example.com/d/a b")]}
    assert list(fixes.values()) == ["shop-front", "_2xx_rate", "MY_POD", "monitoring.is_on", "rules-file.yaml",
                                    "https://grafana.example.com/d/a%20b"]
    assert pattern_fix("^https?://[^\\s]+$", "ftp://files.example.com") is None  # another scheme: no guess
    assert pattern_fix("^[a-z0-9]([a-z0-9-]*[a-z0-9])?$", "a" * 70, 53) == "a" * 53


def test_a_gate_that_is_no_values_path_gets_one():
    text = GOOD + "chart:\n  gates: [enabled, monitoring-enabled]\n"
    found, res = run(text)
    assert found == [("RG204", 11, 20)]
    assert res.findings[0].message == ("`gates`: 'monitoring-enabled' is not a values path (names of letters, digits "
                                       "and `_`, joined by `.`); write `monitoring_enabled` instead")
