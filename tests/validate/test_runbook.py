"""The 3 a.m. page (issue 19): triage fields, copy-ready commands and their checks (RG506-RG510),
readable templates, open-in links, the alert index by app with causes first."""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.config import Config, parse_config
from rulegen.findings import RulegenError
from rulegen.render import runbook
from rulegen.spec import triage
from rulegen.validate import validate_texts
from rulegen.promql.labelflow import can_carry

from helpers import CORPUS, REPO, flat

SPEC = """\
app: demo
runbook:
  do_not: Restart the pod by hand.
  links:
    - {title: Team notes, url: "https://notes.example.com/demo"}
groups:
  - name: demo
    rules:
      - alert: DemoBackendFailing
        expr: max by (namespace, name) (demo_condition{status="False"}) > 0
        for: 5m
        severity: critical
        summary: "Backend {{ $labels.namespace }}/{{ $labels.name }} fails."
        description: "Backend {{ $labels.namespace }}/{{ $labels.name }} has failed for 5m."
        runbook:
          impact: Requests to the backend fail.
          owner: {team: platform, chat: "#platform"}
          causes: [Something broke.]
          diagnosis:
            - commands: |
@COMMANDS@
"""


def _spec(commands: str, extra: str = "") -> str:
    body = "".join(f"                {line}\n" for line in commands.splitlines())
    return SPEC.replace("@COMMANDS@\n", body) + extra


def _findings(text: str, config: Config | None = None, codes=("RG506", "RG507", "RG508", "RG509", "RG510")):
    r = validate_texts({"rules/demo.yaml": text}, config)
    return [(f.line, f.col, f.code, f.message) for f in r.findings if f.code in codes]


# --- RG506: commands that do not parse as shell ------------------------------------------------

def test_rg506_flags_the_shipped_custom_columns_command_at_its_line():
    """Regression: the bundled inferencecache pack shipped this command; its unquoted `(` makes
    `bash -n` fail when pasted."""
    cmd = ('kubectl get ns\n'
           'kubectl get cachebackends -A -o custom-columns=NS:.metadata.namespace,'
           'READY:.status.conditions[?(@.type==\\"Ready\\")].reason\n')
    found = _findings(_spec(cmd))
    assert len(found) == 1
    line, col, code, message = found[0]
    assert code == "RG506"
    text = _spec(cmd).splitlines()
    assert text[line - 1].strip().startswith("kubectl get cachebackends") and col == 17
    assert "bash -n: syntax error near unexpected token `('" in message


def test_rg506_flags_angle_bracket_placeholders_and_passes_the_fixed_forms():
    assert [c for _, _, c, _ in _findings(_spec("kubectl get cachebackend <name> -n <ns>\n"))] == ["RG506"]
    fixed = ('kubectl get cachebackend "$NAME" -n "$NAMESPACE"\n'
             "kubectl get cachebackends -A -o 'custom-columns=R:.status.conditions[?(@.type==\"Ready\")].reason'\n")
    assert _findings(_spec(fixed)) == []


def test_bundled_packs_parse_as_shell():
    """Every commands block of the bundled packs passes RG506 (the pack fix holds)."""
    assert main(["-C", str(REPO), "validate"]) == 0
    from rulegen.validate.checks.runbook import shell_error
    for p in sorted((REPO / "rules").glob("*.yaml")):
        for block in _command_blocks(yaml.safe_load(p.read_text())):
            assert shell_error(block) is None, (p.name, block)
            assert subprocess.run(["bash", "-n", "-c", "--", block]).returncode == 0


