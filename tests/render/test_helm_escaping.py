"""Every user string reaches Prometheus byte for byte through the real ``helm template``.

Property test: hypothesis builds specs with arbitrary label values, annotation values,
summaries, descriptions and multi-line PromQL; rulegen renders the chart, the real helm
renders it, PyYAML (YAML 1.1) parses the output, and the rule groups must equal
``rulegen.render.plain.rule_groups`` of the same spec (which holds the spec's strings as is).
Each hypothesis example is one chart of up to 50 alerts, so one helm process checks many
strings. ``derandomize=True`` makes CI runs reproducible; ``@example`` pins every nasty class.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from rulegen.render.plain import rule_groups
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run

from helpers import REPO
from helpers.helm import SITE, strict_load_all, write_chart
from helpers.samples import NASTY

pytestmark = pytest.mark.tools

text = st.one_of(
    st.text(max_size=40),
    st.lists(st.sampled_from(NASTY), max_size=6).map("".join),
    st.lists(st.one_of(st.sampled_from(NASTY), st.text(max_size=4)), max_size=8).map("".join),
)

# Label names that are valid in Prometheus but YAML words or odd keys.
label_names = st.sampled_from(["team", "on", "off", "yes", "no", "y", "n", "true", "null", "_", "_x1",
                               "Ab_9", "summary_extra", "le"])

ATOMS = [
    "up", '{__name__="up", job=~"a.*"}', "vector(1)", 'rate(http_requests_total{path="/{{id}}"}[5m])',
    "sum by (job) (up)", 'label_replace(up, "dst", "$1", "src", "(.*)")',
    "histogram_quantile(0.9, sum by (le) (rate(h_bucket[5m])))", 'up{job="a}}b", x="%s\\"q"}',
    'absent(up{job="{{{"} == 1)', "max_over_time(up[1h:5m])",
]
OPS = ["or", "and", "unless", "+", "*", ">", "== bool", "/ on(job) group_left"]
# Whitespace and comments between tokens; comments may hold anything but a newline.
SEPS = [" ", "  ", "\n", "\n  ", "\n\n", "\t", " \n", "\n    ", "  # note\n", "\n# {{ $labels.x }} }}\n",
        " # 100% `sure` \"q\"\n  "]


@st.composite
def exprs(draw) -> str:
    """A valid PromQL expression with odd whitespace, comments, leading/trailing space."""
    n = draw(st.integers(0, 3))
    parts = [draw(st.sampled_from(ATOMS))]
    for _ in range(n):
        parts += [draw(st.sampled_from(SEPS)), draw(st.sampled_from(OPS)), draw(st.sampled_from(SEPS)),
                  draw(st.sampled_from(ATOMS))]
    lead = draw(st.sampled_from(["", "", " ", "\n", "  \n"]))
    trail = draw(st.sampled_from(["", "", "\n", " ", "\n\n", "  # end\n"]))
    return lead + "".join(parts) + trail


alerts = st.fixed_dictionaries({
    "summary": text,
    "description": text,
    "labels": st.dictionaries(label_names, text, max_size=3),
    "annotations": st.dictionaries(label_names.filter(lambda n: n not in ("summary", "description")),
                                   text, max_size=3),
    "expr": exprs(),
})


def _spec(items: list[dict]) -> dict:
    rules = []
    for i, a in enumerate(items):
        rules.append({"alert": f"Alert{i}", "expr": a["expr"], "for": "5m", "severity": "warning",
                      "summary": a["summary"], "description": a["description"],
                      "labels": a["labels"], "annotations": a["annotations"]})
    rules.append({"record": "job:up:sum", "expr": items[0]["expr"] if items else "up",
                  "labels": items[0]["labels"] if items else {}})
    return {"app": "esc", "labels": {"team": "{{ \"t\" }} }}"}, "groups": [{"name": "g", "rules": rules}]}


def _roundtrip(tmp: Path, items: list[dict]) -> None:
    data = _spec(items)
    chart, spec = write_chart(tmp, data)
    out = helm_run.template(chart, root=REPO)
    # Parse again strictly (no duplicate key), then compare with the spec's own strings.
    docs = strict_load_all(out.text)
    assert len(docs) == 1
    assert docs[0]["spec"]["groups"] == rule_groups(spec, SITE)


one_of_each = [{"summary": s, "description": s, "labels": {"team": s, "yes": s},
                "annotations": {"null": s}, "expr": "up"} for s in NASTY]


@settings(max_examples=60, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(items=st.lists(alerts, min_size=1, max_size=50))
@example(items=one_of_each[:50])
@example(items=one_of_each[50:])
@example(items=[{"summary": "{{{", "description": "{}}", "labels": {"on": "off"}, "annotations": {},
                 "expr": '{__name__="up"} == 0'}])
@example(items=[{"summary": "  leading", "description": "trailing  ", "labels": {"n": "\ttab"},
                 "annotations": {"y": "multi\nline\n"}, "expr": "up\n  # comment {{ x }}\n  == 0\n"}])
@example(items=[{"summary": "*alias", "description": "&anchor", "labels": {"team": "!tag"},
                 "annotations": {"_": "- item"}, "expr": "\nup\n"}])
@example(items=[{"summary": "? key", "description": "| block\n> folded", "labels": {"le": "@at"},
                 "annotations": {"_x1": "% pct"}, "expr": "up  \n  or vector(1)"}])
@example(items=[{"summary": "a\u2028b\u0085c😀", "description": "line1\n  indented\n\nlast  ",
                 "labels": {"team": "yes"}, "annotations": {"Ab_9": "`{{ `x` }}`"},
                 "expr": "sum by (job) (\n\tup\n)"}])
@example(items=[{"summary": "x\n", "description": "\n", "labels": {}, "annotations": {},
                 "expr": "up #}}\n"}])
def test_helm_template_returns_spec_strings_exactly(helm_bin, tmp_path_factory, items):
    _roundtrip(tmp_path_factory.mktemp("esc"), items)


def test_multiline_names_and_values_at_every_position(helm_bin, tmp_path):
    """Regression: block literals were indented to column 12 wherever they were placed, so a
    multi-line label or annotation value (keys at column 12) broke the YAML. Every string
    position, including group and rule names, now gets its own indent."""
    data = {"app": "pos", "chart": {"name": "pos", "namespace": "ns"},
            "groups": [{"name": "group\nname", "rules": [
                {"alert": "A\nB", "expr": "up\n== 0", "summary": "s1\ns2", "description": "d1\nd2\n",
                 "labels": {"l": "v1\nv2"}, "annotations": {"a": "a1\na2"}},
                {"record": "r:up\n", "expr": "sum(up)\n", "labels": {"l": "x\ny"}}]}]}
    chart, spec = write_chart(tmp_path, data)
    docs = strict_load_all(helm_run.template(chart).text)
    groups = docs[0]["spec"]["groups"]
    assert groups == rule_groups(spec, SITE)
    assert groups[0]["name"] == "group\nname"
    assert groups[0]["rules"][0]["labels"]["l"] == "v1\nv2"
    assert groups[0]["rules"][0]["annotations"]["description"] == "d1\nd2\n"


def test_yaml_words_as_label_names_stay_strings(helm_bin, tmp_path):
    """Regression: label and annotation names were written as plain keys, so ``yes: x``
    became the key True (and then "true") in YAML 1.1 readers such as Helm's."""
    names = ["yes", "no", "on", "off", "y", "n", "true", "null"]
    data = {"app": "words", "groups": [{"name": "g", "rules": [
        {"alert": "A", "expr": "up", "labels": {n: n for n in names},
         "annotations": {n: n for n in names}}]}]}
    chart, _ = write_chart(tmp_path, data)
    rule = strict_load_all(helm_run.template(chart).text)[0]["spec"]["groups"][0]["rules"][0]
    assert {k: v for k, v in rule["labels"].items() if k in names} == {n: n for n in names}
    assert {k: v for k, v in rule["annotations"].items() if k in names} == {n: n for n in names}


