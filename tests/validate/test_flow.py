"""Label flow and dependency checks (RG311-RG315) at exact positions, with their messages.

Each bug listed in issue 12 has its regression test here, plus variants of its class."""

from __future__ import annotations

import pytest

from rulegen.findings import Severity
from rulegen.validate import validate_texts


def run(text, codes=("RG311", "RG312", "RG313", "RG314", "RG315")):
    res = validate_texts({"a.yaml": text})
    return [(f.code, f.line, f.col, f.severity.value, f.message) for f in res.findings if f.code in codes]


def alert(expr, summary="s", extra="", labels=""):
    return f"""\
app: demo
labels: {{owner: db-team}}
groups:
  - name: demo
    rules:
      - record: instance:redis_memory_used:ratio
        expr: sum by (instance) (redis_memory_used_bytes) / sum by (instance) (redis_memory_max_bytes)
      - record: job:redis_memory_used:ratio
        expr: max by (job) (instance:redis_memory_used:ratio)
      - alert: DemoAlert
        expr: '{expr}'
        severity: warning{labels}
        summary: "{summary}"
        description: d
{extra}"""


# --- RG311: a template reads a label the series never carry -----------------------------------

def test_aggregation_drops_instance():
    # issue 12: the page said "on :" at 3 a.m.
    found = run(alert('sum by (job) (rate(http_requests_total{code=~"5.."}[5m])) > 1',
                      "5xx on {{ $labels.instance }}"))
    assert found == [("RG311", 13, 29, "warning",
                      "annotation template reads $labels.instance, which this alert's series never carry "
                      "(`sum by (job)` drops `instance`), so it renders empty; keep `instance` in the result "
                      "(a `by` list, an equality matcher) or stop reading it")]


def test_absent_keeps_only_equality_matchers():
    # issue 12: absent() keeps `cluster` (an equality matcher), never `instance` (a regex one)
    found = run(alert('absent(node_exporter_build_info{cluster="prod", instance=~"db.*"})',
                      "no exporter on {{ $labels.instance }} in {{ $labels.cluster }}"))
    assert found == [("RG311", 13, 37, "warning",
                      "annotation template reads $labels.instance, which this alert's series never carry "
                      "(`absent()` takes a label from its selector only when one non-empty equality matcher "
                      "names it, not from `instance=~\"db.*\"`, so it drops `instance`), so it renders empty; "
                      "keep `instance` in the result (a `by` list, an equality matcher) or stop reading it")]


@pytest.mark.parametrize("expr,why", [
    ("count(kube_pod_info) > 3", "`count` without `by (namespace)` drops `namespace`"),
    ("max without (namespace) (kube_pod_info) > 3", "`max without (namespace)` drops `namespace`"),
    ("topk(1, avg by (pod) (kube_pod_info)) > 3", "`avg by (pod)` drops `namespace`"),
    ("kube_pod_info * on (pod) group_left (node) sum by (pod) (x) > 1",
     "the one-to-one match `on (pod)` drops `namespace`" if False else None),
    ("sum by (pod) (x) * on (pod) group_left (node) kube_pod_info > 1", "`sum by (pod)` drops `namespace`"),
    ("sum by (pod) (x) / on (pod) sum by (pod, namespace) (y) > 1", "`sum by (pod)` drops `namespace`"),
    ("x / on (pod) y > 1", "the one-to-one match `on (pod)` drops `namespace`"),
    ("x / ignoring (namespace) y > 1", "the one-to-one match `ignoring (namespace)` drops `namespace`"),
    ('label_replace(sum by (pod) (x), "node", "$1", "pod", "(.*)") > 1', "`sum by (pod)` drops `namespace`"),
    ("absent_over_time(up{job=\"kubelet\"}[5m])",
     "`absent_over_time()` keeps only the labels of its selector's equality matchers (job), so it drops `namespace`"),
    # nested recording rules: the rule whose expr drops the label first is named
    ("job:redis_memory_used:ratio > 0.9",
     "in the recording rule instance:redis_memory_used:ratio, `sum by (instance)` drops `namespace`"),
    ("max by (job) (instance:redis_memory_used:ratio) > 0.9",
     "in the recording rule instance:redis_memory_used:ratio, `sum by (instance)` drops `namespace`"),
    ("vector(1)", "`vector()` has no labels, so it cannot carry `namespace`"),
    # an empty expansion deletes the label (the review's misses)
    ('label_replace(kube_pod_info, "namespace", "", "", "") > 3',
     '`label_replace(..., "namespace", "", "", "")` sets `namespace` to an empty value, which deletes it'),
    ('label_replace(sum by (pod) (x), "namespace", "$1", "ns", "(.*)") > 3',
     '`label_replace(..., "namespace", "$1", "ns", "(.*)")` sets `namespace` to an empty value, which deletes it'),
    ('label_join(sum by (pod) (x), "namespace", "/", "ns") > 3',
     '`label_join(..., "namespace", "/", "ns")` sets `namespace` to an empty value, which deletes it'),
    ("kube_pod_info{namespace=\"a\"} * on (pod) group_left (namespace) sum by (pod) (x) > 1",
     "`group_left (namespace)` copies `namespace` from the right side, which never has it (`sum by (pod)` drops "
     "`namespace`)"),
    # matching without `on` pairs only series of the same labels (three upstream alerts, see CHANGELOG)
    ("kube_pod_info > 0 and sum by (pod) (x) > 1",
     "vector matching without `on (...)` pairs it only with right-side series of the same labels, which never "
     "have `namespace` (`sum by (pod)` drops `namespace`)"),
])
def test_variants(expr, why):
    found = run(alert(expr, "in {{ $labels.namespace }}"))
    if why is None:  # kube_pod_info is the many side: it keeps namespace
        assert found == []
    else:
        assert [(c, m.split("(", 1)[1].rsplit("), so it renders", 1)[0]) for c, _, _, _, m in found] == [
            ("RG311", why)]


