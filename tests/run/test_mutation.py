"""Mutation testing (issue 14): mutants from the PromQL AST and the rule's fields, run through
the same render, helm and promtool path as the real rule."""

from __future__ import annotations

import re
import textwrap
import xml.etree.ElementTree as ET
from types import SimpleNamespace

import promql_parser
import pytest

from rulegen.cli import main
from rulegen.promql.series import sample_values
from rulegen.run.mutants import expr_mutants, for_mutants, mutants_of
from rulegen.spec import load_text
from rulegen.validate import validate


def _rule(expr: str, kind: str = "alert", tests=None, for_=None):
    return SimpleNamespace(expr=expr, is_alert=kind == "alert", tests=tests or [], for_=for_, name="R")


def _texts(expr, **kw):
    return {text: new for _kind, text, new, _hint in expr_mutants(_rule(expr, **kw))}


def _hints(expr):
    return {text: hint for kind, text, _n, hint in expr_mutants(_rule(expr)) if kind == "comparison"}


def test_comparison_mutants_and_their_hints():
    got = _hints('x{job="a"} == 0')
    assert got["`== 0` becomes `<= 0`"] == "a case with a value below 0, such as -1 (`<= 0` keeps the series, `== 0` drops it)"
    assert got["`== 0` becomes `>= 0`"] == "a case with a value above 0, such as 1 (`>= 0` keeps the series, `== 0` drops it)"
    # regression (trial): "add a case with a value below 1 or equal to 1 or above 1" named every value
    assert _hints('up{job="shop"} == 1')["`== 1` becomes `!= 1`"] == (
        "a case with the value 1 (`== 1` keeps the series, `!= 1` drops it), or any other value (only `!= 1` "
        "keeps the series)")


