"""End to end on the bundled llama-swap spec: build, helm template, promtool tests (issue 2)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
import yaml

from rulegen.cli import main
from rulegen.render.plain import rule_groups
from rulegen.render.site import site_url
from rulegen.spec import build_spec, load_file, slo

from helpers import REPO


def tree(root):
    """{relative path: bytes} of every file under root except .rulegen/ work files."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".rulegen" not in p.parts}


def test_build_writes_the_three_outputs_and_is_idempotent(project, capsys):
    for p in ("charts/llama-swap/templates/prometheusrule.yaml", "runbooks/llama-swap.md",
              "charts/llama-swap/tests/llama-swap.test.yaml"):
        (project / p).unlink()
    assert main(["-C", str(project), "build"]) == 0
    for p in ("charts/llama-swap/templates/prometheusrule.yaml", "runbooks/llama-swap.md",
              "charts/llama-swap/tests/llama-swap.test.yaml"):
        assert (project / p).is_file(), p
    before = tree(project)
    capsys.readouterr()
    assert main(["-C", str(project), "build"]) == 0
    assert "0 file(s) written" in capsys.readouterr().out
    assert tree(project) == before


def _render(helm_bin, chart, *sets):
    args = [str(helm_bin), "template", "r", str(chart)]
    for s in sets:
        args += ["--set", s]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def test_helm_template_gives_the_spec_rules(helm_bin):
    chart = REPO / "charts/llama-swap"
    docs = _render(helm_bin, chart, "enabled=true", "monitoring.enabled=true")
    prs = [d for d in docs if d["kind"] == "PrometheusRule"]
    assert len(prs) == 1
    pr = prs[0]
    assert pr["apiVersion"] == "monitoring.coreos.com/v1"
    assert pr["metadata"]["name"] == "llama-swap" and pr["metadata"]["namespace"] == "ai"
    spec = build_spec(load_file(REPO / "rules/llama-swap.yaml", "rules/llama-swap.yaml"))
    # the project's owners.label (.rulegen.yaml) puts each alert's owner team on it, as build does
    from rulegen.config import load_config
    from rulegen.spec.owners import add_owner_label
    add_owner_label(spec, load_config(REPO).owners)
    assert pr["spec"]["groups"] == rule_groups(spec, site_url(REPO))
    down = pr["spec"]["groups"][0]["rules"][0]
    assert down["alert"] == "LlamaSwapDown"
    assert down["expr"] == 'kube_deployment_status_replicas_available{namespace="ai", deployment="llama-swap"} == 0'
    assert down["for"] == "5m"
    assert down["labels"] == {"severity": "critical", "component": "llama-swap", "team": "ai-platform"}
    assert "{{ $labels.namespace }}/{{ $labels.deployment }}" in down["annotations"]["description"]
    assert down["annotations"]["runbook_url"] == "https://runbooks.example.com/llama-swap/#llamaswapdown"


@pytest.mark.parametrize("sets", [("enabled=true", "monitoring.enabled=false"),
                                  ("enabled=false", "monitoring.enabled=true")])
def test_any_gate_off_renders_no_prometheusrule(helm_bin, sets):
    docs = _render(helm_bin, REPO / "charts/llama-swap", *sets)
    assert [d for d in docs if d["kind"] == "PrometheusRule"] == []


def test_rulegen_test_runs_promtool_for_real(project, helm_bin, promtool_bin, capsys):
    # the declared tests and the SLOs' tests, which `rulegen test` generates (not committed)
    specs = [slo.with_tests(build_spec(load_file(p, p.name))) for p in sorted((project / "rules").glob("*.yaml"))]
    groups = sum(len(r.tests) for s in specs for _, r in s.rules())
    rules = sum(1 for s in specs for _ in s.rules())
    assert groups >= 29 and len(specs) >= 3
    assert main(["-C", str(project), "test", "--min-coverage", "100"]) == 0
    out = capsys.readouterr().out
    # one test file per spec, or more where tests state different annotations (see README)
    m = re.search(rf"promtool test rules: {groups} test group\(s\) in (\d+) file\(s\), {groups} passed, 0 failed", out)
    assert m and int(m.group(1)) >= len(specs), out
    assert out.rstrip().splitlines()[-1] == f"{groups} passed, 0 failed"
    assert f"coverage: {rules}/{rules} rules (100%)" in out


