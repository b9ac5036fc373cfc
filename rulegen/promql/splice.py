"""One node of a parsed expression replaced, as text, without rebuilding the tree.

``promql_parser.transform`` rebuilds the whole tree with every call, at a cost growing with
the cube of its depth (a chain of 128 ``or`` took 0.2 s a call, and mutation testing makes a
mutant per node: 150 s for one rule at :data:`rulegen.promql.syntax.MAX_DEPTH`). Here the
node's place is found in the parent's compact text (``str(node)``, which prints each node
from its children's text and fixed pieces), and the new node's text is put there: the cost is
the depth times the text's length.
"""

from __future__ import annotations

from .syntax import _CHILDREN


def post_order(ast) -> list[tuple]:
    """Every node of ``ast`` in post-order (``promql_parser.transform``'s order), each as
    ``(node, parent index or -1, position among the parent's children)``. Read through the
    nodes' attributes, without recursion."""
    out: list[tuple] = []
    stack: list = [(ast, None, 0, False)]
    while stack:
        node, parent, pos, done = stack.pop()
        if done:
            out.append((node, parent, pos))
            continue
        stack.append((node, parent, pos, True))
        kids = _children(node)
        for i in reversed(range(len(kids))):
            stack.append((kids[i], node, i, False))
    index = {id(n): i for i, (n, _p, _pos) in enumerate(out)}
    return [(n, -1 if p is None else index[id(p)], pos) for n, p, pos in out]


def _children(node) -> list:
    kids: list = []
    for attr in _CHILDREN.get(type(node).__name__, ()):
        value = getattr(node, attr, None)
        kids.extend(v for v in (value if isinstance(value, (list, tuple)) else [value]) if v is not None)
    return kids


def _spans(node, text: str) -> list[tuple[int, int]] | None:
    """Where each child of ``node`` stands in ``text`` (``str(node)``), as (start, end), or
    None when the text does not read as the node's pieces around its children's texts."""
    kids = [str(k) for k in _children(node)]
    kind = type(node).__name__
    if kind == "BinaryExpr":
        spans = [(0, len(kids[0])), (len(text) - len(kids[1]), len(text))]
    elif kind == "UnaryExpr":
        spans = [(len(text) - len(kids[0]), len(text))]
    elif kind == "ParenExpr":
        spans = [(1, 1 + len(kids[0]))]
    elif kind in ("MatrixSelector", "SubqueryExpr"):
        spans = [(0, len(kids[0]))]
    elif kind == "Call":
        at, spans = text.find("(") + 1, []
        for k in kids:
            spans.append((at, at + len(k)))
            at += len(k) + 2
    elif kind == "AggregateExpr":
        end = len(text) - 1
        spans = [(end - len(kids[-1]), end)]
        if len(kids) == 2:
            spans.insert(0, (spans[0][0] - 2 - len(kids[0]), spans[0][0] - 2))
    else:
        return None
    if len(spans) != len(kids) or any(text[a:b] != k for (a, b), k in zip(spans, kids)):
        return None
    return spans


def replaced(ast, order: list[tuple], index: int, new) -> str | None:
    """The text of ``ast`` with its ``index``-th node of ``order`` (:func:`post_order` of
    ``ast``) replaced by ``new`` (a node), in ``str()``'s compact form; None when a text on the
    way does not read as its node's pieces (the caller rebuilds the tree instead)."""
    path = []
    i = index
    while order[i][1] != -1:
        path.append((order[i][1], order[i][2]))
        i = order[i][1]
    text = str(ast)
    start = 0
    for parent, pos in reversed(path):
        spans = _spans(order[parent][0], text[start:start + len(str(order[parent][0]))])
        if spans is None:
            return None
        start += spans[pos][0]
    old = str(order[index][0])
    if text[start:start + len(old)] != old:
        return None
    return text[:start] + str(new) + text[start + len(old):]
