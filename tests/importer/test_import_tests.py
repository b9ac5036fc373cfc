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
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml

from helpers import FIXTURES, REPO

SUITE = FIXTURES / "import_tests"


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
    # one file per set of stated annotations (issue 14): the count of files is not the point
    assert "2 test group(s) in " in out and ", 2 passed, 0 failed" in out
    assert "coverage:" in out


# --- No invented links ----------------------------------------------------------------------------

LINKS = """\
groups:
  - name: g
    rules:
      - alert: HasNone
        expr: up == 0
        labels: {severity: warning}
        annotations: {summary: s, description: d}
      - alert: HasOwn
        expr: up == 1
        labels: {severity: warning}
        annotations: {summary: s, description: d, runbook_url: "https://wiki.example.org/HasOwn"}
"""


def _rendered_annotations(root: Path, app: str) -> dict:
    from rulegen.pipeline import load_project
    from rulegen.tools import helm
    spec = next(s for s in load_project(root).specs if s.app == app)
    r = helm.template(root / spec.chart.path, values=[values_yaml(gate_values(spec.chart.gates))], root=REPO)
    return {x["alert"]: x.get("annotations", {}) for g in r.rule_groups() for x in g["rules"]}


@pytest.mark.tools
def test_no_runbook_site_no_invented_link(tmp_path, helm_bin, capsys):
    (tmp_path / "l.yml").write_text(LINKS, encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "l.yml"]) == 0
    assert _spec_of(tmp_path, "l")["chart"] == {"runbook_url": False}
    assert main(["-C", str(tmp_path), "build"]) == 0
    ann = _rendered_annotations(tmp_path, "l")
    assert "runbook_url" not in ann["HasNone"]
    assert ann["HasOwn"]["runbook_url"] == "https://wiki.example.org/HasOwn"
    shipped = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "charts").rglob("*") if p.is_file())
    assert "example.com" not in shipped


@pytest.mark.tools
def test_runbook_site_gets_links_to_its_pages(tmp_path, helm_bin, capsys):
    (tmp_path / "mkdocs.yml").write_text("site_name: Runbooks\nsite_url: https://runbooks.acme.test/\n"
                                         "docs_dir: runbooks\n", encoding="utf-8")
    (tmp_path / "l.yml").write_text(LINKS, encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "l.yml"]) == 0
    assert "chart" not in _spec_of(tmp_path, "l")
    assert main(["-C", str(tmp_path), "build"]) == 0
    ann = _rendered_annotations(tmp_path, "l")
    assert ann["HasNone"]["runbook_url"] == "https://runbooks.acme.test/l/#hasnone"
    assert (tmp_path / "runbooks" / "l.md").is_file()


def _spec_of(root: Path, app: str) -> dict:
    return yaml.safe_load((root / "rules" / f"{app}.yaml").read_text(encoding="utf-8"))


_TYPED_RULES = """\
groups:
  - name: app
    rules:
      - alert: AppDown
        expr: up{job=`a\\`} == 0
        labels: {severity: page}
        annotations: {summary: down}
      - alert: AppIdle
        expr: up{job=`a\\`} > 1
        labels: {severity: ticket}
        annotations: {summary: idle}
"""
_TYPED_TEST = """\
tests:
  - interval: 1m
    external_labels:
      cluster_id: 12345
    input_series:
      - series: 'up{job="a\\\\", condition="true", quantile="0.990", id="0x1F"}'
        values: 0x3
    alert_rule_test:
      - eval_time: 1m
        alertname: AppDown
        exp_alerts:
          - exp_labels: {severity: page, job: 'a\\', condition: true, quantile: 0.990, id: 0x1F}
            exp_annotations:
              summary: down
      - eval_time: 1m
        alertname: AppIdle
        exp_alerts:
"""


