"""Code on the runbook pages: inline code and fenced blocks that nothing inside can end early,
the PromQL that the site's script links to Prometheus and Grafana, and the "Fires when"
sentence of an alert (moved out of :mod:`rulegen.render.runbook`, which re-exports them).

PromQL that gets "Open in Prometheus · Grafana" links is marked with a class, and the site's
script (``runbooks/assets/rulegen.js``) adds the links next to it, built from the text the
page shows; the pages hold no query address (issue 29: the addresses were a fifth of a new
team's pull request, and changing ``runbooks.prometheus_url`` rewrote every page). The marks
(Python-Markdown's ``attr_list`` on a code span, pymdownx.superfences' attribute list on a
fence; a class on the ``<code>`` element, or on the block's ``<div class="... highlight">``):

* :data:`PROMQL` (``rg-promql``): the code is one query (:func:`promql_code`,
  :func:`promql_block`);
* :data:`PROMQL_LINES` (``rg-promql-lines``): a block of one query per line, linked one by one
  (:func:`promql_blocks` of several one-line queries).

The script reads no PromQL: an alert that compares a query with a number shows the two apart
(:func:`fires_when`, from :func:`rulegen.promql.compared.comparison`), so the link opens
exactly the query shown.
"""

from __future__ import annotations

import re

from ..promql.compared import comparison
from ..promql.pieces import for_page, pieces
from ..spec.durations import canonical
from . import safe

#: The class of a code span or PromQL block that holds one query the site's script links.
PROMQL = "rg-promql"
#: The class of a PromQL block of one query per line, each linked on its own (numbered).
PROMQL_LINES = "rg-promql-lines"

_TICKS = re.compile(r"`+")


