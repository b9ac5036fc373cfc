"""Link integrity (rulegen.outputs.links): every runbook_url and runbook link lands."""

from __future__ import annotations

import dataclasses
import re
import subprocess

import pytest
import yaml

import rulegen.parallel
import rulegen.outputs.runbook_urls as urls_mod
from rulegen.cli import main
from rulegen.outputs.links import check_links
from rulegen.outputs.pages import url_to_page
from rulegen.outputs.runbook_urls import default_runbook_url
from rulegen.pipeline import load_project, plan_project

from helpers.site import mkdocs_build


def planned(project, parallel=False, monkeypatch=None):
    """Specs and planned outputs; ``parallel``: the link check that follows reads pages and
    values on two cores however few there are (``monkeypatch`` sets the threshold)."""
    loaded = load_project(project)
    outputs, findings = plan_project(loaded)
    assert not [f for f in findings if f.is_error]
    if parallel:
        monkeypatch.setattr(rulegen.parallel, "MIN_ITEMS", 1)
    return loaded.specs, outputs


def codes(findings):
    return [(f.code, f.rule) for f in findings]


def replace_output(outputs, path, old, new):
    out = []
    for o in outputs:
        if o.path == path:
            assert old in o.content
            o = dataclasses.replace(o, content=o.content.replace(old, new))
        out.append(o)
    return out


def test_bundled_project_has_no_broken_link(project):
    specs, outputs = planned(project)
    assert check_links(outputs, specs, project) == []


def test_default_runbook_url_follows_values_precedence(project):
    specs, _ = planned(project)
    spec = next(s for s in specs if s.app == "llama-swap")
    group, rule = next((g, r) for g, r in spec.rules() if r.name == "LlamaSwapDown")
    base = "https://runbooks.example.com/"
    assert default_runbook_url(spec, group, rule, base, {}) == "https://runbooks.example.com/llama-swap/#llamaswapdown"
    v = {"prometheusRule": {"runbookUrl": "https://rb.example.org/x/"}}
    assert default_runbook_url(spec, group, rule, base, v) == "https://rb.example.org/x/llama-swap/#llamaswapdown"
    v["prometheusRule"]["additionalRuleAnnotations"] = {"runbook_url": "https://a/"}
    assert default_runbook_url(spec, group, rule, base, v) == "https://a/"
    v["prometheusRule"]["groups"] = {"llama-swap": {"additionalRuleAnnotations": {"runbook_url": "https://g/"}}}
    assert default_runbook_url(spec, group, rule, base, v) == "https://g/"
    v["prometheusRule"]["customRules"] = {"LlamaSwapDown": {"annotations": {"runbook_url": "https://c/"}}}
    assert default_runbook_url(spec, group, rule, base, v) == "https://c/"


def test_url_to_page():
    pages = {"index.md", "llama-swap.md", "guides/argocd.md", "x/index.md"}
    assert url_to_page("llama-swap/", pages) == "llama-swap.md"
    assert url_to_page("llama-swap", pages) == "llama-swap.md"
    assert url_to_page("", pages) == "index.md"
    assert url_to_page("x/", pages) == "x/index.md"
    assert url_to_page("guides/argocd/", pages) == "guides/argocd.md"
    assert url_to_page("nope/", pages) is None
    assert url_to_page("llama-swap.html", pages, use_directory_urls=False) == "llama-swap.md"
    assert url_to_page("llama-swap.html", pages, use_directory_urls=True) is None


def test_renamed_alert_heading_is_caught_with_the_missing_anchor(project):
    specs, outputs = planned(project)
    broken = replace_output(outputs, "runbooks/llama-swap.md", "## LlamaSwapDown { #llamaswapdown }",
                            "## LlamaSwapDown { #llama-swap-down }")
    found = check_links(broken, specs, project)
    rg711 = [f for f in found if f.code == "RG711"]
    assert len(rg711) == 1
    f = rg711[0]
    # the URL is generated from the alert's name, so the finding points at the alert itself
    # (found in the spec, not a fixed line: the bundled spec grows)
    line = (project / "rules/llama-swap.yaml").read_text().split("\n").index("      - alert: LlamaSwapDown") + 1
    assert (f.file, f.line, f.col, f.rule) == ("rules/llama-swap.yaml", line, 9, "LlamaSwapDown")
    assert f.message.startswith("LlamaSwapDown: runbook_url https://runbooks.example.com/llama-swap/#llamaswapdown "
                                "opens runbooks/llama-swap.md but it has no anchor #llamaswapdown (missing anchor)")
    # the related link from LlamaSwapNoMetrics and the page/index links break too
    assert ("RG714", "LlamaSwapNoMetrics") in codes(found)
    rg715 = sorted((f.file, f.message) for f in found if f.code == "RG715")
    assert ("runbooks/alerts.md", "link llama-swap.md#llamaswapdown: runbooks/llama-swap.md has no anchor "
            "#llamaswapdown (missing anchor)") in rg715
    assert ("runbooks/llama-swap.md", "link #llamaswapdown: runbooks/llama-swap.md has no anchor "
            "#llamaswapdown (missing anchor)") in rg715


