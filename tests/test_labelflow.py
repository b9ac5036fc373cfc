"""Label flow (rulegen.validate.labelflow): which labels a rule's series can carry, and why not."""

from __future__ import annotations

import pytest

from rulegen.validate.labelflow import can_carry, dropped_by, flow, series_feed

RR = {
    "instance:foo:rate5m": "sum by (instance) (rate(foo_total[5m]))",
    "job:foo:rate5m": "sum by (job) (instance:foo:rate5m)",  # nested: reads another recording rule
    "cluster:up:count": [("count by (cluster) (up)", {}), ("count by (cluster) (up)", {"tier": "b"})],
}


@pytest.mark.parametrize("expr,label,carries,why", [
    # the bugs of issue 12
    ('sum by (job) (rate(http_requests_total{code=~"5.."}[5m])) > 1', "instance", False,
     "`sum by (job)` drops `instance`"),
    ('absent(node_exporter_build_info{cluster="prod", instance=~"db.*"})', "instance", False,
     "`absent()` keeps only the labels of its selector's equality matchers (cluster), so it drops `instance`"),
    ('absent(node_exporter_build_info{cluster="prod", instance=~"db.*"})', "cluster", True, None),
    ("count(kube_pod_info) > 3", "namespace", False, "`count` without `by (namespace)` drops `namespace`"),
    # other aggregations, without
    ("max by (job) (x) > 1", "pod", False, "`max by (job)` drops `pod`"),
    ("avg(x) > 1", "pod", False, "`avg` without `by (pod)` drops `pod`"),
    ("quantile by (job) (0.9, x) > 1", "pod", False, "`quantile by (job)` drops `pod`"),
    ("sum without (instance) (up) == 0", "instance", False, "`sum without (instance)` drops `instance`"),
    ("sum without (instance) (up) == 0", "job", None, None),
    ('count_values("version", build_info) > 1', "version", True, None),
    ('count_values("version", build_info) > 1', "job", False, "`count_values` without `by (job)` drops `job`"),
    ("topk(3, sum by (job) (x))", "instance", False, "`sum by (job)` drops `instance`"),
    ("bottomk(3, x)", "instance", None, None),
    ("count(sum by (job) (x)) > 1", "instance", False, "`sum by (job)` drops `instance`"),  # the first drop
    ("sum by (job, instance) (x) > 1", "instance", True, None),
    ("sum by (job) (sum by (instance) (x)) > 1", "job", False, "`sum by (instance)` drops `job`"),
    # binary operations
    ("x * on (job) y > 1", "instance", False, "the one-to-one match `on (job)` drops `instance`"),
    ("x / ignoring (code) y > 1", "code", False, "the one-to-one match `ignoring (code)` drops `code`"),
    ("x / ignoring (code) y > 1", "job", None, None),
    ("sum by (job) (x) / on (job) group_left (team) y > 1", "team", True, None),
    ("sum by (job) (x) / on (job) group_left (team) y > 1", "instance", False, "`sum by (job)` drops `instance`"),
    ("x * on (job) group_left (team) y", "team", True, None),
    ("sum by (job) (y) * on (job) group_right x > 1", "instance", None, None),  # the many side is x
    ("x > 3", "instance", None, None),
    ("3 < sum by (job) (x)", "instance", False, "`sum by (job)` drops `instance`"),
    ("sum by (job) (x) > bool 3", "instance", False, "`sum by (job)` drops `instance`"),
    ("sum(x) and on () y", "job", False, "`sum` without `by (job)` drops `job`"),
    ("sum by (job) (x) unless y", "pod", False, "`sum by (job)` drops `pod`"),
    ("sum by (job) (x) or sum by (pod) (y)", "pod", True, None),
    ("sum by (job) (x) or sum by (pod) (y)", "node", False, "`sum by (job)` drops `node`"),
    ("sum(x) or vector(0)", "job", False, "`sum` without `by (job)` drops `job`"),
    # functions
    ('label_replace(sum(x), "instance", "$1", "job", "(.*)") > 1', "instance", True, None),
    ('label_join(sum(x), "who", ",", "a") > 1', "a", False, "`sum` without `by (a)` drops `a`"),
    ("histogram_quantile(0.9, sum by (le, job) (rate(x_bucket[5m]))) > 1", "le", False,
     "`histogram_quantile` drops `le`"),
    ("histogram_quantile(0.9, sum by (le, job) (rate(x_bucket[5m]))) > 1", "job", True, None),
    ("vector(1)", "instance", False, "`vector()` has no labels, so it cannot carry `instance`"),
    ("time() - x > 3", "instance", None, None),
    ("abs(sum by (job) (x)) > 1", "pod", False, "`sum by (job)` drops `pod`"),
    ("hour() > 3", "pod", False, "`hour()` without an argument has no labels"),
    ("max_over_time(sum by (job) (x)[5m:1m]) > 1", "pod", False, "`sum by (job)` drops `pod`"),
    ("absent_over_time(x{job=\"a\", job=\"b\"}[5m])", "job", False,
     "`absent_over_time()` keeps only the labels of its selector's equality matchers (none), so it drops `job`"),
    ('up{instance=""} == 0', "instance", False,
     'the selector\'s matcher `instance=""` selects series without `instance`'),
    ('up{instance="a"} == 0', "instance", True, None),
    ("info(x) > 1", "pod", None, None),  # not understood: unknown, so silent
    ("foo(", "pod", None, None),  # does not parse
    # recording rules of the project, nested, several rules for one name
    ("instance:foo:rate5m > 1", "pod", False,
     "in the recording rule instance:foo:rate5m, `sum by (instance)` drops `pod`"),
    ("instance:foo:rate5m > 1", "instance", True, None),
    ("job:foo:rate5m > 1", "instance", False, "in the recording rule job:foo:rate5m, `sum by (job)` drops `instance`"),
    ("job:foo:rate5m > 1", "pod", False,
     "in the recording rule instance:foo:rate5m, `sum by (instance)` drops `pod`"),
    ("cluster:up:count > 1", "tier", True, None),
    ("cluster:up:count > 1", "pod", False, "in the recording rule cluster:up:count, `count by (cluster)` drops `pod`"),
    ('{__name__=~"instance:.*"} > 1', "pod", None, None),  # may select a recording rule: unknown
    ("other:metric:sum > 1", "pod", None, None),  # not a rule of the project: a plain selector
])
def test_label_flow(expr, label, carries, why):
    assert can_carry(expr, label, RR) is carries
    assert dropped_by(expr, label, RR) == why


