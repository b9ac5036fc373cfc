"""Tests that cannot prove anything (RG608-RG610), and what they count for in coverage."""

from __future__ import annotations

import pytest

from rulegen.run.testing import collect_cases, coverage
from rulegen.validate import validate_texts


SPEC = """\
app: demo
groups:
  - name: demo
    rules:
      - record: job:http_requests:rate5m
        expr: sum by (job) (rate(http_requests_total[5m]))
      - alert: HighErrors
        expr: sum by (job, instance) (rate(http_errors_total{{job="api"}}[5m])) > 1
        severity: warning
        summary: "Errors on {{{{ $labels.instance }}}}"
        description: d
        tests:
          - name: quiet
            input_series:
              - series: {quiet}
                values: 0+1x10
            alert_rule_test:
              - eval_time: 5m
          - name: fires
            input_series:
              - series: {fires}
                values: 0+600x10
            alert_rule_test:
              - eval_time: 5m
                exp_alerts:
{items}
      - alert: ManyRequests
        expr: job:http_requests:rate5m > 100
        severity: warning
        summary: s
        description: d
        tests:
          - name: through the recording rule
            input_series:
              - series: {through}
                values: 0+1x10
            alert_rule_test:
              - eval_time: 5m
"""


GOOD_ITEMS = "                  - exp_labels: {job: api, instance: a}"


def run(quiet='http_errors_total{job="api", instance="a"}', items=GOOD_ITEMS,
        through='http_requests_total{job="api"}', fires='http_errors_total{job="api", instance="a"}'):
    text = SPEC.format(quiet=quiet, items=items, through=through, fires=fires)
    res = validate_texts({"a.yaml": text})
    return [(f.code, f.line, f.col, f.severity.value, f.message) for f in res.findings
            if f.code in ("RG608", "RG609", "RG610")], res


def test_good_tests_pass():
    assert run()[0] == []


def test_misspelled_metric_feeds_nothing():
    # issue 12: the test passed and counted as the "not firing" case
    found, _ = run(quiet='http_error_total{job="api", instance="a"}')
    assert found == [("RG608", 15, 25, "warning",
                      'input series http_error_total{job="api", instance="a"} matches no selector of HighErrors '
                      "(nor of the recording rules it reads), so it feeds nothing and the test proves nothing; "
                      "fix its metric name or labels; did you mean http_errors_total?")]


@pytest.mark.parametrize("quiet,through,fed", [
    # a value one edit away in a test that expects nothing: a deliberate negative test
    ('http_errors_total{job="apl", instance="a"}', 'http_requests_total{job="api"}', True),
    ('http_errors_total{job="api"}', 'http_request_total{job="api"}', False),  # typo through the recording rule
    ('http_errors_total{job="api"}', 'job:http_requests:rate5m{job="api"}', True),  # the recorded series itself
    ('http_errors_total{job="api"}', 'http_requests_total{job="x"}', True),  # the recording rule reads any job
    # a value the selector rejects on purpose: the test checks the filter, it is not a mistake
    ('http_errors_total{job="billing", instance="a"}', 'http_requests_total{job="api"}', True),
    ('http_errors_total{jbo="api", instance="a"}', 'http_requests_total{job="api"}', False),  # label name typo
    ('http_errors_total{instance="a"}', 'http_requests_total{job="api"}', True),  # no job at all: on purpose
])
def test_variants(quiet, through, fed):
    found, _ = run(quiet=quiet, through=through)
    assert (found == []) is fed
    assert all(code == "RG608" for code, *_ in found)


def test_label_value_typo_says_which_matcher():
    # in the test that expects the alert, a value one edit away is a typo (nothing else feeds it)
    found, _ = run(fires='http_errors_total{job="apl", instance="a"}')
    assert found[0][:4] == ("RG608", 21, 25, "warning")
    assert found[0][4].endswith('fix its metric name or labels; did you mean job="api"?')


def test_stray_dash_splits_an_expected_alert():
    found, _ = run(items="                  - exp_labels: {job: api, instance: a}\n"
                         "                  - exp_annotations: {description: d}")
    assert found == [("RG609", 27, 21, "warning",
                      "exp_alerts item 2 has only exp_annotations and the item before it only the other: one "
                      "expected alert split in two by a stray `-`, so the test expects two alerts; join them "
                      "into one item")]


