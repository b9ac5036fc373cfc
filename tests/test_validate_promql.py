"""PromQL (RG301, RG303, RG304) with the position of the fault inside the expression."""

from __future__ import annotations

import pytest

from rulegen.validate import validate_texts
from rulegen.validate.checks.promql import locate_error


def spec(expr):
    return f"""\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: {expr}
        severity: warning
        summary: Down.
        description: Down.
"""


def run(expr):
    res = validate_texts({"a.yaml": spec(expr)})
    return [(f.code, f.line, f.col) for f in res.findings], res


def test_valid_expression():
    assert run('rate(x{job="a"}[5m]) > 0')[0] == []


def test_unclosed_paren_points_at_it():
    found, res = run("sum(rate(x[5m]) > 0")
    assert found == [("RG301", 6, 18)]
    assert res.findings[0].message == "expr does not parse as PromQL: unclosed left parenthesis"


def test_unexpected_character_in_braces():
    found, _ = run("x{a~'b'} > 0")
    assert found == [("RG301", 6, 18)]


def test_unlocated_error_is_at_the_expression_start():
    found, _ = run("up ==")
    assert found == [("RG301", 6, 15)]


def test_range_on_an_expression_points_at_the_bracket():
    found, res = run("max_over_time(x > 0[5m]) > 0")
    assert found == [("RG303", 6, 34)]
    assert "subquery such as (x > 0)[5m:1m]" in res.findings[0].message


def test_error_inside_a_block_scalar_expression():
    # the `)` on the last line closes rate(, so the ( after by (job) is the unclosed one
    found, _ = run("|\n          sum by (job) (\n            rate(x[5m]\n          ) > 0")
    assert found == [("RG301", 7, 24)]


def test_never_resolving_alert_is_a_warning():
    found, res = run("vector(1)")
    assert found == [("RG304", 6, 15)]
    assert not res.findings[0].is_error


@pytest.mark.parametrize("expr,warned", [
    ('rate(http_errors_total[5m])', True),
    ('sum(rate(x[5m])) > bool 1', True),
    # regression: a presence alert on a bare selector resolves when the series goes away
    ('pg_general_index_info_pg_relation_size{indexrelname=~".*ccnew.*"}', False),
    ('ALERTS{alertname="Watchdog"}', False),
    ('sum(rate(x[5m])) > 1', False),
])
def test_presence_alerts_are_not_never_resolving(expr, warned):
    found, _ = run(expr)
    assert [c for c, *_ in found if c == "RG304"] == (["RG304"] if warned else [])


@pytest.mark.parametrize("expr,message,offset", [
    ("sum(rate(x[5m])", "unclosed left parenthesis", 3),
    ('sum(x{a="("})', "unclosed left parenthesis", None),
    ('foo{a="(b"', "unexpected end of input inside braces", 3),
    ("rate(x[5m]) + max_over_time(sum(x)[5m])", "ranges only allowed for vector selectors", 34),
    ("x > 0", "invalid promql query", None),
])
def test_locate_error(expr, message, offset):
    assert locate_error(expr, message) == offset
