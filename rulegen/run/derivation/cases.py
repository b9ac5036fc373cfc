"""The derived tests of a rule (:func:`derive`): firing and quiet cases with their expected
alerts, boundary and window cases, a recording rule's expected samples, and the mutants no
input can tell apart from the rule."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...promql.matchers import op_text
from ...promql.series import short_number
from ...spec import Spec
from ...spec.durations import format_ms, parse_ms
from .series import (_compared, _counter, _dyadic, _exact, _firing, _labels, _near_misses, _near_series,
                     _series, _sides_of, _start)
from .shape import Manual, Shape, Side, _cmp_text, analyze, analyze_record

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
    from ..mutants import mutants_of
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
    from ...render.promtool_tests import evaluation_interval
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
