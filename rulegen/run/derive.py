"""``rulegen derive-tests``: promtool tests written from a rule's ``expr`` and ``for``.

For an alert without tests, the expression is read for a shape rulegen knows how to feed:

* a **threshold on a selector**: ``x{a="b"} > 80``;
* an **aggregation** of one: ``max by (namespace, name) (x{...}) > 0`` (``sum``, ``max``,
  ``min``, ``avg``; ``by`` labels become the expected alert's labels);
* a **rate of a counter**: ``rate(x{...}[5m]) > 0.5`` or ``increase(x{...}[10m]) >= 3``,
  aggregated or not;
* a **ratio of two selectors**: ``a{...} / b{...} > 0.05``, of their rates, or of their
  aggregations by the same labels;
* any of these **scaled** by a number: ``a / b * 100 < 10``;
* two of these joined by **and** (a guard), ``a > 80 and b == 0``, when they read different
  series and match on all their labels;
* **absent**: ``absent(x{...})`` or ``absent(x{...} == 1)``.

From the shape come the tests (promtool's vocabulary, one sample a minute, or the rule
group's interval):

* selectors give series with the labels their matchers require (``=`` the value, ``=~`` a
  value the regular expression matches, ``!=``/``!~`` another value) plus a value for each
  ``by`` label; ratio sides share their labels so they match one-to-one;
* the threshold gives a value on each side, the boundary value itself on the side the
  comparison puts it (``> 80``: 80 does not fire; ``>= 80``: it does);
* ``for`` gives the eval times: the firing test asserts quiet one evaluation interval before
  ``for`` has passed and firing when it has (both sides of the boundary);
* ``absent`` gives a missing series (firing) and a present one (quiet);
* rates give counters growing at the pace that puts the rate (or the increase over the
  window) on the wanted side; the condition holds from the first evaluation with two samples.
  ``rate``'s extrapolation (Prometheus docs, "rate()") makes the first windows read a lower
  pace, which is accounted for when placing the eval times;
* a counter that grows then stops (for a ratio: a numerator that stops, a denominator that
  speeds up) is asserted while the window still holds the change and after, so a halved or
  doubled window fails; a counter that jumps by exactly the threshold tests ``>``/``>=`` at
  the boundary where a steady pace cannot hit it;
* the quiet test also holds, for each label matcher, a series that misses only that matcher
  with a firing value, so a matcher removed from the rule makes it fire;
* mutants no input can tell apart from the rule (``!= 0`` for ``rate(...) > 0``, a matcher
  that another one-to-one matched selector repeats) are written into ``equivalent_mutants``
  with the reason; what the tests cannot pin is printed as a note.

A recording rule of one of these shapes (without the comparison) gets a ``promql_expr_test``
with the value it must compute, once its window is full, and the near-miss series it must
leave out.

Other shapes (``bool``, ``on``/``ignoring``, ``or``/``unless``, functions other than
``rate``/``increase``, ``offset``, subqueries) are reported as "write this one by hand" with
the reason. The tests are inserted into the spec text after the rule's last
line, as a ``tests:`` block emitted by ruamel.yaml; the rest of the file is kept byte for byte
(comments, layout, quoting).
"""

from __future__ import annotations

import io
import math
import re
from dataclasses import dataclass, field

import promql_parser as pp

from ..promql.matchers import matches, op_text
from ..promql.series import series_text, short_number
from ..spec import Spec
from ..spec.durations import format_ms, parse_ms

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
        ast = _strip(pp.parse(expr))
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
        ast = _strip(pp.parse(expr))
    except Exception as e:
        raise Manual(f"the expr does not parse: {e}") from None
    if isinstance(ast, pp.BinaryExpr) and str(ast.op) in COMPARISONS:
        raise Manual("a recording rule that compares: write its expected samples by hand")
    shape = analyze(f"({ast.prettify()}) > 0")
    return Shape(shape.kind, None, None, shape.by, shape.sides)


# --- labels ---------------------------------------------------------------------------------

def _pick(m, accept: bool) -> str:
    """A label value the matcher ``m`` accepts (``accept``) or refuses (for the near-miss
    series): the matcher's own value or ``other``, or for a regex the first candidate that
    it decides as wanted.

    Raises:
        Manual: no candidate is decided as wanted (or the regex is one rulegen does not read
            like RE2).
    """
    op = op_text(m)
    if op in ("=", "!="):
        return m.value if (op == "=") == accept else ("other" if m.value != "other" else "another")
    if (op == "=~") == accept:  # a value the regex matches
        cands = [*_alternatives(m.value), "x", "a", "1"] + ([""] if accept else [])
    else:
        cands = ["other", "another", "x-other"] + ([] if accept else ["zz"])
    got = next((c for c in cands if matches(op, m.value, c) is accept), None)
    if got is None:
        raise Manual(f"no label value found that matches `{m}`" if accept
                     else f"no label value found that `{m}` refuses")
    return got


def _label_matchers(sides: list):
    """(side, matcher) for every label matcher of ``sides`` (the metric name left out)."""
    for side in sides:
        for m in side.matchers:
            if m.name != "__name__":
                yield side, m