def test_recording_rule_cycle_is_unknown():
    rr = {"a:x:y": "sum by (job) (b:x:y)", "b:x:y": "sum by (pod) (a:x:y)"}
    assert can_carry("a:x:y > 1", "instance", rr) is None


def test_pinned_labels_follow_the_result():
    f = flow('sum by (cluster, code, verb) (increase(apiserver_request_total{code=~"2..", job="apiserver"}[1h]))')
    assert dict(f.pinned) == {"code": (("=~", "2.."),)}  # job is aggregated away
    assert flow("up{job='a'} / ignoring (job) x").pinned == {}


@pytest.mark.parametrize("expr,series,rr,feeds", [
    ('sum(rate(http_requests_total{job="api"}[5m])) > 1', 'http_requests_total{job="api", code="500"}', None, True),
    ('sum(rate(http_requests_total{job="api"}[5m])) > 1', 'http_request_total{job="api"}', None, False),  # metric typo
    ('sum(rate(http_requests_total{job="api"}[5m])) > 1', 'http_requests_total{job="apx"}', None, False),  # job typo
    ('up{job=~"a|b"} == 0', 'up{job="b"}', None, True),
    ('up{job!~"a|b"} == 0', 'up{job="b"}', None, False),
    ('up{job=~"(?i)A"} == 0', 'up{job="a"}', None, True),
    ('up{job=~"\\\\pL+"} == 0', 'up{job="a"}', None, None),  # RE2 syntax Python reads otherwise: unknown
    ("instance:foo:rate5m > 1", 'foo_total{instance="a"}', RR, True),  # through the recording rule
    ("job:foo:rate5m > 1", 'foo_total{instance="a"}', RR, True),  # nested
    ("job:foo:rate5m > 1", 'instance:foo:rate5m{instance="a"}', RR, True),  # the recorded series itself
    ("job:foo:rate5m > 1", 'fooo_total{instance="a"}', RR, False),
    ('{__name__=~"up|down"} == 0', "down", None, True),
    ('up == 0 or {job="a" or job="b"}', 'x{job="b"}', None, True),
    ("up == 0", "not a series{", None, None),
])
def test_series_feed(expr, series, rr, feeds):
    assert series_feed(expr, series, rr) is feeds


@pytest.mark.parametrize("series,why", [
    ('http_request_total{job="api"}', "metric"),  # no selector reads this metric
    ('http_requests_total{job="apx"}', 'job="api"'),  # one edit away from the matcher's value
    ('http_requests_total{jbo="api"}', 'job="api"'),  # the label name misspelled
    ('http_requests_total{job="billing"}', None),  # another value on purpose: the filter is tested
    ('http_requests_total{instance="a"}', None),  # no job at all: on purpose too
    ('http_requests_total{job="api"}', None),  # selected
])
def test_missed_by_mistake(series, why):
    from rulegen.validate.labelflow import missed_by_mistake
    assert missed_by_mistake('sum(rate(http_requests_total{job="api"}[5m])) > 1', series) == why


@pytest.mark.parametrize("a,b,typo", [
    ("api", "apx", True), ("api", "pai", True), ("api", "apis", True), ("job", "jbo", True),
    ("True", "False", False), ("a", "b", False), ("api", "api", False), ("prod", "staging", False),
])
def test_typo(a, b, typo):
    from rulegen.validate.labelflow import _typo
    assert _typo(a, b) is typo
