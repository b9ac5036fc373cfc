"""promtool tests declared in specs: traps that cost people hours.

Series values use promtool's expanding notation (Prometheus docs, "Unit testing for rules"):
``a``, ``a+bxn`` / ``a-bxn`` (n+1 samples from a, step b), ``axn`` (n+1 samples of a), ``_``
(no sample), ``_xn`` (n missing samples), ``stale`` (a staleness marker), and native histograms
``{{schema:0 sum:1 count:1 buckets:[1]}}`` (with ``+``/``x`` expansion too).

Codes:

* ``RG601`` (warning) an expected alert's label uses a template rulegen cannot expand
  (``$value``, functions): labels are always compared whole, so the test must spell it out in
  ``exp_labels`` (until it does, the test fails showing the value Prometheus gives).
  Annotations need nothing: a test compares only the annotations it states, as Prometheus
  renders them.
  Bad: ``labels: {band: "{{ $value | humanize }}"}`` and a test without ``band`` in
  ``exp_labels``; good: ``exp_labels: {band: 1.5k}`` in the test.
* ``RG602`` (warning) an input ``interval`` longer than the 5-minute lookback: between two
  samples the series is absent, so ``up == 0`` looks like "no series". Bad: ``interval: 10m``.
  Good: ``interval: 1m``.
* ``RG603`` (warning) an ``eval_time`` after the last sample of every input series: the result
  depends on the 5-minute lookback, not on the data. Bad: ``values: "0x5"`` with
  ``interval: 1m`` and ``eval_time: 30m``.
  Good: ``eval_time: 5m``, or ``values: "0x30"``.
* ``RG604`` (warning) a range selector in the rule's ``expr`` shorter than twice the test's
  input interval: ``rate(x[1m])`` over 1m samples sees one sample (ranges are left-open in
  Prometheus 3) and returns nothing. Bad: ``rate(x[1m])`` with ``interval: 1m``.
  Good: ``rate(x[5m])`` with ``interval: 1m``.
* ``RG605`` (warning) ``_`` at the end of a series' values: a missing sample does not end the
  series for 5 minutes; write ``stale`` where the series is meant to disappear.
  Bad: ``values: "1x5 _x10"``; good: ``values: "1x5 stale"``.
* ``RG606`` (warning) a test that asserts nothing (no ``alert_rule_test``, no
  ``promql_expr_test``).
  Bad: a test with ``input_series`` only; good: an ``alert_rule_test`` with the ``eval_time`` and
  ``exp_alerts`` to check.
* ``RG607`` (error) a series' ``values`` is not in expanding notation. Bad: ``values: "1,2,3"``.
  Good: ``values: "1 2 3"`` or ``values: "1+1x2"``.
* ``RG608`` (warning) an input series that no selector of the tested rule can select (nor of
  the recording rules of the spec it reads, nor of the test's other alerts and
  ``promql_expr_test`` exprs): a misspelled metric or label value. The series feeds nothing,
  so a "not firing" verdict proves nothing; such a test counts for nothing in ``rulegen
  test`` coverage. When the expr misspells a recording rule's name (RG314) and the series
  would feed the right name, the message says to fix the expr, not the series. A series
  that differs from a selector only in a label value is a deliberate negative test, not a
  typo, when the test expects nothing (no ``exp_alerts``, no ``exp_samples``) at every
  evaluation it is there for, or when a sibling series with the same metric and label
  names is fed (``code="200"`` next to ``code="500"``); a misspelt metric or label name is
  reported in any test. Bad: ``series: http_request_total{job="api"}`` for
  ``sum(rate(http_requests_total{job="api"}[5m])) > 1``; good: ``series:
  http_requests_total{job="api"}``.
* ``RG609`` (warning) an ``exp_alerts`` item with only ``exp_labels`` next to one with only
  ``exp_annotations``: one expected alert split in two by a stray ``-``, so the test expects
  two alerts. Bad: ``- exp_labels: {job: a}`` then ``- exp_annotations: {summary: x}``; good:
  both keys in one item.
* ``RG610`` (warning) an expected templated label that rulegen fills in from a template
  reading ``$labels.X``, where the item's ``exp_labels`` lack ``X``: the filled-in text has an
  empty value there, and the test locks the empty text in. Add ``X`` to ``exp_labels`` (with
  the value the series has), or write the label in ``exp_labels``. Bad: ``exp_labels: {job:
  api}`` for a label ``where: "on {{ $labels.instance }}"``; good: ``exp_labels: {job: api,
  instance: a:9100}``. (Annotations are not filled in: a test compares only those it states.)
  Silent when the alert's series can never carry ``X`` (``sum by (job)``): RG311 reports the
  template there.
"""

