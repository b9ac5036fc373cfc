"""Adversarial review of the runbook site's "Open in Prometheus · Grafana" links (issue 29): the
site's script links the PromQL text each page shows, so the text a page shows must read, and
run, as the alert's expr does. Each test is a hostile spec text and asserts that the query
the page shows (rendered as the site renders it, read as the script reads it) is the expr's.
"""

from __future__ import annotations

import re
import unicodedata
from types import SimpleNamespace

import pytest

from rulegen.promql.syntax import parse
from rulegen.render.code_md import fires_when, promql_blocks
from rulegen.render.wrap import wrap_markdown

from helpers import flat, marked_queries

#: Exprs whose text Markdown and HTML do not carry as written: a carriage return ending a
#: comment (Prometheus' lexer ends one at CR as at LF), a tab, NUL, STX and ETX in a label
#: value, a raw string over two lines, control and format characters a reader cannot see.
HOSTILE_EXPRS = [
    "sum(up) # a note\r> 0",                  # the comparison after the comment's CR
    "sum(up) # a note\r+ 1 > 3",              # the rest of the query after it
    "sum(up) # a note\r\n+ 1",                # CR LF
    "up # c\r> 0 # d\r",
    'up{job="a\tb"} == 0',                     # a tab in a label value (not spaces)
    "up{job='a\tb'} > 0",
    'up{job="a\x00b\x02c\x03"} > 0',           # NUL, STX, ETX
    'up{job="a\x1b[31mb\x7f"} > 0',
    "up{job=`a\tb`} > 0",                      # a raw string: no escapes in it
    'up{job=`a\\"\tb`} > 0',
    "up{job=`a\n   \nb`} > 0",                # a raw string over lines, one of spaces
    'absent(up{job="x\ty"})',
    'up{job="a\u202eb"} > 0',                 # a right-to-left override
    'up{job="a\u200bb\u2028c"} > 0',           # zero width space, line separator
    "up # \u202e 0 < \n > 1",                 # one in a comment
    "up >\n  # the threshold\n  0",           # the number over lines, after a comment
    "up > # c\r0",
]


def _same(a: str, b: str) -> bool:
    """Whether PromQL texts ``a`` and ``b`` parse to the same AST."""
    (x, ex), (y, ey) = parse(a), parse(b)
    assert ex is None and ey is None, (a, ex, b, ey)
    return repr(x) == repr(y)


def _page_meaning(rule) -> str:
    """The expr the page's "Fires when" says, as a person (or the script) reads the rendered
    page: the marked query (the script's link), and after a line break the comparison the page
    states (``is `> 0.05```, read as written after the query) when it states one."""
    text = wrap_markdown(fires_when(rule))
    queries = marked_queries(text)
    assert len(queries) == 1, text
    stated = re.search(r" is `([^`]*)`", flat(text).replace("``", "`"))
    return queries[0] + ("\n" + stated.group(1) if stated else "")


@pytest.mark.parametrize("expr", HOSTILE_EXPRS)
def test_fires_when_shows_and_links_the_expr_as_it_runs(expr):
    """``sum(up) # a note<CR>+ 1 > 3`` was shown, and linked, as ``sum(up) # a note + 1 > 3``
    (a carriage return is a space on the pages), which Prometheus reads as ``sum(up)``; a tab
    in a label value was linked as spaces, NUL, STX and ETX dropped: the link opened another
    query than the one the alert runs."""
    rule = SimpleNamespace(expr=expr, for_="5m", keep_firing_for=None)
    assert _same(_page_meaning(rule), expr)


@pytest.mark.parametrize("expr", HOSTILE_EXPRS)
def test_shown_promql_has_no_invisible_characters(expr):
    """Every character of a query the page shows is one a reader sees: no control character,
    no bidirectional or zero-width format character (a right-to-left override makes the rest
    of the line read backwards)."""
    rule = SimpleNamespace(expr=expr, for_="5m", keep_firing_for=None)
    for q in marked_queries(wrap_markdown(fires_when(rule))):
        hidden = [c for c in q if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") and c != "\n"]
        assert not hidden, (q, hidden)


def test_diagnosis_queries_keep_their_value_and_lines():
    """A runbook's ``promql`` block of one-line queries is linked one query per line: a
    carriage return in one of them made two lines, two links to halves of it."""
    queries = ["sum(up) # c\r+ 1", 'up{job="a\tb"}', "rate(x[5m])"]
    shown = marked_queries(promql_blocks(queries))
    assert len(shown) == len(queries), shown
    for q, s in zip(queries, shown):
        assert _same(s, q)


@pytest.mark.parametrize("line_end", ["\n", "\r", "\r\n"])
def test_a_carriage_return_ends_a_comment_for_every_reader(line_end):
    """Prometheus' lexer ends a comment at a carriage return as at a line feed: the split of a
    compared expr and the raw-string rewrite for the parser read the text after it as code too
    (``x # c<CR>> 0`` is ``x > 0``; a raw string holding a backslash after such a comment was
    left to promql-parser, which read the backslash as an escape: a false syntax error)."""
    from rulegen.promql.compared import comparison
    found = comparison(f"sum(x) # c{line_end}> 0.5")
    assert found is not None and (found.op, found.number) == (">", "0.5")
    assert _same(found.query, "sum(x)")
    expr = "up{a=`x\\`} # c" + line_end + " + up{b=`y\\`}"
    assert parse(expr)[1] is None


def test_a_query_written_as_an_html_code_element_is_never_broken_over_lines():
    """A query holding an unfinished character reference (``&#`` and no digit) is written as
    an HTML ``<code>`` element; the page's 120-character wrap broke its line at a space inside
    it, inside a label value: the script linked ``job="x &#y ... the<LF>width"``, which
    Prometheus refuses (a line break in a string)."""
    from rulegen.render.wrap import atoms
    expr = 'up{job="x &#y long text with spaces in it, long enough to pass the width"} > 0'
    rule = SimpleNamespace(expr=expr, for_="5m", keep_firing_for=None)
    text = wrap_markdown(fires_when(rule))
    assert "<code" in text
    assert marked_queries(text) == ['up{job="x &#y long text with spaces in it, long enough to pass the width"}']
    # the kind: an inline <code> element is one atom, whatever it holds
    assert atoms('a <code class="c">x &#38; y</code> b <code>z</code>') == \
        ["a", '<code class="c">x &#38; y</code>', "b", "<code>z</code>"]
