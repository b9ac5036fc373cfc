"""Label flow (rulegen.promql.labelflow): which labels a rule's series can carry, and why not."""

from __future__ import annotations

import pytest

from rulegen.promql.labelflow import can_carry, dropped_by, flow

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
     "`absent()` takes a label from its selector only when one non-empty equality matcher names it, not from "
     "`instance=~\"db.*\"`, so it drops `instance`"),
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
    # `sum` has no `job`, so `(.*)` matches "" and `$1` is empty: Prometheus deletes `instance`
    ('label_replace(sum(x), "instance", "$1", "job", "(.*)") > 1', "instance", False,
     '`label_replace(..., "instance", "$1", "job", "(.*)")` sets `instance` to an empty value, which deletes it'),
    ('label_replace(sum by (job) (x), "instance", "$1", "job", "(.*)") > 1', "instance", True, None),
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
     "`absent_over_time()` takes a label from its selector only when one non-empty equality matcher names it, "
     "not from `job=\"a\"`, `job=\"b\"`, so it drops `job`"),
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


# Prometheus' semantics, from promql/engine.go and functions.go (Prometheus 3) and the
# "Operators" and "Functions" pages of its docs: True / False only when certain, None otherwise.
_DELETES = "`label_replace(..., \"{d}\", \"{r}\", \"{s}\", \"{x}\")` sets `{d}` to an empty value, which deletes it"


