"""The generated promtool tests of an SLO (what fires when, computed as Prometheus computes it
by :class:`~rulegen.spec.slo.scenario.Scenario`).

They are derived, like the SLO's rules, and made on demand: loading a spec generates none,
the committed test file holds only the tests the spec declares, and ``rulegen test`` (and
``--mutate``) runs on :func:`with_tests` of each spec.
"""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal

from ...promql.series import decimal_text, exact_number, series_text
from ..durations import format_ms
from ..model import Spec, Test
from .reading import SLO
from .scenario import MARGIN, Scenario
from .texts import texts as alert_texts
from .windows import (BUDGET_RECORD, MINUTE_MS, OBJECTIVE_RECORD, REMAINING_RECORD, SLI_RECORD, BurnWindow,
                      window_text)

def with_tests(spec: Spec) -> Spec:
    """``spec`` with each SLO's generated tests (:func:`tests`) under its rules: the
    recording-rule test under the group's first rule, the page and ticket tests under the first
    rule of each alert. A copy: ``spec`` and its rules are not changed. ``spec`` itself when it
    has no SLO.

    Raises:
        ValueError: an SLO's tests cannot be generated (validation reports RG359 first).
    """
    if not spec.slos:
        return spec
    by_path = {s.path: s for s in spec.slos}
    groups = []
    for g in spec.groups:
        slo = by_path.get(g.path)
        if slo is None:
            groups.append(g)
            continue
        rules = [replace(r, tests=list(r.tests)) for r in g.rules]
        # the labels the SLO's recording rules give their series (the app's, the SLO's,
        # slo and slo_service): a test that feeds recorded series directly gives them these,
        # as the alerts match those series with the recorded budget on all labels
        recorded = rules[0].all_labels(spec.labels, g.labels)
        first_alert: dict = {}
        alerts = [r for r in rules if r.is_alert]
        for w, rule in zip(slo.windows, alerts):
            first_alert.setdefault(w.severity, rule)
        for sev, items in tests(slo, recorded).items():
            target = rules[0] if sev == "record" else first_alert[sev]
            for i, (name, data) in enumerate(items):
                target.tests.append(Test(name, {"name": name, **data}, target.path + ("tests", i)))
        groups.append(replace(g, rules=rules))
    return replace(spec, groups=groups)


_TESTS: dict = {}


def tests(slo: SLO, recorded: dict | None = None) -> dict[str, list[tuple[str, dict]]]:
    """:func:`make_tests`, made once per SLO (validation and expansion both ask; callers must
    not change the result). Keyed by what the tests depend on: the app, the entry and
    ``recorded``."""
    import json
    key = (slo.app, slo.index, json.dumps(slo.entry, sort_keys=True, default=str),
           json.dumps(recorded or {}, sort_keys=True))
    if key not in _TESTS:
        if len(_TESTS) > 4096:
            _TESTS.clear()
        _TESTS[key] = make_tests(slo, recorded)
    return _TESTS[key]