def test_each_comparison_mutant_hint_names_a_value_that_tells_the_two_apart():
    # the class: every comparison mutant's hint gives a concrete value, and the value named keeps the
    # series under exactly one of the two comparisons, as the hint says
    import operator
    ops = {"==": operator.eq, "!=": operator.ne, ">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le}
    for n in (0, 1, 0.05, 80, -3):
        for op in ops:
            expr = f"x {op} {n}"
            for text, hint in _hints(expr).items():
                new = re.match(r"`\S+ \S+` becomes `(\S+) \S+`", text).group(1)
                cases = re.findall(r"(?:the value|such as) (-?[\d.]+) \(`(\S+) [-\d.]+` keeps the series, `(\S+) [-\d.]+` drops",
                                   hint)
                assert cases, (expr, text, hint)
                for value, keeps, drops in cases:
                    v = float(value)
                    assert {keeps, drops} == {op, new}, (expr, hint)
                    assert ops[keeps](v, n) and not ops[drops](v, n), (expr, text, hint)
    assert _hints("80 < x")["`80 <` becomes `80 >`"] == (
        "a case with a compared value below 80, such as 40 (`80 >` keeps the series, `80 <` drops it) or a "
        "compared value above 80, such as 120 (`80 <` keeps the series, `80 >` drops it)")
    assert _hints("x > y")["`>` becomes `>=`"] == "a case with both sides equal (`>=` keeps the series, `>` drops it)"
    assert _hints("x > bool 80")["`> 80` becomes `>= 80`"] == "a case with the value 80 (`>= 80` gives 1, `> 80` gives 0)"


def test_threshold_moves_just_past_the_nearest_test_values():
    tests = [SimpleNamespace(data={"input_series": [
        {"series": 'x{job="a"}', "values": "50x3 85x3"},
        {"series": 'other{job="a"}', "values": "82x3"},  # another metric: not the compared values
    ]})]
    got = _texts('max by (job) (x{job="a"}) > 80', tests=tests)
    assert got["threshold 80 becomes 90"].replace("\n", " ").split()[-1] == "90"
    assert "threshold 80 becomes 20" in got
    # the compared side is a rate: the test values say nothing, the number moves by half
    got = _texts('rate(x{job="a"}[5m]) > 80', tests=tests)
    assert {"threshold 80 becomes 120", "threshold 80 becomes 40"} <= set(got)


def test_matcher_by_range_operand_and_absent_mutants_parse_and_differ():
    expr = ('sum by (namespace, stage) (rate(x{result="failed", job=~"a.*"}[10m])) > 0 '
            'unless on (namespace) y{namespace="ai"}')
    got = _texts(expr)
    assert {
        'matcher `result="failed"` removed', 'matcher `result="failed"` becomes `result!="failed"`',
        'matcher `job=~"a.*"` becomes `job!~"a.*"`', "`by (namespace, stage)` loses `stage`",
        "range `[10m]` halved to `[5m]`", "range `[10m]` doubled to `[20m]`",
        "`unless` and its right operand removed",
    } <= set(got)
    assert 'result="failed"' not in got['matcher `result="failed"` removed']
    assert "[20m]" in got["range `[10m]` doubled to `[20m]`"]
    assert "unless" not in got["`unless` and its right operand removed"]
    assert "by (namespace)" in got["`by (namespace, stage)` loses `stage`"]
    base = promql_parser.parse(expr).prettify()
    for new in got.values():
        assert promql_parser.parse(new).prettify() != base
    absent = _texts('absent(up{job="x"} == 1)')
    assert absent['`absent(up{job="x"} == 1)` becomes `up{job="x"} != 1`'] == 'up{job="x"} != 1'
    assert "absent(" in _texts('up{job="x"} == 0')['`up{job="x"} == 0` becomes `absent(up{job="x"})`']
    both = _texts("a > 1 and b > 2")
    assert {"`and` and its right operand removed", "`and` and its left operand removed"} <= set(both)


def test_recording_rule_output_is_scaled():
    got = _texts("sum by (job) (rate(x[5m]))", kind="record")
    assert got["output doubled"].replace(" ", "").endswith("*2")


def test_for_mutants_one_evaluation_interval_each_way():
    res = validate([load_text(textwrap.dedent("""\
        app: demo
        groups:
          - name: demo
            interval: 30s
            rules:
              - alert: DemoDown
                expr: up == 0
                for: 2m
                severity: warning
                summary: s
                description: d
        """), "rules/demo.yaml")])
    spec = res.specs[0]
    group, rule = next(spec.rules())
    assert [(t, f) for _k, t, f, _h in for_mutants(spec, group, rule)] == [
        ("`for: 2m` becomes `for: 1m30s`", "1m30s"), ("`for: 2m` becomes `for: 2m30s`", "2m30s")]
    texts = [m.text for m in mutants_of(spec, group, rule)]
    assert len(texts) == len(set(texts))
    assert all(m.rule is not rule and m.rule.name == "DemoDown" for m in mutants_of(spec, group, rule))


def test_sample_values_expands_promtool_notation():
    assert sample_values("1+2x3 _ stale 5 -1-1x1") == [1, 3, 5, 7, 5, -1, -2]


# --- the whole run, with the real helm and promtool ---------------------------------------------

def _mutate(project, capsys, *extra):
    code = main(["-C", str(project), "test", "--mutate", *extra])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.slow
@pytest.mark.tools
def test_bundled_specs_kill_every_counted_mutant(project, helm_bin, promtool_bin, capsys, tmp_path):
    junit = tmp_path / "junit.xml"
    code, out, err = _mutate(project, capsys, "--min-mutation-score", "100", "--junit", str(junit))
    assert code == 0, out + err
    # regression: the SLO's generated recording-rule test fed total traffic at one pace, so
    # `[5m]` doubled to `[10m]` in the denominator of slo:sli_error:ratio_rate5m survived
    m = re.search(r"mutation score: (\d+)/(\d+) mutants killed \((\d+)%\), (\d+) declared equivalent", out)
    assert m and m.group(1) == m.group(2) and int(m.group(1)) >= 200 and m.group(3) == "100", out
    # the verdict on the bundled specs, exactly (issue 25: running less must not change it)
    assert ("mutation score: 207/207 mutants killed (100%), 12 declared equivalent, 16 excluded (generated from "
            "slos:)\n") in out, out
    # the mutants no test can see are among the 12 and 16 above, as the skipped line says (trial:
    # it said "counted as before" beside 100%)
    assert ("skipped: cannot change a test: 17 mutant(s) not run, since no test of their rule can tell them from "
            "it, as proved before promtool starts; they survive, as they would have if run: 1 declared "
            "equivalent, 16 excluded (generated from slos:, listed above)\n") in out
    assert "  llama-swap LlamaSwapDown: 11/11 mutants killed, 1 declared equivalent" in out
    assert "  noctaya slo:sli_error:ratio_rate5m: 7/7 mutants killed" in out
    assert not [line for line in out.splitlines() if "SURVIVED" in line]
    root = ET.parse(junit).getroot()
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert {"llama-swap", "llama-swap mutants"} <= set(suites)
    m = suites["llama-swap mutants"]
    assert (m.get("tests"), m.get("failures"), m.get("skipped")) == ("24", "0", "2")
    skipped = [tc for tc in m.iter("testcase") if tc.find("skipped") is not None]
    assert skipped[0].get("name") == "LlamaSwapDown: `== 0` becomes `<= 0`"
    assert "never negative" in skipped[0].find("skipped").get("message")


@pytest.mark.tools
def test_a_mutant_no_test_can_see_is_counted_as_the_survivor_it_is(tmp_path, helm_bin, promtool_bin, capsys):
    # every input series carries job="shop": dropping the matcher is not run, survives and counts
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    (tmp_path / "rules/shop.yaml").write_text(textwrap.dedent("""\
        app: shop
        groups:
          - name: shop
            rules:
              - alert: ShopDown
                expr: up{job="shop"} == 0
                for: 5m
                severity: warning
                summary: Shop is down.
                description: The shop target has been down for 5 minutes.
                tests:
                  - name: fires when down
                    interval: 1m
                    input_series:
                      - series: up{job="shop", instance="a"}
                        values: 0x10
                    alert_rule_test:
                      - eval_time: 10m
                        exp_alerts:
                          - exp_labels: {job: shop, instance: a, severity: warning}
        """), encoding="utf-8")
    capsys.readouterr()
    code, out, err = _mutate(tmp_path, capsys)
    assert code == 0, out + err
    assert "SURVIVED [ShopDown] no test fails when matcher `job=\"shop\"` removed" in out
    assert "mutation score: 5/10 mutants killed (50%)\n" in out
    assert ("skipped: cannot change a test: 1 mutant(s) not run, since no test of their rule can tell them from "
            "it, as proved before promtool starts; they survive, as they would have if run: 1 counted as "
            "survivors (SURVIVED above)\n") in out


@pytest.mark.tools
def test_deleting_the_boundary_test_of_llamaswapdown_fails_naming_the_survivor(project, helm_bin, promtool_bin,
                                                                               capsys, tmp_path):
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text()
    start = text.index("          - name: fires after 5m of zero available replicas, not before\n")
    end = text.index("          - name: does not fire while a replica is available")
    spec.write_text(text[:start] + text[end:])
    line = 1 + text[:text.index("        for: 5m\n")].count("\n")
    junit = tmp_path / "junit.xml"
    code, out, err = _mutate(project, capsys, "--alert", "LlamaSwapDown", "--min-mutation-score", "100",
                             "--junit", str(junit))
    assert code == 1
    assert "LlamaSwapDown: 10/11 mutants killed, 1 declared equivalent" in out
    assert (f"rules/llama-swap.yaml:{line}: SURVIVED [LlamaSwapDown] no test fails when `for: 5m` becomes "
            "`for: 4m`: add a case asserting the alert is "
            "still quiet 4m after the condition starts") in out
    assert "mutation score 90.9% is below --min-mutation-score 100%" in err
    failures = [tc for tc in ET.parse(junit).getroot().iter("testcase") if tc.find("failure") is not None]
    assert [(tc.get("name"), tc.get("line")) for tc in failures] == [
        ("LlamaSwapDown: `for: 5m` becomes `for: 4m`", str(line))]


DEMO = textwrap.dedent("""\
    app: demo
    groups:
      - name: demo
        rules:
          - record: job:demo_errors:rate5m
            expr: sum by (job) (rate(demo_errors_total[5m]))
            tests:
              - name: reads the rate
                interval: 1m
                input_series:
                  - series: demo_errors_total{job="api"}
                    values: "0+60x10"
                promql_expr_test:
                  - eval_time: 10m
                    exp_samples:
                      - labels: 'job:demo_errors:rate5m{job="api"}'
                        value: 1
          - alert: DemoErrors
            expr: job:demo_errors:rate5m > 0.5
            severity: warning
            summary: s
            description: d
            equivalent_mutants:
              - mutant: '`> 0.5` becomes `< 0.5`'
                reason: a made-up reason, to see it reported as killed
              - mutant: no such mutant
                reason: a typo
            tests:
              - name: fires on errors, not without
                interval: 1m
                input_series:
                  - series: demo_errors_total{job="api"}
                    values: "0+60x10"
                  - series: demo_errors_total{job="web"}
                    values: "0x10"
                alert_rule_test:
                  - eval_time: 10m
                    exp_alerts:
                      - exp_labels: {job: api}
    """)


@pytest.mark.tools
def test_recording_rule_mutants_reach_the_alerts_that_read_it(project, helm_bin, promtool_bin, capsys):
    for p in (project / "rules").iterdir():
        p.unlink()
    (project / "rules/demo.yaml").write_text(DEMO)
    code, out, err = _mutate(project, capsys)
    assert code == 0, out + err
    # the recording rule's own promql_expr_test catches its doubled output and lost `by` label;
    # nothing in the tests depends on its window
    assert "  demo job:demo_errors:rate5m: 2/4 mutants killed\n" in out
    survivors = [line.split("no test fails when ")[1].split(": add ")[0] for line in out.splitlines()
                 if "SURVIVED [job:demo_errors:rate5m]" in line]
    assert survivors == ["range `[5m]` halved to `[2m30s]`", "range `[5m]` doubled to `[10m]`"]
    # the alert's threshold and a `for` it does not have are not pinned by its one test
    assert "  demo DemoErrors: 1/5 mutants killed, 1 declared equivalent\n" in out
    assert "SURVIVED [DemoErrors] no test fails when threshold 0.5 becomes 0.75: add " in out
    # a declaration the tests contradict, and one naming nothing, are both reported
    assert "rules/demo.yaml:24: note [DemoErrors] `> 0.5` becomes `< 0.5` is declared equivalent, but " \
           "`DemoErrors: fires on errors, not without` kills it: remove the declaration" in out
    assert "rules/demo.yaml:26: note [DemoErrors] equivalent_mutants names `no such mutant`, which is not " \
           "a mutant of this rule" in out
    assert "mutation score: 3/9 mutants killed (33%), 1 declared equivalent" in out


@pytest.mark.tools
def test_mutation_is_skipped_when_the_tests_fail(project, helm_bin, promtool_bin, capsys):
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text().replace('values: "1x20"\n', 'values: "0x20"\n', 1))
    code, out, _ = _mutate(project, capsys, "--app", "llama-swap")
    assert code == 1
    assert "mutation testing skipped: the tests must pass on the rules first" in out
    assert "mutation score" not in out