def test_nested_recording_rules_name_the_rule_that_drops():
    found = run(alert("job:redis_memory_used:ratio > 0.9", "{{ $labels.instance }} is full"))
    assert found[0][:4] == ("RG311", 13, 22, "warning")
    assert "(in the recording rule job:redis_memory_used:ratio, `max by (job)` drops `instance`)" in found[0][4]


@pytest.mark.parametrize("summary,col", [
    ("{{ .Labels.instance }}", 22), ('{{ index $labels "instance" }}', 22), ("x {{- $labels.instance -}}", 25),
])
def test_other_ways_to_read_a_label(summary, col):
    found = run(alert("sum by (job) (x) > 1", summary.replace('"', '\\"')))
    assert [(c, line, cl) for c, line, cl, _, _ in found] == [("RG311", 13, col)]


def test_a_label_template_is_checked_too():
    found = run(alert("count(x) > 1", labels="\n        labels: {where: '{{ $labels.node }}'}"))
    assert [(c, line, col) for c, line, col, _, _ in found] == [("RG311", 13, 29)]
    assert found[0][4].startswith("label template reads $labels.node")


@pytest.mark.parametrize("expr", [
    "up == 0", "rate(x[5m]) > 1", "sum by (instance) (x) > 1", "x * on (job) group_left (instance) y > 1",
    'label_replace(sum by (job) (x), "instance", "$1", "job", "(.*)") > 1', "info(x) > 1",
    "instance:redis_memory_used:ratio > 1", 'label_replace(x, "instance", "", "job", "a") > 1',
    "x > 1 and on (job) sum by (job) (y) > 0", "x unless sum by (job) (y)",
    "sum(x) or up",
])
def test_quiet_when_the_label_can_be_there(expr):
    assert run(alert(expr, "on {{ $labels.instance }}")) == []


# --- RG312: a template reads a rule label ----------------------------------------------------

def test_rule_label_through_labels():
    # issue 12: rule labels are added after the templates are expanded
    found = run(alert("up == 0", "ask {{ $labels.owner }} ({{ $labels.severity }}, {{ $labels.alertname }})"))
    assert found == [
        ("RG312", 13, 26, "warning", "annotation template reads $labels.owner, a label the rule sets: Prometheus "
         "expands templates with the series' labels, before it adds the rule's, so it renders empty; write the "
         "value itself ('db-team')"),
        ("RG312", 13, 47, "warning", "annotation template reads $labels.severity, a label the rule sets: Prometheus "
         "expands templates with the series' labels, before it adds the rule's, so it renders empty; write the "
         "value itself ('warning')"),
        ("RG312", 13, 71, "warning", "annotation template reads $labels.alertname, which Prometheus sets with the "
         "rule's labels: Prometheus expands templates with the series' labels, before it adds the rule's, so it "
         "renders empty; write the value itself ('DemoAlert')"),
    ]


