"""YAML traps (RG108) with exact positions; RG202 for values rulegen itself reads as non-strings."""

from __future__ import annotations

import textwrap

import pytest

from rulegen.validate import validate_texts
from rulegen.validate.checks.yamltraps import yaml11_type


def run(text):
    res = validate_texts({"a.yaml": textwrap.dedent(text)})
    return [(f.code, f.line, f.col) for f in res.findings], res


SPEC = """\
app: demo
labels:
  paging: {paging}
groups:
  - name: demo
    labels: {{tier: {tier}}}
    rules:
      - alert: DemoDown
        expr: up == 0
        severity: warning
        summary: Demo is down.
        description: Demo is down.
        labels:
          team: {team}
        annotations:
          dashboard: {dash}
        tests:
          - name: fires
            input_series: [{{series: up, values: "0x5"}}]
            external_labels: {{region: {region}}}
            alert_rule_test:
              - eval_time: 5m
                exp_alerts:
                  - exp_labels: {{flag: {flag}}}
"""


def fill(**kw):
    base = dict(paging='"on"', tier="web", team="ai", dash="main", region="eu", flag="x")
    base.update(kw)
    return SPEC.format(**base)


def test_clean_spec_has_no_trap():
    found, res = run(fill())
    assert found == []
    assert len(res.specs) == 1


@pytest.mark.parametrize("kw,pos", [
    (dict(paging="off"), (3, 11)),
    (dict(tier="yes"), (6, 20)),
    (dict(team="n"), (14, 17)),
    (dict(dash="1:20"), (16, 22)),
])
def test_each_place_is_checked(kw, pos):
    found, res = run(fill(**kw))
    assert found == [("RG108", *pos)]
    assert "quote it" in res.findings[0].message
    assert res.specs  # a trap does not stop the other checks


@pytest.mark.parametrize("region,flag,want", [
    ("y", "on", ("y", "on")),
    ("true", "0.990", ("true", "0.990")),
    ("12345", "0x1F", ("12345", "0x1F")),
    ("~", "", ("", "")),
])
def test_test_labels_are_read_as_promtool_reads_them(region, flag, want):
    """promtool (go-yaml v2 into map[string]string) reads any scalar of a test's labels as
    its text, so there is no trap there: no RG108, no RG202, and the value is that text."""
    found, res = run(fill(region=region, flag=flag))
    assert found == []
    t = next(r for _, r in res.specs[0].rules()).tests[0].data
    assert (t["external_labels"]["region"], t["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"]["flag"]) == want


def test_trap_message_names_the_value_and_type():
    _, res = run(fill(paging="off"))
    assert res.findings[0].message == (
        'label value off is unquoted, and YAML 1.1 readers such as Kubernetes read it as a '
        "boolean, not the string 'off'; quote it: \"off\"")


def test_numbers_read_as_numbers_are_schema_rg202_with_source_text():
    found, res = run(fill(team="0x15"))
    assert found == [("RG202", 14, 17)]
    assert "YAML reads 0x15 as the number 21" in res.findings[0].message
    found, _ = run(fill(team="~"))
    assert found == [("RG202", 14, 17)]


def test_unquoted_input_series_values_are_read_as_written():
    # docs/spec-format.md said "quote it: YAML reads 0x15 as the number 21" of a test's values:
    # rulegen reads them as promtool does, as the text written (0 and 15 more 0s), quoted or not
    found, res = run(fill().replace('values: "0x5"', "values: 0x15"))
    assert found == []
    t = next(r for _, r in res.specs[0].rules()).tests[0].data
    assert t["input_series"][0]["values"] == "0x15"


def test_quoted_values_are_fine():
    found, _ = run(fill(paging="'off'", tier='"yes"', team='"5"', dash="'1:20'", region='"y"', flag='"on"'))
    assert found == []


@pytest.mark.parametrize("text,kind", [
    ("off", "boolean"), ("yes", "boolean"), ("on", "boolean"), ("no", "boolean"),
    ("y", "boolean"), ("n", "boolean"), ("True", "boolean"), ("~", "null"), ("null", "null"),
    ("5", "number"), ("1e3", "number"), ("0x1F", "number"), ("1_000", "number"),
    ("1:20", "number"), ("0o17", "number"), ("-1.5", "number"), (".inf", "number"),
    ("2024-01-31", "timestamp"),
    ("critical", None), ("v1.2", None), ("10.0.0.1", None), (".", None), ("1.2.3", None),
    ("e3", None), ("-", None), ("NaN", None),
])
def test_yaml11_type(text, kind):
    assert yaml11_type(text) == kind
