"""Reading an alert's or recording rule's expr for a shape ``derive-tests`` knows how to feed
(see :mod:`rulegen.run.derive`): :func:`analyze`, :func:`analyze_record`; :class:`Manual` says
why a shape is not derivable."""

from __future__ import annotations

from dataclasses import dataclass, field

import promql_parser as pp

from ...promql.series import short_number
from ...promql.syntax import for_parser, native

COMPARISONS = ("==", "!=", ">", "<", ">=", "<=")
_AGGS = {"sum", "max", "min", "avg"}
_COUNTER_FUNCS = {"rate", "increase"}
_TRUTH = {"==": lambda v, n: v == n, "!=": lambda v, n: v != n, ">": lambda v, n: v > n,
          "<": lambda v, n: v < n, ">=": lambda v, n: v >= n, "<=": lambda v, n: v <= n}


class Manual(ValueError):
    """The rule's shape is not one rulegen derives tests for; the message says why."""


@dataclass
class Side:
    """One fed operand: a selector, maybe inside ``rate``/``increase`` over ``range_s``."""

    name: str | None
    matchers: list
    func: str | None = None  # "rate" / "increase" / None
    range_s: int = 0


@dataclass
class Shape:
    """What an alert's expr asks for: ``kind`` value/counter/ratio/absent, the comparison
    ``op`` against ``threshold``, aggregation ``by`` labels (None: not aggregated), and the
    fed operands (two for a ratio)."""

    kind: str
    op: str | None
    threshold: float | None
    by: list | None
    sides: list = field(default_factory=list)
    absent_cmp: tuple | None = None  # absent(x OP N): (OP, N)
    scale: float = 1.0  # `x * 100 > 80`: x is compared as x * scale (threshold and op are x's)
    compared: float | None = None  # the threshold as written (80), when scaled
    parts: list = field(default_factory=list)  # kind "and": the two threshold shapes


def _strip(node):
    while isinstance(node, pp.ParenExpr):
        node = node.expr
    return node


def _side(node) -> Side:
    node = _strip(node)
    if isinstance(node, pp.VectorSelector):
        _plain_selector(node)
        return Side(node.name, list(node.matchers.matchers))
    if isinstance(node, pp.Call) and node.func.name in _COUNTER_FUNCS and len(node.args) == 1:
        arg = node.args[0]
        if isinstance(arg, pp.MatrixSelector):
            vs = arg.vector_selector
            _plain_selector(vs)
            return Side(vs.name, list(vs.matchers.matchers), node.func.name, int(arg.range.total_seconds()))
    raise Manual(f"`{node.prettify()}` is not a selector or the rate/increase of one")


def _plain_selector(vs) -> None:
    if vs.offset is not None or vs.at is not None:
        raise Manual("the selector uses `offset` or `@`")
    if getattr(vs.matchers, "or_matchers", None):
        raise Manual("the selector uses `or` between matchers")


def _agg(node):
    """(by labels or None, inner node) of an optional sum/max/min/avg by (...)."""
    node = _strip(node)
    if isinstance(node, pp.AggregateExpr):
        if str(node.op) not in _AGGS or node.param is not None:
            raise Manual(f"the aggregation `{node.op}` is not one of {', '.join(sorted(_AGGS))}")
        mod = node.modifier
        if mod is not None and mod.type != pp.AggModifierType.By:
            raise Manual("the aggregation uses `without`")
        return list(mod.labels) if mod is not None else [], node.expr
    return None, node