def _alternatives(regex: str) -> list[str]:
    """Literal alternatives of a regular expression like ``a|b|c`` (``Probe.*Failed`` gives
    ``ProbeFailed`` and ``ProbexFailed``)."""
    out = []
    for alt in regex.split("|"):
        alt = alt.strip("()")
        plain = alt.replace(".*", "").replace(".+", "x")
        out += [plain.replace(".", "0"), plain, alt.replace(".*", "x").replace(".+", "x")]
    return [a for a in out if not re.search(r"[\\\[\](){}?*+^$]", a)]


def _labels(side: Side, by: list | None) -> dict:
    """Series labels for ``side``: what its matchers require, plus a value for each ``by`` label."""
    out: dict = {}
    for _, m in _label_matchers([side]):
        v = _pick(m, True)
        if v != "" and op_text(m) in ("=", "=~"):
            out[m.name] = v  # a missing label already satisfies `!=` and `!~`
    for label in by or []:
        out.setdefault(label, f"{label}-1")
    return out


def _near_misses(sides: list, labels: dict) -> list[tuple[Side, dict]]:
    """Per label matcher of ``sides``, the side and ``labels`` with that one label changed to
    a value the matcher refuses: a series that misses only that matcher."""
    return [(side, {**labels, m.name: _pick(m, False)}) for side, m in _label_matchers(sides)]


def _near_series(shape: Shape, owner: Side, inputs: list[tuple[Side, str]]) -> list[tuple[Side, str]]:
    """Of the input series a value needs, those a near-miss of ``owner``'s matcher gets: all
    of them (a ratio's sides match one-to-one, so each needs its partner), except for an
    aggregated ratio, where a partner would be summed into the real series' group."""
    if shape.kind == "ratio" and shape.by is not None:
        return [(s, v) for s, v in inputs if s is owner]
    return inputs


def _series(name: str | None, labels: dict) -> str:
    if not name:
        raise Manual("a selector without a metric name")
    return series_text(name, labels)


# --- values ---------------------------------------------------------------------------------

def _sides_of(op: str, n: float, exact: bool = True) -> tuple[list[float], list[float]]:
    """(values that fire, values that do not) for ``x op n``: the boundary value on its side
    (``exact``; otherwise half a step past it, for values the test data cannot hit exactly),
    and one step away on the other; a step is |n| / 2, or 1 for 0."""
    d = abs(n) / 2 if n else 1.0
    if not exact:
        n_fire = {">=": n + d / 2, "<=": n - d / 2}.get(op, n)
        n_quiet = {">": n - d / 2, "<": n + d / 2}.get(op, n)
        table = {
            ">": ([n + d], [n_quiet]), ">=": ([n_fire], [n - d]), "<": ([n - d], [n_quiet]),
            "<=": ([n_fire], [n + d]),
        }
        if op not in table:
            raise Manual(f"`{op}` against a value the test data cannot hit exactly")
        return table[op]
    table = {
        ">": ([n + d], [n, n - d]), ">=": ([n], [n - d]), "<": ([n - d], [n, n + d]), "<=": ([n], [n + d]),
        "==": ([n], [n - d, n + d]), "!=": ([n - d, n + d], [n]),
    }
    fire, quiet = table[op]
    assert all(_TRUTH[op](v, n) for v in fire) and not any(_TRUTH[op](v, n) for v in quiet)
    return fire, quiet


def _rate_at(k: int, pace: float, step_s: int, range_s: int) -> float | None:
    """The per-second rate Prometheus reads at the k-th evaluation (t = k steps) from a counter
    growing by ``pace * step_s`` per sample from t = 0 (extrapolation as in the Prometheus
    docs for rate(): a window not covered to its start is extrapolated by half a sample
    interval); None before two samples are in the window."""
    first_k = max(0, math.floor(k - range_s / step_s) + 1)
    samples = k - first_k + 1
    if samples < 2:
        return None
    sampled = (k - first_k) * step_s
    to_start = first_k * step_s - (k * step_s - range_s)
    avg = sampled / (samples - 1)
    if to_start >= avg * 1.1:
        to_start = avg / 2
    if first_k == 0:
        to_start = 0  # the counter starts at 0: no extrapolation below zero
    return pace * (sampled + to_start) / range_s


# --- tests ----------------------------------------------------------------------------------

