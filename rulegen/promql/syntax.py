"""PromQL text to AST (promql-parser, the Rust port of Prometheus' parser), and its nodes.

:func:`parse` and :func:`nodes` are cached: every check, the label flow and the test
derivation read the same expressions many times.
"""

from __future__ import annotations

import functools
import re

import promql_parser

_BRACKETS = re.compile(r"[^()\[\]{}]+")


def nesting(expr: str) -> int:
    """Deepest nesting of ``(``, ``[`` and ``{`` in ``expr`` (counted naively, also inside
    strings)."""
    depth = deepest = 0
    for c in _BRACKETS.sub("", expr):
        if c in "([{":
            depth += 1
            deepest = max(deepest, depth)
        elif depth:
            depth -= 1
    return deepest


#: A string or a comment (which a line feed or a carriage return ends, as in Prometheus' lexer).
_RAW_OR_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"?|\'(?:[^\'\\]|\\.)*\'?|`[^`]*`?|#[^\r\n]*')


def for_parser(expr: str) -> str:
    """``expr`` with every raw string (backquoted) that holds a backslash written as the
    double-quoted string Prometheus reads it as: ``job=`a\\``` -> ``job="a\\\\"``.

    In Prometheus a backquoted string has no escapes (Go's raw strings); promql-parser reads
    a backslash in one as an escape, so ``job=`a\\``` would not parse and ``job=~`a\\d+```
    would be "unknown escape sequence". The text is otherwise unchanged (double- and
    single-quoted strings, comments and the rest as written), so an expression without such a
    string is returned as it is."""
    if "`" not in expr or "\\" not in expr:
        return expr

    def swap(m):
        t = m.group(0)
        if not t.startswith("`") or len(t) < 2 or not t.endswith("`") or "\\" not in t:
            return t
        body = t[1:-1].replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
        return f'"{body}"'
    return _RAW_OR_QUOTED.sub(swap, expr)


#: How deep the syntax tree of an expr rulegen parses and checks may be, as
#: :func:`depth_bound` measures it from the text. Prometheus' parser has no such limit (a
#: table-driven LALR parser: ``promtool check rules`` reads a sum of 200,000 terms, in minutes),
#: but promql-parser recurses once per level and crashes the interpreter past about 4,000
#: (a sum of 4,100 terms), and rulegen's checks recurse too (Python's 1,000 frames, two or
#: three a level: the label flow died at 500) and walk or rebuild the tree at a cost growing
#: with the cube of its size (``promql_parser.walk`` of a 256-term sum takes 900 MB, and
#: mutation testing rebuilds the tree once per node). The largest rule of the corpora (a
#: kube-prometheus-stack API server SLO rule of 1,185 characters) measures 19.
MAX_DEPTH = 128

#: What :func:`depth_bound` counts: an operator (binary, set, ``atan2``, or unary) or the ``[``
#: of a range or subquery. The keywords in any case, as Prometheus' lexer reads them
#: (``strings.ToLower`` of the word) and promql-parser does: ``a AND b`` is ``a and b``.
_OPERATION = re.compile(r"==|!=|<=|>=|[-+*/%^<>]|\[|\b(?:and|or|unless|atan2)\b", re.IGNORECASE)
#: A selector's braces (matchers; strings already blanked): no operator of the expression.
_MATCHERS = re.compile(r"\{[^{}]*\}")


def depth_bound(expr: str) -> int:
    """An upper bound of the depth of ``expr``'s syntax tree, read from its text alone (no
    parser runs): its operators (``+`` ... ``^``, comparisons, ``and``, ``or``, ``unless``,
    ``atan2`` and unary signs), its ``[`` (ranges and subqueries) and its deepest nesting of
    brackets, outside strings, comments and selector braces. Every node with a child holds
    one of them of its own: a binary or unary expression its operator, a matrix selector or a
    subquery its ``[``, and a parenthesis, call or aggregation a ``(`` around the rest of its
    path; so no path from the root has more than this many nodes above its leaf. A number's
    exponent sign (``1e-3``) or a label named ``and`` counts too: over, never under."""
    text = _MATCHERS.sub(" ", _RAW_OR_QUOTED.sub(" ", expr))
    return len(_OPERATION.findall(text)) + nesting(text)


