"""PromQL (RG301, RG303, RG304) with the position of the fault inside the expression."""

from __future__ import annotations

import pytest

from rulegen.promql.syntax import MAX_DEPTH
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
    assert res.findings[0].message == "expr does not parse as PromQL: unclosed left parenthesis; add the missing `)`"


def test_unexpected_character_in_braces():
    found, _ = run("x{a~'b'} > 0")
    assert found == [("RG301", 6, 18)]


def test_dangling_operator_is_at_the_end():
    found, res = run("up ==")
    assert found == [("RG301", 6, 20)]
    assert res.findings[0].message == ("expr does not parse as PromQL: unexpected end of input: an operator "
                                       "needs a right-hand side; correct the expression where this points (promtool check rules reads it the same way)")


def test_single_equals_is_at_the_equals_sign(monkeypatch):
    # issue 12: `redis_up{job="x"} = 0` got "invalid promql query" at the start of the expr, where
    # promtool says 1:19: parse error: unexpected "="; rulegen places it without promtool too
    from rulegen.tools import find
    monkeypatch.setattr(find, "find", lambda *a, **k: None)
    found, res = run('redis_up{job="x"} = 0')
    assert found == [("RG301", 6, 33)]  # the `=`: column 19 of the expression, as promtool says
    assert res.findings[0].message == 'expr does not parse as PromQL: unexpected "="; compare with "=="; correct the expression where this points (promtool check rules reads it the same way)'


def test_unlocated_error_without_promtool_is_at_the_expression_start(monkeypatch):
    from rulegen.tools import find
    from rulegen.validate.checks import promql
    monkeypatch.setattr(find, "find", lambda *a, **k: None)
    promql.promtool_errors.cache_clear()
    found, res = run("sum by job (x) > 1")
    assert found == [("RG301", 6, 15)]
    assert res.findings[0].message == "expr does not parse as PromQL: invalid promql query; correct the expression where this points (promtool check rules reads it the same way)"


def test_unlocated_error_takes_promtools_position_and_message(promtool_bin):
    from rulegen.validate.checks import promql
    promql.promtool_errors.cache_clear()
    found, res = run("sum by job (x) > 1")
    assert found == [("RG301", 6, 22)]  # promtool: 1:8
    assert res.findings[0].message == ('expr does not parse as PromQL: unexpected identifier "job" in grouping '
                                       'opts, expected "("; correct the expression where this points (promtool check rules reads it the same way)')


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


# -- large and deep expressions: findings, never a killed or crashed process -----------------

def test_node_listing_matches_promql_parser_walk(shared_dir):
    # nodes() reads children through attributes instead of promql_parser.walk (whose cost grew
    # with the cube of the size: a 400-term sum took 5 GB); both must list the same nodes
    import promql_parser
    import yaml
    from pathlib import Path

    from rulegen.validate.checks import promql as P
    exprs = ['sum by (a) (rate(x[5m]))', 'topk(3, x)', 'x[5m:1m] offset 1m', '-x', '(x)',
             'quantile_over_time(0.9, x[5m])', 'count_values("v", x)', 'a and on(b) group_left c',
             'label_replace(up, "a", "$1", "b", "(.*)")', 'absent(x) or vector(1) * -(-2)']
    for f in sorted((shared_dir / "corpus").rglob("*.y*ml")) + sorted(Path(P.__file__).parents[3].glob("rules/*.yaml")):
        try:
            doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        except yaml.YAMLError:
            continue  # the kube-prometheus-stack chart's Helm templates are not YAML
        for g in (doc or {}).get("groups") or [] if isinstance(doc, dict) else []:
            exprs += [str(r["expr"]) for r in g.get("rules") or [] if isinstance(r, dict) and "expr" in r]
    assert len(exprs) > 900
    for e in exprs:
        ast, err = P.parse(e)
        if err is not None:
            continue
        walked: list = []
        promql_parser.walk(ast, pre_visit=lambda n: walked.append(n) or True)
        got = P.nodes(ast)
        assert [type(n).__name__ for n in got] == [type(n).__name__ for n in walked], e
        assert [n.prettify() for n in got] == [n.prettify() for n in walked], e


def test_a_long_sum_is_checked_quickly():
    # a sum at the largest size rulegen checks (RG316 past it): walking its nodes once cost
    # the cube of its size through promql_parser.walk (a 400-term sum took 5 GB)
    expr = " + ".join(f'up{{job="a{i}"}}' for i in range(MAX_DEPTH)) + " > 0"
    found, _ = run(f"'{expr}'")
    assert found == []


@pytest.mark.parametrize("depth", [300, 200_000])
def test_deep_nesting_is_rg316_unparsed(depth):
    # 200,000 levels crashed the interpreter inside the Rust parser; thousands took GBs
    found, res = run("'" + "(" * depth + "up" + ")" * depth + " > 0'")
    assert [c for c, _, _ in found] == ["RG316"]
    assert f"nested brackets count {depth + 1} " in res.findings[0].message
