"""Issue 23, class 7: policy changes must not slip through review.

A pull request that baselines its own new error, switches a check off or weakens a convention
made ``rulegen check`` pass, and ``rulegen diff`` did not mention it. Each test builds a
scratch Git repository (the base branch, tag ``base``), makes the pull request's change in
the working tree and runs rulegen on it: ``diff`` names every such change with the findings
it hides, and ``check --base base`` fails on it when the base branch's ``.rulegen.yaml`` says
so (or says nothing), whatever the pull request's own ``.rulegen.yaml`` says."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from rulegen.baseline import BASELINE_FILE
from rulegen.cli import main

SPEC = """\
app: shop
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 5m
        severity: warning
        summary: shop is down.
        description: shop has been down for 5 minutes.
"""

#: The pull request's new alert: critical, without runbook content (RG504, a policy error).
NEW_ALERT = """\
      - alert: ShopBroken
        expr: up{job="shop"} == 0
        for: 10m
        severity: critical
        summary: shop is broken.
        description: shop has been broken for 10 minutes.
"""

RUNBOOK = """\
        runbook:
          causes: [the shop process crashed]
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          cwd=root, check=True, capture_output=True, text=True).stdout


def run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def make_repo(tmp_path: Path, config: str | None, spec: str = SPEC, build: bool = False,
              baseline_add: bool = False) -> Path:
    """A Git repo holding ``spec`` (and ``config`` as .rulegen.yaml), committed and tagged
    ``base``; ``build``: the generated files too (for ``check``); ``baseline_add``: the
    baseline of the spec's policy errors too."""
    root = tmp_path / "repo"
    (root / "rules").mkdir(parents=True)
    (root / "rules" / "shop.yaml").write_text(spec, encoding="utf-8")
    if config is not None:
        (root / ".rulegen.yaml").write_text(config, encoding="utf-8")
    if baseline_add:
        assert run(root, "baseline", "--add") == 0
    if build:
        assert run(root, "build") == 0
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "tag", "base")
    return root


def add_alert(root: Path, text: str = NEW_ALERT, build: bool = False) -> None:
    spec = root / "rules" / "shop.yaml"
    spec.write_text(spec.read_text(encoding="utf-8") + text, encoding="utf-8")
    if build:
        assert run(root, "build") == 0


def out_of(capsys) -> str:
    captured = capsys.readouterr()
    return captured.out + captured.err


# --- diff ------------------------------------------------------------------------------------

def test_diff_names_a_grown_baseline_and_the_error_it_hides(tmp_path, capsys):
    root = make_repo(tmp_path, None)
    add_alert(root)
    assert run(root, "validate") == 1
    where = re.search(r"^(rules/shop\.yaml:\d+:\d+): error RG504 \[ShopBroken\]", out_of(capsys), re.M).group(1)
    assert run(root, "baseline", "--add") == 0
    assert run(root, "validate") == 0           # the baseline hides the new error from validate ...
    capsys.readouterr()
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    # ... and diff puts it right under the headline, with the finding it hides
    assert lines[1] == ("POLICY CHANGES: 1 change(s) of the baseline or the check configuration, "
                        "1 of them weaken what rulegen checks")
    assert lines[2] == ("! RG820 .rulegen-baseline.yaml:7: baseline entry added: RG504 on shop/ShopBroken "
                        "(critical alert has no runbook content)")
    assert lines[3] == f"    hides {where} RG504 ShopBroken: critical alert has no runbook content"
    assert "+ alert ShopBroken (shop)" in text

    assert run(root, "diff", "--base", "base", "-o", "markdown") == 0
    md = capsys.readouterr().out
    section = md.index("#### :warning: Policy changes since `base`")
    assert section < md.index("**alerts: 1 added")          # above the alert changes
    row = next(line for line in md.splitlines() if line.startswith("| **weakens** (RG820)"))
    assert row == ("| **weakens** (RG820) | `baseline entry added: RG504 on shop/ShopBroken (critical alert has "
                   "no runbook content)` | `.rulegen-baseline.yaml:7` | "
                   f"`{where} RG504 ShopBroken: critical alert has no runbook content` |")


