"""Label flow (rulegen.promql.labelflow) against Prometheus' own engine.

Each expression is evaluated by the real ``promtool test rules`` over the same input series;
the labels of the series Prometheus returns are read from promtool's report. Whatever label
flow says a result can never carry (False) must be on no series Prometheus returns (a wrong
False is a false alarm in RG311, RG313 and the triage checks), and each label a case lists as
kept must be on one at least.
"""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from rulegen.promql.labelflow import can_carry

SERIES = {
    'x{job="a", instance="i1"}': "1x5",
    'x{job="b", instance="i2", team="old"}': "1x5",
    'y{instance="i1", team="t"}': "2x5",
    'y{instance="i2", team="u"}': "2x5",
    'z{instance="i1"}': "3x5",
    'b_bucket{job="a", le="1"}': "0+1x5",
    'b_bucket{job="a", le="+Inf"}': "0+2x5",
}
LABELS = ["job", "instance", "team", "le", "v", "host", "who", "zone"]

CASES = [
    # expr, labels Prometheus keeps on some series of the result
    ('label_replace(x, "instance", "", "", "")', ["job"]),
    ('label_replace(sum by (job) (x), "instance", "$1", "zone", "(.*)")', ["job"]),
    ('label_replace(x, "host", "h-$1", "instance", "(.*)")', ["host", "instance"]),
    ('label_replace(x, "host", "$1x", "instance", "(.*)")', ["instance"]),  # Go reads group "1x"
    ('label_join(sum by (job) (x), "who", ",", "instance")', ["job"]),
    ('label_join(x, "who", ",", "job", "instance")', ["who"]),
    ("x * on (instance) group_left (team) sum by (instance) (y)", ["job", "instance"]),  # team="old" deleted
    ("x * on (instance) group_left (team) y", ["team"]),
    ('x{job="a"} * on (instance) group_right (job) y', ["job", "team"]),
    ('absent(nope{job="a", job!="b", instance="i"})', ["instance"]),
    ("x and on (instance) y", ["job", "team"]),
    ("x and sum by (instance) (y)", []),  # x has job: no series of the same labels on the right
    ("z and sum by (instance) (y)", ["instance"]),
    ("x / on () group_left sum(y)", ["job", "instance"]),
    ('count_values("v", x)', ["v"]),
    ("histogram_quantile(0.5, rate(b_bucket[5m]))", ["job"]),
    ("topk(1, x)", ["job"]),
    ("sum without (instance) (x)", ["job"]),
    ("sum by () (x)", []),
    ("x / ignoring (team) y", []),  # x has job, y never: no pair
]


def _results(promtool_bin, tmp_path, exprs: list[str]) -> list[list[set[str]]]:
    """For each expr, the label names of every series Prometheus returns at 4m."""
    (tmp_path / "rules.yaml").write_text("groups: []\n")
    tests = [{"interval": "1m",
              "input_series": [{"series": s, "values": v} for s, v in SERIES.items()],
              "promql_expr_test": [{"expr": e, "eval_time": "4m",
                                    "exp_samples": [{"labels": "never_returned", "value": -1}]} for e in exprs]}]
    (tmp_path / "t.yaml").write_text(yaml.safe_dump({"rule_files": ["rules.yaml"], "tests": tests}))
    out = subprocess.run([str(promtool_bin), "test", "rules", "t.yaml"], cwd=tmp_path, capture_output=True,
                         text=True)
    report = out.stdout + out.stderr
    got = re.findall(r"^\s*got: (.*)$", report, re.M)
    assert len(got) == len(exprs), report
    return [[set(re.findall(r'([A-Za-z_]\w*)="', m)) - {"__name__"} for m in re.findall(r"\{[^}]*\}", g)]
            for g in got]


def test_label_flow_agrees_with_prometheus(promtool_bin, tmp_path):
    results = _results(promtool_bin, tmp_path, [e for e, _ in CASES])
    for (expr, kept), series in zip(CASES, results):
        for label in LABELS:
            if can_carry(expr, label) is False:
                assert all(label not in s for s in series), (expr, label, series)
        for label in kept:
            assert any(label in s for s in series), (expr, label, series)
            assert can_carry(expr, label) is not False, (expr, label)


@pytest.mark.parametrize("expr,label", [
    ('label_replace(x, "instance", "", "", "")', "instance"),
    ("x * on (instance) group_left (team) sum by (instance) (y)", "team"),
    ('label_join(sum by (job) (x), "who", ",", "instance")', "who"),
    ("x and sum by (instance) (y)", "job"),
])
def test_the_cases_exercise_a_never(expr, label):
    """The agreement test would pass vacuously if label flow said None everywhere."""
    assert can_carry(expr, label) is False