@pytest.mark.tools
def test_mutants_run_in_small_batches_at_most_jobs_promtool_processes_at_once(project, helm_bin, promtool_bin,
                                                                               capsys, monkeypatch):
    import threading

    from rulegen.run import rounds
    from rulegen.tools import promtool
    calls, running, most = [], [0], [0]
    lock = threading.Lock()
    real = promtool.test_rules

    def counting(files, *a, **kw):
        with lock:
            if ".rulegen/mutate/" in files[0].as_posix():
                calls.append(len(files))
            running[0] += 1
            most[0] = max(most[0], running[0])
        try:
            return real(files, *a, **kw)
        finally:
            with lock:
                running[0] -= 1

    monkeypatch.setattr(promtool, "test_rules", counting)
    code, out, err = _mutate(project, capsys, "--jobs", "2", "--app", "llama-swap")
    assert code == 0, out + err
    assert "mutation score: 22/22 mutants killed (100%), 2 declared equivalent" in out
    # at most --jobs promtool processes at once; the mutants in batches of at most BATCH_FILES
    assert most[0] <= 2
    assert max(calls) <= rounds.BATCH_FILES and len(calls) >= 3
    # the 22 counted mutants run their test groups one to a file, cheapest first, until one
    # fails; the 2 declared equivalents their one file whole; the 2 rules' baselines one file
    # per test group: each file once
    assert sum(calls) == 33