def make_tests(slo: SLO, recorded: dict | None = None) -> dict[str, list[tuple[str, dict]]]:
    """The generated promtool tests of ``slo`` by the rule they sit under (``page``,
    ``ticket``, ``record``): ``(name, test data in the spec's test format)``. ``recorded``:
    the labels of the series the SLO's recording rules write (default: ``slo`` and
    ``slo_service`` only), which the tests that feed recorded series directly give them.

    For every window pair, a steady burn just above its factor makes it fire by the end of its
    short window, and one just under leaves it quiet (the 1x pair: a 1x burn never pages and
    tickets only on the longest windows); for each page pair, the page resolves within its
    short window once the errors stop; the recording rules equal independently written
    formulas. What fires when is computed by :class:`Scenario` as Prometheus computes it.

    Raises:
        ValueError: see :meth:`Scenario.build`.
    """
    out: dict = {"page": [], "ticket": [], "record": []}
    names = {sev: slo.alert_name(sev) for sev in ("page", "ticket")}
    series_labels = {"slo": slo.name, "slo_service": slo.app}
    labels = {**(recorded or {}), **slo.selector_labels}

    # Same-name rules (the two pairs of one alert) may differ in their annotations: a test
    # states the annotations in which a pair differs from the first pair of its name
    texts = {w: alert_texts(slo, w) for w in slo.windows}
    first = {sev: next(w for w in slo.windows if w.severity == sev) for sev in ("page", "ticket")}

    def expected(w: BurnWindow) -> dict:
        out = {"exp_labels": {**series_labels, "long": w.long, "short": w.short}}
        differ = {k: v for k, v in texts[w].items() if v != texts[first[w.severity]][k]}
        if differ:
            out["exp_annotations"] = differ
        return out

    def expect(sc: Scenario, at: int) -> list[dict]:
        return [{"eval_time": format_ms(at * MINUTE_MS) if at else "0s", "alertname": names[sev],
                 "exp_alerts": [expected(w) for w in sc.firing(at, sev)]}
                for sev in ("page", "ticket")]

    def steady(burn: Decimal, minutes: int) -> Scenario:
        return Scenario(slo, [(minutes, min(Decimal(1), burn * slo.budget))]).build()

    for w in slo.windows:
        short = w.short_ms // MINUTE_MS
        f = decimal_text(w.factor)
        verb = "pages" if w.severity == "page" else "opens a ticket"
        if w.factor * slo.budget >= 1:  # can never fire (RG358): its quiet case only
            sc = steady(w.factor * (1 - MARGIN), short)
            out[w.severity].append((f"a burn just under {f}x does not fire on {w.long} and {w.short}",
                                    {"interval": "1m", "input_series": sc.input_series(),
                                     "alert_rule_test": expect(sc, short)}))
            continue
        sc = steady(w.factor * (1 + MARGIN), short)
        title = (f"a 1x burn never pages and opens a ticket on the {w.long} and {w.short} windows only"
                 if w.factor == 1 else f"a burn at {f}x {verb} on {w.long} and {w.short} within {w.short}")
        # 1m: the first evaluation with two samples in both windows, when the alert (which
        # has no `for`) must already fire
        checks = ([{"eval_time": "0s", "alertname": names[w.severity], "exp_alerts": []}]
                  + (expect(sc, 1) if short > 1 else []) + expect(sc, short))
        _require(sc, short, w, True)
        out[w.severity].append((title, {"interval": "1m", "input_series": sc.input_series(),
                                        "alert_rule_test": checks}))
        sc = steady(w.factor * (1 - MARGIN), short)
        _require(sc, short, w, False)
        out[w.severity].append((f"a burn just under {f}x does not fire on {w.long} and {w.short}",
                                {"interval": "1m", "input_series": sc.input_series(),
                                 "alert_rule_test": expect(sc, short)}))
        out[w.severity].extend(_window_tests(slo, w, expect, labels))
        out[w.severity].append(_boundary_test(slo, w, names[w.severity], expected(w), labels))
        if w.severity == "page":
            burning = 2 * short
            sc = Scenario(slo, [(burning, min(Decimal(1), w.factor * (1 + MARGIN) * slo.budget)),
                                (short, Decimal(0))]).build()
            _require(sc, burning, w, True)
            _require(sc, burning + short, w, False)
            out["page"].append((f"the {w.long}/{w.short} page resolves within {w.short} of the errors stopping",
                                {"interval": "1m", "input_series": sc.input_series(),
                                 "alert_rule_test": expect(sc, burning) + expect(sc, burning + short)}))
    out["record"].append(("recording rules equal independently written formulas", _record_test(slo)))
    return out