def test_deleted_page_is_caught(project):
    assert main(["-C", str(project), "build"]) == 0
    specs, _ = planned(project)
    (project / "runbooks/llama-swap.md").unlink()
    found = check_links([], specs, project)  # what is on disk
    rg710 = [f for f in found if f.code == "RG710"]
    assert [f.rule for f in rg710] == ["LlamaSwapDown", "LlamaSwapNoMetrics"]
    assert rg710[0].message == ("LlamaSwapDown: runbook_url https://runbooks.example.com/llama-swap/#llamaswapdown "
                                "opens page 'llama-swap/' but the site has no such page (expected "
                                "runbooks/llama-swap.md); run rulegen build")
    assert ("RG714", "LlamaSwapNoMetrics") in codes(found)  # related link to the deleted page
    assert any(f.code == "RG715" and f.file == "runbooks/alerts.md" for f in found)


def test_renamed_alert_breaks_related_entries_and_hand_links(project):
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text()
    # rename the alert itself, but not the related entry nor the hand-written link in the text
    spec.write_text(re.sub(r"^      - alert: LlamaSwapDown$", "      - alert: LlamaSwapUnavailable", text, flags=re.M))
    specs, outputs = planned(project)
    found = check_links(outputs, specs, project)
    rg713 = [f for f in found if f.code == "RG713"]
    assert len(rg713) == 1
    assert rg713[0].rule == "LlamaSwapNoMetrics"
    # the renamed alert is suggested; the entry's own alert (LlamaSwapNoMetrics, as close) is not
    assert rg713[0].message == ("LlamaSwapNoMetrics: related alert 'LlamaSwapDown' is not defined by any spec; "
                                "did you mean LlamaSwapUnavailable? Fix the name or remove the entry")
    assert rg713[0].file == "rules/llama-swap.yaml"
    assert [(f.file, f.message) for f in found if f.code == "RG715"] == [
        ("runbooks/llama-swap.md", "link #llamaswapdown: runbooks/llama-swap.md has no anchor #llamaswapdown "
                                   "(missing anchor)")]


@pytest.mark.parametrize("parallel", [False, True])
def test_runbook_url_outside_the_site(project, parallel, monkeypatch):
    values = project / "charts/llama-swap/values.yaml"
    values.write_text(values.read_text().replace("runbookUrl: https://runbooks.example.com",
                                                 "runbookUrl: https://wiki.example.org/runbooks"))
    specs, outputs = planned(project, parallel, monkeypatch)
    found = check_links(outputs, specs, project)
    assert codes(found) == [("RG712", ""), ("RG712", "LlamaSwapDown"), ("RG712", "LlamaSwapNoMetrics")]
    assert "runbook_url https://wiki.example.org/runbooks/llama-swap/#llamaswapdown is not under the runbook site " \
           "https://runbooks.example.com/" in found[1].message
    # a new-user trial: the findings were only at the alerts' lines of the spec, and named no
    # values file; they name the key and its line, and the values file's line has one too
    line = values.read_text().split("\n").index("  runbookUrl: https://wiki.example.org/runbooks") + 1
    assert found[1].message.endswith(
        f"(prometheusRule.runbookUrl in charts/llama-swap/values.yaml:{line} sets this URL)")
    assert (found[0].file, found[0].line, found[0].col) == ("charts/llama-swap/values.yaml", line, 3)
    assert found[0].message.startswith(
        "prometheusRule.runbookUrl here sets the runbook_url of LlamaSwapDown, LlamaSwapNoMetrics (RG712 at each in "
        "the spec). LlamaSwapDown: runbook_url https://wiki.example.org/runbooks/llama-swap/#llamaswapdown is not "
        "under the runbook site https://runbooks.example.com/")
    assert [f.file for f in found[1:]] == ["rules/llama-swap.yaml"] * 2


