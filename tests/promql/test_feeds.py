"""Which test series feed an expression (rulegen.promql.feeds)."""

from __future__ import annotations

import pytest

from rulegen.promql.feeds import _typo, missed_by_mistake, series_feed

RR = {
    "instance:foo:rate5m": "sum by (instance) (rate(foo_total[5m]))",
    "job:foo:rate5m": "sum by (job) (instance:foo:rate5m)",  # nested: reads another recording rule
    "cluster:up:count": [("count by (cluster) (up)", {}), ("count by (cluster) (up)", {"tier": "b"})],
}


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
    assert missed_by_mistake('sum(rate(http_requests_total{job="api"}[5m])) > 1', series) == why


@pytest.mark.parametrize("a,b,typo", [
    ("api", "apx", True), ("api", "pai", True), ("api", "apis", True), ("job", "jbo", True),
    ("True", "False", False), ("a", "b", False), ("api", "api", False), ("prod", "staging", False),
])
def test_typo(a, b, typo):
    assert _typo(a, b) is typo
