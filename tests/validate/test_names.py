"""Names (RG401-RG406) at exact positions."""

from __future__ import annotations

import pytest

from rulegen.validate import validate_texts
from rulegen.validate.checks.names import is_level_metric_operations, is_recorded_name


def run(text):
    res = validate_texts({"a.yaml": text})
    return [(f.code, f.line, f.col) for f in res.findings], res


def spec(alert="DemoDown", record="job:up:sum", group="demo", labels="{team: ai}"):
    return f"""\
app: demo
labels: {labels}
groups:
  - name: {group}
    rules:
      - alert: {alert}
        expr: up == 0
        severity: warning
        summary: Demo is down.
        description: Demo is down.
      - record: {record}
        expr: sum by (job) (up)
"""


def test_good_names_pass():
    assert run(spec())[0] == []


def test_alert_not_camel_case():
    found, res = run(spec(alert="demo_down"))
    assert found == [("RG401", 6, 16)]
    assert "e.g. DemoDown" in res.findings[0].message
    assert res.findings[0].rule == "demo_down"
    assert not res.findings[0].is_error  # a convention: Prometheus accepts the name
    assert res.ok


def test_lower_camel_upstream_alert_name_is_only_a_warning():
    # regression: etcd's mixin names alerts etcdMembersDown; that was an RG401 error
    found, res = run(spec(alert="etcdMembersDown"))
    assert found == [("RG401", 6, 16)]
    assert res.findings[0].message == ("alert name 'etcdMembersDown' is not CamelCase ([A-Z][A-Za-z0-9]*); "
                                       "rename it, e.g. EtcdMembersDown")
    assert res.ok


def test_alert_name_too_long_is_a_warning():
    name = "Demo" + "X" * 37  # 41 characters
    found, res = run(spec(alert=name))
    assert found == [("RG402", 6, 16)]
    assert not res.findings[0].is_error
    assert run(spec(alert="Demo" + "X" * 36))[0] == []  # exactly 40


def test_record_not_a_metric_name():
    found, _ = run(spec(record="job:http-requests:rate5m"))
    assert found == [("RG403", 11, 17)]


@pytest.mark.parametrize("record", ["http_requests_rate5m", ":", "::"])
def test_record_not_level_metric_operations(record):
    found, res = run(spec(record=record if record.isidentifier() else f'"{record}"'))
    assert found == [("RG404", 11, 17)]
    assert res.findings[0].severity.value == "warning" and res.ok


@pytest.mark.parametrize("record", [
    # regression: kube-prometheus, Mimir and Loki recording rules that Prometheus accepts were errors
    "count:up1", '":node_memory_MemAvailable_bytes:sum"', '"node_namespace_pod:kube_pod_info:"',
    "cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests",
    "cluster_job:loki_request_duration_seconds:99quantile", "cluster:cortex_ingester_samples:50quantile",
    "apiserver_request:burnrate1d", "job:http_requests", "job::rate5m", "a:b:c:d",
])
def test_upstream_recording_rule_names_pass(record):
    assert run(spec(record=record))[0] == []


def test_reserved_label_name_at_the_key():
    found, res = run(spec(labels="{__team: ai}"))
    assert found == [("RG405", 2, 10)]
    assert "rename it to 'team'" in res.findings[0].message


def test_invalid_label_name_is_the_schema_rg204():
    found, _ = run(spec(labels="{team-name: ai}"))
    assert found == [("RG204", 2, 10)]  # at the key, as RG405 (was 2:9, the flow mapping's `{`)


def test_blank_group_name():
    found, _ = run(spec(group='" "'))
    assert found == [("RG406", 4, 11)]


@pytest.mark.parametrize("name,ok", [
    ("job:http_requests:rate5m", True), ("instance_path:requests:rate5m", True),
    ("path:request_failures_per_requests:ratio_rate5m", True),
    ("job:up", False), ("up", False), ("a:b:c:d", False), ("a::c", False),
])
def test_is_level_metric_operations(name, ok):
    assert is_level_metric_operations(name) is ok


@pytest.mark.parametrize("name,ok", [
    ("job:up", True), (":up:sum", True), ("a:b:c:d", True), ("x:99quantile", True), ("up", False),
    (":", False), ("::", False),
])
def test_is_recorded_name(name, ok):
    assert is_recorded_name(name) is ok