@pytest.mark.parametrize("expr,label,carries,why", [
    # label_replace: an empty expansion deletes the destination label
    ('label_replace(x, "instance", "", "", "")', "instance", False,
     _DELETES.format(d="instance", r="", s="", x="")),
    ('label_replace(x{instance="a"}, "instance", "", "", "")', "instance", False,
     _DELETES.format(d="instance", r="", s="", x="")),
    ('label_replace(x, "instance", "", "job", ".*")', "instance", False,
     _DELETES.format(d="instance", r="", s="job", x=".*")),
    ('label_replace(x, "instance", "", "job", "a")', "instance", None, None),  # deletes only where job="a"
    ('label_replace(x{instance="i"}, "instance", "", "job", "a")', "instance", True, None),  # kept elsewhere
    # set from job (empty, so deleted, where the series lack job): counts as set, as `by (instance)` does
    ('label_replace(x, "instance", "$1", "job", "(.*)")', "instance", True, None),
    ('label_replace(x{job="a"}, "instance", "$1", "job", "(.*)")', "instance", True, None),
    ('label_replace(x{job="a"}, "instance", "$2", "job", "(.*)")', "instance", False,  # no group 2
     _DELETES.format(d="instance", r="$2", s="job", x="(.*)")),
    ('label_replace(x{job="a"}, "instance", "$1x", "job", "(.*)")', "instance", False,  # Go reads group "1x"
     _DELETES.format(d="instance", r="$1x", s="job", x="(.*)")),
    ('label_replace(x{job="a"}, "instance", "${1}x", "job", "(.*)")', "instance", True, None),
    ('label_replace(x{job="a"}, "instance", "$1", "job", "b(.*)")', "instance", None, None),  # no match
    ('label_replace(sum(x), "instance", "$1", "job", "(.*)")', "instance", False,
     _DELETES.format(d="instance", r="$1", s="job", x="(.*)")),
    ('label_replace(sum(x), "instance", "a", "job", "b")', "instance", False,  # never matches ""
     "`sum` without `by (instance)` drops `instance`"),
    ('label_replace(sum(x), "instance", "a", "", "")', "instance", True, None),  # the constant-label idiom
    ('label_replace(x, "instance", "host-$1", "job", "(.*)")', "instance", True, None),  # literal text
    ('label_replace(x, "instance", "$$", "job", ".*")', "instance", True, None),  # `$$` is `$`
    ('label_replace(x, "instance", "", "job", "\\\\pL+")', "instance", None, None),  # RE2 syntax: deletes at most
    ('label_replace(x, "instance", "$1", "job", "(\\\\pL+)")', "instance", True, None),
    # label_join: sources joined, deleted when that is empty
    ('label_join(x, "who", ",")', "who", False, '`label_join(..., "who", ",")` sets `who` to an empty value, which deletes it'),
    ('label_join(sum(x), "who", ",", "a")', "who", False,
     '`label_join(..., "who", ",", "a")` sets `who` to an empty value, which deletes it'),
    ('label_join(sum(x), "who", ",", "a", "b")', "who", True, None),  # "," is not empty
    ('label_join(x, "who", "", "a", "b")', "who", True, None),  # set from a and b, as `by (who)`
    ('label_join(x{a="1"}, "who", "", "a", "b")', "who", True, None),
    # absent(): each label's first matcher sets it when an equality; any other deletes it
    ('absent(x{job="a", job!="b"})', "job", False,
     "`absent()` takes a label from its selector only when one non-empty equality matcher names it, not from "
     "`job=\"a\"`, `job!=\"b\"`, so it drops `job`"),
    ('absent(x{job=""})', "job", False,
     "`absent()` takes a label from its selector only when one non-empty equality matcher names it, not from "
     "`job=\"\"`, so it drops `job`"),
    ('absent(x{job="a", job="a"})', "job", False,
     "`absent()` takes a label from its selector only when one non-empty equality matcher names it, not from "
     "`job=\"a\"`, `job=\"a\"`, so it drops `job`"),
    ('absent((x{job="a"}))', "job", False,  # not a selector: no label
     "`absent()` of an expression in parentheses, not a plain series selector, gives its one series no labels "
     "(Prometheus takes them only from a selector's equality matchers), so it drops `job`"),
    # trial: the selector has equality matchers, but absent()'s argument is a comparison
    ('absent(up{job="shop", namespace="shop"} == 1)', "job", False,
     "`absent()` of a comparison (`==`), not a plain series selector, gives its one series no labels "
     "(Prometheus takes them only from a selector's equality matchers), so it drops `job`"),
    ('absent(sum by (job) (up{job="shop"}))', "job", False,
     "`absent()` of an aggregation, not a plain series selector, gives its one series no labels "
     "(Prometheus takes them only from a selector's equality matchers), so it drops `job`"),
    ('absent_over_time(up{job="shop"}[5m:1m])', "job", False,
     "`absent_over_time()` of a subquery, not a plain series selector, gives its one series no labels "
     "(Prometheus takes them only from a selector's equality matchers), so it drops `job`"),
    ('absent_over_time(x{job="a"}[5m])', "job", True, None),
    # group_left / group_right copy the "one" side's value, and delete the label where it has none
    ('x{team="a"} * on (instance) group_left (team) sum by (instance) (y)', "team", False,
     "`group_left (team)` copies `team` from the right side, which never has it (`sum by (instance)` drops `team`)"),
    ('x * on (instance) group_left (team) sum by (instance, team) (y)', "team", True, None),
    ('x * on (instance) group_left (team) y', "team", True, None),  # named: counts as kept, as `by (team)`
    ('sum by (instance) (y) * on (instance) group_right (team) x{team="a"}', "team", False,
     "`group_right (team)` copies `team` from the left side, which never has it (`sum by (instance)` drops `team`)"),
    ('x * on (instance) group_left (team) y', "pod", None, None),  # the many side's other labels
    # info() (Prometheus 3) may add labels
    ('info(sum by (job) (x))', "job", True, None),
    ('info(sum by (job) (x))', "k8s_cluster_name", None, None),  # any data label may be added
    ('info(sum by (job) (x), {k8s_cluster_name=~".+"})', "k8s_cluster_name", True, None),
    ('info(sum by (job) (x), {k8s_cluster_name=~".+"})', "pod", False, "`sum by (job)` drops `pod`"),
    # functions that keep their argument's labels, modifiers
    ('sort_desc(sum by (job) (x))', "pod", False, "`sum by (job)` drops `pod`"),
    ('topk(3, x{job="a"})', "job", True, None),
    ('bottomk(3, sum by (job) (x))', "pod", False, "`sum by (job)` drops `pod`"),
    ('histogram_quantile(0.9, rate(x_bucket{le="1"}[5m]))', "le", False, "`histogram_quantile` drops `le`"),
    ('max_over_time(sum by (job) (x)[1h:5m] offset 1h)', "pod", False, "`sum by (job)` drops `pod`"),
    ('sum by (job) (x @ 100 offset 5m)', "job", True, None),
    ('-sum by (job) (x)', "pod", False, "`sum by (job)` drops `pod`"),
    ('sum by () (x)', "job", False, "`sum by ()` drops `job`"),
    ('count_values without (pod) ("version", x)', "version", True, None),
    ('count_values without (pod) ("version", x)', "pod", False, "`count_values without (pod)` drops `pod`"),
    ('scalar(x) * sum by (job) (y)', "job", True, None),
    ('scalar(sum by (job) (x))', "job", False, "`scalar()` returns a scalar, which has no labels"),
])
def test_label_flow_follows_prometheus(expr, label, carries, why):
    assert can_carry(expr, label) is carries
    assert dropped_by(expr, label) == why


