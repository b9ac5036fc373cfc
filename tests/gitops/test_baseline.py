"""The baseline (``.rulegen-baseline.yaml``, ``rulegen baseline``) and what ``rulegen import``
writes besides specs: conventions read from the rules, all-or-nothing writing."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rulegen.baseline import BASELINE_FILE
from rulegen.cli import main

from helpers.samples import RULES, TWO_SEVERITIES


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _entries(root: Path) -> list:
    return yaml.safe_load((root / BASELINE_FILE).read_text(encoding="utf-8"))["findings"]


def _imported(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "shop.rules.yml").write_text(RULES, encoding="utf-8")
    assert _run(tmp_path, "import", "src/shop.rules.yml") == 0
    return tmp_path / "rules" / "shop-rules.yaml"


def test_import_baselines_policy_findings_and_validates(tmp_path, capsys):
    spec = _imported(tmp_path)
    out = capsys.readouterr().out
    assert "2 policy finding(s) of the imported rules baselined (RG504 2)" in out
    assert _entries(tmp_path) == [{"app": "shop-rules", "rule": "ShopDown", "code": "RG504", "message": "critical alert has no runbook content"},
                                  {"app": "shop-rules", "rule": "ShopSlow", "code": "RG504", "message": "critical alert has no runbook content"}]
    assert spec.is_file()
    assert _run(tmp_path, "validate") == 0
    out = capsys.readouterr().out
    assert out.count("warning RG504") == 2 and "(baselined in .rulegen-baseline.yaml)" in out


def test_new_critical_alert_without_runbook_fails(tmp_path, capsys):
    spec = _imported(tmp_path)
    spec.write_text(spec.read_text(encoding="utf-8") + (
        "      - alert: ShopCheckoutFailing\n        expr: rate(checkout_errors_total[5m]) > 0\n"
        "        severity: critical\n        summary: Checkout fails\n        description: Errors.\n"), encoding="utf-8")
    capsys.readouterr()
    assert _run(tmp_path, "validate") == 1
    out = capsys.readouterr().out
    assert "error RG504 [ShopCheckoutFailing]" in out
    assert "warning RG504 [ShopDown]" in out


def test_entries_survive_unrelated_edits(tmp_path, capsys):
    """Keyed by app, rule and code, not lines: moving the alert keeps it baselined."""
    spec = _imported(tmp_path)
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("groups:\n", "# a comment added above\n\ngroups:\n", 1), encoding="utf-8")
    assert _run(tmp_path, "validate") == 0


def test_fixed_finding_leaves_and_stale_entry_fails_check(tmp_path, capsys):
    spec = _imported(tmp_path)
    assert _run(tmp_path, "build") == 0
    assert _run(tmp_path, "check") == 0
    before = (tmp_path / BASELINE_FILE).read_text(encoding="utf-8")
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace(
        "        for: 5m\n",
        "        for: 5m\n        runbook:\n          resolution:\n            - Restart the shop deployment.\n", 1),
        encoding="utf-8")
    assert _run(tmp_path, "build") == 0          # a stale entry is a warning for build
    capsys.readouterr()
    assert _run(tmp_path, "check") == 1          # ... and fails check, so the baseline only shrinks
    out = capsys.readouterr().out
    assert "error RG811 [ShopDown] RG504 on shop-rules/ShopDown (critical alert has no runbook content) is no " \
           "longer found" in out
    assert f"{BASELINE_FILE}:7:1:" in out       # at the entry's line
    assert _run(tmp_path, "baseline") == 0
    after = (tmp_path / BASELINE_FILE).read_text(encoding="utf-8")
    assert len(after) < len(before)
    assert _entries(tmp_path) == [{"app": "shop-rules", "rule": "ShopSlow", "code": "RG504", "message": "critical alert has no runbook content"}]
    assert _run(tmp_path, "check") == 0


def test_baseline_does_not_grow_without_add(tmp_path, capsys):
    spec = _imported(tmp_path)
    spec.write_text(spec.read_text(encoding="utf-8") + (
        "      - alert: ShopCartLost\n        expr: up == 0\n        severity: critical\n"
        "        summary: x\n        description: why\n"), encoding="utf-8")
    capsys.readouterr()
    assert _run(tmp_path, "baseline") == 0
    assert "1 policy error(s) not in the baseline stay errors" in capsys.readouterr().out
    assert len(_entries(tmp_path)) == 2
    assert _run(tmp_path, "validate") == 1
    assert _run(tmp_path, "baseline", "--add") == 0
    assert {"app": "shop-rules", "rule": "ShopCartLost", "code": "RG504", "message": "critical alert has no runbook content"} in _entries(tmp_path)
    assert _run(tmp_path, "validate") == 0


def test_import_reads_the_teams_conventions(tmp_path, capsys):
    """Severities page/ticket/none used throughout, no summary anywhere: the team's
    conventions, written into .rulegen.yaml (and said), not 2 findings per alert."""
    (tmp_path / "team.yml").write_text(
        "groups:\n  - name: team\n    rules:\n"
        + "".join(f"      - alert: Team{i}\n        expr: up == {i}\n        labels:\n          severity: {s}\n"
                  f"        annotations:\n          description: d{i}\n"
                  for i, s in enumerate(["page", "ticket", "ticket", "none"])), encoding="utf-8")
    assert _run(tmp_path, "import", "team.yml") == 0
    out = capsys.readouterr().out
    assert ".rulegen.yaml: the imported alerts use the severities ticket, none, page" in out
    assert "require_runbook_for (critical) names none of them" in out
    assert ".rulegen.yaml: none of the 4 imported alerts has a summary: conventions.require_summary: false" in out
    conf = yaml.safe_load((tmp_path / ".rulegen.yaml").read_text(encoding="utf-8"))
    assert conf["conventions"] == {"severities": ["ticket", "none", "page"], "require_summary": False}
    assert not (tmp_path / BASELINE_FILE).exists()      # nothing left to baseline
    assert _run(tmp_path, "validate") == 0
    assert "RG501" not in capsys.readouterr().out


def test_import_keeps_stated_conventions(tmp_path, capsys):
    (tmp_path / ".rulegen.yaml").write_text("# ours\nconventions:\n  severities: [critical, warning]\n",
                                           encoding="utf-8")
    (tmp_path / "team.yml").write_text(
        "groups:\n  - name: team\n    rules:\n      - alert: Team\n        expr: up == 0\n        labels:\n"
        "          severity: page\n        annotations:\n          summary: s\n          description: d\n",
        encoding="utf-8")
    assert _run(tmp_path, "import", "team.yml") == 0
    assert (tmp_path / ".rulegen.yaml").read_text(encoding="utf-8").startswith("# ours\n")
    assert _entries(tmp_path) == [{"app": "team", "rule": "Team", "code": "RG501", "message":
                                   "severity 'page' is not one of the allowed values (conventions.severities in "
                                   ".rulegen.yaml)"}]


def test_import_writes_nothing_when_anything_is_wrong(tmp_path, capsys):
    """One rule Prometheus would reject: every problem named, exit 1, nothing written (not
    even the specs of the good files)."""
    (tmp_path / "good.yml").write_text(RULES, encoding="utf-8")
    (tmp_path / "bad.yml").write_text(
        "groups:\n  - name: b\n    rules:\n      - alert: B\n        expr: rate(x[5m]\n"
        "      - alert: C\n        expr: up == 0\n        for: 5 minutes\n", encoding="utf-8")
    assert _run(tmp_path, "import", "good.yml", "bad.yml") == 1
    err = capsys.readouterr().err
    assert "bad.yml:5:1: error RG806 [B]" in err and "bad.yml:8:1: error RG806 [C]" in err
    assert "nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.yml", "good.yml"]


def test_existing_spec_stops_the_whole_import(tmp_path, capsys):
    _imported(tmp_path)
    (tmp_path / "other.yml").write_text(RULES.replace("shop", "other").replace("Shop", "Other"), encoding="utf-8")
    before = {p: p.read_text() for p in (tmp_path / "rules").iterdir()}
    assert _run(tmp_path, "import", "src/shop.rules.yml", "other.yml") == 1
    assert "rules/shop-rules.yaml:1:1: error RG809" in capsys.readouterr().err
    assert not (tmp_path / "rules" / "other.yaml").exists()
    assert {p: p.read_text() for p in (tmp_path / "rules").iterdir()} == before


def test_app_merges_into_an_existing_spec(tmp_path, capsys):
    """One-by-one imports into one app (`--app`) add groups instead of stopping on RG809."""
    (tmp_path / "a.yml").write_text(RULES, encoding="utf-8")
    (tmp_path / "b.yml").write_text(RULES.replace("name: shop", "name: shop").replace("Shop", "Store"),
                                    encoding="utf-8")
    assert _run(tmp_path, "import", "a.yml", "--app", "shop") == 0
    assert _run(tmp_path, "import", "b.yml", "--app", "shop") == 0
    out = capsys.readouterr()
    assert "rules/shop.yaml: the imported groups were added to the existing spec (--app)" in out.out
    assert "group `shop` is already in the spec; the imported one is named `shop-2`" in out.err
    spec = yaml.safe_load((tmp_path / "rules" / "shop.yaml").read_text(encoding="utf-8"))
    assert [g["name"] for g in spec["groups"]] == ["shop", "shop-2"]
    assert [r["alert"] for g in spec["groups"] for r in g["rules"]] == ["ShopDown", "ShopSlow", "StoreDown", "StoreSlow"]
    assert {e["rule"] for e in _entries(tmp_path)} == {"ShopDown", "ShopSlow", "StoreDown", "StoreSlow"}
    assert _run(tmp_path, "validate") == 0


# entries keyed by the finding, not only by (app, rule, code) --------------------------------

SECOND = """\
  - name: shop-slow
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 30m
        severity: urgent
        summary: Shop is down for long
        description: No shop target is up for 30 minutes.
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "rules").mkdir()
    spec = tmp_path / "rules" / "shop.yaml"
    spec.write_text(TWO_SEVERITIES, encoding="utf-8")
    return spec


