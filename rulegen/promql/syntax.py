"""PromQL text to AST (promql-parser, the Rust port of Prometheus' parser), and its nodes.

:func:`parse` and :func:`nodes` are cached: every check, the label flow and the test
derivation read the same expressions many times.
"""

from __future__ import annotations

import functools
import re

import promql_parser

#: Deepest bracket nesting parsed. The Rust parser crashes the interpreter at about 200,000
#: levels and needs hundreds of MB from a few thousand; a real rule nests a handful.
MAX_NESTING = 256
_BRACKETS = re.compile(r"[^()\[\]{}]+")


def nesting(expr: str) -> int:
    """Deepest nesting of ``(``, ``[`` and ``{`` in ``expr`` (counted naively, also inside
    strings: only text with hundreds of unclosed brackets is affected)."""
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


@functools.lru_cache(maxsize=4096)
def parse(expr: str):
    """Parse ``expr``; returns (ast, None) or (None, error message). Cached per text.
    Expressions nested deeper than :data:`MAX_NESTING` are refused unparsed."""
    deep = nesting(expr)
    if deep > MAX_NESTING:
        return None, (f"brackets nested {deep} levels deep; rulegen parses PromQL nested up to "
                      f"{MAX_NESTING} levels: split the expression with recording rules")
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
