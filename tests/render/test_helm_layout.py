"""The chart layout (see rulegen.render.helm): a plain rules file per app, and one
hand-written template with its helpers, the same bytes in every chart.

* the template and helpers are identical in every bundled chart and name no alert;
* the rules file reads as a person writes it (exact text of a small spec), passes the real
  ``promtool check rules`` as it is, and equals what helm renders with default values;
* a spec change to one alert's expr changes one line of the rules file (and the digest line of
  the app's sum file, issue 29);
* a chart made by the previous layout (tests/fixtures/layout-v1: the bundled specs and charts
  as rulegen 0.1 built them) moves to the new one on ``rulegen build`` without a hand-edit
  refusal, and renders the same PrometheusRule before and after.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.render import ownership
from rulegen.render import helm as helm_render
from rulegen.render.plain import rule_groups
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run

from helpers import FIXTURES, REPO
from helpers.helm import SITE, make_spec, strict_load_all

V1 = FIXTURES / "layout-v1"
CHARTS = sorted(p for p in (REPO / "charts").iterdir() if (p / "rules").is_dir())


def test_template_is_the_same_bytes_in_every_chart_the_library_is_shared_and_neither_names_an_alert():
    assert len(CHARTS) >= 3
    names = set()
    for spec_file in (REPO / "rules").glob("*.yaml"):
        doc = yaml.safe_load(spec_file.read_text(encoding="utf-8"))
        for g in doc["groups"]:
            names.add(g["name"])
            names.update(r.get("alert") or r.get("record") for r in g["rules"])
        names.add(doc["app"])
    texts = {(c / "templates" / "prometheusrule.yaml").read_bytes() for c in CHARTS}
    assert len(texts) == 1
    (text,) = texts
    assert text.decode() == helm_render.render_template()
    assert len(text.decode().splitlines()) == 2  # notice, one include
    library = (REPO / "charts/rulegen-library/templates/_rulegen.tpl").read_text(encoding="utf-8")
    assert library == helm_render.render_helpers()
    for body in (text.decode(), library):
        assert [n for n in names if n in body] == []
    for c in CHARTS:  # no copy of the library in a chart: a link to the one library
        assert not (c / "templates/_rulegen.tpl").exists()
        assert os.readlink(c / "charts/rulegen-library") == "../../rulegen-library"


SMALL = {
    "app": "shop",
    "groups": [{"name": "shop", "interval": "30s", "rules": [
        {"alert": "ShopDown", "expr": 'up{job="shop"} == 0', "for": "5m", "severity": "critical",
         "summary": "Shop {{ $labels.instance }} is down.",
         "description": "No scrape: {{ $value }} targets up.", "labels": {"on": "yes", "tier": "1"}},
        {"alert": "ShopErrors", "expr": 'sum(rate(errors_total{job="shop"}[5m]))\n  / sum(rate(requests_total{job="shop"}[5m]))\n  > 0.05\n',
         "severity": "warning", "summary": "Shop errors above 5%", "description": "Check the logs."},
        {"record": "shop:requests:rate5m", "expr": "sum(rate(requests_total[5m]))"},
    ]}],
}

SMALL_RULES = """\
# header
groups:
  - name: shop
    interval: 30s
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 5m
        labels:
          component: shop
          "on": "yes"
          severity: critical
          tier: "1"
        annotations:
          description: "No scrape: {{ $value }} targets up."
          summary: Shop {{ $labels.instance }} is down.
          runbook_url: https://runbooks.example.com/shop/#shopdown
      - alert: ShopErrors
        expr: |
          sum(rate(errors_total{job="shop"}[5m]))
            / sum(rate(requests_total{job="shop"}[5m]))
            > 0.05
        labels:
          component: shop
          severity: warning
        annotations:
          description: Check the logs.
          summary: Shop errors above 5%
          runbook_url: https://runbooks.example.com/shop/#shoperrors
      - record: shop:requests:rate5m
        expr: sum(rate(requests_total[5m]))