def _command_blocks(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "commands" and isinstance(v, str):
                yield v
            else:
                yield from _command_blocks(v)
    elif isinstance(node, list):
        for v in node:
            yield from _command_blocks(v)


# --- RG507: variables that are labels the alert never carries ----------------------------------

def test_rg507_flags_a_label_the_aggregation_drops_at_the_variable():
    found = _findings(_spec('kubectl -n "$NAMESPACE" logs "$POD"\n'))
    assert [(c, m.split(",")[0]) for _, _, c, m in found] == [
        ("RG507", "$POD stands for the label 'pod'")]
    line, col = found[0][:2]
    assert _spec('kubectl -n "$NAMESPACE" logs "$POD"\n').splitlines()[line - 1][col - 1:].startswith("$POD")


def test_rg507_quiet_for_kept_labels_own_assignments_environment_and_static_labels():
    cmd = ('POD=$(kubectl get pods -o name | head -1)\n'
           'kubectl --kubeconfig "$KUBECONFIG" -n "$NAMESPACE" get "$NAME" "$POD"\n'
           'echo "$TEAM" $lower_case\n')
    text = _spec(cmd).replace("        severity: critical\n", "        severity: critical\n        labels: {team: x}\n")
    assert _findings(text) == []


def test_rg507_follows_declared_variables():
    text = _spec('kubectl -n "$NS" get pods\n').replace(
        "          impact:", "          variables: {NS: pod}\n          impact:")
    assert [c for _, _, c, _ in _findings(text)] == ["RG507"]
    ok = text.replace("variables: {NS: pod}", "variables: {NS: namespace}")
    assert _findings(ok) == []


# --- RG508, RG509, RG510 -----------------------------------------------------------------------

def test_rg508_dashboard_mapping_and_rg509_silence_matchers_must_be_carried():
    extra_rb = ("          dashboards:\n"
                "            - {title: Backends, url: \"https://grafana.example.com/d/x\", "
                "variables: {namespace: ns, pod: pod}}\n"
                "          silence:\n"
                "            when: During a planned migration.\n"
                "            matchers: {namespace: ai, instance: x}\n")
    text = _spec("kubectl get pods\n").replace("          impact:", extra_rb + "          impact:")
    codes = sorted((c, re.search(r"(?:label|matcher) '(\w+)'", m).group(1)) for _, _, c, m in _findings(text))
    assert codes == [("RG508", "pod"), ("RG509", "instance")]


def test_rg510_required_triage_fields_by_severity():
    cfg = parse_config({"conventions": {"require_triage": {"critical": ["impact", "owner", "escalation", "do_not"]}}})
    found = _findings(_spec("kubectl get pods\n"), cfg)
    # impact and owner on the alert, do_not at app level: only escalation is missing
    assert [(c, "runbook.escalation" in m) for _, _, c, m in found] == [("RG510", True)]
    assert _findings(_spec("kubectl get pods\n")) == []  # off by default
    with pytest.raises(RulegenError, match="unknown field"):
        parse_config({"conventions": {"require_triage": {"critical": ["owners"]}}})


def test_links_must_be_http():
    text = _spec("kubectl get pods\n").replace("https://notes.example.com/demo", "javascript:alert(1)")
    r = validate_texts({"rules/demo.yaml": text})
    assert [f.code for f in r.findings if f.is_error] == ["RG204"]
    with pytest.raises(RulegenError, match="http"):
        parse_config({"runbooks": {"prometheus_url": "file:///etc/passwd"}})


# --- label flow (the stand-in until issue 12's module is merged) --------------------------------

@pytest.mark.parametrize("expr, label, expected", [
    ("max by (namespace, name) (x) > 0", "pod", False),
    ("max by (namespace, name) (x) > 0", "namespace", True),
    ("sum(x)", "job", False),
    ("sum without (pod) (x)", "pod", False),
    ("sum without (pod) (x)", "job", None),
    ("absent(up{job=\"a\"} == 1)", "job", False),
    ("absent(up{job=\"a\"})", "job", True),
    ("absent(up{job=\"a\"})", "instance", False),
    ("time() - container_last_seen > 60", "instance", None),  # regression: time() is a scalar
    ("a * on (x) b", "y", False),
    ("a * on (x) group_left (y) b", "y", True),
    ("a * ignoring (x) b", "x", False),
    ("topk(3, sum by (a) (x))", "b", False),
    ("vector(1)", "a", False),
    ("up == 0", "pod", None),
    ("not promql (", "pod", None),
])
def test_can_carry(expr, label, expected):
    assert can_carry(expr, label) is expected


def test_can_carry_on_the_corpus_flags_only_labels_the_expression_drops(shared_dir):
    """Measured both ways on "Awesome Prometheus alerts" (CC BY 4.0, read in place): every
    `$labels.x` its annotations use is asked. False must be a real absence: an aggregation whose
    by-list lacks the label, an aggregation without by, or absent()."""
    counts, falses = Counter(), []
    for p in sorted(CORPUS.rglob("*.y*ml")):
        for g in yaml.safe_load(p.read_text(encoding="utf-8")).get("groups") or []:
            for r in g.get("rules") or []:
                if "alert" not in r:
                    continue
                text = " ".join(str(v) for v in (r.get("annotations") or {}).values())
                for label in sorted(set(re.findall(r"\$labels\.([A-Za-z_]\w*)", text))):
                    v = can_carry(str(r["expr"]), label)
                    counts[v] += 1
                    if v is False:
                        falses.append((str(r["expr"]), label))
    print(f"can_carry on the corpus: {dict(counts)}")
    assert sum(counts.values()) == 1421 and counts[False] > 0
    for expr, label in falses:
        by = [set(re.split(r"\s*,\s*", m.strip())) for m in re.findall(r"\bby\s*\(([^)]*)\)", expr)]
        assert "absent" in expr or not by or any(label not in b for b in by), (expr, label)


# --- page rendering ------------------------------------------------------------------------------

def test_readable_templates():
    assert runbook.readable("Deployment {{ $labels.namespace }}/{{ $labels.deployment }}") == \
        "Deployment ‹namespace›/‹deployment›"
    assert runbook.readable('{{ $value | humanizePercentage }} of {{ index $labels "pod" }} {{ .Foo }}') == \
        "‹value› of ‹pod› ‹…›"


def test_preamble_sets_label_variables_from_equality_matchers():
    cmd = 'kubectl -n "$NAMESPACE" get deploy "$DEPLOYMENT" "$POD"'
    text = runbook.with_preamble(cmd, 'x{namespace="ai", deployment="llama-swap"} == 0', None)
    first, rest = text.split("\n", 1)
    assert first == ("NAMESPACE='ai' DEPLOYMENT='llama-swap' POD='‹pod›'  "
                     "# alert labels: namespace deployment pod")
    assert rest == cmd
    assert subprocess.run(["bash", "-n", "-c", text]).returncode == 0
    assert runbook.with_preamble("kubectl get pods", "up", None) == "kubectl get pods"


def test_first_check_keeps_the_assignments_it_needs():
    blocks = [{"title": "x"}, {"commands": "# read-only\nA='x'   # note\nkubectl get $A -n $NAMESPACE\nmore\n"}]
    assert runbook.first_check(blocks, 'up{namespace="ns"}', None) == (
        "NAMESPACE='ns'  # alert labels: namespace\n# read-only\nA='x'   # note\nkubectl get $A -n $NAMESPACE")


def test_page_shows_triage_first_and_details_collapsed(tmp_path):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/demo.yaml").write_text(_spec('kubectl -n "$NAMESPACE" get cachebackend "$NAME"\n'))
    (tmp_path / ".rulegen.yaml").write_text("runbooks:\n  prometheus_url: https://prom.example.com/\n"
                                           "  grafana_url: https://grafana.example.com\n")
    assert main(["-C", str(tmp_path), "build"]) == 0
    page = (tmp_path / "runbooks/demo.md").read_text()
    section = page[page.index("## DemoBackendFailing"):]
    box = section[:section.index("</div>")]
    assert '<span class="rg-sev rg-sev-critical">critical</span> Backend ‹namespace›/‹name› fails.' in box
    assert "**Impact:** Requests to the backend fail." in box
    assert "**Owner:** platform · chat `#platform` · *no paging handle recorded*" in box
    assert ("**First check:**\n\n```bash\nNAMESPACE='‹namespace›' NAME='‹name›'  # alert labels: namespace name\n"
            'kubectl -n "$NAMESPACE" get cachebackend "$NAME"\n```') in box
    assert "**Do not:** Restart the pod by hand." in box  # app level, inherited
    # issue 29: the expression is on the page once, as the PromQL block after "Fires when"
    # (no second copy in collapsed rule-author details)
    fires = section[section.index("### Fires when"):]
    assert section.count("max by (namespace, name)") == 1
    assert ("Fires when `max by (namespace, name) (demo_condition{status=\"False\"})`{ .rg-promql }\n"
            "is `> 0`\n") in fires
    assert "```promql" not in fires  # short: in the sentence only
    assert "Rule details" not in page and "rg-rule" not in page
    # the values knobs, once for the page (in its header) instead of under every alert
    head = page[:page.index("## DemoBackendFailing")]
    assert ("Per-alert knobs live under `prometheusRule` there: `disabled.<Alert>: true` drops an alert, "
            "`customRules.<Alert>` overrides its `for` (`customRules.<Alert>.for`)") in flat(head)
    assert "customRules" not in section
    # issue 29: the "Open in" links are the site script's, from the base URLs it holds (one
    # line each): the page holds no query address
    assert "prom.example.com" not in page and "grafana.example.com" not in page
    js = (tmp_path / "runbooks/assets/rulegen.js").read_text()
    assert ('\nvar RG_PROMETHEUS_URL = "https://prom.example.com";\n'
            'var RG_GRAFANA_URL = "https://grafana.example.com";\n') in js
    assert max(len(line) for line in section.splitlines()) <= 120
    assert "- [Team notes](https://notes.example.com/demo)" in section
    assert (tmp_path / "runbooks/assets/rulegen.js").read_text().startswith("/* Code generated by rulegen")
    assert "http://" not in (tmp_path / "runbooks/assets/rulegen.js").read_text().replace(
        "http:// or", "")  # no external resource


def test_owner_not_invented_when_the_spec_has_none():
    assert runbook.owner_md(None) == "*not recorded: neither the spec nor the project's owners: defaults name a team*"
    # the bundled specs name their (invented) teams: every alert's triage box shows one
    from rulegen.pipeline import load_project
    specs = load_project(REPO).specs
    for app, team in (("llama-swap", "ai-platform"), ("noctaya", "model-serving"), ("inferencecache", "kv-cache")):
        page = (REPO / f"runbooks/{app}.md").read_text()
        assert "**Owner:** *not recorded" not in page
        boxes = re.findall(r'<div class="rg-triage" markdown>\n(.*?)\n</div>', page, re.S)
        assert len(boxes) == len({r.name for s in specs if s.app == app for r in s.alerts()})
        assert boxes and all(flat(b).count("**Owner:** ") == 1 for b in boxes), app
        assert all(f"**Owner:** {team} · chat `#{team}` · paging `{team}-oncall`" in flat(b) for b in boxes)


def test_an_unrecorded_owner_is_said_once_in_the_page_header_and_a_known_one_in_each_box(tmp_path):
    """Issue 29: "not recorded" under every alert repeated one fact per alert; it is now said
    once, at the top of the page. A known owner stays in each alert's triage box (the first
    screen a runbook_url opens)."""
    (tmp_path / "rules").mkdir()
    second = ("      - alert: DemoBackendSlow\n        expr: demo_latency_seconds > 1\n        severity: warning\n"
              "        summary: Backend slow.\n        description: Backend latency is over a second.\n")
    (tmp_path / "rules/demo.yaml").write_text(_spec("kubectl get pods\n").replace(
        "          owner: {team: platform, chat: \"#platform\"}\n", "") + second)
    assert main(["-C", str(tmp_path), "build"]) == 0
    page = (tmp_path / "runbooks/demo.md").read_text()
    head = flat(page[:page.index("## DemoBackendFailing")])
    assert ("**Owner:** *not recorded* for any alert of this page: neither the spec nor the project's owners: "
            "defaults name a team.") in head
    assert flat(page).count("not recorded") == 1
    # one alert with an owner: the header names the other, the box shows the known one
    (tmp_path / "rules/demo.yaml").write_text(_spec("kubectl get pods\n") + second)
    assert main(["-C", str(tmp_path), "build"]) == 0
    page = (tmp_path / "runbooks/demo.md").read_text()
    head = flat(page[:page.index("## DemoBackendFailing")])
    assert "**Owner:** *not recorded* for DemoBackendSlow: neither the spec" in head
    boxes = re.findall(r'<div class="rg-triage" markdown>\n(.*?)\n</div>', page, re.S)
    assert len(boxes) == 2
    assert "**Owner:** platform · chat `#platform`" in flat(boxes[0]) and "Owner" not in boxes[1]


def test_every_bundled_critical_alert_has_its_triage_fields():
    from rulegen.pipeline import load_project
    specs = load_project(REPO).specs
    critical = [(s, r) for s in specs for r in s.alerts() if r.severity == "critical"]
    assert len(critical) == 7  # 5, and the two rules of noctaya's SLO page alert
    for s, r in critical:
        fields = triage.effective(s, r)
        assert fields.get("impact") and fields.get("do_not"), r.name
        assert runbook.first_check(r.runbook.get("diagnosis") or [], r.expr, None), r.name


def test_alert_index_groups_by_app_with_root_causes_first():
    text = (REPO / "runbooks/alerts.md").read_text()
    order = re.findall(r"^- \[(\w+)\]", text, re.M)  # one list item per alert
    assert order.index("InferenceCacheServerDown") < order.index("InferenceCacheBackendProbeError")
    assert order.index("InferenceCacheServerDown") < order.index("InferenceCacheBackendProbeFailed")
    assert order.index("LlamaSwapDown") < order.index("LlamaSwapNoMetrics")
    assert order.index("NoctayaLLMServiceDegraded") < order.index("NoctayaGatewayActivationTimeouts")
    assert [a for a in re.findall(r'data-app="([^"]+)"', text)] == ["inferencecache", "llama-swap", "noctaya"]
    assert "{{" not in text and "rg-sev-critical" in text and '· team <span class="rg-team">kv-cache</span>' in text
    assert max(len(line) for line in text.splitlines()) <= 120  # issue 29: a list, not wide table rows
    # cause -> symptoms from inhibited_by only (issue 28: no guessed "fires together" pairs)
    assert ('<span class="rg-inhibits">symptom of [InferenceCacheServerDown]'
            '(inferencecache.md#inferencecacheserverdown)</span>') in text


ORDER_SPEC = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoSlow
        expr: demo_latency_seconds > 1
        severity: warning
        summary: Slow.
      - alert: DemoErrors
        expr: demo_errors > 1
        severity: warning
        inhibited_by: {alert: DemoDown}
        summary: Errors.
      - alert: DemoDiskFull
        expr: demo_disk_free < 1
        severity: SEV
        summary: Disk full.
      - alert: DemoDown
        expr: up{job="demo"} == 0
        severity: warning
        summary: Down.
"""


@pytest.mark.parametrize("severity", ["info", "warning", "critical"])
def test_alert_index_order_is_causes_then_spec_order_whatever_the_severity(severity):
    """Regression (issue 29): the index ordered ties by severity, so a severity edit moved the
    alert's 4-line entry (6 to 8 changed lines of alerts.md for one line of the spec). The cause
    (DemoDown, which DemoErrors is inhibited by) still comes first, the symptom after it; the
    rest keep the spec's order, whatever DemoDiskFull's severity."""
    from rulegen.render.runbook_index import cause_order
    from rulegen.spec import build_spec, load_text
    spec = build_spec(load_text(ORDER_SPEC.replace("SEV", severity), "rules/demo.yaml"))
    assert [r.name for r in cause_order(spec)] == ["DemoDown", "DemoSlow", "DemoErrors", "DemoDiskFull"]


def test_llama_swap_page_names_one_values_path():
    page = (REPO / "runbooks/llama-swap.md").read_text()
    assert set(re.findall(r"[\w./-]*llama-swap/values\.yaml", page)) == {"charts/llama-swap/values.yaml"}


def test_plain_text_shortcut_agrees_with_bash():
    """plainly_valid() skips bash only where bash agrees (random plain-looking texts)."""
    import random
    from rulegen.validate.checks.runbook import plainly_valid
    rnd = random.Random(5)
    words = ["kubectl", "-n", "ai", "get", "pods", "fi", "then", "done", "x=1", "a:b", "if", "in",
             "esac", "do", "time", "%", "~", "--x=y", "case", "for"]
    checked = 0
    for _ in range(300):
        text = "\n".join(" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 4)))
                         for _ in range(rnd.randint(1, 3)))
        if plainly_valid(text):
            checked += 1
            assert subprocess.run(["bash", "-n", "-c", "--", text], capture_output=True).returncode == 0, text
    assert checked > 50
    assert not plainly_valid("fi") and not plainly_valid("kubectl get x <name>")


def test_a_block_starting_with_a_dash_is_parsed_not_taken_for_bash_options():
    """Regression: `bash -n -c TEXT` read a TEXT starting with '-' as options."""
    from rulegen.validate.checks.runbook import shell_error
    assert shell_error("-x <") is not None
    assert shell_error("--help (") is not None


def test_alert_shows_the_app_sections_it_depends_on_and_rg511_flags_unknown_titles():
    page = (REPO / "runbooks/inferencecache.md").read_text()
    section = page[page.index("## InferenceCacheBackendProbeFailed"):page.index("## InferenceCacheBackendProbeError")]
    assert "**From [Functional probe failure reasons](#functional-probe-failure-reasons):**" in section
    # the app's wide table, shown again in the alert (as a list: its rows are over 120 characters)
    assert ("- `ProbeIngestFailed` · Stage: ingest · Meaning: The server's in-process index ingest path is "
            "dropping writes.") in flat(section)
    sections = "runbook:\n  sections:\n    - title: Reasons\n      blocks: [{markdown: x}]\n"
    text = _spec("kubectl get pods\n").replace("runbook:\n", sections, 1).replace(
        "          impact:", "          context: [Reason]\n          impact:")
    found = _findings(text, codes=("RG511",))
    assert [(c, "'Reason'" in m and "sections: Reasons" in m) for _, _, c, m in found] == [("RG511", True)]
    assert _findings(text.replace("context: [Reason]", "context: [Reasons]"), codes=("RG511",)) == []


def test_rg512_warns_when_mkdocs_yml_lacks_what_the_pages_need(project, capsys):
    assert main(["-C", str(project), "build"]) == 0
    assert "RG512" not in capsys.readouterr().err  # the bundled mkdocs.yml lists them
    mk = project / "mkdocs.yml"
    mk.write_text(mk.read_text().replace("  - md_in_html\n", "").replace("  - assets/rulegen.js\n", "")
                  .replace("extra_javascript:\n", ""))
    assert main(["-C", str(project), "build"]) == 0  # a warning
    out = capsys.readouterr().err
    assert ("mkdocs.yml:1:1: warning RG512 mkdocs.yml lacks markdown_extensions: md_in_html, "
            "extra_javascript: assets/rulegen.js") in out


def test_link_urls_with_parentheses_stay_one_link():
    assert runbook.link_url("https://x.example.com/a_(b)") == "https://x.example.com/a_%28b%29"
    md = runbook.dashboard_md({"title": "D", "url": "https://g.example.com/d/x?orgId=1",
                               "variables": {"namespace": "ns"}}, 'up{namespace="ai"}')
    assert md == ('[D](https://g.example.com/d/x?orgId=1&var-ns=ai)'
                  '{ data-rg-labels="namespace=var-ns" }')


def test_first_check_skips_assignments_with_quoted_spaces():
    blocks = [{"commands": "POD='‹engine pod›' C=\"a b\"   # not labels\nkubectl logs \"$POD\" -c \"$C\"\n"}]
    assert runbook.first_check(blocks, "up", None) == (
        "POD='‹engine pod›' C=\"a b\"   # not labels\nkubectl logs \"$POD\" -c \"$C\"")


def test_bash_verdicts_are_kept_between_runs(tmp_path, monkeypatch):
    import sys
    from rulegen.validate.checks import runbook as rb
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path), raising=False)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    text = "kubectl get x <name> # kept-verdict test"
    rb.shell_error.cache_clear()
    first = rb.shell_error(text)
    assert first is not None and "newline" in first[1]
    rb.shell_error.cache_clear()
    monkeypatch.setattr(rb, "_ask_bash", lambda *a: pytest.fail("bash asked again"))
    assert rb.shell_error(text) == first
    rb.shell_error.cache_clear()


# --- adversarial review of the runbook checks: placeholders, here-documents, quoting, anchors ---

def _at(text: str, line: int, col: int) -> str:
    """The spec text from file position (line, col), 1-based."""
    return text.splitlines()[line - 1][col - 1:]


def test_rg506_flags_placeholders_in_the_middle_of_a_line_that_bash_n_passes(tmp_path):
    """Regression: `<pod>` mid-line is two redirections; `bash -n` passes it, so RG506 missed it,
    and the pasted command fails (or `>` truncates the file the next word names)."""
    cmd = "kubectl get pods -n ns\nkubectl logs <pod> -n ns --tail 50\n"
    assert subprocess.run(["bash", "-n", "-c", "--", cmd]).returncode == 0  # the miss was real
    ran = subprocess.run(["bash", "-c", "echo <pod> -n ns"], cwd=tmp_path, capture_output=True, text=True)
    assert "pod: No such file or directory" in ran.stderr
    text = _spec(cmd)
    found = _findings(text)
    assert [(c, m.split(" in a command")[0]) for _, _, c, m in found] == [("RG506", "<pod>")]
    line, col, _, message = found[0]
    assert _at(text, line, col).startswith("<pod> -n ns --tail 50")
    assert message.endswith('write the value as a variable the page fills from the alert, "$POD" (the label '
                            "pod; another label: runbook.variables {POD: <label>}), or quote the text")


def test_rg506_reports_each_line_once_naming_all_its_placeholders_and_not_bash_again():
    cmd = ("kubectl logs <pod-name> -c <container> -n ns\n"
           "kubectl describe <pod name> -n ns\n"  # bash reads `< pod`, then `name`, then `> -n`
           "kubectl get cachebackend <name> -n <ns>\n"  # bash -n fails on this line too
           'echo "$(kubectl logs <pod>)"\n')  # a command substitution is shell text, even in quotes
    text = _spec(cmd)
    found = _findings(text)
    assert [(c, m.split(" in a command")[0]) for _, _, c, m in found] == [
        ("RG506", "<pod-name>, <container>"), ("RG506", "<pod name>"), ("RG506", "<name>, <ns>"),
        ("RG506", "<pod>")]
    assert '"$POD_NAME"' in found[0][3] and '"$POD_NAME"' in found[1][3]
    assert [_at(text, line, col)[:5] for line, col, _, _ in found] == ["<pod-", "<pod ", "<name", "<pod>"]


@pytest.mark.parametrize("cmd", [
    'echo "<pod>" \'<pod>\' $\'<pod>\'',                   # quoted text is literal
    "kubectl get pods  # then: kubectl logs <pod>",        # a comment
    "cat <<EOF\nkubectl logs <pod> -n ns\nEOF",            # here-document bodies are text
    "cat <<'EOF'\n<pod>\nEOF",
    "kubectl apply -f - < backend.json 2>/dev/null >out.txt",  # real redirections
    "sort <in.txt >out.txt; sort < in.txt > out.txt",
    "diff <(kubectl get cm a -o yaml) <(kubectl get cm b -o yaml) 2>&1",
    "cat <<< '<pod>'",
    "echo \\<pod\\>",                                      # escaped: literal text
    "echo ‹pod›",                                          # the page's own placeholder style
])
def test_rg506_quiet_on_angle_brackets_bash_reads_as_text_or_real_redirections(cmd):
    assert triage.placeholders(cmd) == ()
    assert _findings(_spec(cmd), codes=("RG506",)) == []


def test_rg506_reports_an_unterminated_here_document_at_its_line():
    """Regression: `bash -n` only warns about a here-document without its end line (exit 0),
    and the rest of the block becomes its body."""
    cmd = "kubectl get pods -n ns\ncat <<EOF\napiVersion: v1\n  EOF\nkubectl get events\n"
    r = subprocess.run(["bash", "-n", "-c", "--", cmd], capture_output=True, text=True)
    assert r.returncode == 0 and "here-document" in r.stderr
    text = _spec(cmd)
    found = _findings(text)
    assert [c for _, _, c, _ in found] == ["RG506"]
    line, col, _, message = found[0]
    assert _at(text, line, col) == "cat <<EOF"
    assert "bash -n: warning: here-document at line 2 delimited by end-of-file (wanted `EOF')" in message
    assert "end it with a line holding only the delimiter word" in message
    assert _findings(_spec(cmd.replace("  EOF", "EOF"))) == []
    assert _findings(_spec("cat <<-EOF\n\tx\n\tEOF\n")) == []  # <<- allows leading tabs


@pytest.mark.parametrize("text, names", [
    ('echo "it\'s $POD"', ["POD"]),                        # regression: apostrophe in double quotes
    ("echo 'it'\"'\"'s $NOPE' \"$POD\"", ["POD"]),
    ("echo $'it\\'s $NOPE' $POD", ["POD"]),
    ('echo \\$NOPE "\\$NOPE" "\\\\$POD"', ["POD"]),
    ("echo ${POD} ${NS:-default} ${#LEN} ${!REF} ${A:-$B} \"${C:-'$D'}\" ${E:-'$NOPE'}",
     ["POD", "NS", "LEN", "REF", "A", "B", "C", "D", "E"]),
    ("echo $1 $? $@ $$ $# $! $- ${1} $", []),
    ('echo "$(echo \'it\'"\'"\'s\' "$POD")" `echo $NS`', ["POD", "NS"]),
    ("echo $((COUNT + 1)) $((0x1f + 16#ff)) $(( $N * 2 )) $[M+1]\n((I++))", ["COUNT", "N", "M", "I"]),
    ("cat <<'EOF'\n$NOPE \"$NOPE\"\nEOF\necho $POD", ["POD"]),  # regression: quoted here-document
    ('cat <<"EOF"\n$NOPE\nEOF', []),
    ("cat <<\\EOF\n$NOPE\nEOF", []),
    ("cat <<E'O'F\n$NOPE\nEOF", []),
    ("cat <<EOF\n$POD \"$NS\" '$NAME' \\$NOPE\nEOF\necho $AFTER", ["POD", "NS", "NAME", "AFTER"]),
    ("cat <<-EOF\n\t$POD\n\tEOF\necho $AFTER", ["POD", "AFTER"]),
    ("cat <<'A' <<B\n$NOPE\nA\n$POD\nB", ["POD"]),
    ('x=$(cat <<EOF\n$POD\nEOF\n)\necho "$x"', ["POD", "x"]),
    ("cat <<< \"$POD\" # $NOPE", ["POD"]),
    ("echo a#$POD; # $NOPE", ["POD"]),
    ('echo $"text $POD"', ["POD"]),
])
def test_variables_used_follows_bash_quoting(text, names):
    assert [n for n, _ in triage._read(text).uses] == names
    for name, at in triage._read(text).uses:
        assert text[at] == "$" or text.startswith(name, at)


#: Texts that only print (safe to run): bash itself says which variables they expand.
_ORACLE = [
    'echo "it\'s $POD"', "echo 'it'\"'\"'s $NOPE' \"$POD\"", "echo $'it\\'s $NOPE' $POD",
    'echo \\$NOPE "\\$NOPE" "\\\\$POD"', "echo ${POD} ${NS:-d} \"${A:-$B}\" \"${C:-'$D'}\" ${E:-'$NOPE'}",
    'echo "$(echo \'it\'"\'"\'s\' "$POD")" `echo $NS`', "cat <<'EOF'\n$NOPE \"$NOPE\"\nEOF\necho $POD",
    'cat <<"EOF"\n$NOPE\nEOF', "cat <<\\EOF\n$NOPE\nEOF", "cat <<E'O'F\n$NOPE\nEOF",
    "cat <<EOF\n$POD \"$NS\" '$NAME' \\$NOPE\nEOF\necho $AFTER", "cat <<-EOF\n\t$POD\n\tEOF\necho $AFTER",
    "cat <<'A' <<B\n$NOPE\nA\n$POD\nB", 'echo "$(cat <<EOF\n$POD\nEOF\n)"', "cat <<< \"$POD\" # $NOPE",
    "echo a#$POD; # $NOPE", 'echo $"text $POD"', "echo \"$POD\"'$NOPE'\"$NS\"${NAME}x",
    'echo "\\"$POD\\"" \'\\\' $NS',
]


@pytest.mark.parametrize("text", _ORACLE)
def test_variables_used_agrees_with_bash_running_the_text(text, tmp_path):
    """Measured against bash itself: each upper-case name is set alone to a marker and the text
    run; the marker shows in the output exactly when variables_used reports the name."""
    used = {n for n, _ in triage.variables_used(text)}
    for name in sorted(set(re.findall(r"\b[A-Z][A-Z0-9_]*\b", text)) - {"EOF", "A", "B"} | used):
        out = subprocess.run(["bash", "-c", text], cwd=tmp_path, capture_output=True, text=True, timeout=10,
                             env={"PATH": "/usr/bin:/bin", name: f"@{name}@"}).stdout
        assert (f"@{name}@" in out) == (name in used), (name, out)
    assert "NOPE" not in used


def test_rg507_sees_a_variable_after_an_apostrophe_and_in_unquoted_here_documents():
    for cmd in ('echo "it\'s $POD"\n', "kubectl exec -i x -- sh <<EOF\necho $POD\nEOF\n"):
        text = _spec(cmd)
        found = _findings(text)
        assert [(c, m.split(" stands")[0]) for _, _, c, m in found] == [("RG507", "$POD")], cmd
        assert _at(text, *found[0][:2]).startswith("$POD")


def test_rg507_quiet_inside_a_quoted_here_document():
    """Regression: bash does not expand a quoted here-document's body; it raised a false RG507."""
    cmd = "kubectl exec -i deploy/x -- sh <<'EOF'\nfor POD in a b; do echo \"$POD $HOSTNAME_X\"; done\necho $POD_IP\nEOF\n"
    assert _findings(_spec(cmd)) == []
    assert triage.variables_used(cmd) == ()


def test_preamble_sets_the_variable_after_an_apostrophe():
    text = runbook.with_preamble('echo "it\'s $NAMESPACE"', 'up{namespace="ai"}', None)
    assert text.split("\n")[0] == "NAMESPACE='ai'  # alert labels: namespace"
    assert runbook.with_preamble("cat <<'EOF'\n$NAMESPACE\nEOF", "up", None) == "cat <<'EOF'\n$NAMESPACE\nEOF"


_TWO_ALERTS = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: FooDown
        expr: up == 0
        severity: warning
        summary: a
        description: b
      - alert: @SECOND@
        expr: up == 0
        severity: critical
        summary: a
        description: b
"""


def test_rg513_alert_names_that_differ_only_in_case_share_an_anchor():
    text = _TWO_ALERTS.replace("@SECOND@", "Foodown")
    found = _findings(text, codes=("RG513",))
    assert found == [(10, 16, "RG513", "alerts 'Foodown' and 'FooDown' (line 5) make the same runbook anchor "
                      "#foodown, so both runbook_urls open the section of 'FooDown'; rename one so the "
                      "names differ in more than case and punctuation")]
    assert _at(text, 10, 16) == "Foodown"
    assert _findings(_TWO_ALERTS.replace("@SECOND@", "Foo-Down"), codes=("RG513",)) == []  # #foo-down
    assert _findings(_TWO_ALERTS.replace("@SECOND@", "FooDown!"), codes=("RG513",))[0][2] == "RG513"
    assert _findings(_TWO_ALERTS.replace("@SECOND@", "FooDown"), codes=("RG513",)) == []  # one section on purpose
    assert _findings(_TWO_ALERTS.replace("@SECOND@", "FooDegraded"), codes=("RG513",)) == []


@pytest.mark.parametrize("text", [
    'read -p "Pod? " POD; kubectl logs "$POD"',         # a quoted prompt: one word to skip
    'read -r NS POD <<< "$LINE_X"; kubectl -n "$NS" logs "$POD"',
    "read -ra PODS; echo \"${PODS[@]}\"",
    "read -d '' -r BODY; echo \"$BODY\"",
    "mapfile -t PODS < <(kubectl get pods -o name); echo \"${PODS[@]}\"",
    "readarray PODS <file; echo \"${PODS[0]}\"",
    'printf -v POD "%s-0" "$NAME"; kubectl logs "$POD"',
])
def test_variables_a_block_reads_or_prints_into_are_its_own(text):
    """A variable set by read, mapfile or printf -v is the block's, not an alert label (no RG507,
    no preamble entry); the prompt of `read -p "..."` used to hide the name."""
    assert {n for n, _ in triage.variables_used(text)} <= {"LINE_X", "NAME"}
