"""Mutants a test cannot see (issue 25): the proofs of :mod:`rulegen.run.unseen`, both ways, and
a real run of every (mutant, test) pair they drop, which must pass as it does on the rule."""

from __future__ import annotations

import re
from types import SimpleNamespace

import pytest

from rulegen.cli import main
from rulegen.run import unseen
from rulegen.run.mutants import Mutant, sited_expr_mutants
from rulegen.run.unseen import cannot_change


def _rule(expr: str, kind: str = "alert", name: str = "R", **kw):
    return SimpleNamespace(expr=expr, is_alert=kind == "alert", tests=[], for_=None, name=name,
                           params={}, expr_template=None, **kw)


def _mutants(rule) -> dict:
    """The rule's expr mutants by text, numbered as mutants_of numbers repeats (``(#2)``)."""
    out: dict = {}
    for kind, text, _new, hint, site in sited_expr_mutants(rule):
        n = sum(1 for t in out if t == text or t.startswith(text + " (#"))
        text = f"{text} (#{n + 1})" if n else text
        out[text] = Mutant(kind, text, None, "expr", hint, site)
    return out


def _test(*series: str) -> dict:
    return {"name": "t", "input_series": [{"series": s, "values": "1x10"} for s in series]}


def _sees(expr: str, text: str, test: dict, records=None, kind: str = "alert") -> bool:
    rule = _rule(expr, kind)
    return not cannot_change(rule, _mutants(rule)[text], test, records or {})


def test_a_removed_matcher_every_series_carries_changes_nothing():
    expr = 'up{job="api"} == 0'
    assert not _sees(expr, 'matcher `job="api"` removed', _test('up{job="api", instance="a"}', 'up{job="api"}'))
    # one series of the metric without it: the mutant selects it too
    assert _sees(expr, 'matcher `job="api"` removed', _test('up{job="api"}', 'up{job="web"}'))
    # a series of another metric does not matter
    assert not _sees(expr, 'matcher `job="api"` removed', _test('up{job="api"}', 'other{job="web"}'))


def test_a_negated_matcher_is_seen_by_any_series_of_its_metric():
    expr = 'up{job="api"} == 0'
    text = 'matcher `job="api"` becomes `job!="api"`'
    assert _sees(expr, text, _test('up{job="api"}'))
    assert _sees(expr, text, _test('up{job="web"}'))
    assert not _sees(expr, text, _test('other{job="api"}'))  # no `up` at all: both select nothing


def test_changes_over_a_selector_no_series_feeds_change_nothing():
    expr = 'sum by (job) (rate(errors_total{job="api"}[5m])) > 0.1'
    quiet = _test('errors_total{job="web"}', 'requests_total{job="api"}')
    fed = _test('errors_total{job="api"}')
    for text in ("`> 0.1` becomes `>= 0.1`", "threshold 0.1 becomes 0.15", "range `[5m]` halved to `[2m30s]`",
                 "`by (job)` loses `job`"):
        assert not _sees(expr, text, quiet), text
        assert _sees(expr, text, fed), text
    # without the matcher, or with it negated, the selector reaches job="web"
    assert _sees(expr, 'matcher `job="api"` removed', quiet)
    assert _sees(expr, 'matcher `job="api"` becomes `job!="api"`', quiet)


def test_absent_vector_and_or_are_never_taken_for_empty():
    quiet = _test("other_metric")
    # absent() of nothing is 1: `== 0` and `absent` differ on a test that feeds nothing
    assert _sees('up{job="a"} == 0', '`up{job="a"} == 0` becomes `absent(up{job="a"})`', quiet)
    assert _sees('absent(up{job="a"})', '`absent(up{job="a"})` becomes `up{job="a"} == 0`', quiet)
    # `x or vector(1)` is not empty even when x is: removing the left operand is seen...
    assert _sees("(up == 0) or vector(1)", "`or` and its right operand removed", quiet)
    # ...and `and` with one empty side is empty, whatever the other side gives: dropping
    # vector(1) changes nothing, dropping the empty side leaves vector(1)
    assert not _sees("up == 0 and vector(1)", "`and` and its right operand removed", _test("x"))
    assert _sees("up == 0 and vector(1)", "`and` and its left operand removed", _test("x"))


def test_recorded_series_count_unless_every_rule_writing_them_is_empty():
    records = {"job:errors:rate5m": [('sum by (job) (rate(errors_total{job="api"}[5m]))', {})]}
    expr = 'job:errors:rate5m{job="api"} > 1'
    text = 'matcher `job="api"` removed'
    # the test feeds the recorded series directly and nothing the recording rule reads
    assert not _sees(expr, text, _test('job:errors:rate5m{job="api"}'), records)
    # the recording rule reads a fed series: its output (job="api" or not) is not known here
    assert _sees(expr, text, _test('job:errors:rate5m{job="api"}', 'errors_total{job="api"}'), records)
    # a templated recording rule is never judged
    assert _sees(expr, text, _test('job:errors:rate5m{job="api"}'), {"job:errors:rate5m": None})