@dataclass
class Derived:
    """Tests derived for one rule, as plain data in the spec's test vocabulary, and the
    mutants (``rulegen test --mutate`` texts) no test can kill, each with the reason."""

    rule: object
    tests: list
    equivalent: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def _equivalents(spec: Spec, group, rule, shape: Shape) -> list[tuple[str, str]]:
    """Mutants of ``rule`` that no input tells apart from it, given its shape: ``!= 0`` for
    ``> 0`` on a counter's rate (never negative), and, where series are matched one-to-one on
    all their labels (a ratio or ``and``, not aggregated), a matcher removed from one selector
    when another selector has it too (the series it would let in find no partner)."""
    from .mutants import mutants_of
    texts = {m.text for m in mutants_of(spec, group, rule)}
    out = []

    def nth(text: str, k: int) -> str:
        return text if k == 1 else f"{text} (#{k})"

    seen: dict = {}
    for part in shape.parts or [shape]:
        if part.op is None:
            continue
        cmp_text = f"`{_cmp_text(part)}` becomes `!= {short_number(part.compared if part.compared is not None else part.threshold)}`"
        seen[cmp_text] = seen.get(cmp_text, 0) + 1
        counter = part.kind == "counter" or part.kind == "ratio" and part.sides[0].func
        if counter and part.op == ">" and part.threshold == 0 and nth(cmp_text, seen[cmp_text]) in texts:
            out.append((nth(cmp_text, seen[cmp_text]), "the rate of a counter is never negative."))
    parts = shape.parts or [shape]
    one_to_one = shape.kind in ("ratio", "and") and all(p.by is None for p in parts) and \
        all(p.kind != "ratio" or p.by is None for p in parts)
    if one_to_one:
        what = "`and`" if shape.kind == "and" else "the ratio"
        counts: dict = {}
        for side in shape.sides:
            for m in side.matchers:
                if m.name != "__name__":
                    counts[str(m)] = counts.get(str(m), 0) + 1
        for m_text, n in counts.items():
            if n < 2:
                continue
            for k in range(1, n + 1):
                t = nth(f"matcher `{m_text}` removed", k)
                if t in texts:
                    out.append((t, f"another selector of {what} also requires `{m_text}`, and it matches "
                                   "series one-to-one on all their labels."))
    return out


def derive(spec: Spec, group, rule) -> Derived:
    """Tests for ``rule`` (an alert or recording rule without tests) of ``spec``.

    Raises:
        Manual: the rule's shape is not derivable (says why).
    """
    from ..render.promtool_tests import evaluation_interval
    shape = analyze(rule.expr) if rule.is_alert else analyze_record(rule.expr)
    step_ms = parse_ms(group.interval or evaluation_interval(spec))
    if step_ms % 1000:
        raise Manual("an evaluation interval that is not whole seconds")
    step_s = step_ms // 1000
    for_ms = parse_ms(rule.for_) if rule.for_ else 0
    if for_ms % step_ms:
        raise Manual("a `for` that is not a whole number of evaluation intervals")
    for_k = for_ms // step_ms
    interval = format_ms(step_ms)
    if rule.keep_firing_for:
        raise Manual("`keep_firing_for`: when the alert stops depends on it")
    short = [x.range_s for x in shape.sides if x.func and x.range_s < 2 * step_s]
    if short:
        raise Manual(f"a range of {format_ms(short[0] * 1000)} holds fewer than two samples taken every "
                     f"{interval} (see RG604): the rate reads nothing; sample more often by hand")
    if shape.kind == "absent":
        return Derived(rule, _absent_tests(shape, for_k, step_ms, interval))
    if shape.kind == "and":
        if not rule.is_alert:
            raise Manual("a recording rule with `and`: write its expected samples by hand")
        return Derived(rule, _and_tests(shape, for_k, step_ms, step_s, interval),
                       _equivalents(spec, group, rule, shape),
                       ["the windows of `rate`/`increase` inside `and` are not pinned; write a case by "
                        "hand where the pace changes"] if any(x.func for x in shape.sides) else [])
    if not rule.is_alert:
        labels = rule.all_labels(spec.labels, group.labels)
        return Derived(rule, _record_tests(rule.name, labels, shape, step_ms, step_s, interval),
                       _equivalents(spec, group, rule, shape),
                       [f"the range of `{s.func}` is not pinned (a steady pace reads the same over any window); "
                        "write a case by hand where the pace changes" for s in shape.sides[:1] if s.func])
    notes = []
    if shape.kind == "ratio" and shape.sides[0].func and shape.op in (">", ">=", "<", "<="):
        # each rate is computed in floating point: their ratio is never fed exactly the threshold
        other = {">": ">=", ">=": ">", "<": "<=", "<=": "<"}[shape.op]
        notes.append(f"`{shape.op} {short_number(shape.threshold)}` against `{other} {short_number(shape.threshold)}` is not "
                     "pinned: a ratio of two rates cannot be fed exactly the threshold; write that case "
                     "by hand if the boundary matters")
    return Derived(rule, _threshold_tests(shape, for_k, step_ms, step_s, interval),
                   _equivalents(spec, group, rule, shape), notes)


def _when(k: int, step_ms: int) -> str:
    return format_ms(k * step_ms) if k else "0s"


def _firing_test(name, series, start_k, for_k, step_ms, interval, labels, total_k) -> dict:
    evals = []
    if for_k:
        evals.append({"eval_time": _when(start_k + for_k - 1, step_ms), "exp_alerts": []})
    evals.append({"eval_time": _when(start_k + for_k, step_ms), "exp_alerts": [{"exp_labels": labels}]})
    return {"name": name, "interval": interval, "input_series": series, "alert_rule_test": evals}


