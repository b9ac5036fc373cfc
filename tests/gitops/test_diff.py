"""``rulegen diff``: review summary between a Git ref and the working tree, in a temp Git repo."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.live.connect import SKIPPED

from helpers import FIXTURES, REPO

OLD_SPEC = """app: old
groups:
  - name: old
    rules:
      - record: job:old_requests:rate5m
        expr: sum by (job) (rate(http_requests_total{job="old"}[5m]))
      - alert: OldDown
        expr: up{job="old"} == 0
        for: 5m
        severity: warning
        summary: old is down.
        description: old has been down for 5 minutes.
"""

NEW_SPEC = """app: extra
labels: {team: web}
groups:
  - name: extra
    rules:
      - record: job:extra_requests:rate5m
        expr: sum by (job) (rate(http_requests_total{job="extra"}[5m]))
      - alert: ExtraErrors
        expr: job:extra_requests:rate5m > 100
        for: 10m
        severity: warning
        summary: extra serves too many requests.
        description: "{{ $labels.job }} serves {{ $value }} requests per second."
"""


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A Git repo with llama-swap and old specs committed (tag ``base``)."""
    root = tmp_path / "repo"
    (root / "rules").mkdir(parents=True)
    shutil.copy(REPO / "rules/llama-swap.yaml", root / "rules/llama-swap.yaml")
    (root / "rules/old.yaml").write_text(OLD_SPEC, encoding="utf-8")
    git(root, "init", "-q")
    git(root, "add", "rules")
    git(root, "commit", "-q", "-m", "base")
    git(root, "tag", "base")
    return root


def edit(root: Path, name: str, old: str, new: str) -> None:
    p = root / "rules" / name
    text = p.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    p.write_text(text.replace(old, new), encoding="utf-8")


def change_everything(root: Path) -> None:
    edit(root, "llama-swap.yaml", "for: 5m", "for: 7m")
    edit(root, "llama-swap.yaml", "summary: llama-swap has no available replica.",
         "summary: llama-swap has no ready replica.")
    edit(root, "llama-swap.yaml", "        severity: warning\n", "        severity: critical\n")
    edit(root, "llama-swap.yaml", "absent(up{job=\"llama-swap\", namespace=\"ai\"} == 1)",
         "absent(up{job=\"llama-swap\", namespace=\"ai\"} == 1)\n          or up{job=\"llama-swap\"} == 0")
    (root / "rules/old.yaml").unlink()
    (root / "rules/extra.yaml").write_text(NEW_SPEC, encoding="utf-8")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_no_change(repo, capsys):
    assert run(capsys, "-C", str(repo), "diff") == (
        0, "rulegen diff HEAD -> working tree: alerts: 0 added, 0 removed, 0 changed; "
           "recording rules: 0 added, 0 removed, 0 changed\n", f"rulegen: note: {SKIPPED}\n")
    code, out, _ = run(capsys, "-C", str(repo), "diff", "-o", "markdown")
    assert (code, out) == (0, "### Alert changes since `HEAD`\n\nNo alert or recording rule changed.\n")


def test_text_summary_in_alert_terms(repo, capsys):
    change_everything(repo)
    code, out, err = run(capsys, "-C", str(repo), "diff", "--base", "base")
    assert (code, err) == (0, f"rulegen: note: {SKIPPED}\n")  # no Prometheus: no backtest, one line
    assert out.splitlines() == [
        "rulegen diff base -> working tree: alerts: 1 added, 1 removed, 2 changed; "
        "recording rules: 1 added, 1 removed, 0 changed",
        "+ alert ExtraErrors (extra): group extra, severity warning, for 10m",
        "+ recording rule job:extra_requests:rate5m (extra): group extra",
        "- alert OldDown (old)",
        "- recording rule job:old_requests:rate5m (old)",
        "~ alert LlamaSwapDown (llama-swap): for 5m -> 7m; annotations (summary: llama-swap has no "
        "available replica. -> llama-swap has no ready replica.)",
        "~ alert LlamaSwapNoMetrics (llama-swap): expr; severity warning -> critical",
        '    expr was: absent(up{job="llama-swap", namespace="ai"} == 1)',
        '    expr now: absent(up{job="llama-swap", namespace="ai"} == 1) or up{job="llama-swap"} == 0',
    ]