@pytest.mark.tools
def test_mutants_split_over_several_renders_give_the_same_verdicts(project, helm_bin, promtool_bin, capsys,
                                                                   monkeypatch):
    from rulegen.run import mutation
    monkeypatch.setattr(mutation, "MAX_RULES_PER_RENDER", 3)
    code, out, err = _mutate(project, capsys, "--app", "llama-swap", "--min-mutation-score", "100")
    assert code == 0, out + err
    assert "mutation score: 22/22 mutants killed (100%), 2 declared equivalent" in out
    renders = sorted(p.name for p in (project / ".rulegen/mutate/llama-swap").iterdir() if p.name.startswith("chart-render"))
    assert len(renders) > 5


@pytest.mark.slow
@pytest.mark.tools
def test_a_large_imported_spec_with_derived_tests_kills_every_mutant(project, helm_bin, promtool_bin, capsys,
                                                                     shared_dir):
    """Regression: a 40-alert spec made one template over Helm's 5 MiB file limit."""
    for p in (project / "rules").iterdir():
        p.unlink()
    (project / ".rulegen.yaml").write_text("conventions:\n  require_runbook_for: []\n", encoding="utf-8")
    src = shared_dir / "corpus/awesome-prometheus-alerts/rules/host-and-hardware/node-exporter.yml"
    assert main(["-C", str(project), "import", str(src)]) == 0
    assert main(["-C", str(project), "derive-tests"]) == 0
    out = capsys.readouterr().out
    assert "rule(s) given derived tests" in out
    code, out, err = _mutate(project, capsys, "--min-mutation-score", "100")
    assert code == 0, out + err
    assert "SURVIVED" not in out


