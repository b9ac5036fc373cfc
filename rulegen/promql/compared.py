"""The value an alert compares with a number: ``rate(errors[5m]) > 0.05`` compares
``rate(errors[5m])``, as the spec wrote it, with ``> 0.05`` (:func:`comparison`).

The runbook page shows such an alert's expr apart, "Fires when ``rate(errors[5m])`` / is
``> 0.05``", and the site's script links the query it shows (every series, firing or not, with
its value now); a threshold edit then changes the one line of the page that states the
threshold (issue 29).
"""

from __future__ import annotations

from typing import NamedTuple

import promql_parser as pp

from .pieces import pieces
from .syntax import parse

#: PromQL's comparison operators, two-character ones first (the scan's longest match).
COMPARISONS = ("==", "!=", ">=", "<=", ">", "<")
#: Each operator with its sides swapped: ``0.05 < A`` is ``A > 0.05``.
MIRROR = {"==": "==", "!=": "!=", ">=": "<=", "<=": ">=", ">": "<", "<": ">"}


class Comparison(NamedTuple):
    """An expr that compares a query with a number, read with the query first: ``query`` as
    written in the expr (comments and line breaks kept, stripped), ``op`` the comparison
    operator as it reads after the query (``0.05 < A`` gives ``>``), ``number`` the number's
    text as written (``0.05``, ``(1e-3)``, ``-1``), so ``f"{query} {op} {number}"`` is the
    same comparison as the expr."""

    query: str
    op: str
    number: str
_OPEN, _CLOSE = "([{", ")]}"


def _unwrap(node):
    """``node`` without the parentheses around it."""
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node


def _number(node) -> bool:
    """Whether ``node`` is a number literal, maybe in parentheses or after a unary minus or
    plus (``0.05``, ``-1``, ``(1e-3)``, ``-(2)``)."""
    node = _unwrap(node)
    while isinstance(node, pp.UnaryExpr):
        node = _unwrap(node.expr)
    return isinstance(node, pp.NumberLiteral)


def _code(expr: str):
    """(offset, character) of each character of ``expr`` outside strings (``"..."``, ``'...'``
    with backslash escapes, raw ``\\`...\\```) and comments (``#`` to the end of the line, a
    line feed or a carriage return: :func:`rulegen.promql.pieces.pieces`)."""
    at = 0
    for kind, text in pieces(expr):
        if kind == "code":
            yield from enumerate(text, at)
        at += len(text)


def top_level_operators(expr: str) -> list[tuple[int, str]]:
    """(offset, operator) of each comparison operator of ``expr`` outside every bracket
    (``()``, ``[]``, ``{}``), string and comment (:func:`_code`), left to right: ``!=`` in a
    selector's braces and ``>`` in a label value or a comment are not. An unbalanced closing
    bracket never takes the depth below 0."""
    out: list[tuple[int, str]] = []
    depth, skip = 0, -1
    for k, c in _code(expr):
        if k <= skip:
            continue
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth = max(depth - 1, 0)
        elif depth == 0 and c in "=!<>":
            op = next((o for o in COMPARISONS if expr.startswith(o, k)), None)
            if op:
                out.append((k, op))
                skip = k + len(op) - 1
    return out


def _outer_parens(expr: str) -> str:
    """``expr`` without the round brackets that enclose all of its code, as many pairs as
    there are, stripped: ``((a > 1))`` -> ``a > 1``; ``(a) > (1)`` is returned stripped."""
    text = expr.strip()
    while True:
        code = [(k, c) for k, c in _code(text) if not c.isspace()]
        if not code or code[0][1] != "(" or code[-1][1] != ")":
            return text
        depth = 0
        for k, c in code:
            depth += (c in _OPEN) - (c in _CLOSE)
            if depth == 0:
                break
        if k != code[-1][0]:
            return text
        text = text[code[0][0] + 1:k].strip()


def compared_query(expr: str) -> str | None:
    """The query side of ``expr`` (:func:`comparison`), or None when ``expr`` compares no
    query with a number."""
    found = comparison(expr)
    return found.query if found else None


def comparison(expr: str) -> Comparison | None:
    """The query side of ``expr`` when ``expr`` is, at its top level (parentheses around it
    allowed), a comparison (``>``, ``<``, ``>=``, ``<=``, ``==``, ``!=``; without ``bool``) of
    a query with a number literal, on either side: ``A > 0.05`` and ``0.05 < A`` give
    ``Comparison("A", ">", "0.05")``, the query's and the number's text as written in ``expr``
    (comments and line breaks kept), stripped. None for any
    other expr: ``absent(...)``, ``A > B``, ``A > 1 and B > 3``, ``A > bool 1``, or text that
    does not parse.

    How: the text is split at a comparison operator outside brackets, strings and comments
    (:func:`top_level_operators`, the root's is the last, comparisons being left-associative)
    and the split is confirmed by the parser (promql-parser, :mod:`rulegen.promql.syntax`):
    the number side parses to the root's literal operand, the query side to the root's other
    operand (the same AST), so what the page shows apart is exactly what the alert compares."""
    body = _outer_parens(expr)
    ast, err = parse(body)
    if err:
        return None
    root = _unwrap(ast)
    if not (isinstance(root, pp.BinaryExpr) and str(root.op) in COMPARISONS):
        return None
    if root.modifier is not None and (root.modifier.return_bool or root.modifier.matching is not None):
        return None
    if _number(root.rhs) == _number(root.lhs):  # a query on both sides (or, unparsable, numbers)
        return None
    literal_right = _number(root.rhs)
    query_node, number_node = (root.lhs, root.rhs) if literal_right else (root.rhs, root.lhs)
    for at, op in reversed(top_level_operators(body)):
        if op != str(root.op):
            continue
        left, right = body[:at].strip(), body[at + len(op):].strip()
        query, number = (left, right) if literal_right else (right, left)
        q_ast, q_err = parse(query)
        n_ast, n_err = parse(number)
        if q_err or n_err:
            continue
        if repr(q_ast) == repr(query_node) and repr(n_ast) == repr(number_node):
            return Comparison(query, op if literal_right else MIRROR[op], number)
    return None