def test_markdown_for_a_pr_comment(repo, capsys):
    change_everything(repo)
    code, out, _ = run(capsys, "-C", str(repo), "diff", "--base", "base", "-o", "markdown")
    assert code == 0
    assert out == "\n".join([
        "### Alert changes since `base`",
        "",
        "**alerts: 1 added, 1 removed, 2 changed; recording rules: 1 added, 1 removed, 0 changed**",
        "",
        "| change | rule | app | what |",
        "|---|---|---|---|",
        "| added | alert `ExtraErrors` | extra | group extra, severity warning, for 10m |",
        "| added | recording rule `job:extra_requests:rate5m` | extra | group extra |",
        "| removed | alert `OldDown` | old | |",
        "| removed | recording rule `job:old_requests:rate5m` | old | |",
        "| changed | alert `LlamaSwapDown` | llama-swap | for 5m -> 7m, annotations (summary: llama-swap "
        "has no available replica. -> llama-swap has no ready replica.) |",
        "| changed | alert `LlamaSwapNoMetrics` | llama-swap | expr, severity warning -> critical |",
        "",
        "<details><summary>Expressions changed</summary>",
        "",
        "**LlamaSwapNoMetrics** (llama-swap)",
        "",
        "```diff",
        '- absent(up{job="llama-swap", namespace="ai"} == 1)',
        '+ absent(up{job="llama-swap", namespace="ai"} == 1) or up{job="llama-swap"} == 0',
        "```",
        "",
        "</details>",
        "",
    ])


def test_labels_keep_firing_for_runbook_tests_and_group(repo, capsys):
    edit(repo, "llama-swap.yaml", "        for: 5m\n", "        for: 5m\n        keep_firing_for: 2m\n"
         "        labels: {page: oncall}\n")
    edit(repo, "llama-swap.yaml", "            - If LlamaSwapDown is also firing, resolve that first; this alert follows.",
         "            - If LlamaSwapDown fires too, fix that first.")
    spec = (repo / "rules/llama-swap.yaml").read_text(encoding="utf-8")
    start = spec.index("          - name: does not fire while a replica is available")
    end = spec.index("          - name: a replica coming back within 5m resets the for clock")
    (repo / "rules/llama-swap.yaml").write_text(spec[:start] + spec[end:], encoding="utf-8")
    code, out, _ = run(capsys, "-C", str(repo), "diff")
    assert code == 0
    assert out.splitlines()[1:] == [
        "~ alert LlamaSwapDown (llama-swap): keep_firing_for (none) -> 2m; labels (+page=oncall); tests (3 -> 2)",
        "~ alert LlamaSwapNoMetrics (llama-swap): runbook (resolution)",
    ]


def test_whitespace_only_expr_edit_is_not_a_change(repo, capsys):
    edit(repo, "old.yaml", 'expr: up{job="old"} == 0', 'expr: up{job="old"}  ==  0')
    code, out, _ = run(capsys, "-C", str(repo), "diff")
    assert out.splitlines()[0].endswith("alerts: 0 added, 0 removed, 0 changed; "
                                        "recording rules: 0 added, 0 removed, 0 changed")
    assert len(out.splitlines()) == 1


def test_broken_spec_is_noted_not_fatal(repo, capsys):
    edit(repo, "old.yaml", "for: 5m", "for: 1.5m")
    code, out, _ = run(capsys, "-C", str(repo), "diff")
    assert code == 0
    assert ("note: in the working tree, these specs have errors (run `rulegen validate`) and were "
            "compared as far as they loaded: rules/old.yaml") in out.splitlines()


def test_baselined_findings_at_the_base_are_not_called_errors(repo, capsys):
    """A policy finding the base's .rulegen-baseline.yaml accepts is a warning there, as in
    `rulegen validate`: no note claims the base specs have errors. One not in it is still noted."""
    edit(repo, "old.yaml", "        summary: old is down.\n", "")
    (repo / ".rulegen-baseline.yaml").write_text(
        "version: 1\nfindings:\n  - {app: old, rule: OldDown, code: RG502}\n", encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "adopted with a baselined finding")
    edit(repo, "old.yaml", "for: 5m", "for: 6m")
    code, out, _ = run(capsys, "-C", str(repo), "diff")
    assert code == 0
    assert out.splitlines()[1:] == ["~ alert OldDown (old): for 5m -> 6m"]
    # the same base without the baseline file: the note is true, and says so
    (repo / ".rulegen-baseline.yaml").unlink()
    git(repo, "commit", "-q", "-am", "baseline dropped")
    code, out, _ = run(capsys, "-C", str(repo), "diff")
    assert "note: at HEAD, these specs have errors and were compared as far as they loaded: rules/old.yaml" \
        in out.splitlines()