def _window_tests(slo: SLO, w: BurnWindow, expect, labels: dict) -> list[tuple[str, dict]]:
    """Each window of pair ``w`` decides on its own. After a clean history (twice the short
    window), a burn at 2.5x the factor fills the short window at once but fires only when
    the long window's ratio crosses the factor: quiet just before, firing just after. After
    a burn as long as the short window, a short window just under the factor keeps the pair
    quiet and one just over fires. (The long window then covers the series' whole history,
    which Prometheus rates as it would a full window.)"""
    long_m, short_m = w.long_ms // MINUTE_MS, w.short_ms // MINUTE_MS
    # hours of history: sample every few minutes (see Scenario), at most 5m (the lookback)
    step = next(n for n in (5, 2, 1) if long_m % n == 0 and short_m % n == 0) if short_m >= 60 else 1
    thr = float(w.factor * slo.budget)
    hot = min(Decimal(1), w.factor * Decimal("1.5") * slo.budget)
    if float(hot) <= thr * 1.05:
        return []
    out = []
    clean = min(long_m, 2 * short_m) // step * step
    fast = min(Decimal(1), w.factor * Decimal("2.5") * slo.budget)  # crosses after 4/3 of the short window
    probe = Scenario(slo, [(clean, Decimal(0)), (long_m, fast)], step).build()
    quiet = fire = None
    for k in range(short_m, long_m + 1, step):
        r_long = probe.ratio(clean + k, long_m)
        if r_long is not None and r_long < thr * (1 - float(MARGIN) / 2):
            quiet = k
        elif r_long is not None and r_long > thr * (1 + float(MARGIN) / 2):
            fire = k
            break
    if quiet is not None and fire is not None:
        sc = Scenario(slo, [(clean, Decimal(0)), (fire, fast)], step).build()
        _require(sc, clean + quiet, w, False)
        _require(sc, clean + fire, w, True)
        out.append((f"a new burn fires on {w.long} and {w.short} only once the {w.long} window crosses "
                    f"{decimal_text(w.factor)}x",
                    {"interval": sc.interval, "input_series": sc.input_series() + _decoys(slo, w, sc, labels),
                     "alert_rule_test": expect(sc, clean + quiet) + expect(sc, clean + fire)}))
    under = min(Decimal(1), w.factor * (1 - MARGIN) * slo.budget)
    over = min(Decimal(1), w.factor * (1 + MARGIN) * slo.budget)
    sc = Scenario(slo, [(short_m, hot), (short_m, under), (short_m, over)], step).build()
    if w not in sc.firing(2 * short_m, w.severity) and w in sc.firing(3 * short_m, w.severity):
        out.append((f"after a burn, the {w.short} window decides: quiet just under "
                    f"{decimal_text(w.factor)}x, firing just over",
                    {"interval": sc.interval, "input_series": sc.input_series() + _decoys(slo, w, sc, labels),
                     "alert_rule_test": expect(sc, 2 * short_m) + expect(sc, 3 * short_m)}))
    return out


def _boundary_test(slo: SLO, w: BurnWindow, alertname: str, expected: dict, labels: dict) -> tuple[str, dict]:
    """Pair ``w``'s recording-rule series fed directly (with ``labels``, those the recording
    rules give them): each window in turn exactly at the threshold (the float the alert
    computes, written so it reads back equal) while the other burns at twice it, then both
    at twice it. ``>`` keeps the alert quiet at the threshold; ``>=`` would not."""
    # the float Prometheus computes for the alert's `factor * slo:error_budget:ratio` (the
    # budget rule's literal), as text that reads back the same
    thr, hot = exact_number(float(w.factor) * float(slo.budget)), decimal_text(2 * w.factor * slo.budget)
    long_rec = series_text(SLI_RECORD.format(window=w.long), dict(sorted(labels.items())))
    short_rec = series_text(SLI_RECORD.format(window=w.short), dict(sorted(labels.items())))
    if long_rec == short_rec:  # short periods: both windows scaled to the 2m floor, one series
        return (f"exactly at {decimal_text(w.factor)}x on {w.long} does not fire",
                {"interval": "1m", "input_series": [{"series": long_rec, "values": f"{thr}x6 {hot}x6"}],
                 "alert_rule_test": [{"eval_time": "5m", "alertname": alertname, "exp_alerts": []},
                                     {"eval_time": "12m", "alertname": alertname, "exp_alerts": [expected]}]})
    quiet = [{"eval_time": t, "alertname": alertname, "exp_alerts": []} for t in ("2m", "7m")]
    return (f"exactly at {decimal_text(w.factor)}x on {w.long} or {w.short} does not fire",
            {"interval": "1m",
             "input_series": [{"series": long_rec, "values": f"{thr}x4 {hot}x9"},
                              {"series": short_rec, "values": f"{hot}x4 {thr}x4 {hot}x4"}],
             "alert_rule_test": quiet + [{"eval_time": "12m", "alertname": alertname,
                                          "exp_alerts": [expected]}]})