def test_diff_names_config_changes_with_the_findings_they_hide(tmp_path, capsys):
    root = make_repo(tmp_path, "conventions:\n  require_triage: {critical: [impact]}\n")
    add_alert(root)
    (root / ".rulegen.yaml").write_text(
        "checks:\n  disable: [RG504]\n  severity: {RG301: warning}\n"
        "conventions:\n  require_triage: {}\n  severities: [critical, warning, info, page]\n", encoding="utf-8")
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    policy = text.split("\n+ alert", 1)[0].splitlines()[1:]
    assert policy[0] == ("POLICY CHANGES: 4 change(s) of the baseline or the check configuration, "
                         "4 of them weaken what rulegen checks")
    assert "! RG821 .rulegen.yaml:2: check RG504 switched off (checks.disable)" in policy
    hidden_504 = policy[policy.index("! RG821 .rulegen.yaml:2: check RG504 switched off (checks.disable)") + 1]
    assert re.fullmatch(r"    hides rules/shop\.yaml:\d+:\d+ RG504 ShopBroken: critical alert has no runbook content",
                        hidden_504)
    assert "! RG822 .rulegen.yaml:3: check RG301 lowered from error to warning (checks.severity)" in policy
    assert ("! RG823 .rulegen.yaml:6: conventions.severities: [critical, warning, info] -> "
            "[critical, warning, info, page]") in policy
    i = policy.index("! RG823 .rulegen.yaml:5: conventions.require_triage.critical: [impact] -> []")
    assert re.fullmatch(r"    hides rules/shop\.yaml:\d+:\d+ RG510 ShopBroken: critical alert has no runbook\.impact "
                        r"\(conventions\.require_triage\)", policy[i + 1])


def test_diff_without_policy_change_has_no_policy_section(tmp_path, capsys):
    root = make_repo(tmp_path, "checks:\n  disable: [RG402]\n")
    add_alert(root, NEW_ALERT + RUNBOOK)
    assert run(root, "diff", "--base", "base") == 0
    assert "POLICY" not in capsys.readouterr().out
    assert run(root, "diff", "--base", "base", "-o", "markdown") == 0
    assert "Policy changes" not in capsys.readouterr().out


def test_diff_lists_a_shrunk_baseline_as_tightening(tmp_path, capsys):
    root = make_repo(tmp_path, None, SPEC + NEW_ALERT, baseline_add=True)
    edit = root / "rules" / "shop.yaml"
    edit.write_text(edit.read_text(encoding="utf-8") + RUNBOOK, encoding="utf-8")
    assert run(root, "baseline") == 0
    capsys.readouterr()
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    assert ("POLICY CHANGES: 1 change(s) of the baseline or the check configuration\n"
            ". .rulegen-baseline.yaml: baseline entry removed: RG504 on shop/ShopBroken "
            "(critical alert has no runbook content)\n") in text
    assert "!" not in text


def test_hostile_entry_text_stays_text_in_the_comment_and_the_terminal(tmp_path, capsys):
    """Names and messages in the baseline come from the pull request: in the Markdown they
    stay inside code spans (no live HTML, no table break), in the terminal no ESC."""
    root = make_repo(tmp_path, None)
    evil = "x | <img src=x onerror=alert(1)> `code` \x1b[2J\nfake line"
    (root / BASELINE_FILE).write_text(yaml.safe_dump({"version": 2, "findings": [
        {"app": "shop", "rule": "ShopDown", "code": "RG504", "message": evil}]}), encoding="utf-8")
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    assert "\x1b" not in text and "\nfake line" not in text
    assert run(root, "diff", "--base", "base", "-o", "markdown") == 0
    md = capsys.readouterr().out
    row = next(line for line in md.splitlines() if line.startswith("| **weakens** (RG820)"))
    cells = re.split(r"(?<!\\)\|", row)[1:-1]
    assert len(cells) == 4                        # the pipe in the message did not add a column
    assert re.sub(r"`[^`]*`", "", cells[1]).strip() == ""   # everything of it inside code spans
    assert "'code'" in cells[1] and "\x1b" not in md


# --- check --base ------------------------------------------------------------------------------

@pytest.mark.parametrize("config", ["policy_changes: fail\n", None], ids=["base-says-fail", "base-says-nothing"])
def test_check_base_fails_on_a_baseline_that_grew(tmp_path, capsys, config):
    root = make_repo(tmp_path, config, build=True)
    add_alert(root)
    assert run(root, "baseline", "--add") == 0
    assert run(root, "build") == 0
    capsys.readouterr()
    assert run(root, "check") == 0             # the hole: check alone passes
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 1
    out = capsys.readouterr().out
    assert re.search(r"^\.rulegen-baseline\.yaml:7:1: error RG820 policy change since base: baseline entry added: "
                     r"RG504 on shop/ShopBroken \(critical alert has no runbook content\); it hides 1 finding\(s\): "
                     r"rules/shop\.yaml:\d+:\d+ RG504 ShopBroken: critical alert has no runbook content "
                     r"\(policy_changes: fail at base; ", out, re.M), out
    assert "check: 1 policy change(s) since base weaken what rulegen checks" in out