def test_unknown_ref_is_usage_error(repo, capsys):
    code, out, err = run(capsys, "-C", str(repo), "diff", "--base", "no-such-ref")
    assert (code, out) == (2, "")
    assert err == "rulegen: no commit named 'no-such-ref' in this repository (try HEAD, main or a SHA)\n"


def test_not_a_git_repo_is_usage_error(tmp_path, capsys):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/old.yaml").write_text(OLD_SPEC, encoding="utf-8")
    code, out, err = run(capsys, "-C", str(tmp_path), "diff")
    assert (code, out) == (2, "")
    assert "not a git repository" in err


def test_project_in_a_subfolder_of_the_repo(tmp_path, capsys):
    root = tmp_path / "repo" / "alerts"
    (root / "rules").mkdir(parents=True)
    (root / "rules/old.yaml").write_text(OLD_SPEC, encoding="utf-8")
    git(tmp_path / "repo", "init", "-q")
    git(tmp_path / "repo", "add", ".")
    git(tmp_path / "repo", "commit", "-q", "-m", "base")
    (root / "rules/old.yaml").unlink()
    (root / "rules/extra.yaml").write_text(NEW_SPEC, encoding="utf-8")
    code, out, _ = run(capsys, "-C", str(root), "diff")
    assert code == 0
    assert out.splitlines()[0] == ("rulegen diff HEAD -> working tree: alerts: 1 added, 1 removed, 0 changed; "
                                   "recording rules: 1 added, 1 removed, 0 changed")


TWO_VARIANTS = """app: disk
groups:
  - name: disk
    rules:
      - alert: DiskFull
        expr: disk_used_ratio > 0.8
        for: 2m
        severity: warning
        summary: s
        description: d
      - alert: DiskFull
        expr: disk_used_ratio > 0.95
        for: 5m
        severity: critical
        summary: s
        description: d
        runbook: {causes: [logs]}
"""