def too_large(expr: str) -> str | None:
    """Why rulegen does not parse or check ``expr`` (the message of ``RG316``, see
    :mod:`rulegen.validate.checks.promql`), None when its :func:`depth_bound` is within
    :data:`MAX_DEPTH`."""
    n = depth_bound(expr)
    if n <= MAX_DEPTH:
        return None
    return (f"expr is too large for rulegen to check: its operators, ranges and nested brackets count {n} "
            f"(each may add a level to its syntax tree), and rulegen parses and checks PromQL of at most "
            f"{MAX_DEPTH} (a sum of some 60 rate() terms; Prometheus has no such limit, but rulegen's PromQL "
            "parser and checks work through the expression level by level); split it into recording rules "
            "that each record a part, and combine the recorded series")


class TooLarge(ValueError):
    """An expression :func:`too_large` refuses, given to :func:`native`."""


def native(text: str):
    """``promql_parser.parse(text)`` (the text as it is: no :func:`for_parser`), for the code
    that parses text it builds or reads itself; every parse of rulegen goes through this or
    :func:`parse`, so the Rust parser never sees an expression deeper than
    :data:`MAX_DEPTH`.

    Raises:
        TooLarge: ``text`` is too large (:func:`too_large`); promql_parser is not called.
        ValueError: promql_parser refuses it (and whatever else the binding raises on odd input).
    """
    why = too_large(text)
    if why is not None:
        raise TooLarge(why)
    return promql_parser.parse(text)


@functools.lru_cache(maxsize=4096)
def parse(expr: str):
    """Parse ``expr``; returns (ast, None) or (None, error message). Cached per text. An
    expression :func:`too_large` refuses is not parsed: its message is the error."""
    why = too_large(expr)
    if why is not None:
        return None, why
    try:
        return promql_parser.parse(for_parser(expr)), None
    except BaseException as e:  # the binding raises ValueError, and PanicException on odd input
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return None, (str(e) or type(e).__name__).strip()


def parsed(expr: str):
    """The AST of ``expr`` (see :func:`parse`), or None when it does not parse."""
    ast, err = parse(expr)
    return None if err else ast


#: The child attributes of each promql_parser node type, in promql_parser.walk's order.
_CHILDREN = {"BinaryExpr": ("lhs", "rhs"), "AggregateExpr": ("param", "expr"), "Call": ("args",),
             "MatrixSelector": ("vector_selector",), "SubqueryExpr": ("expr",), "UnaryExpr": ("expr",),
             "ParenExpr": ("expr",), "VectorSelector": (), "NumberLiteral": (), "StringLiteral": ()}


@functools.lru_cache(maxsize=4096)
def nodes(ast) -> tuple:
    """Every node of ``ast`` in ``promql_parser.walk``'s order (pre-order). Several checks
    look at the nodes of each expression: listing them once saves the others a walk. Cached
    per AST, which :func:`parse` caches per text.

    The nodes are read through their attributes (:data:`_CHILDREN`), without recursion:
    ``promql_parser.walk`` rebuilds subtrees as it goes, which costs time and memory growing
    with the cube of the expression's size (a 400-term sum took 5 GB). A node type not in the
    table (a newer promql_parser) falls back to ``walk``."""
    found: list = []
    stack = [ast]
    while stack:
        node = stack.pop()
        if node is None:
            continue
        kids = _CHILDREN.get(type(node).__name__)
        if kids is None:
            found = []
            promql_parser.walk(ast, pre_visit=lambda n: found.append(n) or True)
            return tuple(found)
        found.append(node)
        children: list = []
        for attr in kids:
            value = getattr(node, attr, None)
            children.extend(value if isinstance(value, (list, tuple)) else [value])
        stack.extend(reversed(children))
    return tuple(found)