def test_typed_values_and_empty_exp_alerts_import_as_promtool_reads_them(tmp_path, capsys):
    """promtool reads a test file with go-yaml v2 into Go strings: any scalar is its text as
    written; an empty ``exp_alerts:`` expects no alert. Import takes them the same way
    (quoted), with no note, and the spec validates."""
    (tmp_path / "app.rules.yml").write_text(_TYPED_RULES, encoding="utf-8")
    (tmp_path / "app.test.yml").write_text(_TYPED_TEST, encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "app.rules.yml", "--tests", "app.test.yml"]) == 0
    err = capsys.readouterr().err
    assert "RG813" not in err and "RG814" not in err
    text = (tmp_path / "rules" / "app-rules.yaml").read_text(encoding="utf-8")
    t = yaml.safe_load(text)["groups"][0]["rules"][0]["tests"][0]
    assert t["external_labels"] == {"cluster_id": "12345"}
    assert t["input_series"][0]["values"] == "0x3"
    assert t["alert_rule_test"][0]["exp_alerts"][0]["exp_labels"] == {
        "severity": "page", "job": "a\\", "condition": "true", "quantile": "0.990", "id": "0x1F"}
    assert t["alert_rule_test"][1]["exp_alerts"] == []
    assert 'condition: "true"' in text and 'quantile: "0.990"' in text
    assert main(["-C", str(tmp_path), "validate"]) == 0


def test_a_finding_on_an_attached_test_is_shown_in_the_test_file(tmp_path, capsys):
    """Bad input still fails, at the test file's line and column (it used to be shown at
    the rule the group is attached to, in the rules file)."""
    (tmp_path / "app.rules.yml").write_text(_TYPED_RULES, encoding="utf-8")
    bad = _TYPED_TEST.replace("id: 0x1F}", "id: 0x1F, bad-name: 1}")
    (tmp_path / "app.test.yml").write_text(bad, encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "app.rules.yml", "--tests", "app.test.yml"]) == 1
    err = capsys.readouterr().err
    col = bad.splitlines()[11].index("bad-name") + 1
    assert f"app.test.yml:12:{col}: error RG813 [AppDown]" in err
    assert "'bad-name' is no key name" in err
    assert "app.rules.yml:" not in err
    assert not (tmp_path / "rules").exists()


@pytest.mark.tools
def test_typed_values_run_green_like_promtool(tmp_path, promtool_bin, helm_bin):
    import subprocess
    (tmp_path / "app.rules.yml").write_text(_TYPED_RULES, encoding="utf-8")
    (tmp_path / "app.test.yml").write_text("rule_files: [app.rules.yml]\n" + _TYPED_TEST, encoding="utf-8")
    p = subprocess.run([str(promtool_bin), "test", "rules", "app.test.yml"], cwd=tmp_path, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert main(["-C", str(tmp_path), "import", "app.rules.yml", "--tests", "app.test.yml"]) == 0
    assert main(["-C", str(tmp_path), "build"]) == 0
    assert main(["-C", str(tmp_path), "test"]) == 0


def test_a_folder_holding_its_test_file_imports(tmp_path, capsys):
    """`rulegen import providers --tests providers/aws/x.test.yml` (the layout docs/import.md
    names): the test file beside the rules is skipped as a source with a note, not an RG801
    error that stopped the whole import; a rule-less YAML file that is no test file still is."""
    src = tmp_path / "src"
    src.mkdir()
    for f in SUITE.iterdir():
        shutil.copy(f, src / f.name)
    assert main(["-C", str(tmp_path), "import", "src", "--tests", "src/api.test.yml"]) == 0
    err = capsys.readouterr().err
    assert "src/api.test.yml:1:1: warning RG805 a promtool test file" in err and "RG801" not in err, err
    assert [t["name"] for t in _spec(tmp_path)["groups"][0]["rules"][0]["tests"]] == ["error rate"]
    (src / "other.yml").write_text("foo: [1]\n", encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "src", "--force"]) == 1
    assert "src/other.yml:1:1: error RG801 no rule groups found" in capsys.readouterr().err