def test_filled_label_reads_a_label_the_expected_labels_lack():
    text = SPEC.replace('        description: d\n        tests:\n          - name: quiet',
                        '        description: d\n        labels: {{where: "on {{{{ $labels.instance }}}}"}}\n'
                        '        tests:\n          - name: quiet', 1)
    assert text != SPEC
    res = validate_texts({"a.yaml": text.format(quiet='http_errors_total{job="api", instance="a"}',
                                                items="                  - exp_labels: {job: api}",
                                                through='http_requests_total{job="api"}',
                                                fires='http_errors_total{job="api", instance="a"}')})
    found = [(f.code, f.line, f.col, f.severity.value, f.message) for f in res.findings]
    assert found == [("RG610", 27, 21, "warning",
                      "expected label where is filled in from a template reading $labels.instance, which "
                      "exp_labels lack: the test would lock in an empty value there; add instance to exp_labels "
                      "or write the value in exp_labels")]


def test_annotations_are_not_filled_in_so_nothing_is_locked_in():
    """Issue 14: a test compares only the annotations it states, so a summary reading a label
    the expected labels lack locks nothing in (was RG610)."""
    assert run(items="                  - exp_labels: {job: api}")[0] == []


def _coverage_of(res, name):
    cases = collect_cases(res.specs)
    for c in cases:
        c.passed = True  # as promtool reports them: a test fed by a misspelled series passes
    row = next(r for r in coverage(res.specs, cases).rows if r.name == name)
    return row.fires, row.quiet


def test_a_test_that_feeds_nothing_counts_for_nothing_in_coverage():
    assert _coverage_of(run(quiet='http_error_total{job="api", instance="a"}')[1], "HighErrors") == (True, False)
    assert _coverage_of(run()[1], "HighErrors") == (True, True)


NEVER_CARRIED = """\
app: demo
groups:
  - name: demo
    rules:
      - record: job:http_requests:rate5m
        expr: sum by (job) (rate(http_requests_total[5m]))
      - alert: {alert}
        expr: {expr}
        severity: warning
        summary: s
        description: d
        labels: {{where: "on {{{{ $labels.instance }}}}"}}
        tests:
          - name: fires
            input_series:
              - series: {series}
                values: 0+600x10
            alert_rule_test:
              - eval_time: 5m
                exp_alerts:
                  - exp_labels: {{job: api}}
"""


@pytest.mark.parametrize("alert,expr,series", [
    ("HighErrors", 'sum by (job) (rate(http_errors_total{job="api"}[5m])) > 1', 'http_errors_total{job="api"}'),
    ("ManyRequests", "job:http_requests:rate5m > 1", 'http_requests_total{job="api"}'),  # through the recording rule
], ids=["by-job", "recording-rule"])
def test_no_rg610_for_a_label_the_alert_can_never_carry(alert, expr, series):
    """Regression (new-user review): RG610 said "add instance to exp_labels" while label flow
    knows the alert never carries ``instance``; following the advice gave RG313. RG311 is the
    finding there, on the template."""
    text = NEVER_CARRIED.format(alert=alert, expr=expr, series=series)
    codes = [f.code for f in validate_texts({"a.yaml": text}).findings]
    assert "RG311" in codes
    assert "RG610" not in codes and "RG313" not in codes
    followed = text.replace("exp_labels: {job: api}", "exp_labels: {job: api, instance: a}")
    codes = [f.code for f in validate_texts({"a.yaml": followed}).findings]
    assert "RG313" in codes and "RG610" not in codes


def test_rg610_still_fires_when_the_alert_can_carry_the_label():
    text = NEVER_CARRIED.format(alert="HighErrors", series='http_errors_total{job="api", instance="a"}',
                                expr='sum by (job, instance) (rate(http_errors_total{job="api"}[5m])) > 1')
    codes = [f.code for f in validate_texts({"a.yaml": text}).findings]
    assert "RG610" in codes and "RG311" not in codes


EXPR_TYPO = """\
app: demo
groups:
  - name: demo
    rules:
      - record: job:http_requests:rate5m
        expr: sum by (job) (rate(http_requests_total[5m]))
      - alert: ManyRequests
        expr: job:http_request:rate5m > 100
        severity: warning
        summary: s
        description: d
        tests:
          - name: t
            input_series:
              - series: {series}
                values: 0+1x10
            alert_rule_test:
              - eval_time: 5m
"""