from __future__ import annotations

import difflib
import re

from ...findings import Severity
from ...promql.feeds import missed_by_mistake, selectors, series_feed
from ...promql.labelflow import can_carry
from ...promql.series import ValuesError, series_labels, series_name
from ...promql.series import expand as expand_series
from ...promql.syntax import nodes, parse
from ...render.slug import DEFAULT_SITE_URL
from ...spec.durations import DurationError, parse_ms
from . import gotemplate

ID = "tests"

LOOKBACK_MS = 5 * 60 * 1000


def _not_expandable(problems: list) -> str:
    """One RG601 message for every label and annotation of an expected alert that rulegen
    cannot expand: ``(kind, key, template, NotExpandable)`` entries, as
    :func:`rulegen.render.promtool_tests.expected_alert` collects them."""
    uses = [str(err).split(", which rulegen cannot expand", 1)[0] for _, _, _, err in problems]
    fields = []
    for kind, field in (("label", "exp_labels"), ("annotation", "exp_annotations")):
        keys = [key for k, key, _, _ in problems if k == kind]
        if keys:
            fields.append(f"`{field}: {{{', '.join(f'{key}: ...' for key in keys)}}}`")
    return (f"{' and '.join(uses)}, which rulegen cannot expand; write {' and '.join(fields)} "
            "in the test")


def _ranges_ms(ast) -> list[int]:
    """Range durations (ms) of every range selector in ``ast`` (subquery ranges excluded:
    a subquery samples at its own step)."""
    return [int(node.range.total_seconds() * 1000) for node in nodes(ast)
            if type(node).__name__ == "MatrixSelector"]


def dead_series(spec, rule, test_data: dict, rr=None) -> list[tuple[int, str, str | None, tuple | None]]:
    """Input series of a test (``test_data``, a test of ``rule`` in ``spec``) that nothing the
    test evaluates can select, by mistake: ``(index in input_series, series text, a "did you
    mean" (a metric name or a matcher such as ``job="api"``) or None, expr typo or None)``.
    The expr typo is ``(name in the expr, recorded name)`` when an expression reads a
    recording-rule-shaped name that no rule of the spec records and no input series has, one
    that is close to a recorded name (RG314's "did you mean"), and the series would feed the
    expression with that name fixed: the expr is wrong, not the series, and the
    suggestion must not be to rename a correct series to the typo. What the test
    evaluates: ``rule``'s ``expr``, the ``expr`` of the alerts its ``alert_rule_test`` names
    and its ``promql_expr_test`` exprs, following the spec's recording rules (``rr``, from
    :func:`.flow.recording_rules`; worked out when None). A series is listed only when that is
    certain and looks like a mistake for every expression
    (:func:`rulegen.promql.feeds.missed_by_mistake`): a series a matcher rejects on
    purpose (the other ``status`` of a condition) tests the filter and is not listed, nor is
    one whose label value is one edit away (``code="200"`` for ``code="500"``) when
    :func:`_rejected_on_purpose` says it is there to be rejected."""
    from .flow import colon_names, recording_rules
    series = [(i, s.get("series")) for i, s in enumerate(test_data.get("input_series") or [])
              if isinstance(s, dict) and isinstance(s.get("series"), str)]
    if not series:
        return []
    if rr is None:
        rr = recording_rules([spec])
    exprs = [rule.expr]
    alerts = {r.name: r for r in spec.alerts()}
    for a in test_data.get("alert_rule_test") or []:
        other = alerts.get(a.get("alertname", rule.name)) if isinstance(a, dict) else None
        if other is not None and other.expr not in exprs:
            exprs.append(other.expr)
    for p in test_data.get("promql_expr_test") or []:
        if isinstance(p, dict) and isinstance(p.get("expr"), str):
            exprs.append(p["expr"])
    typos = _expr_typos(exprs, {series_name(t) for _, t in series}, rr)
    fixed = [_fix_names(e, typos) for e in exprs] if typos else exprs
    out = []
    on_purpose = _rejected_on_purpose(test_data, series, exprs, rr)
    for i, text in series:
        why = [missed_by_mistake(e, text, rr, i in on_purpose) for e in exprs]
        if all(w is not None for w in why):
            if typos:
                why_fixed = [missed_by_mistake(e, text, rr, i in on_purpose) for e in fixed]
                if any(w is None for w in why_fixed):  # fed once the expr's name is fixed
                    typo = next(t for t in sorted(typos.items()) if any(t[0] in colon_names(e) for e in exprs))
                    out.append((i, text, None, typo))
                    continue
                why = why_fixed
            if all(w == "metric" for w in why):
                names = sorted({v for e in fixed for ms in (selectors(e, rr) or []) for lab, op, v in ms
                                if lab == "__name__" and op == "="})
                near = difflib.get_close_matches(series_name(text), names, n=1, cutoff=0.6)
            else:
                near = [next(w for w in why if w != "metric")]
            out.append((i, text, near[0] if near else None, None))
    return out