def test_check_base_warns_when_the_base_says_warn_and_the_flag_forces_it(tmp_path, capsys):
    root = make_repo(tmp_path, "policy_changes: warn\n", build=True)
    add_alert(root)
    assert run(root, "baseline", "--add") == 0
    assert run(root, "build") == 0
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 0
    out = capsys.readouterr().out
    assert re.search(r"^\.rulegen-baseline\.yaml:7:1: warning RG820 ", out, re.M), out
    assert "reported only, as base's .rulegen.yaml says policy_changes: warn" in out
    assert run(root, "check", "--base", "base", "--fail-on-policy-changes") == 1
    out = capsys.readouterr().out
    assert re.search(r"^\.rulegen-baseline\.yaml:7:1: error RG820 .*\(--fail-on-policy-changes; ", out, re.M), out


def test_check_base_passes_when_the_baseline_shrinks(tmp_path, capsys):
    root = make_repo(tmp_path, "policy_changes: fail\n", SPEC + NEW_ALERT, build=True, baseline_add=True)
    assert yaml.safe_load((root / BASELINE_FILE).read_text(encoding="utf-8"))["findings"]   # one entry at base
    spec = root / "rules" / "shop.yaml"
    spec.write_text(spec.read_text(encoding="utf-8") + RUNBOOK, encoding="utf-8")
    assert run(root, "baseline") == 0
    assert run(root, "build") == 0
    capsys.readouterr()
    assert run(root, "check", "--base", "base", "--fail-on-policy-changes") == 0
    out = capsys.readouterr().out
    assert "RG82" not in out and "policy change" not in out


def test_check_base_passes_when_a_check_is_switched_on_again(tmp_path, capsys):
    root = make_repo(tmp_path, "checks:\n  disable: [RG504]\n  severity: {RG404: warning}\n", build=True)
    (root / ".rulegen.yaml").write_text("checks:\n  severity: {RG404: error}\n", encoding="utf-8")
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 0
    assert "RG82" not in capsys.readouterr().out
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    assert ". .rulegen.yaml: check RG504 switched on again (checks.disable)" in text
    assert ". .rulegen.yaml: check RG404 raised from warning to error (checks.severity)" in text


@pytest.mark.parametrize("pr_policy", ["", "policy_changes: warn\n"], ids=["key-removed", "set-to-warn"])
def test_the_base_config_governs_not_the_pull_requests(tmp_path, capsys, pr_policy):
    """The pull request disables RG504 for its new alert and drops (or relaxes) the strict
    setting in the same change: the base branch's setting still decides."""
    root = make_repo(tmp_path, "policy_changes: fail\n", build=True)
    add_alert(root, build=False)
    (root / ".rulegen.yaml").write_text("checks:\n  disable: [RG504]\n" + pr_policy, encoding="utf-8")
    assert run(root, "build") == 0
    capsys.readouterr()
    assert run(root, "check") == 0             # the hole: check alone passes
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 1
    out = capsys.readouterr().out
    assert re.search(r"^\.rulegen\.yaml:2:1: error RG821 policy change since base: check RG504 switched off "
                     r"\(checks\.disable\); it hides 1 finding\(s\): rules/shop\.yaml:\d+:\d+ RG504 ShopBroken: "
                     r"critical alert has no runbook content \(policy_changes: fail at base; ", out, re.M), out
    if pr_policy:
        assert re.search(r"^\.rulegen\.yaml:3:1: error RG823 policy change since base: policy_changes: fail -> warn",
                         out, re.M), out


def test_weakened_severity_and_convention_fail_with_their_codes(tmp_path, capsys):
    root = make_repo(tmp_path, None, build=True)
    add_alert(root)
    (root / ".rulegen.yaml").write_text(
        "checks:\n  severity: {RG504: warning}\nconventions:\n  require_runbook_for: []\n", encoding="utf-8")
    assert run(root, "build") == 0
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 1
    out = capsys.readouterr().out
    assert re.search(r"^\.rulegen\.yaml:2:1: error RG822 policy change since base: check RG504 lowered from error "
                     r"to warning \(checks\.severity\); it hides 1 finding\(s\): rules/shop\.yaml:\d+:\d+ RG504 ",
                     out, re.M), out
    assert re.search(r"^\.rulegen\.yaml:4:1: error RG823 policy change since base: conventions\.require_runbook_for: "
                     r"\[critical\] -> \[\]; it hides 1 finding\(s\): rules/shop\.yaml:\d+:\d+ RG504 ", out, re.M), out


