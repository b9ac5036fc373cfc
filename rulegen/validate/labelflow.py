"""Label flow: can the series an expression returns carry a given label?

A stand-in written for the runbook checks (issue 19) with the signature the label-flow work
(issue 12) defines; that fuller version replaces this file when both branches are merged.
This one is deliberately conservative: it answers ``False`` only where PromQL's semantics
make the label certainly absent, and ``None`` (unknown) everywhere else, so callers stay
silent rather than raise a false alarm. It never answers ``True``.

Certain absences (Prometheus docs, "Operators" and "Functions"):

* an aggregation (``sum``, ``max``, ``count``...) keeps only its ``by`` labels, or drops its
  ``without`` labels; with neither it keeps none (``count_values`` adds its own label;
  ``topk``/``bottomk``/``limitk``/``limit_ratio`` keep the input's labels);
* ``absent``/``absent_over_time`` keep only the equality matchers of a plain selector
  argument, and nothing for any other argument;
* ``vector()``, ``time()`` and number literals have no labels;
* a one-to-one vector match with ``on(...)`` keeps only the ``on`` labels; ``ignoring(...)``
  drops the listed ones; ``and``/``unless`` keep the left side's labels.
"""

from __future__ import annotations

from collections.abc import Mapping

import promql_parser

_KEEP_ALL_AGGS = {"topk", "bottomk", "limitk", "limit_ratio"}
_NO_LABEL_CALLS = {"vector", "time", "pi", "scalar"}  # and days_in_month() etc. are not listed: unknown
_SET_OPS = {"and", "or", "unless"}


def can_carry(expr: str, label: str, recording_rules: Mapping[str, str] | None = None) -> bool | None:
    """Can the series returned by PromQL ``expr`` carry the label ``label``?

    Args:
        expr: PromQL expression text (an alert's ``expr``).
        label: a label name such as ``namespace``.
        recording_rules: recorded name -> its ``expr`` (accepted for the shared signature; this
            stand-in does not follow recording rules, so it stays unknown through them).

    Returns:
        False when the label is certainly absent (see the module docstring), else None
        (unknown). Never raises: an expression that does not parse gives None.
    """
    try:
        ast = promql_parser.parse(expr)
    except Exception:  # a PromQL error is reported by the promql checks, not here
        return None
    return _carry(ast, label)


def _carry(node, label: str) -> bool | None:
    kind = type(node).__name__
    if kind in ("ParenExpr", "SubqueryExpr", "UnaryExpr"):
        return _carry(node.expr, label)
    if kind in ("NumberLiteral", "StringLiteral"):
        return False
    if kind == "AggregateExpr":
        op = str(node.op)
        if op in _KEEP_ALL_AGGS:
            return _carry(node.expr, label)
        if op == "count_values" and str(node.param).strip('"\'') == label:
            return None
        mod = node.modifier
        if mod is None:
            return False
        listed = label in list(mod.labels or [])
        if str(mod.type).endswith("By"):
            return None if listed else False
        return False if listed else _carry(node.expr, label)
    if kind == "Call":
        name = node.func.name
        if name in _NO_LABEL_CALLS:
            return False
        if name in ("absent", "absent_over_time"):
            arg = node.args[0] if node.args else None
            sel = getattr(arg, "vector_selector", None) if type(arg).__name__ == "MatrixSelector" else arg
            if type(sel).__name__ != "VectorSelector":
                return False
            for m in sel.matchers.matchers or []:
                if m.name == label and str(m.op).endswith("Equal") and "Not" not in str(m.op):
                    return None
            return False
        return None
    if kind == "BinaryExpr":
        lhs, rhs = node.lhs, node.rhs
        if _scalar(rhs):
            return _carry(lhs, label)
        if _scalar(lhs):
            return _carry(rhs, label)
        op = str(node.op)
        mod = node.modifier
        matching = getattr(mod, "matching", None) if mod is not None else None
        if op in ("and", "unless"):
            return _carry(lhs, label)
        if op == "or":
            left, right = _carry(lhs, label), _carry(rhs, label)
            return False if left is False and right is False else None
        group = list(getattr(mod, "group_labels", None) or []) if mod is not None else []
        if label in group:
            return None
        card = str(getattr(mod, "card", "")) if mod is not None else ""
        if matching is not None and card.endswith("OneToOne"):
            listed = label in list(matching.labels or [])
            on = str(matching.type).endswith(("On", "Include"))
            if (on and not listed) or (not on and listed):
                return False
        side = rhs if card.endswith("OneToMany") else lhs
        return False if _carry(side, label) is False else None
    return None


def _scalar(node) -> bool:
    """True when ``node`` is certainly a scalar (a number, ``time()``, ``scalar()``, ``pi()``,
    or arithmetic of scalars): the other side of a binary operation keeps its labels."""
    kind = type(node).__name__
    if kind == "NumberLiteral":
        return True
    if kind in ("ParenExpr", "UnaryExpr"):
        return _scalar(node.expr)
    if kind == "Call":
        return node.func.name in ("time", "scalar", "pi")
    if kind == "BinaryExpr":
        return _scalar(node.lhs) and _scalar(node.rhs)
    return False