def test_broken_expression_fails_build_with_position_and_writes_nothing(project, capsys):
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text()
    spec.write_text(text.replace('deployment="llama-swap"} == 0\n', 'deployment="llama-swap"} == \n', 1))
    before = tree(project)
    assert main(["-C", str(project), "build"]) == 1
    err = capsys.readouterr().err
    line = next(i for i, l in enumerate(text.splitlines(), 1) if l.strip().startswith("expr: kube_deployment"))
    # at the end of the expression, after the dangling `==`, where promtool places it too
    col = 15 + len('kube_deployment_status_replicas_available{namespace="ai", deployment="llama-swap"} ==')
    assert (f"rules/llama-swap.yaml:{line}:{col}: error RG301 [LlamaSwapDown] expr does not parse as PromQL: "
            "unexpected end of input: an operator needs a right-hand side") in err
    assert "nothing was written" in err
    assert tree(project) == before


def test_missing_rules_folder_is_one_sentence(tmp_path, capsys):
    assert main(["-C", str(tmp_path), "build"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == ("rulegen: no rules/ folder here: run rulegen from the project root, or name "
                           "the spec files or folders to use")


def test_empty_spec_is_one_sentence(tmp_path, capsys):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/x.yaml").write_text("# nothing yet\n")
    assert main(["-C", str(tmp_path), "validate"]) == 1
    out = capsys.readouterr().out
    assert "rules/x.yaml:1:1: error RG107 the spec is empty; start it with `app: <name>` and a `groups:` list" in out
    assert "Traceback" not in out


def test_breaking_an_expression_fails_rulegen_test_naming_the_spec_line(project, helm_bin, promtool_bin, capsys):
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text()
    spec.write_text(text.replace('deployment="llama-swap"} == 0\n', 'deployment="llama-swap"} == 1\n', 1))
    assert main(["-C", str(project), "test", "--alert", "LlamaSwapDown"]) == 1
    out = capsys.readouterr().out
    lines = text.splitlines()
    first_fire = next(i for i, l in enumerate(lines, 1) if l.strip() == "- eval_time: 5m")
    assert f"rules/llama-swap.yaml:{first_fire}: FAIL [LlamaSwapDown] fires after 5m of zero available replicas, not before" in out
    assert out.rstrip().splitlines()[-1] == "0 passed, 3 failed"
    assert "-  severity=\"critical\"" in out  # expected alert shown as a diff against got
    # coverage counts passing test groups only: the uncovered line says why its cases do not count
    # (a new-user trial read "needs a firing case" for an alert whose firing case had failed)
    assert ("  uncovered: llama-swap LlamaSwapDown: needs a firing case and a non-firing case and a case on each "
            "side of the `for` boundary (3 failing test group(s) of it, FAIL above, count once they pass)") in out


def test_gate_disabled_in_values_renders_no_rules(project, helm_bin):
    values = project / "charts/llama-swap/values.yaml"
    values.write_text(values.read_text().replace("monitoring:\n  # ServiceMonitor and PrometheusRule need the Prometheus Operator CRDs.\n  enabled: true",
                                                 "monitoring:\n  # ServiceMonitor and PrometheusRule need the Prometheus Operator CRDs.\n  enabled: false"))
    docs = _render(helm_bin, project / "charts/llama-swap")
    assert [d["kind"] for d in docs] == []


def test_subset_junit_and_min_coverage(project, helm_bin, promtool_bin, capsys, tmp_path):
    junit = tmp_path / "out/junit.xml"
    assert main(["-C", str(project), "test", "--alert", "LlamaSwapNoMetrics", "--junit", str(junit)]) == 0
    out = capsys.readouterr().out
    assert "3 passed, 0 failed" in out
    xml = junit.read_text()
    assert xml.count("<testcase ") == 3 and 'file="rules/llama-swap.yaml"' in xml
    assert main(["-C", str(project), "test", "--app", "llama-swap", "--run", "does not fire", "--min-coverage", "100"]) == 1
    out = capsys.readouterr().out
    assert "coverage: 0/2 rules (0%)" in out and "needs a firing case" in out
    assert main(["-C", str(project), "test", "--app", "nope"]) == 2


def _norm(s: str) -> str:
    s = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", s)  # [text](link) -> text
    s = s.replace("`", "").replace("**", "").replace("\\", "").replace("|", " ")
    return re.sub(r"\s+", " ", s).strip()


def test_runbook_page_holds_every_fact_of_the_seed(shared_dir):
    """Every sentence and command of the seed's llama-swap page is on the generated page."""
    seed = (shared_dir / "seeds/004_7980ad406b71fa36.txt").read_text()
    # The seed's repository kept the chart at apps/ai/llama-swap; this project keeps it at
    # charts/llama-swap (the spec's chart.path), and the page names that one path throughout
    # (issue 19: the header and Resolution named two different values paths).
    seed = seed.replace("apps/ai/llama-swap/", "charts/llama-swap/")
    raw_page = (REPO / "runbooks/llama-swap.md").read_text()
    assert "apps/ai/llama-swap" not in raw_page
    page = _norm(raw_page)
    body = seed.split("Context", 1)[1]
    skip = {"Likely causes", "Resolution", "Diagnose (all read-only)", "PromQL:", "LlamaSwapDown", "LlamaSwapNoMetrics"}
    missing = []
    for raw in body.splitlines():
        line = raw.strip().lstrip("•").strip()
        line = re.sub(r"^\d+\.\s+", "", line)
        if not line or line in skip or line.startswith(("Severity:", "Fires when:")):
            continue
        # the facts table: "Deployment / Service / PVC llama-swap / ..." -> name and value cells
        for part in re.split(r"\s{2,}|\t", line):
            if _norm(part) not in page:
                missing.append(part)
    assert missing == []


def test_test_filters_and_options_are_usage_errors(project, capsys):
    """Regression: --alert Nope said 'no test matches' (exit 1), --min-coverage 150 was taken."""
    assert main(["-C", str(project), "test", "--alert", "Nope"]) == 2
    assert "no alert or recording rule named Nope" in capsys.readouterr().err
    assert main(["-C", str(project), "test", "--min-coverage", "150"]) == 2
    assert "150 is not a percentage from 0 to 100" in capsys.readouterr().err


def test_root_option_after_the_command(project, capsys):
    assert main(["validate", "-C", str(project)]) == 0
    assert "no findings" in capsys.readouterr().out


def test_spec_outside_the_project_is_refused(tmp_path, capsys):
    """Regression: it was built into the current folder, with an absolute path in the headers."""
    assert main(["-C", str(tmp_path), "build", str(REPO / "rules/llama-swap.yaml")]) == 2
    assert "is outside the project folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


FEEDS = """\
app: feeds
groups:
  - name: feeds
    rules:
      - alert: FeedsDown
        expr: up{{job="feeds"}} == 0
        severity: warning
        summary: Feeds is down.
        description: Feeds is down.
        tests:
          - name: fires
            input_series:
              - series: up{{job="feeds"}}
                values: "0x5"
            alert_rule_test:
              - eval_time: 2m
                exp_alerts:
                  - exp_labels: {{job: feeds}}
          - name: quiet while up
            input_series:
              - series: {quiet}
                values: "1x5"
            alert_rule_test:
              - eval_time: 2m
"""


def test_a_test_fed_by_a_misspelled_series_passes_in_promtool_but_covers_nothing(
        project, helm_bin, promtool_bin, capsys):
    # issue 12: the quiet test passed and counted as the "not firing" case of coverage
    (project / "rules/feeds.yaml").write_text(FEEDS.format(quiet='upp{job="feeds"}'))
    assert main(["-C", str(project), "build"]) == 0
    capsys.readouterr()
    assert main(["-C", str(project), "test", "--app", "feeds", "--min-coverage", "100"]) == 1
    out = capsys.readouterr()
    assert "2 passed, 0 failed" in out.out  # promtool itself has nothing to say
    assert "  uncovered: feeds FeedsDown: needs a non-firing case" in out.out
    assert "warning RG608 [FeedsDown] input series upp{job=\"feeds\"} matches no selector" in out.err + out.out
    (project / "rules/feeds.yaml").write_text(FEEDS.format(quiet='up{job="feeds"}'))
    assert main(["-C", str(project), "build"]) == 0
    assert main(["-C", str(project), "test", "--app", "feeds", "--min-coverage", "100"]) == 0


UNTESTED = """\
app: untested
groups:
  - name: untested
    rules:
      - alert: UntestedDown
        expr: up{job="untested"} == 0
        severity: warning
        summary: Untested is down.
        description: Untested is down.
      - alert: UntestedSlow
        expr: rate(http_request_duration_seconds_sum{job="untested"}[5m]) > 1
        severity: warning
        summary: Untested is slow.
        description: Untested is slow.
"""


def test_an_app_without_tests_counts_in_coverage(project, helm_bin, promtool_bin, capsys):
    """Regression (new-user review): after importing untested alerts, `--min-coverage 100`
    printed "coverage: 15/15 rules (100%)", leaving the app without tests out."""
    # llama-swap and the untested app show it; the other bundled apps' tests (SLO tests a day
    # long) only made the run slower (test_rulegen_test_runs_promtool_for_real runs them all)
    for p in (project / "rules").glob("*.yaml"):
        if p.name != "llama-swap.yaml":
            p.unlink()
    for p in (project / "charts").iterdir():
        if p.name not in ("llama-swap", "rulegen-library"):
            shutil.rmtree(p)
            # with their pages and sums: a page whose chart files were deleted by hand cannot be
            # checked against its sum, and build would refuse to remove it
            (project / "runbooks" / f"{p.name}.md").unlink()
            (project / ".rulegen-sums" / f"{p.name}.sum.yaml").unlink()
    specs = [build_spec(load_file(p, p.name)) for p in sorted((project / "rules").glob("*.yaml"))]
    rules = sum(1 for s in specs for _ in s.rules())
    (project / "rules/untested.yaml").write_text(UNTESTED)
    assert main(["-C", str(project), "build"]) == 0
    capsys.readouterr()
    assert main(["-C", str(project), "test", "--min-coverage", "100"]) == 1
    out = capsys.readouterr()
    assert f"coverage: {rules}/{rules + 2} rules ({100 * rules / (rules + 2):.0f}%)" in out.out
    assert "  uncovered: untested UntestedDown: needs a firing case and a non-firing case" in out.out
    assert "  uncovered: untested UntestedSlow: needs a firing case and a non-firing case" in out.out
    assert f"rulegen: coverage {100 * rules / (rules + 2):.1f}% is below --min-coverage 100%" in out.err


def test_app_without_tests_says_so(project, helm_bin, promtool_bin, capsys):
    (project / "rules/untested.yaml").write_text(UNTESTED)
    assert main(["-C", str(project), "build"]) == 0
    capsys.readouterr()
    assert main(["-C", str(project), "test", "--app", "untested", "--min-coverage", "100"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == ["app untested has no tests (add `tests:` under its alerts; `rulegen new` shows the shape)",
                   "0 passed, 0 failed", "coverage: 0/2 rules (0%): no test ran"]
    assert main(["-C", str(project), "test", "--alert", "Nope"]) == 2


def test_rulegen_test_ignores_the_charts_own_rule_knobs(project, helm_bin, promtool_bin, capsys):
    """The tests test the spec's rules as the spec defines them: `for`, severity and labels
    changed, an alert and a group disabled in the chart's values.yaml (a deployment's choice)
    neither fail nor skip the spec's tests; the gates stay on. Before, the customRules `for`
    failed LlamaSwapDown's tests and the disabled alert had no rule to fire."""
    from rulegen.run.testing import values_for_tests
    values = project / "charts/llama-swap/values.yaml"
    text = values.read_text(encoding="utf-8")
    for old, new in (("  customRules: {}\n", "  customRules:\n    LlamaSwapDown: {for: 30m, severity: info}\n"),
                     ("  disabled: {}\n", "  disabled:\n    LlamaSwapNoMetrics: true\n"),
                     ("  additionalRuleLabels: {}\n", "  additionalRuleLabels: {team: other}\n"),
                     ("\nenabled: true\n", "\nenabled: false\n")):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    values.write_text(text, encoding="utf-8")
    assert main(["-C", str(project), "test", "--app", "llama-swap", "--min-coverage", "100"]) == 0, \
        capsys.readouterr().out
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].endswith(" passed, 0 failed")
    spec = build_spec(load_file(project / "rules/llama-swap.yaml", "rules/llama-swap.yaml"))
    assert values_for_tests(spec) == {"enabled": True, "monitoring": {"enabled": True}, "prometheusRule": {
        "disabled": None, "groups": None, "customRules": None, "additionalRuleLabels": None,
        "additionalRuleAnnotations": None}}


def test_rulegen_test_ignores_an_slo_objective_in_the_charts_values(project, helm_bin, promtool_bin, capsys):
    # regression: an objective set in the chart's values.yaml failed every generated SLO test
    values = project / "charts/noctaya/values.yaml"
    text = values.read_text(encoding="utf-8")
    text = text.replace("    gateway-activation:\n      enabled: true\n      ticket: true\n",
                        "    gateway-activation:\n      enabled: true\n      ticket: false\n      objective: 99.9\n")
    assert "objective: 99.9" in text
    values.write_text(text, encoding="utf-8")
    assert main(["-C", str(project), "test", "--app", "noctaya", "--alert", "NoctayaGatewayActivationSlowBurn",
                 "--alert", "NoctayaGatewayActivationFastBurn"]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert out.rstrip().splitlines()[-1].endswith(" passed, 0 failed")
