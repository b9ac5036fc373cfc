"""Small wrong versions of a rule (mutants), made from its PromQL AST and its fields.

Mutation testing asks whether a rule's tests would notice a mistake in it: each mutant is the
rule with one small change, and a mutant no test fails on (a *survivor*) is a mistake the
tests let through. The changes (the usual mutation operators, applied to PromQL):

* ``comparison``: a comparison operator replaced (``>`` by ``>=``, ``<``, ``!=``, and so on);
* ``threshold``: the number a comparison holds moved just past the nearest value the rule's
  tests give the compared series on either side (``x > 80`` with test values 50 and 85:
  ``x > 120`` and ``x > 20``; when the compared side is not the series' own value, such as a
  ``rate``, by half the number, or by 1 for 0);
* ``for``: one evaluation interval shorter or longer (``for`` added when there is none);
* ``matcher``: a label matcher removed, or negated (``=`` and ``!=``, ``=~`` and ``!~``);
* ``by``: a label dropped from an aggregation's ``by`` list;
* ``range``: a range window halved or doubled;
* ``operand``: an ``and``/``or``/``unless`` operand removed;
* ``absent``: ``absent(x)`` and ``x == 0`` swapped (``absent(x == 1)`` becomes ``x != 1``);
* ``scale``: a recording rule's output doubled.

Every mutant is a complete rule :class:`~rulegen.spec.model.Rule` (a copy with a new ``expr``
or ``for``), so it goes through rendering and Helm exactly as the real rule does. Its
``text`` (``"`== 0` becomes `<= 0`"``) is stable across runs and is what a spec names in
``equivalent_mutants``; its ``hint`` says what test would kill it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import promql_parser as pp

from ..promql.compared import MIRROR
from ..promql.series import sample_values, short_number
from ..promql.syntax import for_parser, native, nodes
from ..spec import Spec
from ..spec.durations import DurationError, format_ms, parse_ms

COMPARISONS = ("==", "!=", ">", "<", ">=", "<=")
#: each comparison and the ones it is replaced by
COMPARISON_MUTANTS = {
    ">": (">=", "<", "!="), ">=": (">", "<=", "!="), "<": ("<=", ">", "!="),
    "<=": ("<", ">=", "!="), "==": ("!=", "<=", ">="), "!=": ("==", "<", ">"),
}
_TRUTH = {  # value below, equal to, above the number -> kept by the comparison
    "==": (False, True, False), "!=": (True, False, True), ">": (False, False, True),
    "<": (True, False, False), ">=": (False, True, True), "<=": (True, True, False),
}
_NEGATED = ((pp.MatchOp.Equal, pp.MatchOp.NotEqual), (pp.MatchOp.NotEqual, pp.MatchOp.Equal),
            (pp.MatchOp.Re, pp.MatchOp.NotRe), (pp.MatchOp.NotRe, pp.MatchOp.Re))
_INVERSE = {"==": "!=", "!=": "==", ">": "<=", "<=": ">", "<": ">=", ">=": "<"}
#: aggregations whose result is one of the series' own values (or their mean)
_VALUE_KEEPING_AGG = {"max", "min", "avg", "sum", "topk", "bottomk", "group", "quantile"}

@dataclass
class Mutant:
    """One wrong version of a rule.

    Attributes:
        kind: the operator (``comparison``, ``threshold``, ``for``, ``matcher``, ``by``,
            ``range``, ``operand``, ``absent``, ``scale``).
        text: what changed, in words (stable; ``equivalent_mutants`` names it).
        rule: the mutated rule (a copy; ``expr`` or ``for_`` changed).
        field: ``"expr"`` or ``"for"``: where the change is, for the spec line.
        hint: what test would kill it.
        site: for a change of one node of ``expr``: (the node of the rule's parsed expr,
            the node put in its place), which :mod:`rulegen.run.unseen` compares; else None.
    """

    kind: str
    text: str
    rule: object
    field: str
    hint: str
    site: tuple | None = None


def _node_list(ast) -> list:
    seen: list = []
    pp.transform(ast, post_visit=lambda n: seen.append(n))
    return seen


def _replace_at(ast, index: int, new):
    """``ast`` with its ``index``-th node (post-order, as :func:`_node_list`) replaced."""
    count = [-1]

    def post(n):
        count[0] += 1
        return new if count[0] == index else None

    return pp.transform(ast, post_visit=post)


def _labels(labels) -> str:
    return ", ".join(labels or [])


def _modifier(node) -> str | None:
    """The binary operator's modifiers as text (``bool``, ``on (a)``, ``group_left (b)``), or
    None when it has one rulegen does not print (fill values)."""
    m = node.modifier
    if m is None:
        return ""
    fill = getattr(m, "fill_values", None)
    if fill is not None and (fill.lhs is not None or fill.rhs is not None):
        return None
    parts = []
    if m.return_bool:
        parts.append("bool")
    if m.matching is not None:
        kw = "on" if m.matching.type == pp.LabelModifierType.Include else "ignoring"
        parts.append(f"{kw} ({_labels(m.matching.labels)})")
    if m.card == pp.VectorMatchCardinality.ManyToOne:
        parts.append(f"group_left ({_labels(m.group_labels)})")
    elif m.card == pp.VectorMatchCardinality.OneToMany:
        parts.append(f"group_right ({_labels(m.group_labels)})")
    return (" " + " ".join(parts)) if parts else ""


def _operand(node) -> str:
    text = node.prettify()
    return f"({text})" if isinstance(node, (pp.BinaryExpr, pp.UnaryExpr)) else text


def _binary(node, op: str, lhs: str | None = None, rhs: str | None = None):
    mod = _modifier(node)
    if mod is None:
        return None
    text = f"{lhs if lhs is not None else _operand(node.lhs)} {op}{mod} " \
           f"{rhs if rhs is not None else _operand(node.rhs)}"
    try:
        return native(text)
    except Exception:
        return None


def _parens(node):
    return native(f"({node.prettify()})")


def _metric_names(node) -> set[str]:
    return {n.name for n in nodes(node) if isinstance(n, pp.VectorSelector) and n.name}


def _keeps_values(node) -> bool:
    """Whether ``node``'s values are its series' own values (selectors, parentheses and
    aggregations such as ``max``), so test sample values say where a threshold sits."""
    if isinstance(node, pp.VectorSelector):
        return True
    if isinstance(node, pp.ParenExpr):
        return _keeps_values(node.expr)
    if isinstance(node, pp.AggregateExpr):
        return str(node.op) in _VALUE_KEEPING_AGG and _keeps_values(node.expr)
    return False


def _series_values(rule, names: set[str]) -> list[float]:
    """Sample values the rule's tests give series named in ``names``."""
    vals: set[float] = set()
    for t in rule.tests:
        for s in t.data.get("input_series") or []:
            try:
                sel = native(str(s.get("series", "")))
            except Exception:
                continue
            if isinstance(sel, pp.VectorSelector) and sel.name in names:
                vals.update(v for v in sample_values(s.get("values", "")) if math.isfinite(v))
    return sorted(vals)