def test_what_cannot_be_judged_is_seen():
    # ALERTS is written by the rules themselves
    assert _sees('ALERTS{alertname="A"} == 1', 'matcher `alertname="A"` removed', _test('ALERTS{alertname="A"}'))
    # a regex Python does not read like RE2
    assert _sees('up{job=~"[[:alpha:]]+"} == 0', 'matcher `job=~"[[:alpha:]]+"` removed', _test('up{job="a"}'))
    # a series text that is not a plain selector
    assert _sees('up{job="a"} == 0', 'matcher `job="a"` removed', _test('up{job=~"a"}'))
    # no metric name: any series, recorded ones included, may be selected
    assert _sees('{__name__=~"up|down", job="a"} == 0', "threshold 0 becomes 1", _test("other"))
    assert not _sees('up{job="a"} == 0', "threshold 0 becomes 1", _test("other"))
    # an alert with parameters renders its expr_template with the chart's values
    rule = _rule('up{job="a"} == 0')
    rule.params = {"x": 1}
    assert not cannot_change(rule, _mutants(rule)['matcher `job="a"` removed'], _test('up{job="a"}'), {})


def test_for_and_scale_mutants_only_when_the_whole_expression_is_empty():
    rule = _rule('up{job="a"} == 0')
    for_mutant = Mutant("for", "no `for` becomes `for: 1m`", None, "for", "")
    assert cannot_change(rule, for_mutant, _test("other"), {})
    assert not cannot_change(rule, for_mutant, _test('up{job="a"}'), {})
    rec = _rule('sum(rate(x[5m]))', kind="record", name="r")
    scale = Mutant("scale", "output doubled", None, "expr", "")
    assert cannot_change(rec, scale, _test("y"), {})
    assert not cannot_change(rec, scale, _test("x"), {})
    # a recording rule's own name is never judged inside its own mutant
    selfread = _rule('r{job="a"} > 1', kind="record", name="r")
    assert not cannot_change(selfread, _mutants(selfread)['matcher `job="a"` removed'], _test('r{job="a"}'),
                             {"r": [('r{job="a"} > 1', {"job": "a"})]})


SLI = 'sum(rate(errors_total{job="api"}[5m])) / sum(rate(requests_total{job="api"}[5m]))'
FED = _test('errors_total{job="api"}', 'requests_total{job="api"}')  # the recording rule writes a series


def test_a_removed_matcher_every_recording_rule_sets_through_its_labels_changes_nothing():
    # every series of job:errors:ratio comes from rules whose `labels:` set slo="checkout"
    records = {"job:errors:ratio": [(SLI, {"slo": "checkout", "team": "shop"}),
                                    (SLI.replace("api", "web"), {"slo": "checkout"})]}
    expr = 'job:errors:ratio{slo="checkout", team="shop"} > 0.1'
    assert not _sees(expr, 'matcher `slo="checkout"` removed', FED, records)
    # an input series of that name that carries it too
    assert not _sees(expr, 'matcher `slo="checkout"` removed',
                     _test(*(s["series"] for s in FED["input_series"]), 'job:errors:ratio{slo="checkout"}'), records)
    # a regex or a negative matcher the rules' value satisfies: removing it selects the same
    for m in ('slo=~"check.*"', 'slo!="payments"'):
        assert not _sees(f"job:errors:ratio{{{m}}} > 0.1", f"matcher `{m}` removed", FED, records), m


def test_recorded_labels_that_do_not_fix_the_selection_are_seen():
    expr = 'job:errors:ratio{slo="checkout"} > 0.1'
    removed = 'matcher `slo="checkout"` removed'
    fixed = {"job:errors:ratio": [(SLI, {"slo": "checkout"})]}
    # two recording rules write the name with different values: one's series is not selected
    assert _sees(expr, removed, FED, {"job:errors:ratio": [(SLI, {"slo": "checkout"}), (SLI, {"slo": "payments"})]})
    # a recording rule writing it does not set the label: its expression decides
    assert _sees(expr, removed, FED, {"job:errors:ratio": [(SLI, {"slo": "checkout"}), (SLI, {})]})
    # a templated label value is never judged
    assert _sees(expr, removed, FED, {"job:errors:ratio": [(SLI, {"slo": "{{ $labels.slo }}"})]})
    # an input series of that name lacking the label: the mutant selects it too
    assert _sees(expr, removed, _test(*(s["series"] for s in FED["input_series"]), "job:errors:ratio"), fixed)
    # a negated matcher, and matchers the rules' value fails, select another set
    assert _sees(expr, 'matcher `slo="checkout"` becomes `slo!="checkout"`', FED, fixed)
    for m in ('slo=~"pay.*"', 'slo!="checkout"'):
        assert _sees(f"job:errors:ratio{{{m}}} > 0.1", f"matcher `{m}` removed", FED, fixed), m
    # a regex Python does not read like RE2: the verdict is not known
    assert _sees('job:errors:ratio{slo=~"[[:alpha:]]+"} > 0.1', 'matcher `slo=~"[[:alpha:]]+"` removed', FED,
                 fixed)
    # a name a templated rule writes, and ALERTS, are never judged
    assert _sees(expr, removed, FED, {"job:errors:ratio": None})
    assert _sees('ALERTS{alertname="A"} == 1', 'matcher `alertname="A"` removed', FED,
                 {"ALERTS": [("x", {"alertname": "A"})]})


