"""The SLO's objective is written once (issue 29): the burn-rate alerts compare each window's
error ratio with the factor times the *recorded* budget (``slo:error_budget:ratio``, the one
rule holding a literal) instead of a literal ``(14.4 * 0.005)``. Measured with promtool, not
by reasoning: for several objectives, the generated group (the budget rule, the objective
rule and the alerts, as rulegen expands them) runs in promtool beside the old literal form,
fed every combination of error ratios on and around each pair's threshold (the float just
under it, the threshold itself, the float just over it), and both forms fire at exactly the
same points. Also: the alerts stay quiet while the budget series is absent, and the recorded
objective, budget and the budget left hold the values the old literals gave."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml

from rulegen.promql.series import decimal_text, exact_number, series_text
from rulegen.spec import build_spec, load_text
from rulegen.spec import slo as slo_mod
from rulegen.tools import promtool

from helpers import REPO

SPEC = """\
app: demo
labels: {{team: web}}
slos:
  - name: availability
    objective: {objective}
    labels: {{tier: gold}}
    sli:
      events:
        bad: http_requests_total{{job="api", code=~"5.."}}
        total: http_requests_total{{job="api"}}
"""

#: Objectives tried: common ones, and ones whose budget is no exact binary fraction.
OBJECTIVES = ["99", "99.5", "99.9", "99.95", "95.25"]


def _expanded(objective: str):
    spec = build_spec(load_text(SPEC.format(objective=objective), "rules/demo.yaml"))
    (group,) = [g for g in spec.groups if g.slo]
    return spec, group


def _rule_doc(spec, group, old: bool) -> list[dict]:
    """The group's rules as Prometheus loads them (labels as rendered); ``old``: the burn-rate
    alerts in the old literal form, renamed ``Old<name>``, instead of the SLO's rules."""
    s = spec.slos[0]
    out = []
    alerts = [r for r in group.rules if r.is_alert]
    for r in (alerts if old else group.rules):
        labels = r.all_labels(spec.labels, group.labels)
        if not r.is_alert:
            out.append({"record": r.name, "expr": r.expr, "labels": labels})
            continue
        expr = r.expr
        if old:
            w = next(w for w in s.windows if (w.long, w.short) == (r.labels["long"], r.labels["short"]))
            thr = f"({decimal_text(w.factor)} * {decimal_text(s.budget)})"  # the form rulegen wrote before
            expr = (f"{s.record_selector(slo_mod.SLI_RECORD.format(window=w.long))} > {thr}\n"
                    f"and on ()\n{s.record_selector(slo_mod.SLI_RECORD.format(window=w.short))} > {thr}")
        out.append({"alert": ("Old" if old else "") + r.name, "expr": expr, "labels": labels})
    return out


def _firing(name: str, w) -> str:
    return f'ALERTS{{alertname="{name}", alertstate="firing", long="{w.long}", short="{w.short}"}}'


def _pair_test(spec, group, w) -> dict:
    """Pair ``w``'s two recorded error ratios fed directly, one minute per combination of
    0, the float under the threshold, the threshold (the float of the old literal
    ``factor * budget``), the float over it and 1; at every minute the new alert fires
    exactly when the old one does, and the old one fires when both values pass it."""
    s = spec.slos[0]
    thr = float(w.factor) * float(s.budget)
    values = [0.0, math.nextafter(thr, 0), thr, math.nextafter(thr, 2), 1.0]
    combos = [(a, b) for a in values for b in values]
    labels = {**group.rules[0].all_labels(spec.labels, group.labels)}
    series = [{"series": series_text(slo_mod.SLI_RECORD.format(window=win), dict(sorted(labels.items()))),
               "values": " ".join(exact_number(c[i]) for c in combos)}
              for i, win in enumerate((w.long, w.short))]
    name = s.alert_name(w.severity)
    new, old = _firing(name, w), _firing("Old" + name, w)
    checks = []
    for minute, (a, b) in enumerate(combos):
        at = f"{minute}m"
        checks += [
            {"expr": f"count({new} unless on (long, short) {old}) or vector(0)", "eval_time": at,
             "exp_samples": [{"labels": "{}", "value": 0}]},
            {"expr": f"count({old} unless on (long, short) {new}) or vector(0)", "eval_time": at,
             "exp_samples": [{"labels": "{}", "value": 0}]},
            {"expr": f"count({old}) or vector(0)", "eval_time": at,
             "exp_samples": [{"labels": "{}", "value": int(a > thr and b > thr)}]},
        ]
    return {"name": f"{w.long}/{w.short}", "interval": "1m", "input_series": series, "promql_expr_test": checks}


def _run(tmp_path: Path, groups: list[dict], tests: list[dict]) -> promtool.TestRun:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False), encoding="utf-8")
    test_file = tmp_path / "test.yaml"
    test_file.write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "evaluation_interval": "1m",
                                         "tests": tests}, sort_keys=False), encoding="utf-8")
    return promtool.test_rules([test_file], cwd=tmp_path, root=REPO)