def _threshold_moves(n: float, values: list[float] | None) -> list[tuple[float, str]]:
    """New thresholds for ``n``: just past the nearest test value above and below (see the
    module docstring), each with the range of values a killing test needs."""
    out = []
    above = [v for v in values or [] if v > n]
    below = [v for v in values or [] if v < n]
    if values is not None and above:
        up = above[0] + (above[0] - n)
    else:
        up = n + (abs(n) / 2 if n else 1)
    if values is not None and below:
        down = below[-1] - (n - below[-1])
    else:
        down = n - (abs(n) / 2 if n else 1)
    for new in (up, down):
        lo, hi = sorted((n, new))
        out.append((new, f"a value between {short_number(lo)} and {short_number(hi)}"))
    return out


def _compare_hint(ops: tuple[str, str], shown: tuple[str, str], n: float | None, lhs: bool = False,
                  as_bool: bool = False) -> str:
    """The case that tells comparison ``ops[0]`` (shown as ``shown[0]``: ``== 1``, ``80 <``,
    ``>``) from ``ops[1]`` (``shown[1]``), in words with a concrete value: the values where one
    keeps a series and the other drops it (``as_bool``: gives 1 and the other 0). ``n``: the
    number compared with (on the left when ``lhs``), None when both sides are expressions.
    ``==`` and ``!=`` differ on every value: the hint names the number itself and says any
    other value does too."""
    t_old, t_new = (_TRUTH[MIRROR[o] if lhs else o] for o in ops)
    if n is None:
        cases = ("the left side below the right", "both sides equal", "the left side above the right")
    else:
        d = abs(n) / 2 if n else 1
        value = "a compared value" if lhs else "a value"  # `80 < x`: the compared value is on the right
        cases = (f"{value} below {short_number(n)}, such as {short_number(n - d)}", f"the value {short_number(n)}",
                 f"{value} above {short_number(n)}, such as {short_number(n + d)}")
    parts = []
    for case, a, b in zip(cases, t_old, t_new):
        if a != b:
            yes, no = shown if a else shown[::-1]
            parts.append(f"{case} (`{yes}` gives 1, `{no}` gives 0)" if as_bool else
                         f"{case} (`{yes}` keeps the series, `{no}` drops it)")
    if len(parts) == 3:  # == and != differ everywhere: the equal case, the others said once
        other = "any other value" if n is not None else "unequal sides"
        unequal = shown[1] if t_new[0] else shown[0]
        return f"a case with {parts[1]}, or {other} (" + (f"`{unequal}` gives 1)" if as_bool else
                                                           f"only `{unequal}` keeps the series)")
    return "a case with " + " or ".join(parts)


