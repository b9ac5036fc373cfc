"""Label flow: which labels the series of a PromQL expression can carry.

Worked out from the AST that promql-parser gives (the Rust port of Prometheus' parser), with
the label semantics of Prometheus' engine (``promql/engine.go``, and the "Operators" and
"Functions" pages of the Prometheus docs):

* a series selector keeps the labels of the series it selects: not known, except that its
  matchers tell which labels are there (``job="api"``) or not (``job=""``);
* an aggregation ``by (l...)`` keeps at most ``l...``; ``without (l...)`` drops ``l...``;
  with neither, it keeps no label; ``count_values("v", x)`` adds ``v``; ``topk``,
  ``bottomk``, ``limitk`` and ``limit_ratio`` keep the labels of the series they pick;
* ``absent(sel)`` / ``absent_over_time(sel[r])`` keep only the labels of the selector's
  equality matchers with a non-empty value (a label with any other matcher, or matched twice,
  is dropped); of anything but a selector, none;
* a binary operation between vectors keeps the labels of the left side (the "many" side for
  ``group_left``, the right for ``group_right``); one-to-one matching ``on (l...)`` keeps only
  ``l...``, ``ignoring (l...)`` drops them; ``group_left (l...)``/``group_right (l...)`` set
  ``l...`` to the "one" side's values, deleting them where that side has none (so a label the
  "one" side never carries is never there, whatever the "many" side had); ``and``/``unless``
  keep the left side's labels, ``or`` either side's; with a scalar the vector side keeps its
  labels; matching compares label values (absent counting as ``""``), so of the labels it
  compares (``on (l...)``: those; otherwise all but the ``ignoring`` ones) the kept side
  carries on a matched series only those the other side carries (``x and sum by (job) (y)``
  never has ``instance``; ``unless`` keeps unmatched series, so it is not limited);
* ``label_replace`` sets its destination label to the expansion of the replacement (Go's
  ``$1``/``${name}`` rules) where the anchored regex matches the source label's value, and a
  label set to ``""`` is deleted: an empty replacement, or a group that matched nothing,
  deletes it (worked out exactly when the source value is known: absent, or pinned by an
  equality matcher); ``label_join`` sets it to the joined values, deleted when empty;
  ``info()`` (Prometheus 3) keeps its argument's labels and may add any label (only the labels
  its selector names, when it has one); ``histogram_quantile`` drops ``le``; ``vector()``,
  ``time()`` and numbers have no label; other functions keep the labels of their vector
  argument (dropping only the metric name, which is not a label that templates read);
* a selector of a recording rule of the project follows the rule's ``expr`` (plus the rule's
  own labels), transitively.

True means the expression keeps or sets the label (a ``by`` list or ``group_left`` naming it,
a matcher pinning it); a label a series may or may not have is None. Precision comes first:
anything not understood (an unknown function, a regex on ``__name__`` that may select a
recording rule, a regex Python reads otherwise than Go) makes the labels unknown, and the
checks that read this module stay silent on unknown.

Public functions (used by the validation checks and by other parts of rulegen):
:func:`flow`, :func:`can_carry`, :func:`dropped_by`; which test series feed an expression is
:mod:`rulegen.promql.feeds`; the :class:`Flow` value and the operations on it are
:mod:`rulegen.promql.flowvalue`.
"""

from __future__ import annotations

from collections.abc import Mapping

from .flowvalue import (UNKNOWN, Flow, _add, _drop, _keep, _matched, _scalar, _selector_flow, _union,
                        absent_flow, label_join_flow, label_replace_flow)
from .matchers import matches, selector_matchers
from .syntax import parsed

#: ``recording_rules`` values: an ``expr`` text, an (``expr``, labels) pair, or a list of those
#: (several rules may record one name with different labels).
RecordingRules = Mapping[str, object]