def test_records_of_gives_each_recording_rules_labels_as_rendered():
    group = SimpleNamespace(labels={"team": "shop"})
    rec = SimpleNamespace(is_alert=False, name="r", expr="sum(x)", params={}, all_labels=lambda a, g: {**a, **g, "slo": "s"})
    alert = SimpleNamespace(is_alert=True, name="A", expr="r > 1", params={})
    spec = SimpleNamespace(labels={"env": "prod"}, rules=lambda: [(group, rec), (group, alert)])
    assert unseen.records_of(spec) == {"r": [("sum(x)", {"env": "prod", "team": "shop", "slo": "s"})]}


BURN = ('job:errors:ratio1h{slo="checkout", svc="shop"} > 14.4 * budget{slo="checkout", svc="shop"}\n'
        'and on ()\njob:errors:ratio5m{slo="checkout", svc="shop"} > 14.4 * budget{slo="checkout", svc="shop"}')


def test_a_matcher_the_other_side_of_a_match_on_all_labels_keeps_changes_nothing_on_any_input():
    # the burn-rate alerts of slos: a series the mutant adds has another `slo` than every
    # series of the other side, so the comparison (matching on all labels) drops it; the
    # test feeds a series of another SLO on both sides, which no other proof gets past
    other = _test('job:errors:ratio1h{slo="other", svc="shop"}', 'job:errors:ratio5m{slo="other", svc="shop"}',
                  'budget{slo="other", svc="shop"}')
    for text in ('matcher `slo="checkout"` removed', 'matcher `svc="shop"` removed (#2)',
                 'matcher `slo="checkout"` removed (#3)', 'matcher `svc="shop"` removed (#4)'):
        assert not _sees(BURN, text, other), text
    # negated, the matcher selects only series the other side has none of: seen
    assert _sees(BURN, 'matcher `slo="checkout"` becomes `slo!="checkout"`', other)
    # through a range function, arithmetic and `and`; with bool
    for expr in ('rate(a{x="1",j="k"}[5m]) / rate(b{x="1"}[5m]) > 0', 'a{x="1",j="k"} and b{x="1"}',
                 'a{x="1",j="k"} > bool 2 * b{x="1"}', '-(a{x="1",j="k"}) + b{x="1"}'):
        assert not _sees(expr, 'matcher `x="1"` removed', _test('a{x="2",j="k"}', 'b{x="2"}')), expr


def test_a_matcher_the_other_side_does_not_keep_is_seen():
    fed = _test('a{x="2",j="k"}', 'b{x="2"}', 'b{x="1"}')
    removed = 'matcher `x="1"` removed'
    for expr in (
        'a{x="1",j="k"} > b{j="k"}',                     # the other side lacks the matcher
        'a{x="1",j="k"} > b{x!="2"}',                    # another matcher on that label
        'a{x="1",j="k"} > on (j) b{x="1"}',              # matching on some labels only
        'a{x="1",j="k"} > ignoring (j) b{x="1"}',
        'a{x="1",j="k"} or b{x="1"}',                    # `or` keeps what has no match
        'a{x="1",j="k"} unless b{x="1"}',
        'sum by (j) (a{x="1",j="k"}) > b{x="1"}',        # an aggregation mixes series
        'label_replace(a{x="1",j="k"}, "x", "1", "", "") > b{x="1"}',
        'a{x="1",j="k"} > 1',                            # a number: no other side
        '(a{x="1",j="k"} > b{x="1"}) or a{x="1",j="k"}',  # the same selector elsewhere, unmatched
    ):
        assert _sees(expr, removed, fed), expr
    # no metric name: the added series of several names could clash once the names are dropped
    assert _sees('{__name__=~"a|c", x="1", j="k"} > b{x="1"}', removed, _test('a{x="2", j="k"}', 'c{x="2", j="k"}'))


