"""Which tests cannot see a mutant: proofs, made before promtool starts, that a mutant's change
leaves every value a test could look at as it was.

A mutant (:class:`rulegen.run.mutants.Mutant`) replaces one node of its rule's expression (its
``site``: the node and what takes its place), or changes only ``for`` or scales the whole
output. A promtool test group evaluates the rules over its own ``input_series`` alone, plus
what the rules themselves write (recording rules, ``ALERTS``). The replaced node gives the
same result as the original at every evaluation time of a test, and the test cannot tell the
mutant from the rule, when one of these holds:

* **both are empty**: neither node can produce a single series from the test's input
  (:func:`empty`): a selector none of the test's series can match, and everything built on it
  that stays empty on empty input (functions such as ``rate``, aggregations, arithmetic and
  comparisons with an empty side, ``and`` with an empty side, ``or`` of two empty sides,
  ``unless`` with an empty left side); ``absent``, ``vector``, ``time``, ``scalar`` and numbers
  are never taken for empty;
* **the same series are selected**: both nodes are selectors of the same metric name, and
  every input series of that name is selected by both or by neither (a removed matcher
  that every such series satisfies, such as ``job="api"`` when every series has
  ``job="api"``); for a name recording rules write, also every series they write: each
  matcher in which the two selectors differ has its label set, by the ``labels:`` of every
  recording rule writing that name, to a value the matcher accepts (Prometheus gives every
  series a recording rule writes the rule's labels, over those of its expression);
* a ``for`` or ``scale`` mutant whose whole expression is empty.

One proof holds for any test (:func:`matched_elsewhere`): a ``matcher`` mutant that drops
matcher ``m`` (on label ``L``) from a selector of a fixed metric name, where the selector is,
through steps that pass each series on with its labels (parentheses, a number on the other
side of an operator, ``rate`` and the like), one operand of a comparison, arithmetic or
``and`` between two vectors matching on all labels, whose other operand is (through such
steps) a selector with ``m`` itself. Every series of the other side has an ``L`` that ``m``
accepts, and every series the mutant adds has one ``m`` refuses: none of them is matched (nor
can two of them clash, being series of one name), so the operator gives what it gave. This
is the equivalence :data:`rulegen.run.mutation.SIDE_REASON` states for the burn-rate alerts
generated from ``slos:``, proved for any input.

A selector is judged only when its metric name is fixed (``name`` or ``__name__="..."``), it
has no ``or`` groups, every input series of the test has readable labels and every matcher
verdict is known (:func:`rulegen.promql.matchers.selects`). Series written by recording rules
count: a name that a recording rule records is judged only when every recording rule writing
it is itself empty for the test, or (for "the same series") sets the labels in question (and
is not the mutated rule); ``ALERTS`` and ``ALERTS_FOR_STATE`` are never judged. Rules whose
expression or label values are a template (parameters, ``{{``) are not judged. The recording
rules are the spec's (``rulegen test`` renders them as the spec states them, its values' rule
knobs removed: :func:`rulegen.run.testing.values_for_tests`), a superset of those a test
file loads. So every answer "cannot change" is a proof; "can change" only means no proof was
found.

A mutant that no test of its rule can see is *skipped* (not run): it survives, exactly as it
would if promtool ran it.
"""

from __future__ import annotations

import promql_parser as pp

from ..promql.matchers import matches, selector_matchers, selects
from ..promql.series import series_labels
from ..promql.syntax import nodes, parsed

#: functions whose result is empty when their (one) vector or range argument is empty
EMPTY_KEEPING = frozenset({
    "rate", "irate", "increase", "delta", "idelta", "deriv", "predict_linear", "changes", "resets",
    "avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
    "quantile_over_time", "stddev_over_time", "stdvar_over_time", "last_over_time",
    "present_over_time", "mad_over_time", "abs", "ceil", "floor", "round", "exp", "ln", "log2",
    "log10", "sqrt", "sgn", "clamp", "clamp_max", "clamp_min", "histogram_quantile", "label_replace",
    "label_join", "sort", "sort_desc", "timestamp", "holt_winters", "double_exponential_smoothing",
})
#: functions whose every output series is one series of their (one) vector or range argument,
#: with its labels (the metric name aside) and no other series' values
LABEL_KEEPING = EMPTY_KEEPING - {"label_replace", "label_join", "histogram_quantile"}
#: series names the rule evaluation itself writes for alerts
ALERT_SERIES = ("ALERTS", "ALERTS_FOR_STATE")
#: binary operators that keep a pair of series only when their labels (the name aside) match
#: (between two vectors: one-to-one for comparisons and arithmetic, a set match for ``and``)
MATCHING_OPS = frozenset({"==", "!=", ">", "<", ">=", "<=", "+", "-", "*", "/", "%", "^", "atan2", "and"})


def _templated(expr: str) -> bool:
    return "{{" in expr or "[[" in expr