def expr_mutants(rule) -> list[tuple[str, str, str, str]]:
    """Mutants of ``rule.expr``: ``(kind, text, new expr, hint)`` in a stable order.
    Mutants that do not parse or do not change the expression are left out."""
    return [m[:4] for m in sited_expr_mutants(rule)]


# long: a table: one short block per mutation kind, in the stable order the report lists them
def sited_expr_mutants(rule) -> list[tuple]:
    """:func:`expr_mutants` with each mutant's site: ``(kind, text, new expr, hint, (old
    node, new node))`` (``scale`` changes the whole expression: its site is None)."""
    try:
        ast = native(for_parser(rule.expr))
    except Exception:
        return []
    nodes = _node_list(ast)
    root = len(nodes) - 1
    out: list[tuple] = []

    def add(kind, text, index, new, hint):
        if new is None:
            return
        if index != root and isinstance(new, pp.BinaryExpr) and not isinstance(nodes[index], pp.BinaryExpr):
            new = _parens(new)
        try:
            mutated = _replace_at(ast, index, new).prettify()
            native(mutated)
        except Exception:
            return
        if mutated.strip() == ast.prettify().strip():
            return
        out.append((kind, text, mutated, hint, (nodes[index], new)))

    for i, node in enumerate(nodes):
        if isinstance(node, pp.BinaryExpr):
            op = str(node.op)
            num_side = "rhs" if isinstance(node.rhs, pp.NumberLiteral) else \
                "lhs" if isinstance(node.lhs, pp.NumberLiteral) else None
            if op in COMPARISONS:
                n_text = short_number(getattr(node, num_side).val) if num_side else None
                shown = f"{op} {n_text}" if num_side == "rhs" else (f"{n_text} {op}" if num_side else op)
                as_bool = bool(node.modifier is not None and getattr(node.modifier, "return_bool", False))
                for new_op in COMPARISON_MUTANTS[op]:
                    new_shown = shown.replace(op, new_op, 1)
                    hint = _compare_hint((op, new_op), (shown, new_shown),
                                         getattr(node, num_side).val if num_side else None,
                                         lhs=num_side == "lhs", as_bool=as_bool)
                    add("comparison", f"`{shown}` becomes `{new_shown}`", i, _binary(node, new_op), hint)
                if num_side:
                    n = getattr(node, num_side).val
                    other = node.lhs if num_side == "rhs" else node.rhs
                    values = _series_values(rule, _metric_names(other)) if _keeps_values(other) else None
                    for new_n, need in _threshold_moves(n, values):
                        new_text = short_number(new_n)
                        side = {num_side: new_text if new_n >= 0 or num_side == "rhs" else f"({new_text})"}
                        add("threshold", f"threshold {short_number(n)} becomes {new_text}", i,
                            _binary(node, op, **side), f"a case with {need}")
                if op == "==" and num_side == "rhs" and node.rhs.val == 0 and node.modifier is None:
                    add("absent", f"`{_operand(node.lhs)} == 0` becomes `absent({node.lhs.prettify()})`", i,
                        _try_parse(f"absent({node.lhs.prettify()})"),
                        "a firing case where the series is there with the value 0")
            elif op in ("and", "or", "unless"):
                add("operand", f"`{op}` and its right operand removed", i, node.lhs,
                    f"a case where the right operand of `{op}` changes the outcome")
                if op in ("and", "or"):
                    add("operand", f"`{op}` and its left operand removed", i, node.rhs,
                        f"a case where the left operand of `{op}` changes the outcome")
        elif isinstance(node, pp.VectorSelector):
            ms = [m for m in node.matchers.matchers if m.name != "__name__"]
            for m in ms:
                if len(ms) == 1 and not node.name:
                    continue  # {a="b"} without it is not a selector
                c = _reread(node)
                if c is None:
                    break  # promql_parser prints this selector as text it does not read back
                c.matchers = pp.Matchers([x for x in c.matchers.matchers if str(x) != str(m)])
                add("matcher", f"matcher `{m}` removed", i, _try_parse(str(c)),
                    f"a case with a series whose `{m.name}` does not match `{m}`, where the alert "
                    "must stay quiet")
                neg = next(b for a, b in _NEGATED if m.op == a)
                c = _reread(node)
                c.matchers = pp.Matchers([pp.Matcher(neg, x.name, x.value) if str(x) == str(m) else x
                                          for x in c.matchers.matchers])
                new_m = pp.Matcher(neg, m.name, m.value)
                add("matcher", f"matcher `{m}` becomes `{new_m}`", i, _try_parse(str(c)),
                    f"a firing case with a series matching `{m}`")
        elif isinstance(node, pp.MatrixSelector):
            rng = int(node.range.total_seconds() * 1000)
            for factor, word in ((0.5, "halved"), (2, "doubled")):
                new_ms = int(rng * factor)
                if new_ms <= 0 or new_ms % 1000:
                    continue
                c = _reread(node)
                if c is None:
                    break  # as for a matcher: a copy with other matchers is no mutant of this range
                c.range = c.range * factor
                add("range", f"range `[{format_ms(rng)}]` {word} to `[{format_ms(new_ms)}]`", i,
                    _try_parse(str(c)),
                    "a case whose outcome depends on the window: a series that changes pace, "
                    f"asserted less than {format_ms(rng)} after the change")
        elif isinstance(node, pp.AggregateExpr):
            mod = node.modifier
            if mod is not None and mod.type == pp.AggModifierType.By and mod.labels:
                for label in mod.labels:
                    kept = [x for x in mod.labels if x != label]
                    param = f"{_param(node.param)}, " if node.param is not None else ""
                    text = f"{node.op} by ({_labels(kept)}) ({param}{node.expr.prettify()})"
                    add("by", f"`by ({_labels(mod.labels)})` loses `{label}`", i, _try_parse(text),
                        f"a case with two series that differ only in `{label}`, expecting one alert each")
        elif isinstance(node, pp.Call) and node.func.name == "absent" and node.args:
            arg = node.args[0]
            if isinstance(arg, pp.BinaryExpr) and str(arg.op) in _INVERSE and \
                    isinstance(arg.rhs, pp.NumberLiteral) and arg.modifier is None:
                new_text = f"{_operand(arg.lhs)} {_INVERSE[str(arg.op)]} {short_number(arg.rhs.val)}"
                hint = "a case where the series is missing altogether"
            else:
                new_text = f"{_operand(arg)} == 0"
                hint = "a case where the series is missing altogether"
            add("absent", f"`absent({arg.prettify()})` becomes `{new_text}`", i, _try_parse(new_text), hint)
    if not rule.is_alert:
        try:
            scaled = native(f"({ast.prettify()}) * 2").prettify()
            out.append(("scale", "output doubled", scaled,
                        "a promql_expr_test expecting a value other than 0", None))
        except Exception:
            pass
    return out


