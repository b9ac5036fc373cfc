"""The label-flow value and its algebra: a :class:`Flow` says which labels the series of an
expression may carry (and why others are gone, which are bound to one value, which are pinned
by matchers); the functions here combine flows the way PromQL's operators, aggregations and
``label_replace``/``label_join`` combine series. :mod:`rulegen.promql.labelflow` walks an
expression with them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from .matchers import go_expand, go_template_parts, group_of, op_text, selector_matchers
from .matchers import regex as _regex

#: Series written by Prometheus itself for alerts, and the labels it gives them.
_ALERT_SERIES = {"ALERTS": frozenset({"alertname", "alertstate"}),
                 "ALERTS_FOR_STATE": frozenset({"alertname"})}


@dataclass(frozen=True)
class Flow:
    """The labels an expression's series can carry.

    Attributes:
        known: False when the analysis gave up (then nothing else is meaningful).
        scalar: the expression is a scalar or a string (no series, no labels).
        may: the labels the series can carry at most; None when not bounded (a selector).
        gone: label -> why it can never be there (the operation that dropped it), for
            labels outside ``may`` or, when ``may`` is None, known to be dropped.
        bound: why labels outside ``may`` are gone, with ``{label}`` for the label name
            (e.g. "`sum by (job)` drops `{label}`"); used for labels not in ``gone``.
        pinned: label -> the selector matchers ((op, value) pairs, op one of ``=``, ``!=``,
            ``=~``, ``!~``) that constrain its value, for labels passed on unchanged from the
            selectors to the result.
        added: labels an operation sets (``label_replace``, ``group_left (l)``,
            ``count_values``), which the series can carry even when ``may`` is None.
    """

    known: bool = True
    scalar: bool = False
    may: frozenset | None = None
    gone: Mapping[str, str] = field(default_factory=dict)
    bound: str = ""
    pinned: Mapping[str, tuple] = field(default_factory=dict)
    added: frozenset = frozenset()

    def carries(self, label: str) -> bool | None:
        """True: the series can carry ``label``; False: never; None: unknown."""
        if not self.known:
            return None
        if self.scalar or label in self.gone:
            return False
        if self.may is not None:
            return label in self.may
        return True if label in self.pinned or label in self.added else None

    def why_not(self, label: str) -> str | None:
        """Why the series can never carry ``label`` (the operation that drops it), or None
        when they can or it is not known."""
        if self.carries(label) is not False:
            return None
        if label in self.gone:
            return self.gone[label]
        return self.bound.format(label=label) if self.bound else None


UNKNOWN = Flow(known=False)


def _scalar(what: str) -> Flow:
    return Flow(scalar=True, may=frozenset(), bound=what)


def _selector_flow(vs) -> Flow:
    if vs.matchers.or_matchers:
        return UNKNOWN
    pinned: dict[str, tuple] = {}
    gone: dict[str, str] = {}
    for name, op, value in selector_matchers(vs):
        if name == "__name__":
            continue
        if (op == "=" and value == "") or (op == "=~" and value in ("", "^$", "()")) or \
                (op == "!~" and value in (".+", "(.+)")):
            gone[name] = f"the selector's matcher `{name}{op}\"{value}\"` selects series without `{name}`"
        else:
            pinned[name] = pinned.get(name, ()) + ((op, value),)
    # the series Prometheus writes for alerts always carry the alert's name (and state)
    added = _ALERT_SERIES.get(vs.name or "", frozenset())
    return Flow(pinned=pinned, gone=gone, added=added)


def _union(a: Flow, b: Flow) -> Flow:
    """Series that come from ``a`` or from ``b``."""
    if not (a.known and b.known):
        return UNKNOWN
    if a.scalar:
        return b
    if b.scalar:
        return a
    may = None if a.may is None or b.may is None else a.may | b.may
    gone = {k: v for k, v in a.gone.items() if b.carries(k) is False}
    bound = a.bound if may is not None else ""
    pinned = {k: a.pinned[k] for k in a.pinned if k in b.pinned and a.pinned[k] == b.pinned[k]}
    return Flow(may=may, gone=gone, bound=bound, pinned=pinned,
                added=(a.added | b.added | frozenset(a.pinned) | frozenset(b.pinned)) - frozenset(gone))


def _keep(child: Flow, keep: frozenset, why: str) -> Flow:
    """``child`` restricted to the labels ``keep``; others dropped ``why``."""
    if not child.known:
        return UNKNOWN
    gone = dict(child.gone)  # the first operation that dropped a label is the one to name
    if child.may is None:
        may, bound = keep, why
    else:
        # labels the child never had keep the child's reason; those it had are dropped here
        may, bound = keep & child.may, child.bound
        for k in child.may - keep:
            gone.setdefault(k, why.format(label=k))
    return Flow(may=may, gone=gone, bound=bound, pinned={k: v for k, v in child.pinned.items() if k in keep},
                added=child.added & keep)


def _drop(child: Flow, drop, why: str) -> Flow:
    """``child`` without the labels ``drop`` (each dropped ``why``, with ``{label}``)."""
    if not child.known:
        return UNKNOWN
    gone = dict(child.gone)
    for k in drop:
        gone.setdefault(k, why.format(label=k))
    may = None if child.may is None else child.may - frozenset(drop)
    return Flow(may=may, gone=gone, bound=child.bound,
                pinned={k: v for k, v in child.pinned.items() if k not in drop},
                added=child.added - frozenset(drop))


def _add(child: Flow, labels) -> Flow:
    """``child`` plus labels whose values are set by the operation (``label_replace`` etc.)."""
    if not child.known:
        return UNKNOWN
    labels = frozenset(labels)
    return Flow(may=None if child.may is None else child.may | labels,
                gone={k: v for k, v in child.gone.items() if k not in labels}, bound=child.bound,
                pinned={k: v for k, v in child.pinned.items() if k not in labels},
                added=child.added | labels)


def _set(child: Flow, label: str, value: str | None) -> Flow:
    """``child`` with ``label`` set on every series (to ``value`` when it is known)."""
    out = _add(child, [label])
    if value is None or not out.known:
        return out
    return Flow(may=out.may, gone=out.gone, bound=out.bound, pinned={**out.pinned, label: (("=", value),)},
                added=out.added)


def _value(child: Flow, label: str) -> str | None:
    """The one value every series of ``child`` has for ``label`` (``""`` when they never carry
    it), or None when it is not known. No series carries the label with the empty name."""
    if label == "" or child.carries(label) is False:
        return ""
    for op, v in child.pinned.get(label, ()):
        if op == "=":
            return v
    return None


_MATCH_ALL = re.compile(r"\((?:\?:)?\.\*\)|\.\*|\(\?s\)\.\*|\(\?s\)\(\.\*\)")


def label_replace_flow(child: Flow, dst: str, repl: str, src: str, regex: str) -> Flow:
    """The flow of ``label_replace(child, dst, repl, src, regex)``.

    Prometheus (``promql/functions.go``, and the "Functions" page of its docs) matches
    ``^(?s:regex)$`` against the value of ``src`` (``""`` when the series lack it); where it
    matches, ``dst`` is set to the expansion of ``repl``, and a label set to ``""`` is deleted;
    where it does not, the series is unchanged. So an empty replacement deletes ``dst``, and
    ``$1`` of a group that matched nothing deletes it too. When the value of ``src`` is known
    (the series never carry it, or an equality matcher pins it) the result is worked out
    exactly; otherwise ``dst`` counts as set (as a ``by`` list's label counts as kept) when the
    replacement has literal text or reads a group, and is deleted when the expansion is always
    empty and the regex matches anything. A regex Python reads otherwise than Go's RE2 is not
    evaluated (it may or may not match)."""
    if not child.known:
        return UNKNOWN
    what = f'`label_replace(..., "{dst}", "{repl}", "{src}", "{regex}")`'
    rx = None if "(?U)" in regex else _regex(regex)
    if rx is None:  # not evaluated: where it matches, `dst` is set unless the expansion is empty
        return child if repl == "" else _add(child, [dst])
    value = _value(child, src)
    if value is not None:
        m = rx.fullmatch(value)
        if m is None:
            return child  # the regex does not match: the series are unchanged
        got = go_expand(repl, m)
        if got == "":
            return _drop(child, [dst], what + " sets `{label}` to an empty value, which deletes it")
        return _set(child, dst, got)
    parts = go_template_parts(repl)
    literal = "".join(p for p in parts if isinstance(p, str))
    real = [p for p in parts if not isinstance(p, str) and group_of(rx, p[0]) is not None]
    every = bool(_MATCH_ALL.fullmatch(regex))
    if literal:  # the expansion is never empty: `dst` is set where the regex matches
        return _set(child, dst, literal if every and not real else None)
    if not real:  # the expansion is always empty: `dst` is only ever deleted
        if every:
            return _drop(child, [dst], what + " sets `{label}` to an empty value, which deletes it")
        return child
    # the expansion is the text of groups: set from `src` (empty only for some values of it)
    return _add(child, [dst])


def label_join_flow(child: Flow, dst: str, sep: str, srcs: list[str]) -> Flow:
    """The flow of ``label_join(child, dst, sep, srcs...)``: ``dst`` is set, on every series,
    to the values of ``srcs`` (``""`` for a label a series lacks) joined with ``sep``, and
    deleted where that is empty (Prometheus ``promql/functions.go``): with no source label, or
    only source labels the series never carry (and no separator between two of them), it is
    always deleted; otherwise it counts as set."""
    if not child.known:
        return UNKNOWN
    what = f'`label_join(..., "{dst}", "{sep}"' + "".join(f', "{s}"' for s in srcs) + ")`"
    values = [_value(child, s) for s in srcs]
    if all(v is not None for v in values):
        got = sep.join(values)
        if got == "":
            return _drop(child, [dst], what + " sets `{label}` to an empty value, which deletes it")
        return _set(child, dst, got)
    # set from the sources (empty, so deleted, only where every source is)
    return _add(child, [dst])


def absent_labels(vs) -> dict[str, str]:
    """The labels ``absent(vs)`` / ``absent_over_time(vs[r])`` gives its one series, for the
    selector ``vs`` (a promql_parser VectorSelector): as Prometheus'
    ``createLabelsForAbsentFunction`` does, each label's first matcher sets it when it is an
    equality, and any other matcher of that label (a second equality included) deletes it; a
    label set to ``""`` is not there."""
    out: dict[str, str] = {}
    seen: set[str] = set()
    for m in vs.matchers.matchers:
        if m.name == "__name__":
            continue
        if op_text(m) == "=" and m.name not in seen:
            out[m.name] = m.value
            seen.add(m.name)
        else:
            out.pop(m.name, None)
    return {k: v for k, v in out.items() if v != ""}


#: What a non-selector argument of ``absent()`` is, by promql_parser node type (RG313's words).
_NOT_A_SELECTOR = {"BinaryExpr": "an expression with an operator", "AggregateExpr": "an aggregation",
                   "Call": "a function's result", "ParenExpr": "an expression in parentheses",
                   "SubqueryExpr": "a subquery", "NumberLiteral": "a number", "UnaryExpr": "a negation"}
_COMPARISON_OPS = ("==", "!=", ">", "<", ">=", "<=")


def absent_flow(name: str, arg) -> Flow:
    """The :class:`Flow` of ``absent(arg)`` / ``absent_over_time(arg)`` (``name``; ``arg`` the
    promql_parser argument node or None): the labels :func:`absent_labels` gives for a plain
    selector (a range selector's, for ``absent_over_time``), none for anything else, as
    Prometheus' ``createLabelsForAbsentFunction`` does. The reasons say which case dropped a
    label: an argument that is not a plain selector (``absent(up{job="a"} == 1)`` keeps no
    label although its selector has equality matchers), a label the selector matches otherwise
    than by one non-empty equality, or a label it does not match."""
    vs = arg.vector_selector if type(arg).__name__ == "MatrixSelector" else arg
    if type(vs).__name__ != "VectorSelector":
        kind = type(vs).__name__
        what = _NOT_A_SELECTOR.get(kind, "not a series selector")
        if kind == "BinaryExpr" and str(vs.op) in _COMPARISON_OPS:
            what = f"a comparison (`{vs.op}`)"
        return Flow(may=frozenset(), bound=f"`{name}()` of {what}, not a plain series selector, gives its one "
                                           "series no labels (Prometheus takes them only from a selector's "
                                           "equality matchers), so it drops `{label}`")
    eq = absent_labels(vs)
    keep = frozenset(eq)
    kept = ", ".join(sorted(keep)) or "none"
    by_label: dict[str, list[str]] = {}
    for m in vs.matchers.matchers:
        if m.name != "__name__":
            by_label.setdefault(m.name, []).append(f"`{m.name}{op_text(m)}\"{m.value}\"`")
    gone = {k: (f"`{name}()` takes a label from its selector only when one non-empty equality matcher names "
                f"it, not from {', '.join(texts)}, so it drops `{k}`") for k, texts in by_label.items() if k not in keep}
    return Flow(may=keep, pinned={k: (("=", eq[k]),) for k in keep}, gone=gone,
                bound=f"`{name}()` keeps only the labels of its selector's equality matchers "
                      f"({kept}), so it drops `{{label}}`")


def _matched(res: Flow, other: Flow, on: bool, labels, side: str) -> Flow:
    """``res`` (the side whose labels the result keeps) limited to the series that vector
    matching pairs with a series of ``other`` (the ``side`` side, "left" or "right"): the
    labels matching compares (``on (labels)``: those; ``ignoring (labels)`` or no modifier:
    every label but ``labels``) have equal values on both sides, an absent label counting as
    ``""`` (Prometheus ``promql/engine.go``, ``signatureFunc``). So a compared label that
    ``other`` never carries is never on a matched series either, one ``other`` pins is pinned
    the same way, and one ``other`` keeps counts as kept."""
    if not (res.known and other.known):
        return UNKNOWN
    ignored = frozenset(labels) if not on else frozenset()
    listed = ", ".join(labels)
    pairs = (f"`on ({listed})` pairs it only with {side}-side series" if on else
             f"`ignoring ({listed})` pairs it only with {side}-side series of the same other labels" if labels else
             f"vector matching without `on (...)` pairs it only with {side}-side series of the same labels")

    def compared(k: str) -> bool:
        return k in labels if on else k not in ignored

    def why(k: str) -> str:
        inner = other.why_not(k)
        return f"{pairs}, which never have `{k}`" + (f" ({inner})" if inner else "")

    gone, may, bound = dict(res.gone), res.may, res.bound
    pinned, added = dict(res.pinned), set(res.added)
    if not on and other.may is not None:
        allowed = other.may | ignored
        if may is None:
            may = allowed
            bound = f"{pairs}, which never have `{{label}}`" + (f" ({other.bound})" if other.bound else "")
        else:
            for k in may - allowed:
                gone.setdefault(k, why(k))
            may = may & allowed
    candidates = set(labels) if on else set(other.gone) | set(other.pinned) | set(other.added) | set(other.may or ())
    for k in sorted(candidates):
        if not compared(k):
            continue
        theirs = other.carries(k)
        mine = Flow(may=may, gone=gone, bound=bound, pinned=pinned, added=frozenset(added)).carries(k)
        if theirs is False and mine is not False:
            gone[k] = why(k)
            pinned.pop(k, None)
            added.discard(k)
        elif theirs is True and mine is not False:
            added.add(k)
            if k in other.pinned:
                pinned[k] = pinned.get(k, ()) + tuple(m for m in other.pinned[k] if m not in pinned.get(k, ()))
    return Flow(may=may, gone=gone, bound=bound, pinned=pinned, added=frozenset(added) - frozenset(gone))