def _absent_tests(shape: Shape, for_k: int, step_ms: int, interval: str) -> list:
    side = shape.sides[0]
    labels = _labels(side, None)
    total = for_k + 5
    present = "1"
    if shape.absent_cmp:
        op, n = shape.absent_cmp
        fire, _quiet = _sides_of(op, n)
        present = short_number(fire[0])
    # absent() of a selector keeps its equality matchers' labels; of a comparison, none
    exp = {m.name: m.value for m in side.matchers
           if op_text(m) == "=" and m.name != "__name__"} if not shape.absent_cmp else {}
    near = [{"series": _series(side.name, nl), "values": f"{present}x{total}"}
            for _owner, nl in _near_misses([side], labels)]
    firing = _firing_test("fires when the series is missing for `for`, not before"
                          if for_k else "fires when the series is missing",
                          near, 0, for_k, step_ms, interval, exp, total)
    if not near:
        firing["input_series"] = [{"series": "rulegen_derived_unrelated", "values": f"1x{total}"}]
    tests = [firing]
    if shape.absent_cmp:
        op, n = shape.absent_cmp
        _fire, quiet = _sides_of(op, n)
        for v in quiet:
            tests.append({
                "name": f"fires when the series is there with the value {short_number(v)}",
                "interval": interval,
                "input_series": [{"series": _series(side.name, labels), "values": f"{short_number(v)}x{total}"}],
                "alert_rule_test": [{"eval_time": _when(for_k, step_ms), "exp_alerts": [{"exp_labels": exp}]}],
            })
    tests.append({
        "name": "does not fire while the series is there",
        "interval": interval,
        "input_series": [{"series": _series(side.name, labels), "values": f"{present}x{total}"}],
        "alert_rule_test": [{"eval_time": _when(for_k + 1, step_ms), "exp_alerts": []}],
    })
    return tests


def _fire_quiet(shape: Shape, step_s: int) -> tuple[list[float], list[float]]:
    """(values that fire, values that do not) for a threshold shape, exact where the test data
    can hit the threshold exactly (see :func:`_sides_of`), never negative for counters."""
    op, n = shape.op, shape.threshold
    fire, quiet = _sides_of(op, n)
    if shape.kind == "counter" and not all(_exact(v, shape.sides[0], step_s) for v in fire + quiet) or \
            shape.kind == "ratio" and shape.sides[0].func or \
            shape.scale != 1.0 and any(_compared(shape, v) != shape.compared for v in fire + quiet if v == n):
        # the compared value cannot be fed exactly: stay clear of the threshold
        fire, quiet = _sides_of(op, n, exact=False)
    if shape.kind == "counter" or (shape.kind == "ratio" and shape.sides[0].func):
        if any(v < 0 for v in fire):
            raise Manual("a firing value below 0, which a counter's rate cannot have")
        quiet = [v for v in quiet if v >= 0]
    return fire, quiet


def _shape_labels(shape: Shape) -> dict:
    """Series labels every input series of ``shape`` gets (a ratio's sides share them)."""
    labels = _labels(shape.sides[0], shape.by)
    if shape.kind == "ratio":
        other = _labels(shape.sides[1], shape.by)
        clash = {k for k in labels.keys() & other.keys() if labels[k] != other[k]}
        if clash:
            raise Manual(f"the ratio's sides require different values of {', '.join(sorted(clash))}")
        labels = {**other, **labels}
    return labels


def _inputs(shape: Shape, labels: dict, v: float, step_s: int, total: int) -> list[tuple[Side, dict, str]]:
    """Input series (side, labels, values text) that put ``shape``'s compared value at ``v``."""
    main = shape.sides[0]
    if shape.kind == "value":
        return [(main, labels, f"{short_number(v)}x{total}")]
    if shape.kind == "counter":
        return [(main, labels, _counter(v, main, step_s, total))]
    a, b = shape.sides
    den = 100.0
    if a.func:  # both counters grow every sample: b by 100, a by 100 times the ratio
        return [(a, labels, f"0+{short_number(v * den)}x{total}" if v else f"0x{total}"),
                (b, labels, f"0+{short_number(den)}x{total}")]
    return [(a, labels, f"{short_number(v * den)}x{total}"), (b, labels, f"{short_number(den)}x{total}")]