def _rejected_on_purpose(test_data: dict, series: list[tuple[int, str]], exprs: list[str], rr) -> set[int]:
    """Indexes of the input ``series`` ((index, series text) pairs) of a test that are there to
    be rejected by a selector's label values, so that a value one edit away from a matcher's
    (``code="200"`` for ``code="500"``) is deliberate, not a typo: series that are there (a
    sample at or before the eval time) only at evaluations that expect nothing (an
    ``alert_rule_test`` item without ``exp_alerts``, a ``promql_expr_test`` item without
    ``exp_samples``), at one at least; and series next to a sibling with the same metric name
    and label names that an expression ``exprs`` does select (a contrast: only the sibling
    counts). A series whose ``values`` do not expand is not known to be either."""
    interval_ms = 60_000
    try:
        interval_ms = parse_ms(test_data["interval"]) if "interval" in test_data else interval_ms
    except DurationError:
        pass
    evals = []  # (eval time in ms, expects nothing)
    for kind, expected in (("alert_rule_test", "exp_alerts"), ("promql_expr_test", "exp_samples")):
        for a in test_data.get(kind) or []:
            if not isinstance(a, dict):
                continue
            try:
                evals.append((parse_ms(a.get("eval_time", "")), not a.get(expected)))
            except DurationError:
                return set()  # an evaluation rulegen cannot place: nothing is known
    raw = test_data.get("input_series") or []
    shapes = {}
    for i, text in series:
        labels = series_labels(text)
        shapes[i] = None if labels is None else (labels.get("__name__"), frozenset(labels))
    fed = {i for i, text in series if any(series_feed(e, text, rr) is True for e in exprs)}
    out = set()
    for i, text in series:
        try:
            steps = expand_series(str(raw[i].get("values", "")))
        except ValuesError:
            continue
        first = next((k * interval_ms for k, v in enumerate(steps) if v == "n"), None)
        there = [nothing for at, nothing in evals if first is not None and first <= at]
        if there and all(there):
            out.add(i)
        elif shapes[i] is not None and any(shapes[j] == shapes[i] for j in fed if j != i):
            out.add(i)
    return out


def _expr_typos(exprs: list[str], series_names: set[str], rr) -> dict[str, str]:
    """{name an expression reads: the recorded name it misspells} for recording-rule-shaped
    names that no rule in ``rr`` records and no input series (``series_names``) has, when a
    recorded name is close (RG314's error case: not just another window such as rate1h for
    rate5m)."""
    from .flow import _DIGITS, colon_names
    out = {}
    for e in exprs:
        for name in colon_names(e) - rr.keys() - series_names:
            near = difflib.get_close_matches(name, sorted(rr), n=1, cutoff=0.8)
            if near and _DIGITS.sub("0", near[0]) != _DIGITS.sub("0", name):
                out[name] = near[0]
    return out


def _fix_names(expr: str, typos: dict[str, str]) -> str:
    """``expr`` with each whole name of ``typos`` replaced by its recorded name."""
    for bad, good in typos.items():
        expr = re.sub(r"(?<![\w:.])" + re.escape(bad) + r"(?![\w:])", good, expr)
    return expr


