"""promtool tests declared in specs: traps that cost people hours.

Series values use promtool's expanding notation (Prometheus docs, "Unit testing for rules"):
``a``, ``a+bxn`` / ``a-bxn`` (n+1 samples from a, step b), ``axn`` (n+1 samples of a), ``_``
(no sample), ``_xn`` (n missing samples), ``stale`` (a staleness marker), and native histograms
``{{schema:0 sum:1 count:1 buckets:[1]}}`` (with ``+``/``x`` expansion too).

Codes:

* ``RG601`` (error) an expected alert's annotation or label uses a template rulegen cannot
  expand (``$value``, functions), so the test must spell it out in ``exp_annotations`` or
  ``exp_labels``.
  Bad: ``summary: "{{ $value | humanize }} errors"`` and a test without ``exp_annotations``; good:
  ``exp_annotations: {summary: "1.5k errors"}`` in the test.
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
"""

from __future__ import annotations

import re

from ...findings import Severity
from ...spec.durations import DurationError, parse_ms
from . import gotemplate
from .promql import nodes, parse

ID = "tests"

LOOKBACK_MS = 5 * 60 * 1000
_NUM = r"[-+]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|0x[0-9a-fA-F]+|Inf|inf|NaN|nan)"
_TOKEN = re.compile(rf"^(?P<a>{_NUM})(?:(?P<op>[+-])(?P<b>{_NUM}))?(?:x(?P<n>\d+))?$")
_BLANK = re.compile(r"^_(?:x(?P<n>\d+))?$")
_HIST = re.compile(r"\{\{[^}]*\}\}(?:[+-]\{\{[^}]*\}\})?(?:x\d+)?")


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


class ValuesError(ValueError):
    """``values`` text is not in promtool's expanding notation."""


def expand_values(text: str) -> list[str]:
    """Expand promtool ``values`` into one item per step: ``"n"`` (a sample), ``"_"`` (none)
    or ``"stale"``. ``"1+1x2 _ stale"`` -> ``["n", "n", "n", "_", "stale"]``.

    Raises:
        ValuesError: a token is not valid notation.
    """
    out: list[str] = []
    rest = text.strip()
    hist_n = 0
    for m in _HIST.finditer(rest):
        xm = re.search(r"x(\d+)$", m.group(0))
        hist_n += int(xm.group(1)) + 1 if xm else 1
    rest = _HIST.sub(" ", rest)
    out.extend(["n"] * hist_n)
    for tok in rest.split():
        if tok == "stale":
            out.append("stale")
            continue
        b = _BLANK.match(tok)
        if b:
            out.extend(["_"] * (int(b.group("n")) if b.group("n") else 1))
            continue
        m = _TOKEN.match(tok)
        if not m:
            raise ValuesError(f"`{tok}` is not promtool series notation; write values separated by "
                              "spaces as a, a+bxn, a-bxn, axn, _, _xn or stale (e.g. \"1+1x5 stale\")")
        n = int(m.group("n")) + 1 if m.group("n") else 1
        out.extend(["n"] * n)
    return out


def _ranges_ms(ast) -> list[int]:
    """Range durations (ms) of every range selector in ``ast`` (subquery ranges excluded:
    a subquery samples at its own step)."""
    return [int(node.range.total_seconds() * 1000) for node in nodes(ast)
            if type(node).__name__ == "MatrixSelector"]


def check_spec(spec, ctx):
    from ...render.promtool_tests import expected_alert
    lf = spec.source
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
                    steps = expand_values(str(s.get("values", "")))
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
            for ai, a in enumerate(d.get("alert_rule_test") or []):
                name = a.get("alertname", rule.name)
                target = next(((g, r) for g, r in spec.rules() if r.is_alert and r.name == name), None)
                if target is None:
                    continue
                for ei, e in enumerate(a.get("exp_alerts") or []):
                    from ...render.site import DEFAULT_SITE_URL  # ruamel: only for specs with tests
                    problems: list = []  # every label and annotation, not just the first
                    expected_alert(spec, target[0], target[1], e, d, DEFAULT_SITE_URL, problems)
                    # a broken template is the templates check's (RG305-RG308), not reported twice
                    problems = [p for p in problems if not gotemplate.parse(p[2]).issues]
                    if problems:
                        yield lf.finding(tp + ("alert_rule_test", ai, "exp_alerts", ei), "RG601",
                                         _not_expandable(problems), rule.name)