def _threshold_tests(shape: Shape, for_k: int, step_ms: int, step_s: int, interval: str) -> list:
    op = shape.op
    fire, quiet = _fire_quiet(shape, step_s)
    shown = lambda v: short_number(v * shape.scale)  # noqa: E731  (the value the comparison sees)
    main = shape.sides[0]
    labels = _shape_labels(shape)
    exp = {k: labels[k] for k in shape.by} if shape.by is not None else dict(labels)
    values = lambda v, total: _inputs(shape, labels, v, step_s, total)  # noqa: E731

    start_k = _start(shape, fire[0], step_s)
    # quiet cases are asserted once every window is full (a counter's rate reads its whole
    # pace only then) and `for` has passed, so a wrong comparison would have fired by then
    full_k = max((x.range_s // step_s for x in shape.sides if x.func), default=0)
    quiet_k = max(start_k, full_k) + for_k
    total = quiet_k + 5
    as_series = lambda triples: [{"series": _series(s.name, lab), "values": vals} for s, lab, vals in triples]  # noqa: E731
    fire_name = (f"fires when the value is {shown(fire[0])} for `for`, not before" if for_k
                 else f"fires when the value is {shown(fire[0])}")
    tests = [_firing_test(fire_name, as_series(values(fire[0], total)), start_k, for_k, step_ms, interval,
                          exp, total)]
    for v in fire[1:]:
        tests.append(_firing_test(f"fires when the value is {shown(v)}", as_series(values(v, total)),
                                  _start(shape, v, step_s), for_k, step_ms, interval, exp, total))
    jump = _jump_test(shape, labels, exp, fire, quiet, for_k, step_ms, step_s, interval)
    if jump is not None:
        tests.append(jump)
    if shape.kind in ("counter", "ratio") and main.func and op in (">", ">="):
        for which in ("numerator", "denominator") if shape.kind == "ratio" else ("numerator",):
            stops = _stops_test(shape, labels, exp, fire[0], for_k, step_ms, step_s, interval, which)
            if stops is not None:
                tests.append(stops)
    for i, v in enumerate(quiet):
        series = as_series(values(v, total))
        name = f"does not fire when the value is {shown(v)}"
        if i == 0:
            # one series per matcher, missing only that matcher, with a firing value
            for owner, near_labels in _near_misses(shape.sides, labels):
                for s, vals in _near_series(shape, owner, [(s, v) for s, _l, v in values(fire[0], total)]):
                    item = {"series": _series(s.name, near_labels), "values": vals}
                    if item["series"] not in {x["series"] for x in series}:
                        series.append(item)
            if len(series) > 1:
                name += ", nor for series another matcher refuses"
        tests.append({"name": name, "interval": interval, "input_series": series,
                      "alert_rule_test": [{"eval_time": _when(quiet_k, step_ms), "exp_alerts": []}]})
    return tests


def _jump_test(shape: Shape, labels: dict, exp: dict, fire: list, quiet: list, for_k: int, step_ms: int,
               step_s: int, interval: str) -> dict | None:
    """For ``rate``/``increase`` compared with ``>`` or ``>=`` where a steady pace cannot hit
    the threshold exactly: a counter that jumps from 0 by exactly the threshold's worth once.
    While its window holds the 0 before the jump, Prometheus reads exactly the jump (no
    extrapolation below a counter's zero), so the boundary value is tested: ``> n`` stays
    quiet at n, ``>= n`` fires. None when the boundary is already tested, the window is too
    short for ``for`` or the value is not exact."""
    n, op = shape.threshold, shape.op
    side = shape.sides[0]
    if shape.kind != "counter" or op not in (">", ">=") or n in fire + quiet or not side.func:
        return None
    w_k = side.range_s // step_s
    if side.range_s % step_s or for_k > w_k - 2:
        return None
    jump = float(short_number(n * side.range_s if side.func == "rate" else n))
    if (jump / side.range_s if side.func == "rate" else jump) != n or jump <= 0:
        return None
    k0 = 2
    total = k0 + w_k + 2
    values = f"0x{k0 - 1} {short_number(jump)}x{total - k0}"
    at = _when(k0 + for_k, step_ms)
    if op == ">":
        return {"name": f"does not fire when the value is exactly {short_number(n * shape.scale)}",
                "interval": interval, "input_series": [{"series": _series(side.name, labels), "values": values}],
                "alert_rule_test": [{"eval_time": at, "exp_alerts": []}]}
    return {"name": f"fires when the value is exactly {short_number(n * shape.scale)}",
            "interval": interval, "input_series": [{"series": _series(side.name, labels), "values": values}],
            "alert_rule_test": [{"eval_time": at, "exp_alerts": [{"exp_labels": exp}]}]}


def _and_tests(shape: Shape, for_k: int, step_ms: int, step_s: int, interval: str) -> list:
    """Tests for ``A and B`` (two threshold shapes that match on all their labels): it fires
    when both hold, and stays quiet when either does not, or when the only series one
    condition sees misses one of its matchers."""
    a, b = shape.parts
    shared = {x.name for x in a.sides} & {x.name for x in b.sides}
    if shared:
        raise Manual(f"both sides of `and` read {', '.join(sorted(shared))}: one series cannot hold "
                     "the values each side needs")
    if (a.by is None) != (b.by is None) or a.by is not None and sorted(a.by) != sorted(b.by):
        raise Manual("the two sides of `and` are not aggregated by the same labels")
    la, lb = _shape_labels(a), _shape_labels(b)
    clash = {k for k in la.keys() & lb.keys() if la[k] != lb[k]}
    if clash:
        raise Manual(f"the two sides of `and` require different values of {', '.join(sorted(clash))}")
    labels = {**la, **lb}
    exp = {k: labels[k] for k in a.by} if a.by is not None else dict(labels)
    (fa, qa), (fb, qb) = _fire_quiet(a, step_s), _fire_quiet(b, step_s)
    start_k = max(_start(a, fa[0], step_s), _start(b, fb[0], step_s))
    full_k = max((x.range_s // step_s for x in shape.sides if x.func), default=0)
    quiet_k = max(start_k, full_k) + for_k
    total = quiet_k + 5

    def series(va: float, vb: float, lab: dict) -> list[dict]:
        out: list[dict] = []
        for part, v in ((a, va), (b, vb)):
            for s, _l, vals in _inputs(part, lab, v, step_s, total):
                item = {"series": _series(s.name, lab), "values": vals}
                if item["series"] not in {x["series"] for x in out}:
                    out.append(item)
        return out

    name = "fires when both conditions hold" + (" for `for`, not before" if for_k else "")
    tests = [_firing_test(name, series(fa[0], fb[0], labels), start_k, for_k, step_ms, interval, exp, total)]
    quiet_cases = [(f"does not fire when `{_cmp_text(a)}` does not hold ({short_number(v * a.scale)})", v, fb[0])
                   for v in qa] + \
                  [(f"does not fire when `{_cmp_text(b)}` does not hold ({short_number(v * b.scale)})", fa[0], v)
                   for v in qb]
    for i, (name, va, vb) in enumerate(quiet_cases):
        inputs = series(va, vb, labels)
        if i == 0:
            for _owner, near in _near_misses(shape.sides, labels):
                for item in series(fa[0], fb[0], near):
                    if item["series"] not in {x["series"] for x in inputs}:
                        inputs.append(item)
            name += ", nor for series another matcher refuses"
        tests.append({"name": name, "interval": interval, "input_series": inputs,
                      "alert_rule_test": [{"eval_time": _when(quiet_k, step_ms), "exp_alerts": []}]})
    return tests


def _cmp_text(shape: Shape) -> str:
    return f"{shape.op} {short_number(shape.compared if shape.compared is not None else shape.threshold)}"


def _reading(vals: list[float], k: int, step_s: int, range_s: int, func: str) -> float | None:
    """What ``rate``/``increase`` over ``range_s`` reads at t = k steps from counter samples
    ``vals`` (one per step from t = 0), extrapolated as the Prometheus docs describe for
    rate(): to the window's start by up to 1.1 average sample intervals (else half of one),
    never below the counter's zero; None with fewer than two samples in the window."""
    first = max(0, math.floor(k - range_s / step_s) + 1)
    if k - first < 1 or k >= len(vals):
        return None
    result = vals[k] - vals[first]
    sampled = (k - first) * step_s
    avg = sampled / (k - first)
    to_start = first * step_s - (k * step_s - range_s)
    if to_start >= avg * 1.1:
        to_start = avg / 2
    if result > 0 and vals[first] >= 0:
        to_start = min(to_start, sampled * vals[first] / result)
    value = result * (sampled + to_start) / sampled
    return value / range_s if func == "rate" else value


def _firing(series, step_s, range_s, func, op, n, for_k) -> tuple[list[bool], list]:
    """Per evaluation, whether the alert fires (``for`` counted in evaluations), and the
    readings: of one counter, or the ratio of two (``series`` holds one or two sample lists)."""
    out, readings, since = [], [], None
    for k in range(len(series[0])):
        rs = [_reading(vals, k, step_s, range_s, func) for vals in series]
        r = None if None in rs or len(rs) == 2 and rs[1] == 0 else rs[0] if len(rs) == 1 else rs[0] / rs[1]
        readings.append(r)
        cond = r is not None and _TRUTH[op](r, n)
        since = (since if since is not None else k) if cond else None
        out.append(cond and k - since >= for_k)
    return out, readings


def _stops_test(shape: Shape, labels: dict, exp: dict, v: float, for_k: int,
                step_ms: int, step_s: int, interval: str, which: str = "numerator") -> dict | None:
    """A counter that grows, then stops (for a ratio, ``which`` side changes: the numerator
    stops, or the denominator grows four times faster): the alert still fires at one eval time when a halved window would have let it
    go, and is quiet at a later one when a doubled window would still fire. The eval times
    come from the readings :func:`_reading` predicts; none is used where a reading of the rule
    itself is within a millionth of the threshold. None when no growth pace up to 16x gives
    both."""
    side = shape.sides[0]
    op, n = shape.op, shape.threshold
    w_k = side.range_s // step_s
    if side.range_s % step_s or w_k < 4 or any(s.range_s != side.range_s for s in shape.sides):
        return None
    grow = for_k + 2 * w_k + 2
    length = grow + 3 * w_k + 4
    mults = (1.1, 1.25, 1.5, 2, 3, 4) if which == "denominator" else (1, 2, 4, 8, 16)
    for mult in mults:
        if shape.kind == "ratio" and which == "denominator":
            # the denominator speeds up until the ratio settles at threshold / mult
            step = _dyadic(v * 100)
            fast = _dyadic(100.0 * mult * (v / n if n else 2))
            series = [[step * i for i in range(length)],
                      [100.0 * i if i <= grow else 100.0 * grow + fast * (i - grow) for i in range(length)]]
        elif shape.kind == "ratio":
            step = _dyadic(v * 100 * mult)
            series = [[step * min(i, grow) for i in range(length)], [100.0 * i for i in range(length)]]
        else:
            step = _dyadic((v / side.range_s if side.func == "increase" else v) * step_s * mult)
            series = [[step * min(i, grow) for i in range(length)]]
        orig, readings = _firing(series, step_s, side.range_s, side.func, op, n, for_k)
        half, _ = _firing(series, step_s, side.range_s // 2, side.func, op, n, for_k)
        double, _ = _firing(series, step_s, side.range_s * 2, side.func, op, n, for_k)
        if any(r is not None and r != n and abs(r - n) < 1e-6 * max(1.0, abs(n)) for r in readings):
            continue
        still = next((k for k in range(grow, length) if orig[k] and not half[k]), None)
        gone = next((k for k in range(grow, length) if not orig[k] and double[k]), None)
        if still is None or gone is None:
            continue
        rest = length - grow - 1
        if which == "denominator":
            inputs = [{"series": _series(side.name, labels), "values": f"0+{short_number(step)}x{length - 1}"},
                      {"series": _series(shape.sides[1].name, labels),
                       "values": f"0+100x{grow} {short_number(100 * grow + fast)}+{short_number(fast)}x{rest - 1}"}]
            what = "denominator grows faster"
        else:
            inputs = [{"series": _series(side.name, labels),
                       "values": f"0+{short_number(step)}x{grow} {short_number(step * grow)}x{rest}"}]
            if shape.kind == "ratio":
                inputs.append({"series": _series(shape.sides[1].name, labels), "values": f"0+100x{length - 1}"})
            what = "numerator stops" if shape.kind == "ratio" else "counter stops"
        return {
            "name": f"stops within one window ({format_ms(side.range_s * 1000)}) after the {what}",
            "interval": interval,
            "input_series": inputs,
            "alert_rule_test": [
                {"eval_time": _when(still, step_ms), "exp_alerts": [{"exp_labels": exp}]},
                {"eval_time": _when(gone, step_ms), "exp_alerts": []},
            ],
        }
    return None


def _compared(shape: Shape, v: float) -> float:
    """What a scaled comparison sees when the test feeds ``v``, computed the way the query
    does (for a ratio of gauges: ``v * 100`` over 100, then the scale)."""
    x = float(short_number(v * 100)) / 100 if shape.kind == "ratio" and not shape.sides[0].func else v
    return x * shape.scale


def _dyadic(x: float) -> float:
    """``x`` rounded to a multiple of 1/64: promtool adds a counter's step sample after
    sample, and a step like 0.9 drifts (12 steps make 10.800000000000002), so a series
    written flat afterwards at 10.8 would read as a counter reset."""
    return max(round(x * 64), 1) / 64


def _whole(x: float) -> bool:
    return abs(x - round(x)) < 1e-9


def _exact(v: float, side: Side, step_s: int) -> bool:
    """Whether a counter read as ``v`` (a rate, or an increase over the window) grows by a
    whole number per sample and its window holds whole samples: then Prometheus reads ``v``
    exactly once the window is full, and a boundary value can be tested."""
    pace = v / side.range_s if side.func == "increase" else v
    return _whole(pace * step_s) and side.range_s % step_s == 0


def _record_tests(record: str, rule_labels: dict, shape: Shape, step_ms: int, step_s: int,
                  interval: str) -> list:
    """One ``promql_expr_test`` for a recording rule: series that make it compute a known
    value once its window is full (a gauge at 3, a counter at 1 a second, a ratio of 0.5, all
    exact in floating point), and, for each matcher, a series that misses only that matcher
    with another value, which the rule must leave out."""
    main = shape.sides[0]
    labels = _labels(main, shape.by)
    if shape.kind == "ratio":
        labels = {**_labels(shape.sides[1], shape.by), **labels}
    w_k = max((x.range_s // step_s for x in shape.sides if x.func), default=0)
    if any(x.func and x.range_s % step_s for x in shape.sides):
        raise Manual("a range that is not a whole number of evaluation intervals")
    at = w_k + 1
    total = at + 5

    def inputs(value: float) -> list[tuple[Side, str]]:
        if shape.kind == "value":
            return [(main, f"{short_number(value)}x{total}")]
        if shape.kind == "counter":
            return [(main, f"0+{short_number(value * step_s)}x{total}")]
        a, b = shape.sides
        if a.func:
            return [(a, f"0+{short_number(value * 128)}x{total}"), (b, f"0+128x{total}")]
        return [(a, f"{short_number(value * 128)}x{total}"), (b, f"128x{total}")]

    if shape.kind == "value":
        v, near_v = 3.0, 8.0
    elif shape.kind == "counter":
        v, near_v = 1.0, 4.0
    else:
        v, near_v = 0.5, 0.25
    expected = v * main.range_s if shape.kind == "counter" and main.func == "increase" else v
    out_labels = {k: labels[k] for k in shape.by} if shape.by is not None else dict(labels)
    out_labels.update(rule_labels)
    series = [{"series": _series(side.name, labels), "values": vals} for side, vals in inputs(v)]
    n_main = len(series)
    for owner, nl in _near_misses(shape.sides, labels):
        for side, vals in _near_series(shape, owner, inputs(near_v)):
            item = {"series": _series(side.name, nl), "values": vals}
            if item["series"] not in {x["series"] for x in series}:
                series.append(item)
    inner = ", ".join(f'{k}="{val}"' for k, val in sorted(out_labels.items()))
    return [{
        "name": f"computes {short_number(expected)}, leaving out series another matcher refuses"
                if len(series) > n_main else f"computes {short_number(expected)}",
        "interval": interval,
        "input_series": series,
        "promql_expr_test": [{"eval_time": _when(at, step_ms),
                              "exp_samples": [{"labels": f"{record}{{{inner}}}",
                                               "value": int(expected) if float(expected).is_integer() else expected}]}],
    }]


def _counter(v: float, side: Side, step_s: int, total: int, per_window: bool = True) -> str:
    """promtool values for a counter whose rate (or increase over the side's window) is ``v``."""
    pace = v / side.range_s if side.func == "increase" and per_window else v
    step = pace * step_s
    return f"0+{short_number(step)}x{total}" if step else f"0x{total}"


def _start(shape: Shape, v: float, step_s: int) -> int:
    """First evaluation (in steps from 0) at which the compared value reads ``v`` on the
    same side of the threshold as ``v`` itself."""
    if shape.kind == "value" or shape.kind == "ratio" and not shape.sides[0].func:
        return 0
    side = shape.sides[0]
    op, n = shape.op, shape.threshold
    pace = v / side.range_s if side.func == "increase" else v
    pace = float(short_number(pace * step_s)) / step_s  # the step as the test writes it (12 digits)
    if shape.kind == "ratio":
        return 1  # both sides ramp alike: the ratio is right from two samples on
    want = _TRUTH[op](v, n)
    prev = None
    for k in range(1, 10_000):
        r = _rate_at(k, pace, step_s, side.range_s)
        if r is None:
            continue
        got = r * side.range_s if side.func == "increase" else r
        if _TRUTH[op](got, n) == want and _steady(k, pace, step_s, side, op, n, want):
            # the reading that crosses, and the one before it, must be clear of the threshold
            # (or exact): a float a hair off would move the `for` boundary by an interval
            for x in (got, prev):
                if x is not None and x != n and abs(x - n) < 1e-6 * max(1.0, abs(n)):
                    raise Manual("the counter's reading crosses the threshold too close to an "
                                 "evaluation to place the `for` boundary")
            return k
        prev = got
    raise Manual("the rate never settles on the wanted side")


def _steady(k, pace, step_s, side, op, n, want) -> bool:
    for j in range(k, k + side.range_s // step_s + 2):
        r = _rate_at(j, pace, step_s, side.range_s)
        got = r * side.range_s if side.func == "increase" else r
        if _TRUTH[op](got, n) != want:
            return False
    return True


# --- writing into the spec ------------------------------------------------------------------

def tests_yaml(tests: list, indent: int, equivalent: list | None = None) -> str:
    """The ``tests:`` block for ``tests`` (and an ``equivalent_mutants:`` block for
    ``equivalent``, (text, reason) pairs) as YAML text indented by ``indent`` spaces, emitted
    by ruamel.yaml (block style; label maps and empty lists in flow style; values quoted)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    def flow(d):
        m = CommentedMap(d)
        m.fa.set_flow_style()
        return m

    def empty():
        s = CommentedSeq()
        s.fa.set_flow_style()
        return s

    seq = CommentedSeq()
    for t in tests:
        item = CommentedMap()
        item["name"] = t["name"]
        item["interval"] = t["interval"]
        item["input_series"] = [CommentedMap([("series", s["series"]),
                                              ("values", DoubleQuotedScalarString(s["values"]))])
                                for s in t["input_series"]]
        if "alert_rule_test" in t:
            art = []
            for a in t["alert_rule_test"]:
                e = CommentedMap([("eval_time", a["eval_time"])])
                e["exp_alerts"] = [CommentedMap([("exp_labels", flow(x["exp_labels"]))])
                                   for x in a["exp_alerts"]] if a["exp_alerts"] else empty()
                art.append(e)
            item["alert_rule_test"] = art
        if "promql_expr_test" in t:
            item["promql_expr_test"] = [
                CommentedMap([("eval_time", p["eval_time"]),
                              ("exp_samples", [CommentedMap([("labels", x["labels"]), ("value", x["value"])])
                                               for x in p["exp_samples"]])])
                for p in t["promql_expr_test"]]
        seq.append(item)
    y = YAML()
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    doc = {"tests": seq}
    if equivalent:
        doc["equivalent_mutants"] = [CommentedMap([("mutant", t), ("reason", r)]) for t, r in equivalent]
    y.dump(doc, buf)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in buf.getvalue().splitlines(True))


def insert_tests(text: str, spec: Spec, rule, tests: list, equivalent: list | None = None) -> str:
    """``text`` (the spec file) with a ``tests:`` block for ``rule`` inserted after its last
    line; every other byte kept. The block is indented like the rule's keys.

    Raises:
        Manual: the rule already has a ``tests`` key, or is not written under ``groups:`` (a
            rule generated from ``slos:`` has no text of its own).
    """
    lf = spec.source
    if rule.path[:1] != ("groups",):
        raise Manual("generated from `slos:`: its tests are generated too")
    for key in ("tests", "equivalent_mutants"):
        if (*rule.path, key) in lf.key_positions:
            raise Manual(f"the rule already has a `{key}` key; remove it first")
    kind = "alert" if rule.is_alert else "record"
    line, col = lf.pos(rule.path + (kind,), key=True)
    lines = text.splitlines(True)
    # the rule ends before the next line indented at most as far as its `- ` (or at the end)
    dash_col = col - 2
    end = len(lines)
    for i in range(line, len(lines)):
        s = lines[i]
        if s.strip() and not s.lstrip().startswith("#") and len(s) - len(s.lstrip(" ")) <= dash_col:
            end = i
            break
    while end > line and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")
                          and len(lines[end - 1]) - len(lines[end - 1].lstrip(" ")) <= dash_col):
        end -= 1
    block = tests_yaml(tests, col - 1, equivalent)
    if end and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    return "".join(lines[:end]) + block + "".join(lines[end:])