def analyze(expr: str) -> Shape:
    """The :class:`Shape` of an alert's ``expr``.

    Raises:
        Manual: not a shape rulegen derives tests for (the message says why).
    """
    try:
        ast = _strip(native(for_parser(expr)))
    except Exception as e:
        raise Manual(f"the expr does not parse: {e}") from None
    if isinstance(ast, pp.Call) and ast.func.name == "absent" and ast.args:
        arg = _strip(ast.args[0])
        if isinstance(arg, pp.VectorSelector):
            return Shape("absent", None, None, None, [_side(arg)])
        if isinstance(arg, pp.BinaryExpr) and str(arg.op) in COMPARISONS and arg.modifier is None \
                and isinstance(arg.rhs, pp.NumberLiteral) and isinstance(_strip(arg.lhs), pp.VectorSelector):
            return Shape("absent", None, None, None, [_side(arg.lhs)], (str(arg.op), arg.rhs.val))
        raise Manual("absent() of something else than a selector or a selector compared with a number")
    if isinstance(ast, pp.BinaryExpr) and str(ast.op) == "and":
        mod = ast.modifier
        if mod is not None and (mod.matching is not None or mod.return_bool):
            raise Manual("`and` with `on` or `ignoring`")
        parts = [analyze(_strip(x).prettify()) for x in (ast.lhs, ast.rhs)]
        if any(p.kind in ("absent", "and") for p in parts):
            raise Manual("`and` of something else than two threshold conditions")
        return Shape("and", None, None, None, parts[0].sides + parts[1].sides, parts=parts)
    if not (isinstance(ast, pp.BinaryExpr) and str(ast.op) in COMPARISONS):
        raise Manual("the expr is not `<series> <comparison> <number>`, `absent(...)` or two of "
                     "those joined by `and`")
    if ast.modifier is not None and (ast.modifier.return_bool or ast.modifier.matching is not None):
        raise Manual("the comparison uses `bool`, `on` or `ignoring`")
    if not isinstance(_strip(ast.rhs), pp.NumberLiteral):
        raise Manual("the comparison's right side is not a number")
    op, n = str(ast.op), _strip(ast.rhs).val
    lhs, scale = _strip(ast.lhs), 1.0
    # `x * 100`, `x / 1024`, `100 * x`: compare x with the threshold scaled back
    while isinstance(lhs, pp.BinaryExpr) and str(lhs.op) in ("*", "/") and lhs.modifier is None:
        if isinstance(_strip(lhs.rhs), pp.NumberLiteral) and _strip(lhs.rhs).val:
            k = _strip(lhs.rhs).val
            scale = scale * k if str(lhs.op) == "*" else scale / k
            lhs = _strip(lhs.lhs)
        elif str(lhs.op) == "*" and isinstance(_strip(lhs.lhs), pp.NumberLiteral) and _strip(lhs.lhs).val:
            scale *= _strip(lhs.lhs).val
            lhs = _strip(lhs.rhs)
        else:
            break
    if scale != 1.0:
        shape = analyze(f"({lhs.prettify()}) {op} {format(n / scale, '.17g')}")
        if scale < 0:
            shape.op = {">": "<", "<": ">", ">=": "<=", "<=": ">="}.get(shape.op, shape.op)
        shape.scale, shape.compared = scale, n
        return shape
    by, inner = _agg(ast.lhs)
    inner = _strip(inner)
    if isinstance(inner, pp.BinaryExpr):
        if str(inner.op) != "/" or inner.modifier is not None and (
                inner.modifier.matching is not None or inner.modifier.card != pp.VectorMatchCardinality.OneToOne):
            raise Manual("a binary operation other than a plain ratio `a / b`")
        lby, lhs = _agg(inner.lhs)
        rby, rhs = _agg(inner.rhs)
        if by is not None and (lby is not None or rby is not None):
            raise Manual("an aggregation both around and inside the ratio")
        if (lby is None) != (rby is None) or (lby is not None and sorted(lby) != sorted(rby)):
            raise Manual("the ratio's sides are not aggregated by the same labels")
        a, b = _side(lhs), _side(rhs)
        if (a.func is None) != (b.func is None):
            raise Manual("one side of the ratio is a rate and the other is not")
        return Shape("ratio", op, n, by if by is not None else lby, [a, b])
    side = _side(inner)
    if side.func and op in ("<", "<=") and n <= 0 or side.func and op in ("==", "!=") and n < 0:
        raise Manual("a counter's rate is never negative: the comparison cannot tell anything")
    return Shape("counter" if side.func else "value", op, n, by, [side])


def analyze_record(expr: str) -> Shape:
    """The :class:`Shape` of a recording rule's ``expr``: a selector, ``rate``/``increase``
    of one, or a ratio of two, maybe aggregated (``op`` and ``threshold`` None).

    Raises:
        Manual: another shape (the message says why).
    """
    try:
        ast = _strip(native(for_parser(expr)))
    except Exception as e:
        raise Manual(f"the expr does not parse: {e}") from None
    if isinstance(ast, pp.BinaryExpr) and str(ast.op) in COMPARISONS:
        raise Manual("a recording rule that compares: write its expected samples by hand")
    shape = analyze(f"({ast.prettify()}) > 0")
    return Shape(shape.kind, None, None, shape.by, shape.sides)



def _cmp_text(shape: Shape) -> str:
    return f"{shape.op} {short_number(shape.compared if shape.compared is not None else shape.threshold)}"