class TestInput:
    """The series one promtool test group (``test``: its dict as the test file holds it) can
    read: its ``input_series`` by metric name, and the project's recording rules
    (``records``: recorded name -> ``(expr, labels)`` of each recording rule writing it, as
    :func:`records_of` gives; None for a name written by a rule that is not judged).
    ``known`` is False when an input series' labels cannot be read."""

    def __init__(self, test: dict, records: dict, mutated: str):
        self.by_name: dict[str, list[dict]] = {}
        self.known = True
        for s in test.get("input_series") or []:
            labels = series_labels(str(s.get("series", ""))) if isinstance(s, dict) else None
            if labels is None or "__name__" not in labels:
                self.known = False
                continue
            self.by_name.setdefault(labels["__name__"], []).append(labels)
        self.records = records
        self.mutated = mutated
        self._busy: set[str] = set()

    def candidates(self, ms: list) -> list[dict] | None:
        """The input series a selector with matchers ``ms`` could select, when only input
        series can be selected (its metric name is fixed, and every recording rule writing
        that name is empty here); None otherwise."""
        names = [v for lab, op, v in ms if lab == "__name__" and op == "="]
        if not self.known or len(set(names)) != 1:
            return None
        name = names[0]
        if name in ALERT_SERIES or name == self.mutated or name in self._busy:
            return None
        if name in self.records:
            exprs = self.records[name]
            if exprs is None:
                return None
            self._busy.add(name)
            try:
                for e, _labels in exprs:
                    ast = parsed(e)
                    if ast is None or not empty(ast, self):
                        return None
            finally:
                self._busy.discard(name)
        return self.by_name.get(name, [])

    def written(self, ms: list) -> tuple[str, list[dict]] | None:
        """(name, the ``labels:`` of each recording rule writing it) for a selector with
        matchers ``ms``, whose metric name is fixed, read by a test whose every input series
        has readable labels; ``[]`` when no recording rule writes it. None when that name is
        not judged (``ALERTS``, the mutated rule's own, one a rule not judged writes)."""
        names = [v for lab, op, v in ms if lab == "__name__" and op == "="]
        if not self.known or len(set(names)) != 1:
            return None
        name = names[0]
        if name in ALERT_SERIES or name == self.mutated or self.records.get(name, []) is None:
            return None
        return name, [labels for _e, labels in self.records.get(name, [])]


def _selector_matchers(node) -> list | None:
    if node.matchers.or_matchers:
        return None
    return selector_matchers(node)


def empty(node, inp: TestInput) -> bool:
    """True when ``node`` (a promql_parser node) gives no series at any evaluation time of the
    test ``inp`` describes (see the module docstring); False when that is not proved."""
    kind = type(node).__name__
    if kind == "VectorSelector":
        ms = _selector_matchers(node)
        if ms is None:
            return False
        cands = inp.candidates(ms)
        return cands is not None and all(selects(ms, labels) is False for labels in cands)
    if kind == "MatrixSelector":
        return empty(node.vector_selector, inp)
    if kind in ("ParenExpr", "UnaryExpr", "SubqueryExpr", "AggregateExpr"):
        return empty(node.expr, inp)
    if kind == "Call":
        return node.func.name in EMPTY_KEEPING and any(
            isinstance(a, pp.Expr) and empty(a, inp) for a in node.args or [])
    if kind == "BinaryExpr":
        op = str(node.op)
        if op == "or":
            return empty(node.lhs, inp) and empty(node.rhs, inp)
        if op == "unless":
            return empty(node.lhs, inp)
        return empty(node.lhs, inp) or empty(node.rhs, inp)
    return False


def same_selection(a, b, inp: TestInput) -> bool:
    """True when selectors ``a`` and ``b`` (VectorSelector nodes) select the same series in the
    test ``inp`` describes (the same metric name, whose every input series both select or
    both refuse, and whose every recorded series, where recording rules write it, carries
    rule labels that every matcher in which ``a`` and ``b`` differ accepts); False when that
    is not proved."""
    if type(a).__name__ != "VectorSelector" or type(b).__name__ != "VectorSelector":
        return False
    ma, mb = _selector_matchers(a), _selector_matchers(b)
    if ma is None or mb is None:
        return False
    # same series, same offset/@: the two nodes read the same samples
    if str(a.offset) != str(b.offset) or str(a.at) != str(b.at):
        return False
    ca, cb = inp.candidates(ma), inp.candidates(mb)
    if ca is None or cb is None:
        # a recorded name: every series the recording rules write carries their labels
        wa, wb = inp.written(ma), inp.written(mb)
        if wa is None or wb is None or wa[0] != wb[0]:
            return False
        ca = cb = inp.by_name.get(wa[0], [])
        differ = set(ma) ^ set(mb)
        for labels in wa[1]:
            if any(lab not in labels or _templated(labels[lab]) or matches(op, v, labels[lab]) is not True
                   for lab, op, v in differ):
                return False
    if ca is not cb and ca != cb:
        return False
    for labels in ca:
        va, vb = selects(ma, labels), selects(mb, labels)
        if va is None or vb is None or va != vb:
            return False
    return True