#: Functions whose result keeps the labels of their vector (or range vector) argument.
_SAME_LABELS = frozenset("""
abs ceil floor exp ln log2 log10 sqrt sgn round clamp clamp_max clamp_min
acos acosh asin asinh atan atanh cos cosh sin sinh tan tanh deg rad
rate irate increase delta idelta deriv predict_linear resets changes
avg_over_time min_over_time max_over_time sum_over_time count_over_time quantile_over_time
stddev_over_time stdvar_over_time last_over_time present_over_time mad_over_time
first_over_time ts_of_max_over_time ts_of_min_over_time ts_of_last_over_time ts_of_first_over_time
holt_winters double_exponential_smoothing timestamp sort sort_desc sort_by_label sort_by_label_desc
histogram_count histogram_sum histogram_avg histogram_fraction histogram_stddev histogram_stdvar
days_in_month day_of_month day_of_week day_of_year hour minute month year
""".split())
_DATE_FUNCS = frozenset("days_in_month day_of_month day_of_week day_of_year hour minute month year".split())
_SET_OPS = frozenset({"and", "or", "unless"})
_GROUPING_AGGS = frozenset({"sum", "avg", "min", "max", "count", "stddev", "stdvar", "group",
                            "quantile", "count_values"})
_SELECTING_AGGS = frozenset({"topk", "bottomk", "limitk", "limit_ratio"})




def recording_variants(value) -> list[tuple[str, dict]]:
    if isinstance(value, str):
        return [(value, {})]
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], str):
        return [(value[0], dict(value[1] or {}))]
    out = []
    for v in value or ():
        out.extend(recording_variants(v))
    return out


#: How many syntax-tree levels deep the label flow follows an expression, through the
#: recording rules it reads, before it calls the labels unknown: an expr is at most
#: :data:`rulegen.promql.syntax.MAX_DEPTH` levels deep, and each recording rule of a chain adds
#: its own (a rule reading one that reads another ...). It works recursively, two or three
#: frames a level, within Python's 1,000.
MAX_FLOW_DEPTH = 200


class _TooDeep(Exception):
    """The flow went deeper than :data:`MAX_FLOW_DEPTH`."""


def _via(name: str, reason: str) -> str:
    """``reason`` said of a recording rule ``name`` that the expression reads."""
    return reason if reason.startswith("in the recording rule") else f"in the recording rule {name}, {reason}"