def _decoys(slo: SLO, w: BurnWindow, sc: Scenario, labels: dict) -> list[dict]:
    """Recording-rule series of pair ``w``'s windows that belong to another SLO of the app and
    to this SLO's name in another app (``labels``, the recorded series' labels, with another
    ``slo`` or ``slo_service``), all bad (error ratio 1) from start to end of ``sc``.
    The alert must ignore them: in the tests above one window of the pair burns and the other
    does not, so an alert that read them on the quiet window (``and on ()`` keeps any match)
    would fire, or fire with the decoy's labels. (Each window's comparison matches its error
    ratio with this SLO's recorded budget on all labels, which already keeps them out when
    one selector loses its ``slo`` or ``slo_service`` matcher: such a mutant is equivalent,
    see :data:`rulegen.run.mutation.GENERATED_REASON`.)"""
    out = []
    for window in (w.long, w.short):
        record = SLI_RECORD.format(window=window)
        for other in ({**labels, "slo": slo.name + "-other"}, {**labels, "slo_service": slo.app + "-other"}):
            out.append({"series": series_text(record, dict(sorted(other.items()))),
                        "values": f"1x{sc.horizon // sc.step}"})
    return out


def _require(sc: Scenario, at: int, w: BurnWindow, fires: bool) -> None:
    if (w in sc.firing(at, w.severity)) != fires:
        raise ValueError(f"generated scenario does not {'fire' if fires else 'stay quiet'} for the "
                         f"{w.long}/{w.short} pair at {at}m")


def _record_test(slo: SLO) -> dict:
    """A burn that changes (2x for 30m, then 20x, capped at all-bad) while traffic triples,
    and, at 1h and at 32m (a window's length decides the mix there), each SLI recording rule
    against the ratio of ``increase()`` sums (PromQL written apart from the rules) and
    against the ratio computed here; the objective, budget, period ratio and budget left
    against their values. The traffic change matters: at a steady pace the total's rate is
    the same over every window, so a denominator reading the wrong window would go unseen."""
    budget = float(slo.budget)
    sc = Scenario(slo, [(30, min(Decimal(1), 2 * slo.budget), 1),
                        (30, min(Decimal(1), 20 * slo.budget), 3)]).build()
    at = sc.horizon
    checks = []
    # at 1h, and at 32m: 2m after the burn changed pace, so a window half or twice as long
    # as the rule's holds another mix of the two burns
    for ms in slo.record_windows() + [slo.period_ms]:
        win = window_text(ms) if ms == slo.period_ms else format_ms(ms)
        rec = slo.record_selector(SLI_RECORD.format(window=win))
        for t in ([at, 32] if ms < slo.period_ms else [at]):
            when = format_ms(t * MINUTE_MS)
            checks.append({"expr": f"count(abs({rec} - on () ({_independent(slo, win)})) < 1e-12)",
                           "eval_time": when, "exp_samples": [{"labels": "{}", "value": 1}]})
            checks.append({"expr": f"count(abs({rec} - {exact_number(sc.ratio(t, ms // MINUTE_MS))}) < 1e-9)",
                           "eval_time": when, "exp_samples": [{"labels": "{}", "value": 1}]})
    mean = sc.ratio(at, slo.period_ms // MINUTE_MS)
    # the budget is the rule's literal; the objective is 1 - budget as float64 computes it
    # (equal to the objective's own float for every objective tried, but not promised)
    for expr in (f"{slo.record_selector(OBJECTIVE_RECORD)} == {exact_number(1 - budget)}",
                 f"{slo.record_selector(BUDGET_RECORD)} == {decimal_text(slo.budget)}",
                 f"abs({slo.record_selector(REMAINING_RECORD)} - {exact_number(1 - mean / budget)}) < 1e-9"):
        checks.append({"expr": f"count({expr})", "eval_time": "1h",
                       "exp_samples": [{"labels": "{}", "value": 1}]})
    return {"interval": "1m", "input_series": sc.input_series(), "promql_expr_test": checks}


def _independent(slo: SLO, window: str) -> str:
    """The error ratio over ``window`` written apart from :meth:`SLO.sli_expr`: ratios of
    ``increase()`` sums, and for a latency SLI the ``+Inf`` bucket in place of ``_count``."""
    if slo.kind == "bad":
        return f"sum(increase({slo.events.text}[{window}])) / sum(increase({slo.total.text}[{window}]))"
    if slo.kind == "good":
        return (f"(sum(increase({slo.total.text}[{window}])) - sum(increase({slo.events.text}[{window}])))"
                f" / sum(increase({slo.total.text}[{window}]))")
    le = slo.total.with_name(slo.total.name, f'le="{slo.le}"')
    inf = slo.total.with_name(slo.total.name, 'le="+Inf"')
    return (f"(sum(increase({inf}[{window}])) - sum(increase({le}[{window}])))"
            f" / sum(increase({inf}[{window}]))")