def test_a_version_1_entry_replacing_a_version_2_one_is_growth(tmp_path, capsys):
    """An entry without message covers every finding of its code on the rule: wider."""
    root = make_repo(tmp_path, None, SPEC + NEW_ALERT, baseline_add=True)
    (root / BASELINE_FILE).write_text("version: 2\nfindings:\n  - {app: shop, rule: ShopBroken, code: RG504}\n",
                                      encoding="utf-8")
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    assert ("! RG820 .rulegen-baseline.yaml:3: baseline entry added: RG504 on shop/ShopBroken "
            "(every RG504 finding of the rule)") in text
    assert ". .rulegen-baseline.yaml: baseline entry removed: RG504 on shop/ShopBroken" in text


@pytest.mark.parametrize("key", ["disable: [RG820]", "severity: {RG821: warning}"])
def test_the_pull_request_cannot_switch_the_policy_codes_off(tmp_path, capsys, key):
    root = make_repo(tmp_path, None, build=True)
    (root / ".rulegen.yaml").write_text(f"checks:\n  {key}\n", encoding="utf-8")
    assert run(root, "check", "--base", "base") == 2
    assert "reports a pull request that weakens the checks and cannot be switched off or re-graded" in \
        capsys.readouterr().err


def test_check_base_needs_a_commit_and_the_flag_needs_base(tmp_path, capsys):
    root = make_repo(tmp_path, None, build=True)
    assert run(root, "check", "--base", "no-such-ref") == 2
    assert "no commit named 'no-such-ref'" in capsys.readouterr().err
    assert run(root, "check", "--fail-on-policy-changes") == 2
    assert "--fail-on-policy-changes needs --base REF" in capsys.readouterr().err


# --- a new project says it ---------------------------------------------------------------------

def test_new_and_import_write_policy_changes_fail_into_a_new_projects_config(tmp_path, capsys):
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    assert run(fresh, "new", "demo") == 0
    assert "wrote .rulegen.yaml (policy_changes: fail" in capsys.readouterr().out
    assert yaml.safe_load((fresh / ".rulegen.yaml").read_text(encoding="utf-8")) == {"policy_changes": "fail"}
    assert run(fresh, "new", "other") == 0     # not a new project any more: the file is left alone
    assert ".rulegen.yaml" not in capsys.readouterr().out

    imported = tmp_path / "imported"
    imported.mkdir()
    (imported / "a.yml").write_text("groups:\n  - name: t\n    rules:\n      - alert: T\n        expr: up == 0\n"
                                    "        labels: {severity: page}\n", encoding="utf-8")
    assert run(imported, "import", "a.yml") == 0
    conf = yaml.safe_load((imported / ".rulegen.yaml").read_text(encoding="utf-8"))
    assert conf["policy_changes"] == "fail"

    (tmp_path / "own").mkdir()
    (tmp_path / "own" / ".rulegen.yaml").write_text("# ours\nconventions: {}\n", encoding="utf-8")
    (tmp_path / "own" / "a.yml").write_text((imported / "a.yml").read_text(encoding="utf-8"), encoding="utf-8")
    assert run(tmp_path / "own", "import", "a.yml") == 0
    assert "policy_changes" not in (tmp_path / "own" / ".rulegen.yaml").read_text(encoding="utf-8")


def test_a_base_config_this_rulegen_cannot_read_still_decides_fail_or_warn(tmp_path, capsys):
    """A key of another rulegen version on the base branch: compared with the defaults (a
    note says so), and its policy_changes still counts."""
    root = make_repo(tmp_path, "policy_changes: warn\nfuture_key: 1\n", build=False)
    (root / ".rulegen.yaml").write_text("checks:\n  disable: [RG402]\n", encoding="utf-8")
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    assert "! RG821 .rulegen.yaml:2: check RG402 switched off (checks.disable)" in text
    assert ("note: .rulegen.yaml at base could not be read (unknown key(s) future_key; known: checks, conventions, "
            "duplicate_alert_across_apps, prometheus_scopes, runbooks, policy_changes, charts, alertmanager, "
            "prometheus, owners); the working tree's checks were compared "
            "with rulegen's defaults") in text
    from rulegen.gitops import policy
    report = policy.compare(root, "base")
    assert report.mode == "warn"
    assert [f.severity.value for f in policy.findings(report, "base")] == ["warning"]
    assert [f.severity.value for f in policy.findings(report, "base", force=True)] == ["error"]