class Analyzer:
    """Label flows of expressions against one set of recording rules, each recording rule's
    flow worked out once (:func:`flow` makes a new one per call; a check that looks at every
    rule of a project keeps one).

    Args:
        recording_rules: see :func:`flow`.
    """

    def __init__(self, recording_rules: RecordingRules | None = None):
        self.rr = recording_rules or {}
        self.active: set[str] = set()
        self.memo: dict[str, Flow] = {}
        self.depth = 0

    def flow(self, expr) -> Flow:
        """The :class:`Flow` of ``expr`` (PromQL text or a promql_parser AST); unknown when it
        does not parse, or when it and the recording rules it reads go deeper than
        :data:`MAX_FLOW_DEPTH` levels."""
        ast = parsed(expr) if isinstance(expr, str) else expr
        if ast is None:
            return UNKNOWN
        try:
            return self.node(ast)
        except _TooDeep:
            return UNKNOWN

    def recorded(self, name: str) -> Flow:
        """The flow of the series recorded as ``name`` (every rule recording it)."""
        got = self.memo.get(name)
        if got is not None:
            return got
        if name in self.active:
            return UNKNOWN  # a cycle: Prometheus evaluates it, but its labels are not knowable here
        self.active.add(name)
        try:
            out = None
            for expr, labels in recording_variants(self.rr[name]):
                ast = parsed(expr)
                f = UNKNOWN if ast is None else self.node(ast)
                if f.known and f.scalar:
                    f = Flow(may=frozenset(), bound="`vector()`-like recording rule has no label")
                # a rule label set to "" deletes the label (Prometheus' labels builder)
                f = _add(f, [k for k, v in labels.items() if v != ""]) if labels else f
                empty = [k for k, v in (labels or {}).items() if v == ""]
                f = _drop(f, empty, f"in the recording rule {name}, the rule label `{{label}}: \"\"` "
                                    "deletes `{label}`") if empty else f
                out = f if out is None else _union(out, f)
        finally:
            self.active.discard(name)
        out = UNKNOWN if out is None else out
        if not self.active:
            self.memo[name] = out
        return out

    def selector(self, vs) -> Flow:
        base = _selector_flow(vs)
        name = vs.name
        if not name:
            # {__name__=~"..."} may select a recording rule of the project: unknown then
            for label, op, value in selector_matchers(vs):
                if label == "__name__" and op != "=":
                    return UNKNOWN if any(matches(op, value, n) is not False for n in self.rr) else base
                if label == "__name__":
                    name = value
        if not name or name not in self.rr:
            return base
        out = self.recorded(name)
        if not out.known:
            return UNKNOWN
        pinned = dict(out.pinned)
        for k, v in base.pinned.items():
            if out.carries(k) is not False:
                pinned[k] = pinned.get(k, ()) + v
        gone = {k: _via(name, v) for k, v in out.gone.items()}
        gone.update({k: v for k, v in base.gone.items() if k not in gone})
        return Flow(may=out.may, gone=gone, bound=_via(name, out.bound) if out.bound else "",
                    pinned=pinned, added=out.added)

    def node(self, n) -> Flow:
        """The flow of node ``n``, one level deeper (:class:`_TooDeep` past
        :data:`MAX_FLOW_DEPTH`)."""
        if self.depth >= MAX_FLOW_DEPTH:
            raise _TooDeep
        self.depth += 1
        try:
            return self._node(n)
        finally:
            self.depth -= 1

    def _node(self, n) -> Flow:
        cls = type(n).__name__
        if cls == "VectorSelector":
            return self.selector(n)
        if cls == "MatrixSelector":
            return self.selector(n.vector_selector)
        if cls in ("ParenExpr", "SubqueryExpr", "UnaryExpr"):
            return self.node(n.expr)
        if cls == "NumberLiteral":
            return _scalar("a number has no labels")
        if cls == "StringLiteral":
            return _scalar("a string has no labels")
        if cls == "Call":
            return self.call(n)
        if cls == "AggregateExpr":
            return self.aggregate(n)
        if cls == "BinaryExpr":
            return self.binary(n)
        return UNKNOWN

    def call(self, n) -> Flow:
        name = n.func.name
        args = list(n.args)
        if str(n.func.return_type).endswith("Scalar"):
            return _scalar(f"`{name}()` returns a scalar, which has no labels")
        if name == "vector":
            return Flow(may=frozenset(), bound="`vector()` has no labels, so it cannot carry `{label}`")
        if name in ("absent", "absent_over_time"):
            return absent_flow(name, args[0] if args else None)
        if name in ("label_replace", "label_join"):
            if len(args) < 3 or any(type(a).__name__ != "StringLiteral" for a in args[1:]):
                return UNKNOWN
            strings = [a.val for a in args[1:]]
            if name == "label_replace":
                return UNKNOWN if len(strings) != 4 else label_replace_flow(self.node(args[0]), *strings)
            return label_join_flow(self.node(args[0]), strings[0], strings[1], strings[2:])
        if name == "info":
            return self.info(args)
        if name == "histogram_quantile":
            if len(args) < 2:
                return UNKNOWN
            return _drop(self.node(args[1]), ["le"], "`histogram_quantile` drops `{label}`")
        if name in _SAME_LABELS:
            if not args and name in _DATE_FUNCS:
                return Flow(may=frozenset(), bound=f"`{name}()` without an argument has no labels")
            vec = [a for a, t in zip(args, n.func.arg_types) if not str(t).endswith(("Scalar", "String"))]
            return self.node(vec[0]) if vec else UNKNOWN
        return UNKNOWN

    def info(self, args) -> Flow:
        """``info(v)`` / ``info(v, {selector})`` (Prometheus 3, experimental): the series of
        ``v`` with the data labels of matching info series added (``target_info`` by default).
        Labels ``v`` keeps are kept; with a selector, the labels it names may be added (and
        count as kept, as a ``by`` list's do); without one, any label may be added, so only
        those ``v`` keeps are known."""
        child = self.node(args[0]) if args else UNKNOWN
        if not child.known or child.scalar:
            return UNKNOWN
        if len(args) > 1:
            sel = args[1]
            if type(sel).__name__ != "VectorSelector" or sel.matchers.or_matchers:
                return UNKNOWN
            return _add(child, {m.name for m in sel.matchers.matchers if m.name != "__name__"})
        return Flow(may=None, pinned=child.pinned,
                    added=child.added | frozenset(child.pinned) | (child.may or frozenset()))

    def aggregate(self, n) -> Flow:
        op = str(n.op)
        child = self.node(n.expr)
        if op in _SELECTING_AGGS:
            return child
        if op not in _GROUPING_AGGS:
            return UNKNOWN
        mod = n.modifier
        labels = list(mod.labels) if mod is not None else []
        without = mod is not None and str(mod.type).endswith("Without")
        added = []
        if op == "count_values":
            if type(n.param).__name__ != "StringLiteral":
                return UNKNOWN
            added = [n.param.val]
        if without:
            out = _drop(child, labels, f"`{op} without ({', '.join(labels)})` drops `{{label}}`")
        elif mod is not None:
            out = _keep(child, frozenset(labels), f"`{op} by ({', '.join(labels)})` drops `{{label}}`")
        else:
            out = _keep(child, frozenset(), f"`{op}` without `by ({{label}})` drops `{{label}}`")
        return _add(out, added) if added else out

    def binary(self, n) -> Flow:
        op = str(n.op)
        lhs, rhs = self.node(n.lhs), self.node(n.rhs)
        if not (lhs.known and rhs.known):
            return UNKNOWN
        if lhs.scalar and rhs.scalar:
            return _scalar("an operation between scalars has no labels")
        if lhs.scalar:
            return rhs
        if rhs.scalar:
            return lhs
        mod = n.modifier
        matching = mod.matching if mod is not None else None
        on = matching is not None and str(matching.type).endswith("Include")
        mlabels = list(matching.labels) if matching is not None else []
        if op in _SET_OPS:
            if op == "or":
                return _union(lhs, rhs)
            return _matched(lhs, rhs, on, mlabels, "right") if op == "and" else lhs
        card = str(mod.card) if mod is not None else "OneToOne"
        if card.endswith("ManyToOne") or card.endswith("OneToMany"):
            many, one = (lhs, rhs) if card.endswith("ManyToOne") else (rhs, lhs)
            extra = list(mod.group_labels or [])
            side, other = ("group_left", "right") if card.endswith("ManyToOne") else ("group_right", "left")
            out = _add(_matched(many, one, on, mlabels, other), extra)
            # Prometheus sets each `group_left (l)` label to the "one" side's value, and deletes
            # it where that side lacks it (engine.go, resultMetric), whatever the "many" side had
            for k in extra:
                if one.carries(k) is False:
                    out = _drop(out, [k], f"`{side} ({k})` copies `{k}` from the {other} side, which never "
                                          f"has it ({one.why_not(k)})")
                elif k in one.pinned:
                    out = Flow(may=out.may, gone=out.gone, bound=out.bound,
                               pinned={**out.pinned, k: one.pinned[k]}, added=out.added)
            return out
        if on:
            out = _keep(lhs, frozenset(mlabels), f"the one-to-one match `on ({', '.join(mlabels)})` drops `{{label}}`")
        elif mlabels:
            out = _drop(lhs, mlabels, f"the one-to-one match `ignoring ({', '.join(mlabels)})` drops `{{label}}`")
        else:
            out = lhs
        return _matched(out, rhs, on, mlabels, "right")