PARAMS = textwrap.dedent("""\
    app: pm
    groups:
      - name: pm
        rules:
          - alert: QueueDeep
            expr: queue_depth{job="worker"} > [[threshold]]
            params:
              threshold: {default: 80, description: Items.}
            severity: warning
            summary: deep
            description: deep
            tests:
              - name: fires above 80, not at 80
                interval: 1m
                input_series:
                  - series: queue_depth{job="worker", queue="a"}
                    values: "90x5"
                  - series: queue_depth{job="worker", queue="b"}
                    values: "80x5"
                alert_rule_test:
                  - eval_time: 2m
                    exp_alerts:
                      - exp_labels: {job: worker, queue: a}
    """)


@pytest.mark.tools
def test_mutants_of_an_alert_with_parameters_are_what_helm_renders(project, helm_bin, promtool_bin, capsys):
    """The chart renders such an alert from its expr with `[[threshold]]` and the values'
    parameter: each mutant must reach the rendered rule (a mutant that did not would survive)."""
    for p in (project / "rules").iterdir():
        p.unlink()
    (project / "rules/pm.yaml").write_text(PARAMS, encoding="utf-8")
    code, out, err = _mutate(project, capsys)
    assert code == 0, out + err
    assert "pm QueueDeep: 5/8 mutants killed" in out
    survivors = [line.split("no test fails when ")[1].split(": add ")[0] for line in out.splitlines()
                 if "SURVIVED" in line]
    # what this one test cannot see (no other job, no value below 80, no `for`); the comparison
    # and threshold mutants reached the rendered rule, or they would survive too
    assert survivors == ['matcher `job="worker"` removed', "`> 80` becomes `!= 80`",
                         "no `for` becomes `for: 1m`"], out


@pytest.mark.slow  # the SLO's generated tests evaluate a day at one-minute steps per mutant
@pytest.mark.tools
def test_mutating_one_slo_alert_keeps_the_tests_other_alerts_own(project, helm_bin, promtool_bin, capsys):
    # regression: --alert narrowed the spec itself, so the ticket alert's generated tests (which
    # also assert on the page alert, stating annotations) lost what they state and the run
    # stopped with "its tests do not pass on the rule itself"
    code, out, err = _mutate(project, capsys, "--app", "noctaya", "--alert", "NoctayaGatewayActivationFastBurn")
    assert code == 0, out + err
    assert "  noctaya NoctayaGatewayActivationFastBurn: 17/17 mutants killed" in out
    # 25 made: 17 counted, 8 matchers of the comparison with the recorded budget excluded
    assert "mutation testing: 25 mutant(s) of 1 rule(s)" in out
    assert "mutation score: 17/17 mutants killed (100%), 8 excluded (generated from slos:)\n" in out


