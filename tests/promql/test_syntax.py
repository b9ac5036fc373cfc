"""PromQL parsing and node walking (rulegen.promql.syntax)."""

from __future__ import annotations

import promql_parser
import pytest

from rulegen.promql.syntax import MAX_DEPTH, for_parser, nesting, nodes, parse, parsed


def test_parse_returns_ast_or_message_and_is_cached():
    ast, err = parse("sum(rate(x[5m])) > 1")
    assert err is None and type(ast).__name__ == "BinaryExpr"
    assert parse("sum(rate(x[5m])) > 1")[0] is ast
    ast, err = parse("sum(rate(x[5m])")
    assert ast is None and "unclosed left parenthesis" in err
    assert parsed("sum(") is None


def test_too_deep_nesting_is_refused_unparsed():
    deep = "(" * (MAX_DEPTH + 1) + "1" + ")" * (MAX_DEPTH + 1)
    assert nesting(deep) == MAX_DEPTH + 1
    ast, err = parse(deep)
    assert ast is None and f"nested brackets count {MAX_DEPTH + 1} " in err
    assert parse(deep[1:-1])[1] is None


def test_nodes_in_walk_order():
    ast = promql_parser.parse('sum by (job) (rate(x{a="b"}[5m])) / on (job) count(y) > bool 2')
    walked: list = []
    promql_parser.walk(ast, pre_visit=lambda n: walked.append(type(n).__name__) or True)
    assert [type(n).__name__ for n in nodes(ast)] == walked


@pytest.mark.parametrize("expr,pretty", [
    ("up{job=`a\\`}", 'up{job="a\\\\"}'),                 # a raw string ending in a backslash
    ("up{job=~`a\\d+`}", 'up{job=~"a\\\\d+"}'),           # a regex class, no escape in a raw string
    ('up{job=`x"\\`, i="q\\"`"}', 'up{i="q\\"`",job="x\\"\\\\"}'),
])
def test_raw_strings_have_no_escapes(expr, pretty):
    """In Prometheus a backquoted string is raw (Go): ``a\\`` is the two characters a and
    backslash. promql-parser reads the backslash as an escape; :func:`for_parser` hands it the
    double-quoted string Prometheus reads, so such expressions parse, to the same value."""
    ast, err = parse(expr)
    assert err is None
    assert ast.prettify() == pretty


def test_raw_strings_rewritten_only_where_needed():
    # unchanged: no backslash, a backquote inside a double-quoted string or a comment
    for expr in ("up{job=`a`}", 'up{job="a\\\\`"}', "up # `x\\`"):
        assert for_parser(expr) == expr
    # still an error where Prometheus has one: an unterminated raw string, a bad escape in "..."
    assert parse("up{job=`a\\}")[1] is not None
    assert parse('up{job="a\\d"}')[1] is not None