def flow(expr, recording_rules: RecordingRules | None = None) -> Flow:
    """The :class:`Flow` of ``expr`` (PromQL text, or an AST from :mod:`promql_parser`).

    ``recording_rules`` maps recording rule names of the project to their ``expr`` (or an
    (``expr``, labels) pair, or a list of those when one name is recorded by several rules);
    selectors of those names follow the rule. An expression that does not parse is unknown."""
    return Analyzer(recording_rules).flow(expr)


def can_carry(expr: str, label: str, recording_rules: RecordingRules | None = None) -> bool | None:
    """Can the series of ``expr`` (an alert's or recording rule's PromQL) carry ``label``?

    Returns True when they can (the label is among the labels kept, or a selector matcher
    names it), False when they never can (an operation drops it; :func:`dropped_by` says
    which), None when it cannot be known (a plain selector keeps whatever labels its series
    have; an unknown function; an expression that does not parse)."""
    return flow(expr, recording_rules).carries(label)


def dropped_by(expr: str, label: str, recording_rules: RecordingRules | None = None) -> str | None:
    """Why the series of ``expr`` never carry ``label``, naming the operation (for example
    "`count` without `by (namespace)` drops `namespace`"); None when they can or when it is
    not known."""
    return flow(expr, recording_rules).why_not(label)