# -- how mutants' promtool files are run (no tools needed: promtool is a stand-in) ------------

def _fake_results(n, equivalent=()):
    from rulegen.run.mutation import MutantResult
    return [MutantResult("a", None, None, SimpleNamespace(text=f"m{i}"),
                         equivalent="why" if i in equivalent else None) for i in range(n)]


def _fake_promtool(monkeypatch, fails=(), hangs=()):
    """promtool.test_rules stand-in: one test group per file, named after the file; files
    named in ``fails`` fail, a batch holding a file in ``hangs`` times out. Returns the list
    of batches run (file names)."""
    from rulegen.tools import promtool
    ran = []

    def fake(files, cwd, root=None, run=None, timeout=None):
        ran.append([f.name for f in files])
        if any(f.name in hangs for f in files):
            raise promtool.PromtoolTimeout("slow")
        return promtool.TestRun(0, "", [promtool.CaseResult(str(f), f.name, "boom" if f.name in fails else "")
                                        for f in files])

    monkeypatch.setattr(promtool, "test_rules", fake)
    return ran


def _files(tmp_path, spec):
    """(path, app, rule, result index) per (name, index, steps[, test group]) in ``spec``; each
    test file holds one test group (default "g") evaluating ``steps`` one-minute steps (its
    cost for the cheapest-first order)."""
    out = []
    for name, i, steps, *group in spec:
        f = tmp_path / name
        f.write_text(f"evaluation_interval: 1m\ntests:\n- name: {group[0] if group else 'g'}\n  interval: 1m\n"
                     f"  alert_rule_test:\n  - eval_time: {steps}m\n", encoding="utf-8")
        out.append((f, "a", "R", i))
    return out


def test_a_killed_mutant_runs_no_more_files_cheapest_first(tmp_path, monkeypatch):
    from rulegen.run.rounds import run_rounds
    ran = _fake_promtool(monkeypatch, fails={"m0-cheap", "m1-dear"})
    results = _fake_results(3)
    files = _files(tmp_path, [("base", -1, 100), ("m0-dear", 0, 500), ("m0-cheap", 0, 5),
                              ("m1-cheap", 1, 5), ("m1-dear", 1, 500), ("m2-a", 2, 5), ("m2-b", 2, 9)])
    run_rounds(files, results, 2, tmp_path)
    flat = [f for batch in ran for f in batch]
    # m0 is killed by its cheapest file: its 500-step file never runs; m1 needs both; m2
    # survives both of its files
    assert "m0-dear" not in flat and flat.count("m0-cheap") == 1
    assert flat.index("m1-cheap") < flat.index("m1-dear")
    assert [r.killed_by for r in results] == [["m0-cheap"], ["m1-dear"], []]
    assert not any(r.invalid for r in results)


def test_a_declared_equivalent_runs_all_its_files_in_spec_order(tmp_path, monkeypatch):
    from rulegen.run.rounds import run_rounds
    _fake_promtool(monkeypatch, fails={"e-1", "e-2"})
    results = _fake_results(1, equivalent={0})
    run_rounds(_files(tmp_path, [("e-1", 0, 500), ("e-2", 0, 5)]), results, 2, tmp_path)
    # the note "declared equivalent, but `X` kills it" names the same test group as before
    assert results[0].killed_by == ["e-1", "e-2"]


