"""Tests come along: ``rulegen import ... --tests FILE`` attaches promtool test groups to the
rules they exercise, and ``rulegen test`` runs them against what the generated chart renders.

The suite (``tests/fixtures/import_tests``) was written for rulegen after the Prometheus docs
("Unit testing for rules"); ``promtool test rules api.test.yml`` passes on the original rules.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main

from conftest import REPO

SUITE = REPO / "tests" / "fixtures" / "import_tests"


def _copy(tmp_path: Path) -> Path:
    for f in SUITE.iterdir():
        shutil.copy(f, tmp_path / f.name)
    return tmp_path


def _spec(root: Path) -> dict:
    return yaml.safe_load((root / "rules" / "api-rules.yaml").read_text(encoding="utf-8"))


@pytest.mark.tools
def test_suite_passes_on_the_original_rules(tmp_path, promtool_bin):
    import subprocess
    root = _copy(tmp_path)
    p = subprocess.run([str(promtool_bin), "test", "rules", "api.test.yml"], cwd=root, capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_groups_attached_to_the_rules_they_exercise(tmp_path, capsys):
    root = _copy(tmp_path)
    assert main(["-C", str(root), "import", "api.rules.yml", "--tests", "api.test.yml"]) == 0
    err = capsys.readouterr().err
    rules = {(r.get("alert") or r.get("record")): r for g in _spec(root)["groups"] for r in g["rules"]}
    # the group testing the recording rule and the alert reading it: under the first of them
    assert [t["name"] for t in rules["job:http_errors:rate5m"]["tests"]] == ["error rate"]
    # an unnamed group gets a derived name
    assert [t["name"] for t in rules["ApiTargetMissing"]["tests"]] == ["api test 1"]
    assert "tests" not in rules["ApiHighErrorRate"]
    assert rules["ApiTargetMissing"]["tests"][0]["alert_rule_test"][1]["exp_alerts"][0]["exp_labels"] == {
        "severity": "ticket", "job": "api", "instance": "a:80"}
    # the file's evaluation_interval has its place in the spec
    assert _spec(root)["promtool"] == {"evaluation_interval": "30s"}
    # a group that names no imported rule is reported, with what to do
    assert "api.test.yml:44:1: warning RG814 [up is up] test group `up is up` names no imported rule" in err
    assert "Add the `alertname`" in err


def test_group_reading_two_apps_is_reported(tmp_path, capsys):
    root = _copy(tmp_path)
    (root / "other.yml").write_text("groups:\n  - name: o\n    rules:\n      - alert: OtherDown\n"
                                    "        expr: up == 0\n        labels: {severity: page}\n", encoding="utf-8")
    (root / "two.test.yml").write_text(
        "tests:\n  - name: both\n    input_series: []\n    alert_rule_test:\n"
        "      - {eval_time: 1m, alertname: OtherDown}\n      - {eval_time: 1m, alertname: ApiTargetMissing}\n",
        encoding="utf-8")
    assert main(["-C", str(root), "import", "api.rules.yml", "other.yml", "--tests", "two.test.yml"]) == 0
    err = capsys.readouterr().err
    assert ("two.test.yml:2:1: warning RG814 [both] test group `both` reads rules of several apps "
            "(api-rules, other: OtherDown, ApiTargetMissing); not attached. Import those rules into one app "
            "(--app)") in err
    # the advice works: in one app, the group is attached
    shutil.rmtree(root / "rules")
    assert main(["-C", str(root), "import", "api.rules.yml", "other.yml", "--app", "api", "--tests",
                 "two.test.yml"]) == 0
    spec = yaml.safe_load((root / "rules" / "api.yaml").read_text(encoding="utf-8"))
    assert [(r.get("alert"), t["name"]) for g in spec["groups"] for r in g["rules"] for t in r.get("tests", [])] \
        == [("ApiTargetMissing", "both")]   # the first rule it exercises, in spec order


@pytest.mark.tools
def test_imported_suite_runs_green_under_rulegen_test(tmp_path, helm_bin, promtool_bin, capsys):
    root = _copy(tmp_path)
    assert main(["-C", str(root), "import", "api.rules.yml", "--tests", "api.test.yml"]) == 0
    assert main(["-C", str(root), "build"]) == 0
    test_file = next((root / "charts").rglob("*.test.yaml"), None) or next(root.rglob("*.test.yaml"))
    assert "evaluation_interval: 30s" in test_file.read_text(encoding="utf-8")
    capsys.readouterr()
    assert main(["-C", str(root), "test"]) == 0
    out = capsys.readouterr().out
    assert "2 test group(s) in 1 file(s), 2 passed, 0 failed" in out
    assert "coverage:" in out