@pytest.mark.parametrize("expr,label,carries,why", [
    # vector matching compares label values (absent = ""): a compared label the other side never
    # has is never on a matched series, one it keeps is kept (engine.go, signatureFunc)
    ("up and absent(nope)", "instance", False,
     "vector matching without `on (...)` pairs it only with right-side series of the same labels, which never "
     "have `instance` (`absent()` keeps only the labels of its selector's equality matchers (none), so it drops "
     "`instance`)"),
    ("x > 1 and sum by (job) (y) > 0", "job", True, None),
    ("x > 1 and sum by (job) (y) > 0", "instance", False,
     "vector matching without `on (...)` pairs it only with right-side series of the same labels, which never "
     "have `instance` (`sum by (job)` drops `instance`)"),
    ("x > 1 and on (job) sum by (job) (y) > 0", "instance", None, None),  # the fix: `and on (job)`
    ("x and on (job, cluster) sum by (job) (y)", "cluster", False,
     "`on (job, cluster)` pairs it only with right-side series, which never have `cluster` (`sum by (job)` "
     "drops `cluster`)"),
    ("x unless sum by (job) (y)", "instance", None, None),  # unless keeps the unmatched ones
    ("x / ignoring (code) sum by (code, job) (y)", "job", True, None),
    ("x / ignoring (code) sum by (code, job) (y)", "pod", False,
     "`ignoring (code)` pairs it only with right-side series of the same other labels, which never have `pod` "
     "(`sum by (code, job)` drops `pod`)"),
    ('x / y{dimension=~"free|cached"}', "dimension", True, None),
    ("x * on (pod) group_left (node) sum by (pod, node) (y)", "pod", True, None),
    ("x * on (pod, cluster) group_left (node) sum by (pod, node) (y)", "cluster", False,
     "`on (pod, cluster)` pairs it only with right-side series, which never have `cluster` (`sum by (pod, node)` "
     "drops `cluster`)"),
    ("x * on (pod) group_left (node) sum by (pod, node) (y)", "instance", None, None),  # many side: its own
    ("x / on () group_left sum(y)", "instance", None, None),
    ("x or sum(y)", "instance", None, None),
])
def test_vector_matching_pairs_equal_labels(expr, label, carries, why):
    assert can_carry(expr, label) is carries
    assert dropped_by(expr, label) == why


@pytest.mark.parametrize("expr,label,carries,why", [
    ('up{instance=~""} == 0', "instance", False, 'the selector\'s matcher `instance=~""` selects series without `instance`'),
    ('up{instance!~".+"} == 0', "instance", False,
     'the selector\'s matcher `instance!~".+"` selects series without `instance`'),
    ('up{instance=~".*"} == 0', "instance", True, None),  # pinned, so counted as there
    ("a:b:c > 1", "team", False, 'in the recording rule a:b:c, the rule label `team: ""` deletes `team`'),
    ("a:b:c > 1", "tier", True, None),
])
def test_selector_and_rule_labels_that_delete(expr, label, carries, why):
    rr = {"a:b:c": [("sum by (job, team) (x)", {"team": "", "tier": "b"})]}
    assert can_carry(expr, label, rr) is carries
    assert dropped_by(expr, label, rr) == why


def test_recording_rule_cycle_is_unknown():
    rr = {"a:x:y": "sum by (job) (b:x:y)", "b:x:y": "sum by (pod) (a:x:y)"}
    assert can_carry("a:x:y > 1", "instance", rr) is None


def test_pinned_labels_follow_the_result():
    f = flow('sum by (cluster, code, verb) (increase(apiserver_request_total{code=~"2..", job="apiserver"}[1h]))')
    assert dict(f.pinned) == {"code": (("=~", "2.."),)}  # job is aggregated away
    assert flow("up{job='a'} / ignoring (job) x").pinned == {}