def test_spec_runbook_url_to_a_missing_anchor_points_at_the_annotation(project):
    """A runbook_url the spec writes itself: the finding is at that annotation (line and
    column of its value), not at the alert."""
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text()
    old = "        summary: llama-swap has no available replica.\n"
    assert text.count(old) == 1
    spec.write_text(text.replace(old, old + "        annotations:\n"
                                 "          runbook_url: https://runbooks.example.com/llama-swap/#llamaswapdwn\n"))
    specs, outputs = planned(project)
    found = check_links(outputs, specs, project)
    assert codes(found) == [("RG711", "LlamaSwapDown")]
    lines = spec.read_text().split("\n")
    line = next(i for i, x in enumerate(lines, 1) if "#llamaswapdwn" in x)
    assert (found[0].line, found[0].col) == (line, lines[line - 1].index("https://") + 1)
    assert "no anchor #llamaswapdwn (missing anchor)" in found[0].message


@pytest.mark.parametrize("parallel", [False, True])
def test_custom_runbook_url_to_a_missing_anchor(project, parallel, monkeypatch):
    values = project / "charts/llama-swap/values.yaml"
    data = values.read_text().replace(
        "  customRules: {}",
        "  customRules:\n    LlamaSwapDown:\n      annotations:\n"
        "        runbook_url: https://runbooks.example.com/llama-swap/#gone")
    values.write_text(data)
    specs, outputs = planned(project, parallel, monkeypatch)
    found = check_links(outputs, specs, project)
    assert codes(found) == [("RG711", ""), ("RG711", "LlamaSwapDown")]  # at the values key, and the alert
    line = data.split("\n").index("        runbook_url: https://runbooks.example.com/llama-swap/#gone") + 1
    assert (found[0].file, found[0].line, found[0].col) == ("charts/llama-swap/values.yaml", line, 9)
    assert "no anchor #gone (missing anchor)" in found[0].message and "no anchor #gone" in found[1].message
    assert found[1].message.endswith(f"(prometheusRule.customRules.LlamaSwapDown.annotations.runbook_url in "
                                     f"charts/llama-swap/values.yaml:{line} sets this URL)")


@pytest.mark.parametrize("parallel", [False, True])
def test_hand_written_runbook_url_elsewhere_is_an_external_link(project, parallel, monkeypatch):
    # regression: imported upstream runbook_urls (their project's docs) were RG712 errors whose
    # advice (set runbookUrl) could not fix them; they are external links, checked for form only
    values = project / "charts/llama-swap/values.yaml"
    values.write_text(values.read_text().replace(
        "  customRules: {}",
        "  customRules:\n    LlamaSwapDown:\n      annotations:\n"
        "        runbook_url: https://runbooks.prometheus-operator.dev/runbooks/general/targetdown\n"
        "    LlamaSwapNoMetrics:\n      annotations:\n        runbook_url: wiki/LlamaSwapNoMetrics"))
    specs, outputs = planned(project, parallel, monkeypatch)
    found = check_links(outputs, specs, project)
    assert codes(found) == [("RG712", ""), ("RG712", "LlamaSwapNoMetrics")]
    assert found[1].message == (
        "LlamaSwapNoMetrics: runbook_url 'wiki/LlamaSwapNoMetrics' is neither under the runbook site "
        "https://runbooks.example.com/ nor an absolute http(s) URL, so a notification cannot open it; "
        "write the full address (https://host/path) (prometheusRule.customRules.LlamaSwapNoMetrics.annotations."
        f"runbook_url in charts/llama-swap/values.yaml:{found[0].line} sets this URL)")
    assert found[0].file == "charts/llama-swap/values.yaml"
    assert values.read_text().split("\n")[found[0].line - 1] == "        runbook_url: wiki/LlamaSwapNoMetrics"


@pytest.mark.parametrize("url,ok", [
    ("https://runbooks.prometheus-operator.dev/runbooks/x", True), ("http://wiki/x#a", True),
    ("wiki/x", False), ("/runbooks/x", False), ("ftp://h/x", False), ("https://", False), (" https://h/x", False),
])
def test_is_absolute_http_url(url, ok):
    assert urls_mod.is_absolute_http_url(url) is ok