def test_new_finding_of_a_baselined_code_on_the_same_rule_is_reported(tmp_path, capsys):
    """ShopDown's severity `page` is baselined; a second ShopDown with severity `urgent` is
    another RG501 on the same rule and code, and stays an error."""
    spec = _project(tmp_path)
    assert _run(tmp_path, "baseline") == 0
    assert _entries(tmp_path) == [{"app": "shop", "rule": "ShopDown", "code": "RG501", "message":
                                   "severity 'page' is not one of the allowed values (conventions.severities in "
                                   ".rulegen.yaml)"}]
    assert _run(tmp_path, "validate") == 0
    spec.write_text(TWO_SEVERITIES + SECOND, encoding="utf-8")
    capsys.readouterr()
    assert _run(tmp_path, "validate") == 1
    out = capsys.readouterr().out
    assert "rules/shop.yaml:15:19: error RG501 [ShopDown] severity 'urgent' is not one of" in out
    assert "rules/shop.yaml:7:19: warning RG501 [ShopDown] severity 'page' is not one of critical, warning, info " \
           "(conventions.severities in .rulegen.yaml); use one of them (baselined in .rulegen-baseline.yaml)" in out


def test_entry_holds_when_lines_move_and_the_allowed_list_changes(tmp_path, capsys):
    spec = _project(tmp_path)
    assert _run(tmp_path, "baseline") == 0
    spec.write_text("# moved down\n\n" + TWO_SEVERITIES, encoding="utf-8")
    (tmp_path / ".rulegen.yaml").write_text("conventions:\n  severities: [critical, warning, info, ticket]\n",
                                            encoding="utf-8")
    capsys.readouterr()
    assert _run(tmp_path, "check") == 1                 # not built yet: but no RG811 and no RG501 error
    out = capsys.readouterr().out
    assert "RG811" not in out and "error RG501" not in out and "warning RG501 [ShopDown]" in out


