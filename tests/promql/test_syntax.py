"""PromQL parsing and node walking (rulegen.promql.syntax)."""

from __future__ import annotations

import promql_parser

from rulegen.promql.syntax import MAX_NESTING, nesting, nodes, parse, parsed


def test_parse_returns_ast_or_message_and_is_cached():
    ast, err = parse("sum(rate(x[5m])) > 1")
    assert err is None and type(ast).__name__ == "BinaryExpr"
    assert parse("sum(rate(x[5m])) > 1")[0] is ast
    ast, err = parse("sum(rate(x[5m])")
    assert ast is None and "unclosed left parenthesis" in err
    assert parsed("sum(") is None


def test_too_deep_nesting_is_refused_unparsed():
    deep = "(" * (MAX_NESTING + 1) + "1" + ")" * (MAX_NESTING + 1)
    assert nesting(deep) == MAX_NESTING + 1
    ast, err = parse(deep)
    assert ast is None and f"nested {MAX_NESTING + 1} levels deep" in err


def test_nodes_in_walk_order():
    ast = promql_parser.parse('sum by (job) (rate(x{a="b"}[5m])) / on (job) count(y) > bool 2')
    walked: list = []
    promql_parser.walk(ast, pre_visit=lambda n: walked.append(type(n).__name__) or True)
    assert [type(n).__name__ for n in nodes(ast)] == walked