def _mutate(root, capsys, *args):
    capsys.readouterr()
    code = main(["-C", str(root), "test", "--mutate", *args])
    cap = capsys.readouterr()
    return code, cap.out, cap.err


def _run_only_the_dropped_pairs(monkeypatch, root, capsys, *args):
    """Each mutant runs exactly the test groups the proofs drop for it (none survive otherwise):
    every one must pass, as on the rule, so no mutant may be killed. Returns the output."""
    real = unseen.cannot_change
    dropped = []

    def inverted(rule, mutant, test, records):
        if real(rule, mutant, test, records):
            dropped.append((rule.name, mutant.text, test.get("name")))
            return False
        return True

    monkeypatch.setattr(unseen, "cannot_change", inverted)
    code, out, err = _mutate(root, capsys, *args)
    assert code in (0, 1), out + err
    m = re.search(r"mutation score: (\d+)/(\d+) mutants killed", out)
    assert m and m.group(1) == "0", out
    assert "not runnable" not in out
    return dropped, out


@pytest.mark.tools
def test_every_pair_dropped_on_the_starter_passes_when_run(tmp_path, helm_bin, promtool_bin, capsys, monkeypatch):
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    dropped, out = _run_only_the_dropped_pairs(monkeypatch, tmp_path, capsys)
    # 43 (mutant, test) pairs of 79: the alert's tests feed the recorded ratio, not the counters
    assert len(dropped) == 43, dropped
    assert ("job:http_requests_errors:ratio_rate5m", "range `[5m]` halved to `[2m30s]`",
            "ShopHighErrorRate: a ratio of exactly 0.05 never fires, nor another job's ratio") in dropped
    # the real run (the two unseen mutants are the declared equivalents; the verdict is whole):
    # test_starter.py::test_a_fresh_project_kills_every_mutant, the same run of the same starter


#: The starter's app with one alert reading a recorded ratio whose recording rule sets `slo`, and
#: a test that feeds the counters the rule reads (so the rule writes series in it)
RECORDED_LABEL_SPEC = """\
app: shop
groups:
  - name: shop
    rules:
      - record: job:http_requests_errors:ratio_rate5m
        expr: |
          sum by (job) (rate(http_requests_total{job="shop", code=~"5.."}[5m]))
            /
          sum by (job) (rate(http_requests_total{job="shop"}[5m]))
        labels:
          slo: availability
      - alert: ShopHighErrorRate
        expr: job:http_requests_errors:ratio_rate5m{job="shop", slo="availability"} > 0.05
        severity: warning
        summary: "{{ $labels.job }} answers more than 5% of requests with an error."
        description: More than 5% of the requests to {{ $labels.job }} fail.
        tests:
          - name: errors from 8m on fire at 10m through the recorded ratio
            interval: 1m
            input_series:
              - series: http_requests_total{job="shop", code="200"}
                values: "0+90x10"
              - series: http_requests_total{job="shop", code="500"}
                values: "0x7 10+10x2"
            alert_rule_test:
              - eval_time: 7m
                exp_alerts: []
              - eval_time: 10m
                exp_alerts:
                  - exp_labels: {job: shop, slo: availability}
"""


@pytest.mark.tools
def test_every_pair_dropped_through_a_recording_rules_labels_passes_when_run(tmp_path, helm_bin, promtool_bin,
                                                                              capsys, monkeypatch):
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    (tmp_path / "rules" / "shop.yaml").write_text(RECORDED_LABEL_SPEC, encoding="utf-8")
    dropped, out = _run_only_the_dropped_pairs(monkeypatch, tmp_path, capsys)
    # the recording rule sets slo="availability" on every series it writes; `job` comes from
    # its expression (`sum by (job)`), so dropping that matcher is run (and survives: no test
    # feeds another job)
    assert dropped == [("ShopHighErrorRate", 'matcher `slo="availability"` removed',
                        "ShopHighErrorRate: errors from 8m on fire at 10m through the recorded ratio")], dropped


@pytest.mark.slow
@pytest.mark.tools
def test_every_pair_dropped_on_the_bundled_specs_passes_when_run(project, helm_bin, promtool_bin, capsys,
                                                                 monkeypatch):
    dropped, _out = _run_only_the_dropped_pairs(monkeypatch, project, capsys)
    # 304 of them: the burn-rate alerts' `slo`/`slo_service` matchers, which the other side of
    # each comparison keeps (unseen.matched_elsewhere), in every test group of the two alerts
    assert len(dropped) == 423, len(dropped)
    assert any(rule == "NoctayaGatewayActivationSlowBurn" for rule, _t, _n in dropped)
    assert ("NoctayaGatewayActivationFastBurn", 'matcher `slo="gateway-activation"` removed',
            "NoctayaGatewayActivationFastBurn: a new burn fires on 1h and 5m only once the 1h window crosses "
            "14.4x") in dropped