def test_version_1_entries_are_read_and_rewritten(tmp_path, capsys):
    """A file written before entries had a message: its entry covers every RG501 of ShopDown
    (as it did), and `rulegen baseline` rewrites it as one entry per finding."""
    spec = _project(tmp_path)
    spec.write_text(TWO_SEVERITIES + SECOND, encoding="utf-8")
    (tmp_path / BASELINE_FILE).write_text(
        "version: 1\nfindings:\n  - {app: shop, rule: ShopDown, code: RG501}\n", encoding="utf-8")
    assert _run(tmp_path, "validate") == 0
    capsys.readouterr()
    assert _run(tmp_path, "baseline") == 0
    out = capsys.readouterr().out
    assert "rewrote 1 version 1 entry (app, rule and code) as 2 entries keyed by the finding's message" in out
    assert "removed RG501" not in out and "(0 removed, 0 added)" in out
    text = (tmp_path / BASELINE_FILE).read_text(encoding="utf-8")
    assert "version: 2\n" in text
    assert [e["message"] for e in _entries(tmp_path)] == [
        "severity 'page' is not one of the allowed values (conventions.severities in .rulegen.yaml)",
        "severity 'urgent' is not one of the allowed values (conventions.severities in .rulegen.yaml)"]
    assert _run(tmp_path, "validate") == 0
    assert _run(tmp_path, "baseline") == 0
    assert f"{BASELINE_FILE}: unchanged, 2 entries" in capsys.readouterr().out


