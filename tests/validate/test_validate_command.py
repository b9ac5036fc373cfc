"""`rulegen validate` end to end: exit codes, output formats, config errors, and the check
documentation (`rulegen checks`) covering every code the checks can emit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.spec import loader
from rulegen.validate.checks import REGISTRY

from helpers import REPO

GOOD = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        severity: warning
        summary: Demo is down.
        description: "{{ $labels.instance }} is down."
"""


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "demo.yaml").write_text(GOOD)
    return tmp_path


def run(root, *args, capsys):
    rc = main(["-C", str(root), "validate", *args])
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_clean_exit_0(proj, capsys):
    rc, out, _ = run(proj, capsys=capsys)
    assert rc == 0
    assert out.strip() == "1 spec(s), 1 rule(s): no findings"


def test_errors_exit_1_text(proj, capsys):
    (proj / "rules" / "demo.yaml").write_text(GOOD.replace("$labels", "$label"))
    rc, out, _ = run(proj, capsys=capsys)
    assert rc == 1
    first, count = out.strip().splitlines()
    assert first.startswith("rules/demo.yaml:9:26: error RG306 [DemoDown] annotation template uses "
                            "undefined variable $label; did you mean $labels?")
    assert count == "1 error(s), 0 warning(s)"


def test_warnings_only_exit_0(proj, capsys):
    (proj / "rules" / "demo.yaml").write_text(GOOD.replace("alert: DemoDown", "alert: " + "D" * 41))
    rc, out, _ = run(proj, capsys=capsys)
    assert rc == 0
    assert "warning RG402" in out


def test_json_output(proj, capsys):
    (proj / "rules" / "demo.yaml").write_text(GOOD.replace("severity: warning", "severity: page"))
    rc, out, _ = run(proj, "-o", "json", capsys=capsys)
    assert rc == 1
    doc = json.loads(out)
    assert doc["errors"] == 1 and doc["warnings"] == 0
    assert doc["findings"] == [{
        "file": "rules/demo.yaml", "line": 7, "col": 19, "code": "RG501", "severity": "error",
        "rule": "DemoDown",
        "message": "severity 'page' is not one of critical, warning, info (conventions.severities in .rulegen.yaml); use one of them",
    }]


def test_github_output(proj, capsys):
    (proj / "rules" / "demo.yaml").write_text(GOOD + "        labels: {paging: off}\n")
    rc, out, _ = run(proj, "-o", "github", capsys=capsys)
    assert rc == 1
    assert out.startswith("::error file=rules/demo.yaml,line=10,col=26,title=RG108::RG108 [DemoDown] ")


def test_config_switches_codes(proj, capsys):
    (proj / "rules" / "demo.yaml").write_text(GOOD.replace("severity: warning", "severity: page"))
    (proj / ".rulegen.yaml").write_text("conventions:\n  severities: [page]\n")
    assert run(proj, capsys=capsys)[0] == 0
    (proj / ".rulegen.yaml").write_text("checks:\n  disable: [RG501]\n")
    assert run(proj, capsys=capsys)[0] == 0
    (proj / ".rulegen.yaml").write_text("checks:\n  severity: {RG501: warning}\n")
    rc, out, _ = run(proj, capsys=capsys)
    assert rc == 0 and "warning RG501" in out


@pytest.mark.parametrize("config,message", [
    ("checks: {disable: RG501}\n", "checks.disable must be a list of strings"),
    ("checks: {disabled: [RG501]}\n", "unknown key(s) checks.disabled"),
    ("conventions: {require_summary: maybe}\n", "conventions.require_summary must be true or false"),
    ("checks: {severity: {RG501: fatal}}\n", "checks.severity.RG501: use error or warning"),
    ("duplicate_alert_across_apps: info\n", "duplicate_alert_across_apps: use error or warning"),
    ("checks: {disable: [501]}\n", "checks.disable must be a list of strings"),
    ("checks: {disable: [X501]}\n", "'X501' is not a check code"),
    ("[a\n", "not valid YAML"),
])
def test_bad_config_exit_2(proj, capsys, config, message):
    (proj / ".rulegen.yaml").write_text(config)
    rc, _, err = run(proj, capsys=capsys)
    assert rc == 2
    assert message in err


def test_missing_path_exit_2(proj, capsys):
    rc, _, err = run(proj, "rules/nope.yaml", capsys=capsys)
    assert rc == 2
    assert "no such file or folder" in err