def test_reordering_same_name_variants_and_equal_durations_change_nothing(repo, capsys):
    """Regression: same-name alerts were matched by position, and `for: 2m` -> `120s` counted."""
    (repo / "rules/disk.yaml").write_text(TWO_VARIANTS, encoding="utf-8")
    git(repo, "add", "rules")
    git(repo, "commit", "-q", "-m", "disk")
    first, second = TWO_VARIANTS.split("      - alert: DiskFull\n")[1:]
    head = TWO_VARIANTS.split("      - alert: DiskFull\n")[0]
    swapped = head + "      - alert: DiskFull\n" + second + "      - alert: DiskFull\n" + first
    (repo / "rules/disk.yaml").write_text(swapped.replace("for: 2m", "for: 120s"), encoding="utf-8")
    capsys.readouterr()
    assert main(["-C", str(repo), "diff", "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "DiskFull" not in out
    (repo / "rules/disk.yaml").write_text(swapped.replace("disk_used_ratio > 0.95", "disk_used_ratio > 0.97"),
                                          encoding="utf-8")
    assert main(["-C", str(repo), "diff", "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "alerts: 0 added, 0 removed, 1 changed" in out
    assert 'DiskFull{component="disk", severity="critical"} (disk): expr' in out


# --- values and gates: what the charts render (real helm) ----------------------------------

V1 = FIXTURES / "layout-v1"


@pytest.fixture
def built_repo(tmp_path: Path, capsys) -> Path:
    """A Git repo of the llama-swap and inferencecache specs and charts, built and committed."""
    root = tmp_path / "built"
    shutil.copytree(V1, root)
    git(root, "init", "-q")
    assert main(["-C", str(root), "build"]) == 0
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    capsys.readouterr()
    return root


def edit_file(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


def diff(root: Path, capsys, output: str = "text") -> str:
    assert main(["-C", str(root), "diff", "--base", "HEAD", "-o", output]) == 0
    return capsys.readouterr().out


@pytest.mark.tools
def test_values_changes_are_reported_per_alert(built_repo, capsys, helm_bin):
    values = built_repo / "charts/llama-swap/values.yaml"
    edit_file(values, "  disabled: {}\n", "  disabled:\n    LlamaSwapDown: true\n")
    edit_file(values, "  customRules: {}\n", "  customRules:\n    LlamaSwapNoMetrics:\n      severity: info\n"
                                             "      for: 15m\n")
    edit_file(values, "  additionalRuleLabels: {}\n", "  additionalRuleLabels:\n    env: prod\n")
    # a spec change of the same alert is the spec's, not the values'
    edit(built_repo, "llama-swap.yaml", "summary: Prometheus has no successful scrape of llama-swap.",
         "summary: No scrape of llama-swap.")
    assert main(["-C", str(built_repo), "build"]) == 0
    capsys.readouterr()
    assert diff(built_repo, capsys) == (
        "rulegen diff HEAD -> working tree: alerts: 0 added, 0 removed, 1 changed; recording rules: 0 added, "
        "0 removed, 0 changed\n"
        "~ alert LlamaSwapNoMetrics (llama-swap): annotations (~summary)\n"
        "values and gates (helm template of the changed charts):\n"
        "  charts/llama-swap: LlamaSwapDown disabled by values\n"
        "  charts/llama-swap: LlamaSwapNoMetrics for 10m -> 15m, severity warning -> info, labels (+env=prod) (values)\n")
    md = diff(built_repo, capsys, "markdown")
    assert md.endswith(
        "#### What the charts render (values and gates)\n\n| chart | effect |\n|---|---|\n"
        "| charts/llama-swap | `LlamaSwapDown` disabled by values |\n"
        "| charts/llama-swap | `LlamaSwapNoMetrics` for 10m -> 15m, severity warning -> info, labels (+env=prod) "
        "(values) |\n")


@pytest.mark.tools
def test_gates_and_group_toggles(built_repo, capsys, helm_bin):
    values = built_repo / "charts/inferencecache/values.yaml"
    edit_file(values, "\nenabled: true\n", "\nenabled: false\n")  # the top-level gate
    git(built_repo, "commit", "-q", "-am", "inferencecache off")
    edit_file(values, "\nenabled: false\n", "\nenabled: true\n")
    llama = built_repo / "charts/llama-swap/values.yaml"
    edit_file(llama, "    llama-swap:\n      enabled: true\n", "    llama-swap:\n      enabled: false\n")
    out = diff(built_repo, capsys)
    assert out.splitlines()[1:] == [
        "values and gates (helm template of the changed charts):",
        "  charts/inferencecache: gates on: the PrometheusRule now renders 7 alerts",
        "  charts/llama-swap: every rule disabled by values: the PrometheusRule no longer renders",
        "  charts/llama-swap: group llama-swap disabled by values",
    ]
    git(built_repo, "commit", "-q", "-am", "on")
    edit_file(values, "\nenabled: true\n", "\nenabled: false\n")
    assert diff(built_repo, capsys).splitlines()[1:] == [
        "values and gates (helm template of the changed charts):",
        "  charts/inferencecache: gates off: the PrometheusRule no longer renders (it rendered 7 alerts)",
    ]


def test_without_helm_a_note_says_values_were_not_compared(built_repo, capsys, monkeypatch):
    from rulegen.tools import find
    monkeypatch.setattr(find, "find", lambda name, root=None: None)
    edit_file(built_repo / "charts/llama-swap/values.yaml", "  disabled: {}\n", "  disabled:\n    LlamaSwapDown: true\n")
    assert diff(built_repo, capsys).splitlines()[1:] == [
        "note: helm is not installed: the values of charts/llama-swap were not compared "
        "(scripts/install-tools.sh installs it)"]


def test_unchanged_charts_are_not_rendered(built_repo, capsys, monkeypatch):
    from rulegen.gitops import diff as diff_mod
    monkeypatch.setattr(diff_mod, "_side", lambda *a: pytest.fail("rendered an unchanged chart"))
    assert diff(built_repo, capsys).splitlines()[1:] == []


def test_param_values_read_back_from_an_expr():
    from rulegen.gitops.diff import _expr_phrase, _param_values
    tpl = "increase(x[[[window]]]) > [[count]] or y > [[count]]"
    assert _param_values(tpl, "increase(x[5m]) > 10 or y > 10") == {"window": "5m", "count": "10"}
    assert _param_values(tpl, "increase(x[5m]) > 10 or y > 11") is None
    assert _expr_phrase(tpl, "increase(x[5m]) > 10 or y > 10", "increase(x[1h]) > 10 or y > 10") == "window 5m -> 1h"
    assert _expr_phrase(None, "a", "b") == "expr"


@pytest.mark.tools
def test_a_parameter_override_is_named(built_repo, capsys, helm_bin):
    edit(built_repo, "llama-swap.yaml", "absent(up{job=\"llama-swap\", namespace=\"ai\"} == 1)",
         "absent(up{job=\"llama-swap\", namespace=\"ai\"} == [[up]])\n        params: {up: 1}")
    assert main(["-C", str(built_repo), "build"]) == 0
    git(built_repo, "commit", "-q", "-am", "param")
    values = built_repo / "charts/llama-swap/values.yaml"
    edit_file(values, "  customRules: {}\n", "  customRules:\n    LlamaSwapNoMetrics:\n      params:\n        up: 0\n")
    capsys.readouterr()
    assert diff(built_repo, capsys).splitlines()[1:] == [
        "values and gates (helm template of the changed charts):",
        "  charts/llama-swap: LlamaSwapNoMetrics up 1 -> 0 (values)"]


@pytest.mark.tools
def test_values_of_a_project_in_a_subfolder_of_the_repository(tmp_path, capsys, helm_bin):
    """git archive and ls-tree run in the project folder: paths are relative to it."""
    repo = tmp_path / "repo"
    shutil.copytree(V1, repo / "proj")
    git(repo, "init", "-q")
    assert main(["-C", str(repo / "proj"), "build"]) == 0
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    edit_file(repo / "proj/charts/llama-swap/values.yaml", "  disabled: {}\n", "  disabled:\n    LlamaSwapDown: true\n")
    capsys.readouterr()
    assert diff(repo / "proj", capsys).splitlines()[1:] == [
        "values and gates (helm template of the changed charts):",
        "  charts/llama-swap: LlamaSwapDown disabled by values"]


@pytest.mark.tools
def test_a_note_says_when_the_gates_are_off_in_the_values_rendered(built_repo, capsys, helm_bin):
    """A spec change of a chart whose gates are off in its own values.yaml: the summary lists
    the change, and a note says the chart as committed renders no PrometheusRule (so the
    change is not read as deployed)."""
    values = built_repo / "charts/llama-swap/values.yaml"
    edit_file(values, "  # ServiceMonitor and PrometheusRule need the Prometheus Operator CRDs.\n  enabled: true\n",
              "  # ServiceMonitor and PrometheusRule need the Prometheus Operator CRDs.\n  enabled: false\n")
    git(built_repo, "commit", "-q", "-am", "monitoring off")
    edit(built_repo, "llama-swap.yaml", "for: 5m", "for: 7m")
    assert main(["-C", str(built_repo), "build"]) == 0
    capsys.readouterr()
    lines = diff(built_repo, capsys).splitlines()
    assert lines[1].startswith("~ alert ") and "for 5m -> 7m" in lines[1]
    assert lines[2:] == [
        "note: charts/llama-swap: gate monitoring.enabled is not true in its values.yaml, so with its own "
        "values the chart renders no PrometheusRule; the rules listed are what it renders once the gates are on "
        "(there, with helm --set, or where the chart is deployed; `rulegen validate` warns when a gate looks "
        "misspelt, RG733)"]
    # a chart whose gates are on gets no such note
    edit_file(values, "  enabled: false\n", "  enabled: true\n")
    assert not [line for line in diff(built_repo, capsys).splitlines() if "is not true" in line]


def test_gates_off_lists_each_gate_not_true(tmp_path):
    from rulegen.gitops.diff import gates_off
    (tmp_path / "values.yaml").write_text("enabled: true\nmonitoring: {enabled: 'true'}\nx: null\n",
                                          encoding="utf-8")
    assert gates_off(tmp_path, ["enabled", "monitoring.enabled", "x.on", "x.on"]) == ["monitoring.enabled", "x.on"]
    assert gates_off(tmp_path / "missing", ["enabled"]) == ["enabled"]


SLO_SPEC = """\
app: demo
slos:
  - name: availability
    objective: {objective}
    sli:
      events:
        bad: http_requests_total{{job="api", code=~"5.."}}
        total: http_requests_total{{job="api"}}
"""


def test_an_slo_objective_change_is_told_in_alert_terms():
    """The objective is one rule (the budget); the diff names the SLO, both objectives and the
    alerts that read it, whose own exprs do not change (issue 29)."""
    from rulegen.gitops.diff import compare_specs
    from rulegen.spec import build_spec, load_text
    old = [build_spec(load_text(SLO_SPEC.format(objective="99.5"), "rules/demo.yaml"))]
    new = [build_spec(load_text(SLO_SPEC.format(objective="99.9"), "rules/demo.yaml"))]
    s = compare_specs(old, new)
    assert [(c.new.name, c.fields) for c in s.changed] == [("slo:error_budget:ratio", ["expr"])]
    assert s.notes == ["SLO availability (demo): objective 99.5% -> 99.9% (error budget 0.5% -> 0.1%); its burn-rate "
                       "alerts DemoAvailabilityFastBurn, DemoAvailabilitySlowBurn read the budget, so they fire at "
                       "other error ratios though their exprs are unchanged"]
    assert compare_specs(old, old).notes == []