def test_stale_version_1_entry_is_removed(tmp_path, capsys):
    _project(tmp_path)
    (tmp_path / BASELINE_FILE).write_text(
        "version: 1\nfindings:\n  - {app: shop, rule: ShopDown, code: RG504}\n", encoding="utf-8")
    assert _run(tmp_path, "validate") == 1           # RG501 not covered by an RG504 entry
    out = capsys.readouterr().out
    assert f"{BASELINE_FILE}:3:1: warning RG811 [ShopDown] RG504 on shop/ShopDown is no longer found" in out
    assert _run(tmp_path, "baseline") == 0
    assert "removed RG504 on shop/ShopDown: no longer found" in capsys.readouterr().out


@pytest.mark.parametrize("message, expected", [
    ("alert 'A' with the same labels is already defined at line 10; remove one",
     "alert 'A' with the same labels is already defined at line N"),
    ("like rules/a.yaml:12:3 and lines 4, 5 and 9", "like rules/a.yaml and lines N"),
    ("severity 'x' is not one of critical, warning (conventions.severities in .rulegen.yaml); use one of them",
     "severity 'x' is not one of the allowed values (conventions.severities in .rulegen.yaml)"),
    ("alert has no severity; add `severity:` with one of critical, warning, info", "alert has no severity"),
    ("critical alert has no runbook content; add runbook.causes (baselined in .rulegen-baseline.yaml)",
     "critical alert has no runbook content"),
])
def test_subject_leaves_out_what_changes_with_other_things(message, expected):
    from rulegen.baseline import subject
    assert subject(message) == expected


def test_old_and_new_entry_shapes_are_checked(tmp_path):
    from rulegen.baseline import load
    from rulegen.findings import RulegenError
    (tmp_path / BASELINE_FILE).write_text("version: 2\nfindings:\n  - {app: a, rule: R, code: RG504, x: 1}\n")
    with pytest.raises(RulegenError, match="RG812 findings\\[0\\] must have app, rule, code and message"):
        load(tmp_path)
    (tmp_path / BASELINE_FILE).write_text("version: 3\nfindings: []\n")
    with pytest.raises(RulegenError, match="RG812 must be a mapping with `version: 2`"):
        load(tmp_path)
