"""PromQL text cut into strings, comments and code as Prometheus' lexer reads it, and written so
that a runbook page carries it unchanged (rulegen.promql.pieces)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from rulegen.promql.pieces import UNSHOWABLE, for_page, pieces
from rulegen.promql.syntax import parse

#: Bits of PromQL text, hostile characters among them, that random exprs are made of.
_BITS = st.sampled_from([
    "up", "x", " ", "\t", "\n", "\r", "\r\n", "+", " > ", " == ", "1", "0.5", "(", ")", "{", "}",
    'job="', "job='", "job=`", '"', "'", "`", "\\", "\\\\", '\\"', "#", "# c", "a", "\x00", "\x02", "\x03",
    "\x1b", "\x7f", "\x85", "\u2028", "\u202e", "\u200b", "\ufeff", "é", ",",
])


@given(st.lists(_BITS, max_size=20).map("".join))
def test_pieces_join_to_the_text(expr):
    assert "".join(t for _, t in pieces(expr)) == expr


@given(st.lists(_BITS, max_size=20).map("".join))
def test_for_page_keeps_the_query_and_shows_every_character(expr):
    shown = for_page(expr)
    assert for_page(shown) == shown  # idempotent
    assert "\r" not in shown
    # inside strings nothing unshowable is left; outside them, only the tabs (white space)
    for kind, text in pieces(shown):
        left = set(UNSHOWABLE.findall(text))
        assert not left or (kind == "code" and left == {"\t"}), (expr, shown)
    ast, err = parse(expr)
    if err is None:
        ast2, err2 = parse(shown)
        assert err2 is None and repr(ast2) == repr(ast), (expr, shown)


def test_for_page_leaves_ordinary_exprs_as_written():
    for expr in ['sum by (job) (rate(x{a="b"}[5m])) > 0.05', "up{job=`a\\d`} # note\n== 0", "absent(up)"]:
        assert for_page(expr) == expr


def test_strings_and_comments():
    assert list(pieces('a{b="x#\\"y"} # c\r+ `z`')) == [
        ("code", "a{b="), ("string", '"x#\\"y"'), ("code", "} "), ("comment", "# c"),
        ("code", "\r+ "), ("string", "`z`")]
    assert for_page('a{b="x\ty"} # c\u202e\r+ `z\tw`') == 'a{b="x\\ty"} # c\\u202e\n+ "z\\tw"'