def _param(param) -> str:
    if isinstance(param, pp.Expr):
        return param.prettify()
    if isinstance(param, str):
        return '"' + param.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return short_number(float(param))


def _reread(node):
    """A copy of ``node`` (a selector) parsed from its text, or None when promql_parser prints
    it as text that does not read back as it: a matcher's value is printed without its
    escapes, so ``job=~"a\\\\.b"`` (the regex ``a\\.b``) prints as ``job=~"a\\.b"``, an unknown
    escape, and ``path="C:\\\\tmp"`` as ``path="C:\\tmp"``, a tab."""
    c = _try_parse(str(node))
    return c if c is not None and str(c) == str(node) else None


def _try_parse(text: str):
    try:
        return native(text)
    except Exception:
        return None


def evaluation_ms(spec: Spec, group) -> int:
    """Evaluation interval of ``group`` in ms: its own ``interval``, else the test file's
    ``evaluation_interval`` (see :func:`rulegen.render.promtool_tests.evaluation_interval`)."""
    from ..render.promtool_tests import evaluation_interval
    return parse_ms(group.interval or evaluation_interval(spec))


def for_mutants(spec: Spec, group, rule) -> list[tuple[str, str, str | None, str]]:
    """``for`` one evaluation interval shorter and longer: ``(kind, text, new for, hint)``."""
    if not rule.is_alert:
        return []
    step = evaluation_ms(spec, group)
    try:
        cur = parse_ms(rule.for_) if rule.for_ else 0
    except DurationError:
        return []
    out = []
    shown = f"`for: {format_ms(cur)}`" if cur else "no `for`"
    if cur - step >= 0 and cur:
        new = format_ms(cur - step) if cur - step else None
        out.append(("for", f"{shown} becomes " + (f"`for: {new}`" if new else "no `for`"), new,
                    f"a case asserting the alert is still quiet {format_ms(cur - step)} after the "
                    "condition starts (one interval before `for` has passed)"))
    out.append(("for", f"{shown} becomes `for: {format_ms(cur + step)}`", format_ms(cur + step),
                "a case asserting the alert fires as soon as `for` has passed"))
    return out