def _passes_on(node):
    """The selector whose series ``node`` gives one by one, each with its labels (the metric
    name aside) and no other series' values, or None: the selector itself, in a range, in
    parentheses, negated, with a number on the other side of an operator, or the one vector
    argument of a :data:`LABEL_KEEPING` function."""
    kind = type(node).__name__
    if kind == "VectorSelector":
        return node
    if kind == "MatrixSelector":
        return node.vector_selector
    if kind in ("ParenExpr", "UnaryExpr"):
        return _passes_on(node.expr)
    if kind == "BinaryExpr" and str(node.op) not in ("and", "or", "unless") and _plain(node.modifier):
        if type(node.lhs).__name__ == "NumberLiteral":
            return _passes_on(node.rhs)
        if type(node.rhs).__name__ == "NumberLiteral":
            return _passes_on(node.lhs)
        return None
    if kind == "Call" and node.func.name in LABEL_KEEPING:
        args = [a for a in node.args or [] if type(a).__name__ not in ("NumberLiteral", "StringLiteral")]
        return _passes_on(args[0]) if len(args) == 1 else None
    return None


def _plain(modifier) -> bool:
    """A binary operator's modifier that matches on all labels: none, or only ``bool``."""
    if modifier is None:
        return True
    fill = getattr(modifier, "fill_values", None)
    return (modifier.matching is None and not modifier.group_labels
            and (fill is None or (fill.lhs is None and fill.rhs is None))
            and str(modifier.card) in ("VectorMatchCardinality.OneToOne", "VectorMatchCardinality.ManyToMany"))


def matched_elsewhere(ast, old, new) -> bool:
    """True when ``new`` is the selector ``old`` without one matcher ``m`` (its metric name
    fixed), and every selector of ``ast`` (the rule's expression) that reads as ``old`` is,
    through steps that pass its series on (:func:`_passes_on`), one operand of a
    :data:`MATCHING_OPS` operator matching on all labels (:func:`_plain`) whose other
    operand passes on a selector with ``m`` itself: then ``old`` and ``new`` give that
    operator the same result on any input (see the module docstring). False when that is
    not proved."""
    if type(old).__name__ != "VectorSelector" or type(new).__name__ != "VectorSelector":
        return False
    mo, mn = _selector_matchers(old), _selector_matchers(new)
    if mo is None or mn is None or str(old.offset) != str(new.offset) or str(old.at) != str(new.at):
        return False
    gone = set(mo) - set(mn)
    if set(mn) - set(mo) or len(gone) != 1 or len(mo) != len(mn) + 1:
        return False
    m = next(iter(gone))
    names = {v for lab, op, v in mn if lab == "__name__" and op == "="}
    if m[0] == "__name__" or len(names) != 1:
        return False
    text = str(old)
    everywhere = sum(1 for n in nodes(ast) if type(n).__name__ == "VectorSelector" and str(n) == text)
    matched = 0
    for n in nodes(ast):
        if type(n).__name__ != "BinaryExpr" or str(n.op) not in MATCHING_OPS or not _plain(n.modifier):
            continue
        sides = (_passes_on(n.lhs), _passes_on(n.rhs))
        for this, other in (sides, sides[::-1]):
            if this is not None and other is not None and str(this) == text:
                om = _selector_matchers(other)
                matched += om is not None and m in om
    return everywhere > 0 and matched == everywhere


def records_of(spec) -> dict:
    """Recorded name -> ``(expr, labels)`` of each of ``spec``'s recording rules writing it
    (``labels``: the rule's labels as the chart renders them, the app's and the group's
    included); None for a name one templated rule writes (not judged)."""
    out: dict = {}
    for g, r in spec.rules():
        if r.is_alert:
            continue
        if _templated(r.expr) or getattr(r, "params", None) or out.get(r.name, []) is None:
            out[r.name] = None
        else:
            labels = r.all_labels(spec.labels, g.labels)
            out.setdefault(r.name, []).append((r.expr, {str(k): str(v) for k, v in labels.items()}))
    return out


def cannot_change(rule, mutant, test: dict, records: dict) -> bool:
    """True when the promtool test group ``test`` provably gives the same result on ``mutant``
    of ``rule`` as on ``rule`` itself (see the module docstring); ``records``: from
    :func:`records_of` for the rule's spec."""
    if _templated(rule.expr) or getattr(rule, "params", None) or rule.expr_template:
        return False
    site = getattr(mutant, "site", None)
    if mutant.kind == "matcher" and site is not None:
        ast = parsed(rule.expr)
        if ast is not None and matched_elsewhere(ast, site[0], site[1]):
            return True  # on any input
    inp = TestInput(test, records, "" if rule.is_alert else rule.name)
    if not inp.known:
        return False
    if mutant.kind in ("for", "scale"):
        ast = parsed(rule.expr)
        return ast is not None and empty(ast, inp)
    if site is None:
        return False
    old, new = site
    if empty(old, inp) and empty(new, inp):
        return True
    return mutant.kind == "matcher" and same_selection(old, new, inp)