def test_rendered_exprs_pass_promtool(helm_bin, promtool_bin, tmp_path):
    """The odd-whitespace expressions the property test uses are valid PromQL after helm."""
    items = [{"summary": "s", "description": "d", "labels": {}, "annotations": {},
              "expr": a + s + o + s + b}
             for a, b in zip(ATOMS, reversed(ATOMS)) for s in SEPS[:4] for o in OPS[:2]]
    chart, spec = write_chart(tmp_path, _spec(items))
    out = helm_run.template(chart)
    groups = strict_load_all(out.text)[0]["spec"]["groups"]
    assert groups == rule_groups(spec, SITE)
    f = tmp_path / "rules.yaml"
    import yaml
    f.write_text(yaml.safe_dump({"groups": groups}, allow_unicode=True), encoding="utf-8")
    proc = subprocess.run([str(promtool_bin), "check", "rules", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(items) + 1} rules found" in proc.stdout


# --- strings from values, through the template's rulegen.v3.scalar --------------------------

@pytest.fixture(scope="module")
def values_chart(tmp_path_factory):
    return write_chart(tmp_path_factory.mktemp("vals"), {"app": "vals", "groups": [{"name": "g", "rules": [
        {"alert": "A", "expr": "up", "for": "5m", "severity": "warning", "summary": "s"},
        {"record": "r:up", "expr": "sum(up)"}]}]})


@settings(max_examples=25, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(strings=st.lists(text, min_size=1, max_size=30))
@example(strings=NASTY[:30])
@example(strings=NASTY[30:60])
@example(strings=NASTY[60:])
def test_values_strings_come_back_exactly(helm_bin, values_chart, strings):
    """Label and annotation values (and PrometheusRule labels) from values, arbitrary text, come
    back byte for byte: plain, literal block or %q-quoted, whichever the writer picks."""
    chart, spec = values_chart
    labels = {f"l{i}": s for i, s in enumerate(strings)}
    knobs = {"additionalRuleLabels": labels, "customRules": {"A": {"annotations": labels}},
             "annotations": labels}
    out = helm_run.template(chart, values=[values_yaml({"prometheusRule": knobs})])
    (pr,) = strict_load_all(out.text)
    rules = {r.get("alert", r.get("record")): r for g in pr["spec"]["groups"] for r in g["rules"]}
    assert {k: rules["A"]["labels"][k] for k in labels} == labels
    assert {k: rules["r:up"]["labels"][k] for k in labels} == labels
    assert {k: rules["A"]["annotations"][k] for k in labels} == labels
    assert pr["metadata"]["annotations"] == labels