def test_rule_label_the_series_carry_is_fine():
    assert run(alert('sum by (owner) (x{owner="a"}) > 1', "ask {{ $labels.owner }}")) == []
    # ALERTS series carry the name of the alert they are about
    assert run(alert('ALERTS{alertstate="firing", severity="critical"} == 1', "{{ $labels.alertname }}")) == []


# --- RG313: exp_labels the rule can never produce --------------------------------------------

TEST = """\
        tests:
          - name: fires
            input_series:
              - series: x{job="a", instance="b"}
                values: 1x10
            alert_rule_test:
              - eval_time: 5m
                exp_alerts:
                  - exp_labels: {job: a, instance: b, severity: warning}
"""


def test_exp_labels_the_rule_can_never_produce():
    found = run(alert("sum by (job) (x) > 0", extra=TEST))
    assert found == [("RG313", 23, 42, "error",
                      "test 'fires' expects label 'instance', which this alert can never produce (`sum by (job)` "
                      "drops `instance`): the test can never pass; remove it from exp_labels or keep the label "
                      "in the expr")]
    assert run(alert("sum by (job, instance) (x) > 0", extra=TEST)) == []


def test_rg313_for_absent_of_a_comparison_names_the_comparison_not_the_matchers():
    # trial: "keeps only the labels of its selector's equality matchers (none)" for a selector
    # with two; absent() of anything but a plain selector gives no label at all
    test = TEST.replace('x{job="a", instance="b"}', 'up{job="shop", namespace="shop"}').replace(
        "values: 1x10", "values: 0x10").replace("{job: a, instance: b, severity: warning}", "{job: shop, severity: warning}")
    found = run(alert('absent(up{job="shop", namespace="shop"} == 1)', extra=test))
    assert found == [("RG313", 23, 34, "error",
                      "test 'fires' expects label 'job', which this alert can never produce (`absent()` of a "
                      "comparison (`==`), not a plain series selector, gives its one series no labels (Prometheus "
                      "takes them only from a selector's equality matchers), so it drops `job`): the test can "
                      "never pass; remove it from exp_labels or keep the label in the expr")]
    assert run(alert('absent(up{job="shop", namespace="shop"})', extra=test)) == []


# --- RG314: a recording rule nobody records --------------------------------------------------

def test_recording_rule_typo():
    # issue 12: the alert read instance:redis_memory_use:ratio and could never fire
    found = run(alert("instance:redis_memory_use:ratio > 0.9"))
    assert found == [("RG314", 11, 16, "error",
                      "expr reads instance:redis_memory_use:ratio, which no recording rule of the project records, "
                      "so the selector is always empty; did you mean instance:redis_memory_used:ratio?")]


def test_recording_rule_recorded_elsewhere_is_a_warning():
    found = run(alert("max(node:cpu_usage:rate5m) > 0.9"))
    assert found == [("RG314", 11, 20, "warning",
                      "expr reads node:cpu_usage:rate5m, which no recording rule of the project records: unless "
                      "another rule file records it, the selector is always empty; add the recording rule or fix "
                      "the name")]


def test_recording_rule_of_another_spec_counts():
    other = "app: other\ngroups:\n  - name: o\n    rules:\n      - record: node:cpu_usage:rate5m\n        expr: sum(x)\n"
    res = validate_texts({"a.yaml": alert("max(node:cpu_usage:rate5m) > 0.9"), "b.yaml": other})
    assert [f for f in res.findings if f.code == "RG314"] == []



OWN = """\
app: demo
groups:
  - name: demo
    rules:
      - record: {record}
        expr: sum by (job) ({reads})
"""


def test_did_you_mean_is_never_the_rules_own_output():
    """A recording rule reading a name close to the one it records (recorded upstream, in a
    rule file of another repo) is not told to read itself; a close name of another rule
    still is a suggestion (an error)."""
    found = run(OWN.format(record="job:http_errors:rate5m", reads="job:http_error:rate5m"))
    assert [(c, sev) for c, _, _, sev, _ in found] == [("RG314", "warning")]
    assert "did you mean" not in found[0][4] and "job:http_errors:rate5m" not in found[0][4]
    two = OWN.format(record="job:http_errors:rate5m", reads="job:http_error:rate5m") + \
        "      - record: job:http_errors:rate1h\n        expr: sum by (job) (job:http_errors:rate5m)\n" \
        "      - record: job:http_error:ratio\n        expr: sum by (job) (x)\n"
    found = run(two)
    assert [(c, sev, m.rsplit("; ", 1)[-1]) for c, _, _, sev, m in found] == [
        ("RG314", "error", "did you mean job:http_errors:rate1h?")]