def test_duplicate_heading_ids(project):
    (project / ".rulegen.yaml").write_text("checks:\n  disable: [RG401]\n")
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text() + '''
  - name: dup
    rules:
      - alert: "Llama Swap"
        expr: vector(1) > 0
        severity: info
        summary: a
        description: b
      - alert: "llama-swap!"
        expr: vector(1) > 0
        severity: info
        summary: a
        description: b
''')
    specs, outputs = planned(project)
    found = check_links(outputs, specs, project)
    assert [(f.code, f.file) for f in found] == [("RG716", "runbooks/llama-swap.md")]
    assert found[0].message.startswith("two headings share the id #llama-swap:")


def test_broken_link_in_a_hand_written_guide(project):
    guides = project / "runbooks/guides"
    guides.mkdir(parents=True, exist_ok=True)
    (guides / "zz-test.md").write_text("# Guide\n\nsee [down](../llama-swap.md#llamaswapdown)\n\n"
                                       "and [gone](../noctaya.md#noctayagone) and [missing](../nope.md)\n")
    specs, outputs = planned(project)
    found = check_links(outputs, specs, project)
    assert [(f.code, f.file, f.line, f.message) for f in found] == [
        ("RG715", "runbooks/guides/zz-test.md", 5, "link ../noctaya.md#noctayagone: runbooks/noctaya.md has no anchor "
                                                  "#noctayagone (missing anchor)"),
        ("RG715", "runbooks/guides/zz-test.md", 5, "link ../nope.md points to a page that does not exist"),
    ]


def test_docs_dir_mismatch(project):
    mk = project / "mkdocs.yml"
    mk.write_text(mk.read_text().replace("docs_dir: runbooks", "docs_dir: docs"))
    specs, outputs = planned(project)
    found = check_links(outputs, specs, project)
    assert found[0].code == "RG717" and found[0].file == "mkdocs.yml"
    assert {f.code for f in found} >= {"RG717", "RG710"}


def test_built_site(project, tmp_path):
    assert main(["-C", str(project), "build"]) == 0
    specs, outputs = planned(project)
    site = tmp_path / "site"
    assert check_links(outputs, specs, project, tmp_path / "nowhere")[0].code == "RG718"
    r = mkdocs_build(project, site)
    assert r.returncode == 0, r.stderr
    assert check_links(outputs, specs, project, site) == []
    html = site / "noctaya/index.html"
    html.write_text(html.read_text().replace('id="noctayallmservicedegraded"', 'id="renamed"'))
    found = check_links(outputs, specs, project, site)
    assert sorted((f.code, f.rule) for f in found) == [("RG711", "NoctayaLLMServiceDegraded"),
                                                       ("RG714", "NoctayaGatewayActivationFastBurn"),
                                                       ("RG714", "NoctayaGatewayActivationTimeouts"),
                                                       ("RG714", "NoctayaLLMServiceNotReady")]
    html.unlink()
    found = check_links(outputs, specs, project, site)
    assert {f.code for f in found} == {"RG710", "RG714"}
    assert sum(f.code == "RG710" for f in found) == 8  # one per alert rule: 4, and the SLO's 4


def test_default_runbook_url_matches_helm(project, helm_bin):
    """The derived runbook_url is byte for byte what `helm template` renders with default values."""
    assert main(["-C", str(project), "build"]) == 0
    specs, outputs = planned(project)
    from rulegen.outputs.runbook_urls import _values, _values_text
    for spec in specs:
        out = subprocess.run([str(helm_bin), "template", "rel", str(project / spec.chart.path)],
                             capture_output=True, text=True, check=True).stdout
        rendered = {}
        for doc in yaml.safe_load_all(out):
            if doc and doc.get("kind") == "PrometheusRule":
                for g in doc["spec"]["groups"]:
                    for r in g["rules"]:
                        if "alert" in r:
                            rendered[r["alert"]] = r["annotations"]["runbook_url"]
        text = _values_text({o.path: o.content for o in outputs}, project, spec)
        derived = {r.name: default_runbook_url(spec, g, r, "https://runbooks.example.com/", _values(text))
                   for g, r in spec.rules() if r.is_alert}
        assert rendered == derived


def test_a_related_entry_naming_nothing_close_gets_no_guess(project):
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text()
    assert text.count("            - alert: LlamaSwapDown\n") == 1
    spec.write_text(text.replace("            - alert: LlamaSwapDown\n", "            - alert: Zzz\n"))
    specs, outputs = planned(project)
    rg713 = [f for f in check_links(outputs, specs, project) if f.code == "RG713"]
    assert [f.message for f in rg713] == [
        "LlamaSwapNoMetrics: related alert 'Zzz' is not defined by any spec; fix the name or remove the entry"]