def fence(text: str, lang: str) -> str:
    """A fenced code block that no backtick run inside ``text`` can close early. ``lang``: the
    fence's info string (``promql``, or with an attribute list: ``promql { .rg-promql }``)."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0) if "`" in text else 0
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


#: Characters of an HTML ``<code>`` element's text written as numeric references (see
#: :func:`inline_code`): HTML's, Markdown's inline syntax, and a table's cell separator.
_CODE_ESCAPED = frozenset("&<>\"'\\`*_{}[]()#+!|~:")


def inline_code(s: str, cls: str | None = None) -> str:
    """``s`` as inline code, whatever backticks it holds (a line break is a space). A text
    holding an unfinished character reference (``&#`` not followed by a digit, see
    :data:`rulegen.render.safe.DANGLING_REF`) is written as an HTML ``<code>`` element with
    every character Markdown or HTML reads escaped as a numeric reference instead: in a
    Markdown code span it would make the page's later HTML blocks unreadable. ``cls``: a class
    of the ``<code>`` element (a plain word such as :data:`PROMQL`; ``attr_list``'s
    ``{ .cls }`` right after a code span)."""
    s = s.replace("\n", " ")
    if safe.DANGLING_REF.search(s):
        attr = f' class="{cls}"' if cls else ""
        return f"<code{attr}>" + "".join(f"&#{ord(c)};" if c in _CODE_ESCAPED else c for c in s) + "</code>"
    if "`" not in s:
        code = f"`{s}`"
    else:
        longest = max((len(m) for m in _TICKS.findall(s)), default=0)
        ticks = "`" * (longest + 1)
        pad = " " if s.startswith("`") or s.endswith("`") else ""
        code = f"{ticks}{pad}{s}{pad}{ticks}"
    return code + (f"{{ .{cls} }}" if cls else "")


def promql_code(query: str) -> str:
    """``query`` (one line) as inline code marked :data:`PROMQL`: the script links it. Written
    as :func:`rulegen.promql.pieces.for_page` writes it (the same query, every character one
    a page carries and a reader sees)."""
    return inline_code(for_page(query.strip()), PROMQL)


def promql_block(text: str, lines: bool = False) -> str:
    """``text`` as a ``promql`` block marked :data:`PROMQL` (one query), or
    :data:`PROMQL_LINES` (``lines``: one query per line), written as
    :func:`rulegen.promql.pieces.for_page` writes it."""
    return fence(for_page(text), f"promql {{ .{PROMQL_LINES if lines else PROMQL} }}")


def promql_blocks(queries: list[str]) -> str:
    """PromQL blocks for ``queries``, each linked by the script: one block of one query per
    line when every query is one line (a block of a single query when there is one), else a
    block per query (a query over lines cannot share a block with others: the script would
    not know where it ends)."""
    queries = [for_page(q.strip()) for q in queries]  # a carriage return is a line break
    if len(queries) == 1:
        return promql_block(queries[0])
    if all("\n" not in q for q in queries):
        return promql_block("\n".join(queries), lines=True)
    return "\n\n".join(promql_block(q) for q in queries)


def one_line_promql(text: str) -> str:
    """PromQL ``text`` on one line, for inline code (the number side of a comparison, an SLO's
    counter): as :func:`rulegen.promql.pieces.for_page` writes it, or, written over lines,
    without its comments and with each run of white space as one space (a comment on the line
    would swallow what follows: ``# 5%<LF>0.05`` is ``0.05``)."""
    text = for_page(text)
    if "\n" not in text:
        return text
    return " ".join("".join(t for kind, t in pieces(text) if kind != "comment").split())


#: A query this short and on one line is quoted inside the "Fires when" sentence; a longer one
#: is a PromQL block of its own.
INLINE_EXPR_MAX = 100


def fires_when(rule) -> str:
    """What says when alert ``rule`` fires, for a person (Markdown: a paragraph, or two with
    the PromQL block between them), its query marked for the site's links, one fact a line.

    An expr that compares a query with a number (:func:`rulegen.promql.compared.comparison`:
    ``A > 0.05``, ``0.05 < A``) shows the two apart: "Fires when `A` / is `> 0.05` /
    continuously for **10m**." (a long ``A``: "Fires when the PromQL below / is `> 0.05` /
    continuously for **10m**:" and the block), so a threshold edit changes one line and the link
    opens ``A``: every series, firing or not. Any other expr is shown whole: "Fires when
    `absent(up)` / holds (returns at least one series) / continuously for **5m**." (long: "Fires
    when the PromQL below returns at least one series / continuously for **5m**." and the
    block). The sentence always ends before a block, so the links after it never split it. Durations in Prometheus syntax; no ``for``: "at the first evaluation that sees it";
    ``keep_firing_for`` on a line of its own. The values keys that override them are explained
    once, at the top of the page."""
    expr = rule.expr.strip()
    found = comparison(expr)
    # as the page can show it: a carriage return ending a comment is a line break
    query = for_page(found.query if found else expr)
    short = "\n" not in query and len(query) <= INLINE_EXPR_MAX
    if found:
        what = f"is {inline_code(f'{found.op} {one_line_promql(found.number)}')}"
    else:
        what = "holds (returns at least one series)" if short else "the PromQL below returns at least one series"
    # one fact per line (Markdown joins them with a space): a changed `for`, threshold or
    # query changes its own line of the page
    if rule.for_ and canonical(rule.for_) != "0s":
        when = f"{what}\ncontinuously for **{canonical(rule.for_)}**"
    else:
        when = f"{what},\nat the first evaluation that sees it (no `for`)"
    if rule.keep_firing_for and canonical(rule.keep_firing_for) != "0s":
        when += f",\nand keeps firing for **{canonical(rule.keep_firing_for)}** after it stops holding"
    if short:
        return f"Fires when {promql_code(query)}\n{when}."
    if found:  # the sentence ends before the block, whose links the site's script adds after it
        return f"Fires when the PromQL below\n{when}:\n\n{promql_block(query)}"
    return f"Fires when {when}.\n\n{promql_block(query)}"
