"""The baseline (``.rulegen-baseline.yaml``, ``rulegen baseline``) and what ``rulegen import``
writes besides specs: conventions read from the rules, all-or-nothing writing."""

from __future__ import annotations

from pathlib import Path

import yaml

from rulegen.baseline import BASELINE_FILE
from rulegen.cli import main

RULES = """\
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: Shop is down
          description: No shop target is up.
      - alert: ShopSlow
        expr: histogram_quantile(0.9, rate(http_request_duration_seconds_bucket{job="shop"}[5m])) > 1
        labels:
          severity: critical
        annotations:
          summary: Shop is slow
          description: p90 latency above 1s.
"""


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
    assert _entries(tmp_path) == [{"app": "shop-rules", "rule": "ShopDown", "code": "RG504"},
                                  {"app": "shop-rules", "rule": "ShopSlow", "code": "RG504"}]
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
    assert "error RG811 [ShopDown] RG504 on shop-rules/ShopDown is no longer found" in out
    assert f"{BASELINE_FILE}:7:1:" in out       # at the entry's line
    assert _run(tmp_path, "baseline") == 0
    after = (tmp_path / BASELINE_FILE).read_text(encoding="utf-8")
    assert len(after) < len(before)
    assert _entries(tmp_path) == [{"app": "shop-rules", "rule": "ShopSlow", "code": "RG504"}]
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
    assert {"app": "shop-rules", "rule": "ShopCartLost", "code": "RG504"} in _entries(tmp_path)
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
    assert _entries(tmp_path) == [{"app": "team", "rule": "Team", "code": "RG501"}]


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