# --- RG315: a comment that swallows the rest -------------------------------------------------

FOLDED = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoAlert
        expr: >
          rate(http_errors_total[5m])   # errors per second
          > 1
        severity: warning
        summary: s
        description: d
"""


def test_comment_in_a_folded_expr():
    # issue 12: the comment swallowed `> 1`, so the alert always fired
    found = run(FOLDED)
    assert found == [("RG315", 7, 41, "error",
                      "`#` starts a PromQL comment that runs to the end of the line, and YAML made this expr one "
                      "line, so everything after it is ignored ('errors per second > 1'); write the expr as a `|` "
                      "block so each comment ends at its line")]


@pytest.mark.parametrize("header", [">-", ">+", ">2"])
def test_comment_in_other_folded_blocks(header):
    text = FOLDED.replace("expr: >\n", f"expr: {header}\n")
    assert [(c, line, col) for c, line, col, _, _ in run(text)] == [("RG315", 7, 41)]


def test_comment_in_a_plain_multi_line_expr():
    # a `#` right after a character does not start a YAML comment: the plain scalar goes on
    text = FOLDED.replace("expr: >\n          rate(http_errors_total[5m])   # errors", "expr: rate(x[5m])#errors")
    assert [(c, line, col) for c, line, col, _, _ in run(text)] == [("RG315", 6, 26)]


@pytest.mark.parametrize("expr", [
    "|\n          rate(x[5m]) # errors per second\n          > 1",  # a | block: the comment ends at its line
    "rate(x[5m]) > 1 # a trailing comment on one line swallows nothing",
    '''\'x{a="#"} > 1\'''',  # inside a string
])
def test_comments_that_swallow_nothing(expr):
    text = FOLDED.replace(">\n          rate(http_errors_total[5m])   # errors per second\n          > 1", expr)
    assert run(text) == []


def test_severity_is_configurable():
    from rulegen.config import Config
    res = validate_texts({"a.yaml": alert("count(x) > 1", "{{ $labels.pod }}")},
                         Config(severity_overrides={"RG311": Severity.ERROR}))
    assert [f.is_error for f in res.findings if f.code == "RG311"] == [True]


def test_label_flow_through_a_recording_rule_of_another_spec():
    other = ("app: other\ngroups:\n  - name: o\n    rules:\n      - record: cluster:cpu_usage:rate5m\n"
             "        expr: sum by (cluster) (rate(node_cpu_seconds_total[5m]))\n")
    text = alert("cluster:cpu_usage:rate5m > 0.9", "{{ $labels.instance }} is busy")
    res = validate_texts({"a.yaml": text, "b.yaml": other})
    assert [(f.file, f.code, f.line, f.col) for f in res.findings if f.code.startswith("RG31")] == [
        ("a.yaml", "RG311", 13, 22)]
    assert "(in the recording rule cluster:cpu_usage:rate5m, `sum by (cluster)` drops `instance`)" in \
        res.findings[0].message
    # alone, the spec reads a recording rule nobody records: RG314, and no guess about its labels
    assert [f.code for f in validate_texts({"a.yaml": text}).findings] == ["RG314"]


def test_app_and_group_label_templates_are_read_for_each_alert():
    text = alert("count(x) > 1").replace("labels: {owner: db-team}", "labels: {owner: db-team, host: '{{ $labels.node }}'}")
    text = text.replace("  - name: demo\n", "  - name: demo\n    labels: {where: '{{ $labels.zone }}'}\n")
    found = run(text)
    assert [(c, line, col) for c, line, col, _, _ in found] == [("RG311", 2, 36), ("RG311", 5, 25)]
    assert "`count` without `by (node)` drops `node`" in found[0][4]
    # an alert label of the same name replaces it: nothing is expanded from the group's
    assert run(text.replace("        severity: warning", "        severity: warning\n        labels: {where: x}")) == [
        found[0]]


def test_another_window_of_a_recorded_series_is_a_warning():
    found = run(alert("instance:redis_memory_used:ratio1h > 0.9").replace(
        "record: instance:redis_memory_used:ratio\n", "record: instance:redis_memory_used:ratio5m\n").replace(
        "(instance:redis_memory_used:ratio)", "(instance:redis_memory_used:ratio5m)"))
    assert found == [("RG314", 11, 16, "warning",
                      "expr reads instance:redis_memory_used:ratio1h, which no recording rule of the project "
                      "records: unless another rule file records it, the selector is always empty; the project "
                      "records instance:redis_memory_used:ratio5m")]