def _split_items(items) -> list[int]:
    """Indexes of ``exp_alerts`` items holding only ``exp_annotations`` right after an item
    holding only ``exp_labels`` (or the other way round)."""
    out = []
    shape = [frozenset(k for k in e if k in ("exp_labels", "exp_annotations")) if isinstance(e, dict)
             and set(e) <= {"exp_labels", "exp_annotations"} else None for e in items]
    for i in range(1, len(shape)):
        if {shape[i - 1], shape[i]} == {frozenset({"exp_labels"}), frozenset({"exp_annotations"})}:
            out.append(i)
    return out


def _unfilled(spec, group, rule, exp: dict, rr=None) -> list[tuple[str, str]]:
    """(label key, label X) for every label rulegen fills in for the expected alert ``exp``
    from a template reading ``$labels.X`` that ``exp_labels`` lack (annotations are not
    filled in: a test compares only those it states). A label the alert's series can never
    carry (:func:`rulegen.promql.labelflow.can_carry` is False, following the recording
    rules ``rr``) is left out: the empty value is what Prometheus renders, RG311 already
    reports the template, and adding the label to ``exp_labels`` would be RG313 (a test that
    can never pass)."""
    from .gotemplate import parse as parse_template
    given_labels = exp.get("exp_labels") or {}
    rule_labels = rule.all_labels(spec.labels, group.labels)
    series = {k for k in given_labels if k != "alertname" and k not in rule_labels}
    out = []
    for kind, values, given in (("label", rule_labels, given_labels),):
        for key, value in values.items():
            if key in given or not isinstance(value, str) or "{{" not in value:
                continue
            t = parse_template(value)
            if t.issues or not _expandable(value):
                continue  # RG601 asks for the value written out
            for label, _ in t.label_uses:
                if label not in series and label not in rule_labels and label != "alertname":
                    if can_carry(rule.expr, label, rr) is False:
                        continue  # RG311's case, not a missing exp_label
                    out.append((f"{kind} {key}", label))
                    break
    return out


def _expandable(template: str) -> bool:
    from ...render.promtool_tests import NotExpandable, expand
    try:
        expand(template, {})
    except NotExpandable:
        return False
    return True


def _exp_alerts_findings(spec, rule, d: dict, tp: tuple, ai: int, a: dict, rules_read):
    """RG609, RG610 and RG601 findings for ``alert_rule_test`` item ``ai`` (``a``) of the test
    ``d`` at ``tp``; ``rules_read()``: the spec's recording rules (worked out once)."""
    from ...render.promtool_tests import expected_alert
    lf = spec.source
    name = a.get("alertname", rule.name)
    target = next(((g, r) for g, r in spec.rules() if r.is_alert and r.name == name), None)
    if target is None:
        return
    items = a.get("exp_alerts") or []
    split = _split_items(items)
    for ei in split:
        yield lf.finding(tp + ("alert_rule_test", ai, "exp_alerts", ei), "RG609",
                         f"exp_alerts item {ei + 1} has only {next(iter(items[ei]))} and the item "
                         "before it only the other: one expected alert split in two by a stray `-`, "
                         "so the test expects two alerts; join them into one item", rule.name,
                         Severity.WARNING)
    for ei, e in enumerate(items):
        if not isinstance(e, dict) or ei in split or ei + 1 in split:
            continue  # a split item: RG609 says what to do
        for what, label in _unfilled(spec, target[0], target[1], e, rules_read()):
            yield lf.finding(tp + ("alert_rule_test", ai, "exp_alerts", ei), "RG610",
                             f"expected {what} is filled in from a template reading $labels.{label}, "
                             f"which exp_labels lack: the test would lock in an empty value there; "
                             f"add {label} to exp_labels or write the value in "
                             f"exp_{what.split()[0]}s",
                             rule.name, Severity.WARNING)
    for ei, e in enumerate(items):
        problems: list = []  # every label, not just the first
        expected_alert(spec, target[0], target[1], e, d, DEFAULT_SITE_URL, problems)
        # a broken template is the templates check's (RG305-RG308), not reported twice
        problems = [p for p in problems if not gotemplate.parse(p[2]).issues]
        if problems:
            yield lf.finding(tp + ("alert_rule_test", ai, "exp_alerts", ei), "RG601",
                             _not_expandable(problems), rule.name, Severity.WARNING)