@pytest.mark.tools("promtool")
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_alerts_reading_the_recorded_budget_fire_where_the_old_literals_did(tmp_path, promtool_bin, objective):
    spec, group = _expanded(objective)
    s = spec.slos[0]
    # the rule order Prometheus evaluates: the budget before everything that reads it
    names = [r.name for r in group.rules]
    assert names.index(slo_mod.BUDGET_RECORD) < min(
        names.index(slo_mod.OBJECTIVE_RECORD), names.index(slo_mod.REMAINING_RECORD),
        min(i for i, r in enumerate(group.rules) if r.is_alert))
    groups = [{"name": group.name, "rules": _rule_doc(spec, group, old=False)},
              {"name": "old", "rules": _rule_doc(spec, group, old=True)}]
    run = _run(tmp_path, groups, [_pair_test(spec, group, w) for w in s.windows])
    assert run.returncode == 0, run.output
    assert len(run.cases) == 4 and all(c.passed for c in run.cases), run.output


@pytest.mark.tools("promtool")
@pytest.mark.parametrize("objective", OBJECTIVES)
def test_recorded_objective_budget_and_budget_left(tmp_path, promtool_bin, objective):
    """The budget is the old literal's float, the objective the float of the spec's objective
    (1 - budget gives it back for each objective tried), and the budget left reads the
    recorded budget."""
    spec, group = _expanded(objective)
    s = spec.slos[0]
    labels = dict(sorted(group.rules[0].all_labels(spec.labels, group.labels).items()))
    period = series_text(slo_mod.SLI_RECORD.format(window=s.period), labels)
    sel = {n: series_text(n, labels) for n in (slo_mod.BUDGET_RECORD, slo_mod.OBJECTIVE_RECORD,
                                               slo_mod.REMAINING_RECORD)}
    ratio = float(s.budget) / 4  # a quarter of the budget spent
    checks = [
        {"expr": f"{sel[slo_mod.BUDGET_RECORD]} == {decimal_text(s.budget)}", "eval_time": "1m",
         "exp_samples": [{"labels": sel[slo_mod.BUDGET_RECORD], "value": float(s.budget)}]},
        {"expr": f"{sel[slo_mod.OBJECTIVE_RECORD]} == {decimal_text(s.objective / 100)}", "eval_time": "1m",
         "exp_samples": [{"labels": sel[slo_mod.OBJECTIVE_RECORD], "value": float(s.objective / 100)}]},
        {"expr": f"{sel[slo_mod.REMAINING_RECORD]} and abs({sel[slo_mod.REMAINING_RECORD]} - 0.75) < 1e-12",
         "eval_time": "1m",
         "exp_samples": [{"labels": sel[slo_mod.REMAINING_RECORD], "value": 1 - ratio / float(s.budget)}]},
    ]
    rules = [r for r in _rule_doc(spec, group, old=False) if r.get("record") in sel]
    run = _run(tmp_path, [{"name": group.name, "rules": rules}],
               [{"interval": "1m", "input_series": [{"series": period, "values": f"{exact_number(ratio)}x2"}],
                 "promql_expr_test": checks}])
    assert run.returncode == 0, run.output


@pytest.mark.tools("promtool")
def test_alerts_stay_quiet_without_the_budget_series(tmp_path, promtool_bin):
    """With the budget rule dropped (``disabled.slo:error_budget:ratio``), nothing the alerts
    compare with exists: an all-bad error ratio fires nothing (the docs say so)."""
    spec, group = _expanded("99.5")
    s = spec.slos[0]
    labels = dict(sorted(group.rules[0].all_labels(spec.labels, group.labels).items()))
    rules = [r for r in _rule_doc(spec, group, old=False) if r.get("record") != slo_mod.BUDGET_RECORD]
    series = [{"series": series_text(slo_mod.SLI_RECORD.format(window=slo_mod.format_ms(ms)), labels),
               "values": "1x10"} for ms in s.record_windows()]
    tests = [{"interval": "1m", "input_series": series,
              "alert_rule_test": [{"eval_time": "5m", "alertname": s.alert_name(sev), "exp_alerts": []}
                                  for sev in ("page", "ticket")]}]
    assert _run(tmp_path, [{"name": group.name, "rules": rules}], tests).returncode == 0
    # and with it, the same input pages and tickets (the test above is not vacuous)
    rules = _rule_doc(spec, group, old=False)
    run = _run(tmp_path, [{"name": group.name, "rules": rules}],
               [{**tests[0], "alert_rule_test": [{"eval_time": "5m", "alertname": s.alert_name("page"),
                                                  "exp_alerts": []}]}])
    assert run.returncode != 0