def test_bundled_specs_have_no_errors(capsys):
    root = REPO
    rc, out, _ = run(root, "-o", "json", capsys=capsys)
    doc = json.loads(out)
    assert doc["errors"] == 0, doc
    assert rc == 0


def _emitted_codes() -> set[str]:
    pkg = Path(loader.__file__).resolve().parents[1]
    files = [pkg / "spec" / "loader.py", *(Path(m.__file__) for m in REGISTRY)]
    codes = set()
    for f in files:
        src = f.read_text()
        body = src.split('"""', 2)[2] if src.startswith('"""') else src
        codes |= set(re.findall(r'"(RG\d{3})"', body))
    return codes


def test_every_emitted_code_is_documented(capsys):
    assert main(["checks"]) == 0
    doc = capsys.readouterr().out
    documented = set(re.findall(r"^(RG\d{3}) \((?:error|warning)\)$", doc, re.M))
    missing = _emitted_codes() - documented
    assert missing == set()
    for mod in REGISTRY:
        assert mod.ID and (mod.__doc__ or "").strip()


def test_garbage_collector_is_off_during_a_command_and_back_after(proj, capsys, monkeypatch):
    import gc

    from rulegen.commands import validate
    seen = []

    def spy(args):
        seen.append(gc.isenabled())
        raise KeyboardInterrupt

    monkeypatch.setattr(validate, "run", spy)
    assert gc.isenabled()
    code = main(["-C", str(proj), "validate"])
    assert gc.isenabled()  # restored for a library caller (and this test process)
    assert seen == [False] and code == 2  # the command ran with the collector off
    monkeypatch.undo()
    assert main(["-C", str(proj), "validate"]) in (0, 1) and gc.isenabled()
    gc.disable()
    try:
        main(["-C", str(proj), "validate"])
        assert not gc.isenabled()  # a caller that had it off keeps it off
    finally:
        gc.enable()


def test_checks_documents_the_output_and_link_codes_too(capsys):
    # regression: `rulegen checks` stopped at RG607, though build and check report RG7xx
    assert main(["checks"]) == 0
    out = capsys.readouterr().out
    for code in ["RG701", "RG720"] + [f"RG71{i}" for i in range(9)]:
        assert re.search(rf"^{code} \((error|warning)\)$", out, re.M), code
    assert "`for: 5` (a number)" not in out  # it is RG302, not RG202


RECORDS = """\
app: shared
groups:
  - name: shared
    rules:
      - record: job:http_errors:rate5m
        expr: sum by (job) (rate(http_errors_total[5m]))
      - alert: SharedBroken
        expr: job:http_error:rate5m > 1
        severity: warning
        summary: s
        description: d
"""
READS = """\
app: api
groups:
  - name: api
    rules:
      - alert: ApiErrors
        expr: {expr} > 1
        severity: warning
        summary: "Errors of {{{{ $labels.job }}}}"
        description: d
        runbook:
          related: [{{alert: SharedBroken}}]
"""


def test_a_subset_still_knows_the_other_specs_recording_rules(tmp_path, capsys):
    """Regression (review): `rulegen validate rules/api.yaml` reported RG314 (unknown recording
    rule) for a rule recorded in rules/shared.yaml, and RG420 for its related alert; the other
    specs are loaded for cross-references, and only the files asked for are reported on."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "shared.yaml").write_text(RECORDS)  # RG314 error of its own (a typo)
    (tmp_path / "rules" / "api.yaml").write_text(READS.format(expr="job:http_errors:rate5m"))
    rc, out, _ = run(tmp_path, "rules/api.yaml", "-o", "json", capsys=capsys)
    assert (rc, json.loads(out)["findings"]) == (0, [])
    # the whole project: shared.yaml's own typo is reported there
    rc, out, _ = run(tmp_path, "-o", "json", capsys=capsys)
    assert rc == 1
    assert [(f["code"], f["file"]) for f in json.loads(out)["findings"]] == [("RG314", "rules/shared.yaml")]
    # a name no spec records is still RG314 in the subset, with the other spec's name suggested
    (tmp_path / "rules" / "api.yaml").write_text(READS.format(expr="job:http_erors:rate5m"))
    rc, out, _ = run(tmp_path, "rules/api.yaml", "-o", "json", capsys=capsys)
    found = json.loads(out)["findings"]
    assert rc == 1
    assert [(f["code"], f["file"], f["severity"]) for f in found] == [("RG314", "rules/api.yaml", "error")]
    assert found[0]["message"].endswith("did you mean job:http_errors:rate5m?")