def test_an_old_entry_that_covers_a_new_error_is_growth(tmp_path, capsys):
    """The base baselined ShopBroken's RG504; the pull request adds a second ShopBroken (a
    variant with other labels, allowed) without runbook: the old entry covers it, the file
    does not change, and validate passes. It is growth all the same."""
    root = make_repo(tmp_path, None, SPEC + NEW_ALERT, build=True, baseline_add=True)
    variant = NEW_ALERT.replace("        for: 10m\n", "        for: 10m\n        labels: {tier: backend}\n")
    add_alert(root, variant, build=True)
    assert run(root, "validate") == 0
    capsys.readouterr()
    assert run(root, "check") == 0
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 1
    out = capsys.readouterr().out
    assert re.search(r"^\.rulegen-baseline\.yaml:7:1: error RG820 policy change since base: baseline entry covers "
                     r"2 error\(s\), 1 at base: RG504 on shop/ShopBroken \(critical alert has no runbook content\); "
                     r"it hides 2 finding\(s\): rules/shop\.yaml:\d+:\d+ RG504 ShopBroken: .*; "
                     r"rules/shop\.yaml:\d+:\d+ RG504 ShopBroken: ", out, re.M), out


def test_an_unchanged_baseline_over_unchanged_errors_is_no_change(tmp_path, capsys):
    root = make_repo(tmp_path, None, SPEC + NEW_ALERT, build=True, baseline_add=True)
    edit = root / "rules" / "shop.yaml"
    edit.write_text(edit.read_text(encoding="utf-8").replace("for: 5m", "for: 6m"), encoding="utf-8")
    assert run(root, "build") == 0
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 0
    assert "RG82" not in capsys.readouterr().out
    assert run(root, "diff", "--base", "base") == 0
    assert "POLICY" not in capsys.readouterr().out


# --- prometheus_scopes (issue 26): a scope that hides a duplicate is a weakening ----------------

def _two_apps(root: Path) -> None:
    for app in ("shop-capa", "shop-capz"):
        (root / "rules" / f"{app}.yaml").write_text(SPEC.replace("app: shop", f"app: {app}"), encoding="utf-8")


def test_scopes_that_hide_a_duplicate_weaken_the_checks(tmp_path, capsys):
    root = make_repo(tmp_path, None)
    _two_apps(root)
    (root / ".rulegen.yaml").write_text('prometheus_scopes:\n  capa: ["*-capa"]\n  capz: ["*-capz"]\n',
                                        encoding="utf-8")
    assert run(root, "diff", "--base", "base") == 0
    text = capsys.readouterr().out
    assert "! RG823 .rulegen.yaml:1: prometheus_scopes: [] -> [capa, capz]" in text
    assert "RG412" in text and "ShopDown" in text
    from rulegen.gitops import policy
    assert [c.code for c in policy.compare(root, "base").weakening] == ["RG823"]


def test_scopes_that_hide_nothing_are_no_weakening(tmp_path, capsys):
    root = make_repo(tmp_path, None)
    (root / ".rulegen.yaml").write_text('prometheus_scopes:\n  capa: ["*-capa"]\n', encoding="utf-8")
    from rulegen.gitops import policy
    report = policy.compare(root, "base")
    assert report.weakening == []
    assert [c.what.split(" (")[0] for c in report.changes] == ["prometheus_scopes: [] -> [capa]"]


def test_owner_requirement_dropped_is_a_weakening(tmp_path, capsys):
    """`owners.require_for` dropping a severity switches RG515 off for it: RG823, naming the
    alert it hides (was not compared at all)."""
    config = "conventions: {require_runbook_for: []}\nowners:\n  require_for: [critical]\n"
    root = make_repo(tmp_path, config, build=True)
    add_alert(root)
    (root / ".rulegen.yaml").write_text(config.replace("[critical]", "[]"), encoding="utf-8")
    assert run(root, "build") == 0
    capsys.readouterr()
    assert run(root, "check", "--base", "base") == 1
    out = capsys.readouterr().out
    assert re.search(r"^\.rulegen\.yaml:3:1: error RG823 policy change since base: owners\.require_for: "
                     r"\[critical\] -> \[\]; it hides 1 finding\(s\): rules/shop\.yaml:\d+:\d+ RG515 ", out, re.M), out
