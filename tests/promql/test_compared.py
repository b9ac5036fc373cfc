"""The value an alert compares with a number (rulegen.promql.compared): what the runbook page
shows apart from the comparison ("Fires when `A` / is `> 0.05`"), and what the site's "Open in
Prometheus" link of the alert opens instead of the whole expr (issue 29: a threshold edit
changed the page's "Fires when" and the link's address, the same fact twice)."""

from __future__ import annotations

import pytest

from rulegen.promql.compared import comparison, compared_query, top_level_operators
from rulegen.promql.syntax import parsed


@pytest.mark.parametrize("expr, query", [
    # either side
    ("rate(errors_total[5m]) > 0.05", "rate(errors_total[5m])"),
    ("0.05 < rate(errors_total[5m])", "rate(errors_total[5m])"),
    ("up == 0", "up"),
    ("0 != up", "up"),
    ("x >= 3", "x"),
    ("x <= 3", "x"),
    # parentheses around the whole expr, the literal or the query
    ("(up == 0)", "up"),
    ("((\n  up == 0\n))", "up"),
    ("x > (0.5)", "x"),
    ("(x) > 1", "(x)"),
    ("(sum(a) / sum(b)) > 1", "(sum(a) / sum(b))"),
    # negative and scientific literals, hex, Inf
    ("x > -1", "x"),
    ("x > - 1", "x"),
    ("x > -(1)", "x"),
    ("-1.5e3 < x", "x"),
    ("x < 1e-3", "x"),
    ("x > 0x10", "x"),
    ("x < Inf", "x"),
    # strings, comments and brackets holding comparison characters
    ('x{code=">500", le="<1"} > 1', 'x{code=">500", le="<1"}'),
    ("x{a!='b'} != 0", "x{a!='b'}"),
    ('x{a=~`<\\d>`} > 1', 'x{a=~`<\\d>`}'),
    ("x  # above 5 > 2\n  > 5", "x  # above 5 > 2"),
    ("# pages when y > 1\ny > 1", "# pages when y > 1\ny"),
    ("(x > 1) # the threshold", "x"),
    ("sum by (a) (x > 1) > 3", "sum by (a) (x > 1)"),
    ("max_over_time((x > 1)[5m:1m]) > 0", "max_over_time((x > 1)[5m:1m])"),
    # a filter compared again: the value compared with the number is the filtered query
    ("x > y > 3", "x > y"),
    ("(x > bool 1) == 1", "(x > bool 1)"),
    # an operator of higher precedence than the comparison stays in the query
    ("x / y * 100 > 80", "x / y * 100"),
])
def test_the_query_side_as_written(expr, query):
    assert compared_query(expr) == query
    assert parsed(query) is not None  # what the link opens is PromQL


@pytest.mark.parametrize("expr", [
    "absent(up{job=\"x\"})",
    "x > y",                       # a query on both sides
    "x > 1 and y > 3",             # the root is `and`
    "x > 1 or y > 3",
    "x > 1 unless y",
    "x > bool 1",                  # 0/1 for every series: not a threshold
    "1 < bool x",
    "x > on() 1",                  # does not parse (a vector-scalar match)
    "x > 1 offset 5m",             # does not parse
    "vector(1)",
    "x",
    "sum(x > 1)",                  # the comparison is inside a call, not at the top level
    "x > (y + 1)",                 # the right side is a query, not a number literal
    "x > scalar(y)",
    "not promql ((",
])
def test_every_other_expr_has_no_compared_query(expr):
    assert compared_query(expr) is None


@pytest.mark.parametrize("expr, op, number, written_query_first", [
    ("x > 0.05", ">", "0.05", "x > 0.05"), ("0.05 < x", ">", "0.05", "x > 0.05"), ("0.05 > x", "<", "0.05", "x < 0.05"),
    ("3 >= x", "<=", "3", "x <= 3"), ("3 <= x", ">=", "3", "x >= 3"), ("0 != x", "!=", "0", "x != 0"),
    ("1 == x", "==", "1", "x == 1"), ("(x > (1e-3))", ">", "(1e-3)", "x > (1e-3)"), ("x < -1", "<", "-1", "x < -1"),
    ("-1.5e3 < x", ">", "-1.5e3", "x > -1.5e3"), ("x > 1 # the threshold", ">", "1 # the threshold", "x > 1"),
])
def test_the_comparison_reads_with_the_query_first(expr, op, number, written_query_first):
    """The page says "`x` / is `> 0.05`" for ``0.05 < x`` too: the operator mirrored when the
    number is written first, the number as written; "query op number" is the comparison of the
    expr written with the query first."""
    assert comparison(expr) == ("x", op, number)
    shown = parsed(f"x {op} {number}")
    assert shown is not None and repr(shown) == repr(parsed(written_query_first))


def test_a_multi_line_expr_keeps_the_query_as_written():
    expr = ("sum by (namespace) (\n"
            "  rate(http_requests_total{code=~\"5..\"}[5m])\n"
            ")\n"
            "  /\n"
            "sum by (namespace) (rate(http_requests_total[5m]))\n"
            "  > 0.05\n")
    assert compared_query(expr) == expr[:expr.index("\n  > 0.05")]
    assert compared_query("0.05\n  <\n" + expr.split("\n  > ")[0]) == expr[:expr.index("\n  > 0.05")]


def test_a_threshold_edit_does_not_change_the_query():
    """The point of linking the compared value: the link is the same whatever the threshold."""
    queries = {compared_query(f"increase(restarts[15m]) > {n}") for n in ("3", "4", "3.5", "-1", "1e2")}
    assert queries == {"increase(restarts[15m])"}


def test_param_defaults_are_what_the_page_shows():
    """A spec's ``[[name]]`` placeholders: the page shows (and links) the expr with their
    defaults in (rulegen.spec.model.Rule.expr); the placeholder text itself is not PromQL."""
    from rulegen.spec.model import substitute
    template = "increase(restarts[[[window]]]) > [[limit]]"
    assert compared_query(template) is None
    assert compared_query(substitute(template, {"window": "15m", "limit": "3"})) == "increase(restarts[15m])"


def test_top_level_operators_skip_strings_comments_and_brackets():
    expr = 'a{x=">", y!="<"} >= b[5m] # c == d\n  == (e < f) != "g > h"'
    assert [op for _, op in top_level_operators(expr)] == [">=", "==", "!="]
    assert [op for _, op in top_level_operators("a >= b <= c == d != e > f < g")] == [">=", "<=", "==", "!=", ">", "<"]
    assert top_level_operators('a{b="\\">"} > 1') == [(11, ">")]  # an escaped quote does not end the string