def test_a_batch_that_times_out_is_run_file_by_file_and_only_its_slow_mutant_is_lost(tmp_path, monkeypatch):
    from rulegen.run import rounds
    monkeypatch.setattr(rounds, "BATCH_FILES", 3)
    ran = _fake_promtool(monkeypatch, fails={"m1"}, hangs={"m2"})
    results = _fake_results(4)
    files = _files(tmp_path, [(f"m{i}", i, 5) for i in range(4)])
    rounds.run_rounds(files, results, 1, tmp_path)
    assert ran[0] == ["m0", "m1", "m2"] and ["m0"] in ran and ["m2"] in ran and ["m3"] in ran
    assert [r.killed for r in results] == [False, True, False, False]
    assert results[2].invalid.startswith("promtool did not finish within")
    assert not results[2].counted and results[0].counted


def test_a_baseline_that_times_out_stops_the_run(tmp_path, monkeypatch):
    from rulegen.findings import RulegenError
    from rulegen.run.rounds import run_rounds
    _fake_promtool(monkeypatch, hangs={"base"})
    with pytest.raises(RulegenError, match="did not finish within .* on the rule itself"):
        run_rounds(_files(tmp_path, [("base", -1, 5), ("m0", 0, 5)]), _fake_results(1), 1, tmp_path)


def test_a_baseline_whose_tests_fail_stops_the_run(tmp_path, monkeypatch):
    from rulegen.findings import RulegenError
    from rulegen.run.rounds import run_rounds
    _fake_promtool(monkeypatch, fails={"base"})
    with pytest.raises(RulegenError, match=r"do not pass on the rule itself .*\(base\)"):
        run_rounds(_files(tmp_path, [("base", -1, 5), ("m0", 0, 5)]), _fake_results(1), 1, tmp_path)


def test_only_the_baselines_of_test_groups_a_mutant_ran_are_run(tmp_path, monkeypatch):
    """A verdict rests on the test groups that ran on the mutant: the baseline of a group no
    mutant ran (here: one the killing cheaper group spared, and one of a rule whose mutants
    were all proved unseen) can change none, and is not run."""
    from rulegen.run.rounds import run_rounds
    ran = _fake_promtool(monkeypatch, fails={"m0-cheap", "base-dear"})
    files = _files(tmp_path, [("base-cheap", -1, 5, "cheap"), ("base-dear", -1, 500, "dear"),
                              ("m0-cheap", 0, 5, "cheap"), ("m0-dear", 0, 500, "dear")])
    results = _fake_results(1)
    run_rounds(files, results, 1, tmp_path)
    flat = [f for batch in ran for f in batch]
    assert flat == ["m0-cheap", "base-cheap"], flat
    assert results[0].killed_by == ["m0-cheap"]
    # the same baseline runs, and stops the run, once a mutant has run its group
    from rulegen.findings import RulegenError
    ran.clear()
    results = _fake_results(2)
    more = files + _files(tmp_path, [("m1-dear", 1, 500, "dear")])
    with pytest.raises(RulegenError, match=r"do not pass on the rule itself .*\(base-dear\)"):
        run_rounds(more, results, 1, tmp_path)


def test_a_selector_promql_parser_cannot_read_back_makes_no_matcher_mutant():
    # regression (issue 25): `\p{L}` prints back unescaped, which promql_parser refuses; the
    # mutants of the rest of the expression are still made
    got = _texts('up{job=~"\\\\p{L}+"} == 0')
    assert not [t for t in got if t.startswith("matcher")]
    assert "`== 0` becomes `!= 0`" in got


@pytest.mark.parametrize("expr", [
    'sum(rate(up{job=~"a\\\\.b"}[5m])) > 0',  # the regex a\.b, as a spec writes it
    'max_over_time(up{job=~"a\\\\d+"}[10m]) > 0',
    'rate(up{path="C:\\\\tmp"}[5m]) > 0',
])
def test_a_range_over_a_selector_promql_parser_prints_unreadably_is_no_crash(expr):
    """promql_parser prints a matcher's value without its escapes (``job=~"a\\.b"`` as
    ``job=~"a\\.b"`` read back as an unknown escape): the range mutants of such a selector
    are left out, as its matcher mutants are, and the other mutants stay (regression: ``rulegen
    test --mutate`` died with a ValueError traceback on any such rule)."""
    got = _texts(expr)
    assert not [t for t in got if t.startswith("range ")], got
    assert "`> 0` becomes `>= 0`" in got and got["`> 0` becomes `>= 0`"].endswith(">= 0"), got