@pytest.mark.tools("promtool")
def test_a_budget_computed_from_the_objective_would_move_the_thresholds(tmp_path, promtool_bin):
    """Why the budget, not the objective, is the literal: recorded as ``1 - 0.995`` the budget
    is 0.0050000000000000044 in float64, and the test above tells the alerts apart at the
    float just over the old threshold (it is not blind to such a change)."""
    spec, group = _expanded("99.5")
    rules = _rule_doc(spec, group, old=False)
    (budget,) = [r for r in rules if r.get("record") == slo_mod.BUDGET_RECORD]
    budget["expr"] = "1 - vector(0.995)"
    groups = [{"name": group.name, "rules": rules}, {"name": "old", "rules": _rule_doc(spec, group, old=True)}]
    run = _run(tmp_path, groups, [_pair_test(spec, group, w) for w in spec.slos[0].windows])
    assert run.returncode != 0 and not all(c.passed for c in run.cases)


@pytest.mark.tools("promtool")
def test_a_label_on_the_error_ratio_only_silences_the_alerts(tmp_path, promtool_bin):
    """What RG364 guards against, measured: an error ratio recorded with a label the budget
    lacks (``customRules.<recording rule>.labels``) matches no budget, so an all-bad ratio
    fires nothing; with the same labels on both, it pages."""
    spec, group = _expanded("99.5")
    s = spec.slos[0]
    labels = dict(sorted(group.rules[0].all_labels(spec.labels, group.labels).items()))
    rules = [r for r in _rule_doc(spec, group, old=False)]

    def run(extra: dict) -> int:
        series = [{"series": series_text(slo_mod.SLI_RECORD.format(window=slo_mod.format_ms(ms)),
                                         dict(sorted({**labels, **extra}.items()))),
                   "values": "1x10"} for ms in s.record_windows()]
        tests = [{"interval": "1m", "input_series": series,
                  "alert_rule_test": [{"eval_time": "5m", "alertname": s.alert_name("page"), "exp_alerts": []}]}]
        return _run(tmp_path, [{"name": group.name, "rules": rules}], tests).returncode

    assert run({"cluster": "eu"}) == 0  # quiet: nothing to compare with
    assert run({}) != 0  # the same input pages when the labels agree


GROUP_KNOB = "    demo-slo-availability:\n      enabled: true\n"


def _chart_project(tmp_path: Path, old: str, new: str) -> Path:
    """A built project of :data:`SPEC` whose chart values.yaml has ``old`` replaced by ``new``."""
    import shutil
    from rulegen.cli import main
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "demo.yaml").write_text(SPEC.format(objective="99.5"), encoding="utf-8")
    shutil.copy(REPO / "mkdocs.yml", tmp_path / "mkdocs.yml")
    assert main(["-C", str(tmp_path), "build"]) == 0
    values = tmp_path / "charts/demo/values.yaml"
    text = values.read_text(encoding="utf-8")
    assert text.count(old) == 1
    values.write_text(text.replace(old, new), encoding="utf-8")
    return tmp_path


def _custom(*names: str) -> tuple[str, str]:
    return "  customRules: {}\n", "  customRules:\n" + "".join(
        f'    "{n}":\n      labels: {{cluster: eu}}\n' for n in names)


@pytest.mark.parametrize("edit, bad", [
    (_custom("slo:sli_error:ratio_rate1h"), True),
    (_custom(slo_mod.BUDGET_RECORD), True),
    # the same labels on every recording rule of the SLO, or on the group: the sides agree
    (_custom(*[slo_mod.SLI_RECORD.format(window=w) for w in ("5m", "30m", "1h", "2h", "6h", "1d", "3d", "30d")],
             slo_mod.BUDGET_RECORD, slo_mod.OBJECTIVE_RECORD, slo_mod.REMAINING_RECORD), False),
    ((GROUP_KNOB, GROUP_KNOB + "      additionalRuleLabels: {cluster: eu}\n"), False),
    (_custom("DemoAvailabilityFastBurn"), False),
])
def test_rg364_labels_on_some_recording_rules_of_an_slo(tmp_path, capsys, edit, bad):
    from rulegen.cli import main
    root = _chart_project(tmp_path, *edit)
    capsys.readouterr()
    code = main(["-C", str(root), "check"])
    out = capsys.readouterr().out
    if bad:
        line = next(i for i, x in enumerate((root / "charts/demo/values.yaml").read_text().splitlines(), 1)
                    if x == "      labels: {cluster: eu}")
        assert code != 0 and f"charts/demo/values.yaml:{line}:7: error RG364" in out, out
        assert "prometheusRule.groups.demo-slo-availability.additionalRuleLabels" in out
    else:
        assert "RG364" not in out, out


def test_rg364_is_quiet_on_the_bundled_project():
    from rulegen.outputs import knobs
    from rulegen.pipeline import load_project, plan_project
    loaded = load_project(REPO)
    outputs, _ = plan_project(loaded)
    assert [f for f in knobs.check(outputs, loaded.specs) if f.code == "RG364"] == []