def check_spec(spec, ctx):
    from .flow import recording_rules
    lf = spec.source
    rr = None

    def rules_read():
        nonlocal rr
        rr = recording_rules([spec]) if rr is None else rr
        return rr
    for group, rule in spec.rules():
        ast, _ = parse(rule.expr)
        ranges = _ranges_ms(ast) if ast is not None else []
        for t in rule.tests:
            d = t.data
            tp = t.path
            interval_ms = 60_000
            if "interval" in d:
                try:
                    interval_ms = parse_ms(d["interval"])
                except DurationError:
                    pass
            if interval_ms > LOOKBACK_MS:
                yield lf.finding(tp + ("interval",), "RG602",
                                 f"input interval {d['interval']} is longer than the 5m lookback: between "
                                 "samples the series does not exist; use 5m or less", rule.name,
                                 Severity.WARNING)
            if not d.get("alert_rule_test") and not d.get("promql_expr_test"):
                yield lf.finding(tp, "RG606", f"test `{t.name}` asserts nothing; add alert_rule_test "
                                 "or promql_expr_test", rule.name, Severity.WARNING)
            last_ms = -1
            for si, s in enumerate(d.get("input_series") or []):
                vp = tp + ("input_series", si, "values")
                try:
                    steps = expand_series(str(s.get("values", "")))
                except ValuesError as e:
                    yield lf.finding(vp, "RG607", str(e), rule.name)
                    continue
                sample_idx = [i for i, v in enumerate(steps) if v == "n"]
                if sample_idx:
                    last_ms = max(last_ms, sample_idx[-1] * interval_ms)
                if steps and steps[-1] == "_" and "stale" not in steps:
                    yield lf.finding(vp, "RG605", "values end with `_`: a missing sample does not end the "
                                     "series for 5 minutes; write `stale` where it should disappear",
                                     rule.name, Severity.WARNING)
            for ri, r in enumerate(ranges):
                if ranges and r < 2 * interval_ms:
                    yield lf.finding(tp + ("interval",) if "interval" in d else tp, "RG604",
                                     f"expr has a {r // 1000}s range, shorter than twice the input interval "
                                     f"({interval_ms // 1000}s): the range holds one sample and rate()/increase() "
                                     "return nothing; sample more often in the test", rule.name, Severity.WARNING)
                    break
            for kind in ("alert_rule_test", "promql_expr_test"):
                for ai, a in enumerate(d.get(kind) or []):
                    ep = tp + (kind, ai, "eval_time")
                    try:
                        ev = parse_ms(a.get("eval_time", ""))
                    except DurationError:
                        continue
                    if last_ms >= 0 and ev > last_ms + interval_ms:
                        yield lf.finding(ep, "RG603",
                                         f"eval_time {a['eval_time']} is after the last input sample "
                                         f"({last_ms // 60000}m{(last_ms % 60000) // 1000:02d}s): the result "
                                         "comes from the 5m lookback, not from the data; extend the values",
                                         rule.name, Severity.WARNING)
            if d.get("input_series"):
                for si, text, near, typo in dead_series(spec, rule, d, rules_read()):
                    if typo is not None:
                        yield lf.finding(tp + ("input_series", si, "series"), "RG608",
                                         f"input series {text} feeds nothing because the expr reads {typo[0]}, "
                                         f"which no rule records (RG314); fix the expr to {typo[1]}, not this "
                                         "series", rule.name, Severity.WARNING)
                        continue
                    hint = f"; did you mean {near}?" if near else ""
                    yield lf.finding(tp + ("input_series", si, "series"), "RG608",
                                     f"input series {text} matches no selector of {rule.name} (nor of the "
                                     "recording rules it reads), so it feeds nothing and the test proves "
                                     f"nothing; fix its metric name or labels{hint}", rule.name, Severity.WARNING)
            for ai, a in enumerate(d.get("alert_rule_test") or []):
                yield from _exp_alerts_findings(spec, rule, d, tp, ai, a, rules_read)
