"""Issue 29 item 3: every valid app can reach a 100% mutation score. A rule generated from
`slos:` keeps the spec's `sli` selector as written; a matcher every generated test series
carries (`job="x"` on both counters) cannot be told apart by the generated tests, and the mutant
only tests rulegen's generator: it is excluded from the score with the reason printed, while
every other survivor still counts."""

from __future__ import annotations

import io

import pytest

from rulegen.cli import main
from rulegen.run.mutants import mutants_of
from rulegen.commands.test import report_mutants as report
from rulegen.run.mutation import MutantResult, exclude_generated, scores, total_score
from rulegen.spec import build_spec, load_text

SPEC = """\
app: demo
labels: {team: web}
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up{job="x"} == 0
        for: 5m
        severity: warning
        summary: Down.
        description: Down.
slos:
  - name: availability
    objective: 99.5
    period: 30d
    description: Requests that do not fail.
    sli:
      events:
        bad: http_requests_total{job="x", code=~"5.."}
        total: http_requests_total{job="x"}
"""


def _results(survive: set[str], rule_name: str):
    spec = build_spec(load_text(SPEC, "rules/demo.yaml"))
    group, rule = [(g, r) for g, r in spec.rules() if r.name == rule_name][0]  # an SLO alert: its first pair
    out = []
    for m in mutants_of(spec, group, rule):
        res = MutantResult(spec.app, spec, rule, m)
        if m.text not in survive:
            res.killed_by.append("a test")
        out.append(res)
    return out


def test_surviving_matcher_mutants_of_a_generated_slo_rule_are_excluded_with_the_reason():
    record = "slo:sli_error:ratio_rate5m"
    texts = [r.mutant.text for r in _results(set(), record)]
    removed = [t for t in texts if t.startswith('matcher `job="x"` removed')]
    assert removed == ['matcher `job="x"` removed', 'matcher `job="x"` removed (#2)']
    other = next(t for t in texts if not t.startswith("matcher"))
    results = _results(set(removed) | {other}, record)
    exclude_generated(results)
    excluded = [r.mutant.text for r in results if r.excluded]
    assert excluded == removed
    assert all("generated from SLO availability" in r.excluded for r in results if r.excluded)
    # a survivor of another kind still counts: the score is not 100
    assert total_score(results) < 100
    out = io.StringIO()
    report(results, scores(results), out)
    text = out.getvalue()
    # one line for the rule and its reason: the two mutants counted and named in brief
    assert 'excluded [slo:sli_error:ratio_rate5m] 2 mutants: matcher `job="x"` removed (#1-#2): generated from ' \
           "SLO availability: the matcher is the spec's `sli` selector copied as written" in text
    assert text.count("excluded [") == 1
    assert "2 excluded (generated from slos:)" in text
    assert f"SURVIVED [slo:sli_error:ratio_rate5m] no test fails when {other}" in text
    # with only the matcher survivors the generated rule reaches 100%
    results = _results(set(removed), record)
    exclude_generated(results)
    assert total_score(results) == 100


def test_an_slo_matcher_survivor_of_a_burn_rate_alert_is_excluded_as_equivalent():
    """A burn-rate alert compares each error ratio with the recorded budget on all labels,
    both selectors naming the SLO: one losing its `slo` or `slo_service` matcher compares
    the same series (issue 29: the objective in one rule). Any other survivor still counts."""
    alert = "DemoAvailabilityFastBurn"
    texts = [r.mutant.text for r in _results(set(), alert)]
    side = [t for t in texts if t.startswith(("matcher `slo=", "matcher `slo_service=")) and "removed" in t]
    assert len(side) == 8  # 4 selectors (2 error ratios, 2 budgets) x 2 matchers
    other = next(t for t in texts if not t.startswith("matcher"))
    results = _results(set(side) | {other}, alert)
    exclude_generated(results)
    assert sorted(r.mutant.text for r in results if r.excluded) == sorted(side)
    # each mutant's reason (JUnit's message) names its own label...
    for r in results:
        if r.excluded:
            label = r.mutant.text.split("`")[1].split("=")[0]
            assert f"the other side's selector keeps the `{label}` matcher" in r.excluded, r.excluded
    assert total_score(results) < 100  # the other survivor still counts
    # ...and the report says it once for the rule: one line, the 8 mutants in brief
    out = io.StringIO()
    report(results, scores(results), out)
    lines = [line for line in out.getvalue().splitlines() if "excluded [" in line]
    assert lines == [f"rules/demo.yaml:{results[0].line()}: excluded [{alert}] 8 mutants: matcher "
                     '`slo="availability"` removed (#1-#4), matcher `slo_service="demo"` removed (#1-#4): '
                     "generated from SLO availability: the comparison matches this SLO's error ratio with its "
                     "recorded budget on all labels, and the other side's selector keeps the `slo`/`slo_service` "
                     "matcher, so dropping it here changes no result (an equivalent mutant); excluded from the "
                     "score"], lines


def test_mutant_texts_are_listed_in_brief():
    from rulegen.run.mutation import brief
    assert brief(["a", "a (#2)", "a (#3)", "b (#2)", "c"]) == "a (#1-#3), b (#2), c"
    assert brief(["a", "a (#3)"]) == "a (#1, #3)"
    assert brief(["`x` becomes `y` (#2)"]) == "`x` becomes `y` (#2)"


def test_a_matcher_survivor_of_a_written_rule_still_counts():
    results = _results({'matcher `job="x"` removed'}, "DemoDown")
    exclude_generated(results)
    assert not any(r.excluded for r in results)
    assert total_score(results) < 100


# a 1d period keeps the generated series (and the mutation run) short; the selector is the point
SCRATCH = """\
app: demo
labels: {team: web}
slos:
  - name: availability
    objective: 99.5
    period: 1d
    description: Requests that do not fail.
    sli:
      events:
        bad: http_requests_total{job="x", code=~"5.."}
        total: http_requests_total{job="x"}
"""


@pytest.mark.slow
def test_a_scratch_app_with_a_matcher_in_its_slo_selector_reaches_100(tmp_path, helm_bin, promtool_bin, capsys):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/demo.yaml").write_text(SCRATCH, encoding="utf-8")
    assert main(["-C", str(tmp_path), "build"]) == 0
    capsys.readouterr()
    # the generated rule the record tests sit under: the SLI over the shortest window
    spec = build_spec(load_text(SCRATCH, "rules/demo.yaml"))
    first = spec.groups[0].rules[0].name
    assert first.startswith("slo:sli_error:ratio_rate") and spec.groups[0].slo == "availability"
    code = main(["-C", str(tmp_path), "test", "--alert", first, "--min-mutation-score", "100"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert f'excluded [{first}] 2 mutants: matcher `job="x"` removed (#1-#2): generated from SLO availability' in out
    assert "SURVIVED" not in out