def mutants_of(spec: Spec, group, rule) -> list[Mutant]:
    """Every mutant of ``rule`` (in ``group`` of ``spec``), texts made unique per rule."""
    out: list[Mutant] = []
    seen: dict[str, int] = {}

    def add(kind, text, field, new_rule, hint, site=None):
        seen[text] = seen.get(text, 0) + 1
        if seen[text] > 1:
            text = f"{text} (#{seen[text]})"
        out.append(Mutant(kind, text, new_rule, field, hint, site))

    for kind, text, expr, hint, site in sited_expr_mutants(rule):
        # an alert with parameters renders its expr_template with the values' parameters: the
        # mutant's expr (defaults in place) takes its place, the parameters stay declared
        template = {"expr_template": expr} if getattr(rule, "params", None) else {}
        add(kind, text, "expr", replace(rule, expr=expr, tests=list(rule.tests), **template), hint, site)
    for kind, text, new_for, hint in for_mutants(spec, group, rule):
        add(kind, text, "for", replace(rule, for_=new_for, tests=list(rule.tests)), hint)
    return out


def with_rule(spec: Spec, old, new) -> Spec:
    """A shallow copy of ``spec`` whose rule ``old`` is ``new``."""
    groups = []
    for g in spec.groups:
        rules = [new if r is old else r for r in g.rules]
        groups.append(replace(g, rules=rules))
    return replace(spec, groups=groups)


__all__ = ["Mutant", "mutants_of", "expr_mutants", "for_mutants", "with_rule"]
