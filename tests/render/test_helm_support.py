"""The Helm helpers of the tests (tests/helpers/helm.py) do what the tests rely on."""

from __future__ import annotations

import pytest
import yaml

from helpers.helm import crd_validator, strict_load_all


def test_strict_loader_rejects_duplicate_keys():
    with pytest.raises(yaml.YAMLError, match="duplicate key 'a'"):
        strict_load_all("x:\n  a: 1\n  a: 2\n")
    assert strict_load_all("---\nx: {a: 1}\n---\n") == [{"x": {"a": 1}}]


def test_crd_validator_checks_rule_shapes():
    v = crd_validator()
    ok = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {},
          "spec": {"groups": [{"name": "g", "rules": [{"alert": "A", "expr": "up", "for": "5m",
                                                       "labels": {"a": "b"}}]}]}}
    assert list(v.iter_errors(ok)) == []
    bad_for = yaml.safe_load(yaml.safe_dump(ok))
    bad_for["spec"]["groups"][0]["rules"][0]["for"] = "1.5m"
    bad_label = yaml.safe_load(yaml.safe_dump(ok))
    bad_label["spec"]["groups"][0]["rules"][0]["labels"] = {"a": True}
    assert [e.validator for e in v.iter_errors(bad_for)] == ["pattern"]
    assert [e.validator for e in v.iter_errors(bad_label)] == ["type"]