@pytest.mark.parametrize("series,message", [
    # correct series: the fix is in the expr (RG314), never "rename the series to the typo"
    ('http_requests_total{job="api"}',
     'input series http_requests_total{job="api"} feeds nothing because the expr reads job:http_request:rate5m, '
     "which no rule records (RG314); fix the expr to job:http_requests:rate5m, not this series"),
    ('job:http_requests:rate5m{job="api"}',
     'input series job:http_requests:rate5m{job="api"} feeds nothing because the expr reads '
     "job:http_request:rate5m, which no rule records (RG314); fix the expr to job:http_requests:rate5m, not this "
     "series"),
    # misspelt too: the suggestion is the name the fixed expr reads, not the typo
    ('http_request_total{job="api"}',
     'input series http_request_total{job="api"} matches no selector of ManyRequests (nor of the recording rules '
     "it reads), so it feeds nothing and the test proves nothing; fix its metric name or labels; did you mean "
     "http_requests_total?"),
], ids=["source-series", "recorded-series", "series-typo-too"])
def test_rg608_points_at_the_expr_when_the_expr_misspells_a_recording_rule(series, message):
    """Regression (new-user review): RG608 suggested renaming a correct input series to the
    misspelt recording-rule name in the expr that RG314 reports."""
    res = validate_texts({"a.yaml": EXPR_TYPO.format(series=series)})
    assert [(f.code, f.line) for f in res.findings if f.code in ("RG314", "RG608")] == [("RG314", 8), ("RG608", 15)]
    assert next(f.message for f in res.findings if f.code == "RG608") == message


NEGATIVE = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: ServerErrors
        expr: sum by (job) (rate(http_requests_total{{code="500"}}[5m])) > 0
        severity: warning
        summary: s
        description: d
        tests:
          - name: t
            input_series:
{series}
            alert_rule_test:
{evals}
"""
QUIET_AT_5M = "              - eval_time: 5m"
FIRES_AT_10M = "              - eval_time: 10m\n                exp_alerts:\n                  - exp_labels: {job: api}"


def _rg608(series: list[tuple[str, str]], evals: list[str]) -> list[str]:
    text = NEGATIVE.format(series="\n".join(f"              - series: '{s}'\n                values: {v}"
                                            for s, v in series), evals="\n".join(evals))
    return [f.message.split(" matches", 1)[0].split(" feeds", 1)[0].removeprefix("input series ")
            for f in validate_texts({"a.yaml": text}).findings if f.code == "RG608"]


@pytest.mark.parametrize("series,evals,flagged", [
    # a deliberate negative test: another status code, the test expects no alert (review finding)
    ([('http_requests_total{job="api", code="200"}', "0+60x10")], [QUIET_AT_5M], []),
    ([('http_requests_total{job="api", code="501"}', "0+60x10")], [QUIET_AT_5M], []),
    # a misspelt metric NAME in a test that expects nothing is still a mistake
    ([('http_request_total{job="api", code="500"}', "0+60x10")], [QUIET_AT_5M],
     ['http_request_total{job="api", code="500"}']),
    # a misspelt label NAME too: the label names differ from what the selector reads
    ([('http_requests_total{job="api", cdoe="500"}', "0+60x10")], [QUIET_AT_5M],
     ['http_requests_total{job="api", cdoe="500"}']),
    # there while the test expects the alert, and nothing like it is fed: a typo
    ([('http_requests_total{job="api", code="501"}', "0+60x10")], [FIRES_AT_10M],
     ['http_requests_total{job="api", code="501"}']),
    ([('http_requests_total{job="api", code="501"}', "0+60x10")], [QUIET_AT_5M, FIRES_AT_10M],
     ['http_requests_total{job="api", code="501"}']),
    # there only before the alert is expected: the negative half of a test
    ([('http_requests_total{job="api", code="501"}', "0+60x5 stale"),
      ('http_requests_total{job="api", code="500"}', "_x6 0+60x10")], [QUIET_AT_5M, FIRES_AT_10M], []),
    # a contrast next to a sibling that is fed (same metric and label names): only the sibling counts
    ([('http_requests_total{job="api", code="200"}', "0+60x10"),
      ('http_requests_total{job="api", code="500"}', "0+60x10")], [FIRES_AT_10M], []),
], ids=["other-code", "one-edit", "metric-typo", "label-name-typo", "firing", "firing-and-quiet",
        "quiet-first", "contrast"])
def test_deliberate_negative_series_are_not_typos(series, evals, flagged):
    assert _rg608(series, evals) == flagged