"""


def test_rules_file_reads_as_a_person_writes_it(tmp_path):
    """Keys unquoted, strings plain unless YAML needs quotes (a colon and space, a leading
    brace, a number, a YAML word), multi-line exprs as literal blocks."""
    spec = make_spec(SMALL)
    text = helm_render.render_rules_file(spec, tmp_path, SITE, ["# header"])
    assert not any(line.startswith("# rulegen-") for line in text.splitlines())
    meta = helm_render.render_meta_file(spec, tmp_path, SITE, ["# header"])
    assert yaml.safe_load(meta) == {"template": "prometheusrule.yaml", "rules": "shop.rules.yaml", "app": "shop",
                                    "valuesKey": "prometheusRule", "gates": ["enabled", "monitoring.enabled"],
                                    "runbookBase": "https://runbooks.example.com"}
    assert max(len(line) for line in meta.splitlines()) <= 120
    body = "\n".join(line for line in text.splitlines() if line == "# header" or not line.startswith("#")) + "\n"
    assert body == SMALL_RULES


@pytest.mark.tools
def test_bundled_rules_files_pass_promtool_as_they_are(promtool_bin):
    files = [str(p) for c in CHARTS for p in (c / "rules").glob("*.rules.yaml")]
    assert len(files) == len(CHARTS)
    proc = subprocess.run([str(promtool_bin), "check", "rules", *files], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count("SUCCESS") == len(files)


def _build(root: Path, capsys) -> str:
    code = main(["-C", str(root), "build"])
    out, err = capsys.readouterr()
    assert (code, err) == (0, ""), out + err
    return out


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def test_one_expr_change_is_one_line_of_the_rules_file(tmp_path, capsys):
    root = _copy(V1, tmp_path / "p")
    _build(root, capsys)
    rules = root / "charts/llama-swap/rules/llama-swap.rules.yaml"
    before = rules.read_text(encoding="utf-8")
    others = {p: p.read_bytes() for p in (root / "charts").rglob("*") if p.is_file() and p != rules
              and "/tests/" not in p.as_posix()}
    sum_file = root / ".rulegen-sums/llama-swap.sum.yaml"
    sum_before = sum_file.read_text(encoding="utf-8")
    spec = root / "rules/llama-swap.yaml"
    old = 'absent(up{job="llama-swap", namespace="ai"} == 1)'
    text = spec.read_text(encoding="utf-8")
    assert text.count(old) == 1
    spec.write_text(text.replace(old, 'absent(up{job="llama-swap", namespace="ai"} == 1) or vector(0) > 1'),
                    encoding="utf-8")
    _build(root, capsys)
    after = rules.read_text(encoding="utf-8")
    diff = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert diff == ['-        expr: absent(up{job="llama-swap", namespace="ai"} == 1)',
                    '+        expr: absent(up{job="llama-swap", namespace="ai"} == 1) or vector(0) > 1']
    assert {p: p.read_bytes() for p in others} == others  # template, helpers, values: unchanged
    sum_diff = [line for line in difflib.unified_diff(sum_before.splitlines(), sum_file.read_text(encoding="utf-8")
                                                      .splitlines(), lineterm="", n=0)
                if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert [line[:16] for line in sum_diff] == ["-digest: sha256:", "+digest: sha256:"]


@pytest.mark.tools
def test_previous_layout_moves_on_build_without_a_refusal_and_renders_the_same(tmp_path, capsys, helm_bin):
    root = _copy(V1, tmp_path / "p")
    on = {"enabled": True, "monitoring": {"enabled": True}}
    def knobs(chart):
        custom = {"llama-swap": {"LlamaSwapDown": {"severity": "info", "for": "1m"}},
                  "inferencecache": {"InferenceCacheAwaitingFirstKVEvent": {"labels": {"tier": "1"}}}}[chart]
        return {**on, "prometheusRule": {"runbookUrl": "https://wiki.example.org/", "customRules": custom,
                                         "additionalRuleLabels": {"env": "prod"}}}
    charts = ["llama-swap", "inferencecache"]
    before = {(c, i): helm_run.template(root / "charts" / c, values=[values_yaml(v)], root=REPO).text
              for c in charts for i, v in enumerate([on, knobs(c)])}
    assert not (root / "charts/llama-swap/rules").exists()
    out = _build(root, capsys)
    for c in charts:
        assert f"wrote charts/{c}/templates/prometheusrule.yaml" in out.splitlines()
        assert f"wrote charts/{c}/rules/{c}.rules.yaml" in out.splitlines()
        assert f"wrote charts/{c}/charts/rulegen-library" in out.splitlines()
    assert "wrote charts/rulegen-library/templates/_rulegen.tpl" in out.splitlines()
    assert main(["-C", str(root), "check"]) == 0
    capsys.readouterr()
    for (c, i), old_text in before.items():
        values = [on, knobs(c)][i]
        new_text = helm_run.template(root / "charts" / c, values=[values_yaml(values)], root=REPO).text
        old_docs, new_docs = strict_load_all(old_text), strict_load_all(new_text)
        assert new_docs == old_docs, (c, i)
        assert [d["kind"] for d in new_docs if d.get("kind") == "PrometheusRule"] == ["PrometheusRule"]


@pytest.mark.tools
def test_chart_rules_file_of_nasty_strings_passes_promtool_and_reads_back(promtool_bin, tmp_path):
    """The chart's rules file (plain where YAML allows) holds every odd string exactly, for
    PyYAML (YAML 1.1) and for Prometheus' own reader (promtool check rules)."""
    from helpers.samples import NASTY_SPEC, STRINGS
    spec = make_spec(NASTY_SPEC)
    text = helm_render.render_rules_file(spec, tmp_path, SITE, ["# test"])
    assert strict_load_all(text) == [{"groups": rule_groups(spec, SITE)}]
    f = tmp_path / "nasty.rules.yaml"
    f.write_text(text, encoding="utf-8")
    proc = subprocess.run([str(promtool_bin), "check", "rules", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"SUCCESS: {len(STRINGS) + 1} rules found" in proc.stdout


@pytest.mark.tools
def test_template_without_its_rules_file_fails_and_says_why(tmp_path, helm_bin):
    """A chart whose rules file or metadata file is missing (not copied, or left out by
    .helmignore) fails helm template with a message naming the template and the file, never
    renders an empty PrometheusRule or nothing at all."""
    from helpers.helm import write_chart
    chart, _ = write_chart(tmp_path, SMALL)
    (chart / "rules" / "shop.rules.yaml").unlink()
    with pytest.raises(helm_run.HelmError) as e:
        helm_run.template(chart)
    assert ("shop/templates/prometheusrule.yaml: rules/shop.meta.yaml names the rules file rules/shop.rules.yaml, "
            "which is missing or empty; run rulegen build") in str(e.value)
    (chart / "rules" / "shop.meta.yaml").unlink()
    with pytest.raises(helm_run.HelmError) as e:
        helm_run.template(chart)
    assert ("shop/templates/prometheusrule.yaml: no rules/*.meta.yaml names this template (template: ...); "
            "run rulegen build") in str(e.value)


@pytest.mark.tools
@pytest.mark.parametrize("chart", [c.name for c in CHARTS])
def test_bundled_charts_pass_strict_lint(helm_bin, chart):
    """``helm lint --strict`` makes a missing map key an error: the template reads every
    optional key with ``get``."""
    proc = subprocess.run([str(helm_bin), "lint", "--strict", str(REPO / "charts" / chart),
                           "--set", "enabled=true,monitoring.enabled=true"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
