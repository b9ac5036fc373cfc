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
  ``job="api"``);
* a ``for`` or ``scale`` mutant whose whole expression is empty.

A selector is judged only when its metric name is fixed (``name`` or ``__name__="..."``), it
has no ``or`` groups, every input series of the test has readable labels and every matcher
verdict is known (:func:`rulegen.promql.matchers.selects`). Series written by recording rules
count: a name that a recording rule records is judged only when every recording rule writing it
is itself empty for the test (and is not the mutated rule); ``ALERTS`` and ``ALERTS_FOR_STATE``
are never judged. Rules whose expression is a template (parameters, ``{{``) are not judged. So
every answer "cannot change" is a proof; "can change" only means no proof was found.

A mutant that no test of its rule can see is *skipped* (not run): it survives, exactly as it
would if promtool ran it.
"""

from __future__ import annotations

import promql_parser as pp

from ..promql.matchers import selector_matchers, selects
from ..promql.series import series_labels
from ..promql.syntax import parsed

#: functions whose result is empty when their (one) vector or range argument is empty
EMPTY_KEEPING = frozenset({
    "rate", "irate", "increase", "delta", "idelta", "deriv", "predict_linear", "changes", "resets",
    "avg_over_time", "min_over_time", "max_over_time", "sum_over_time", "count_over_time",
    "quantile_over_time", "stddev_over_time", "stdvar_over_time", "last_over_time",
    "present_over_time", "mad_over_time", "abs", "ceil", "floor", "round", "exp", "ln", "log2",
    "log10", "sqrt", "sgn", "clamp", "clamp_max", "clamp_min", "histogram_quantile", "label_replace",
    "label_join", "sort", "sort_desc", "timestamp", "holt_winters", "double_exponential_smoothing",
})
#: series names the rule evaluation itself writes for alerts
ALERT_SERIES = ("ALERTS", "ALERTS_FOR_STATE")


def _templated(expr: str) -> bool:
    return "{{" in expr or "[[" in expr


class TestInput:
    """The series one promtool test group (``test``: its dict as the test file holds it) can
    read: its ``input_series`` by metric name, and the project's recording rules
    (``records``: recorded name -> the exprs that write it; None for a name written by a rule
    that is not judged). ``known`` is False when an input series' labels cannot be read."""

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
                for e in exprs:
                    ast = parsed(e)
                    if ast is None or not empty(ast, self):
                        return None
            finally:
                self._busy.discard(name)
        return self.by_name.get(name, [])


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
    both refuse); False when that is not proved."""
    if type(a).__name__ != "VectorSelector" or type(b).__name__ != "VectorSelector":
        return False
    ma, mb = _selector_matchers(a), _selector_matchers(b)
    if ma is None or mb is None:
        return False
    ca, cb = inp.candidates(ma), inp.candidates(mb)
    if ca is None or cb is None or ca is not cb and ca != cb:
        return False
    for labels in ca:
        va, vb = selects(ma, labels), selects(mb, labels)
        if va is None or vb is None or va != vb:
            return False
    # same series, same offset/@: the two nodes read the same samples
    return str(a.offset) == str(b.offset) and str(a.at) == str(b.at)


def records_of(spec) -> dict:
    """Recorded name -> the exprs of ``spec``'s recording rules writing it (None for a name
    one templated rule writes: not judged)."""
    out: dict = {}
    for _g, r in spec.rules():
        if r.is_alert:
            continue
        if _templated(r.expr) or getattr(r, "params", None) or out.get(r.name, []) is None:
            out[r.name] = None
        else:
            out.setdefault(r.name, []).append(r.expr)
    return out


def cannot_change(rule, mutant, test: dict, records: dict) -> bool:
    """True when the promtool test group ``test`` provably gives the same result on ``mutant``
    of ``rule`` as on ``rule`` itself (see the module docstring); ``records``: from
    :func:`records_of` for the rule's spec."""
    if _templated(rule.expr) or getattr(rule, "params", None) or rule.expr_template:
        return False
    inp = TestInput(test, records, "" if rule.is_alert else rule.name)
    if not inp.known:
        return False
    if mutant.kind in ("for", "scale"):
        ast = parsed(rule.expr)
        return ast is not None and empty(ast, inp)
    site = getattr(mutant, "site", None)
    if site is None:
        return False
    old, new = site
    if empty(old, inp) and empty(new, inp):
        return True
    return mutant.kind == "matcher" and same_selection(old, new, inp)
