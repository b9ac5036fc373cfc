"""``--format rules``: plain Prometheus rule files.

Each file must pass the real ``promtool check rules`` and hold exactly the groups that the
Helm chart renders with its default values (every gate on, no knob set).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from rulegen.pipeline import load_project
from rulegen.render import site
from rulegen.render.plain import dump, render_rules_file, rule_groups
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run

from helpers import REPO
from helpers.helm import SITE, make_spec, strict_load_all, write_chart, write_library
from helpers.samples import NASTY_SPEC, STRINGS

SPEC_FILES = sorted(p.name for p in (REPO / "rules").glob("*.yaml"))

def _check(promtool_bin: Path, path: Path) -> str:
    proc = subprocess.run([str(promtool_bin), "check", "rules", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_dump_quotes_keys_yaml_reads_as_other_types():
    """Regression: keys such as ``on``/``yes``/``null`` were written plain, so YAML 1.1 read
    them as booleans/null."""
    text = dump({"labels": {"on": "a", "Yes": "b", "null": "c", "~": "d", "a.b": "e", "team": "f", "n": "g"}})
    assert text == ('labels:\n  "on": "a"\n  "Yes": "b"\n  "null": "c"\n  "~": "d"\n  "a.b": "e"\n'
                    '  team: "f"\n  "n": "g"')
    assert yaml.safe_load(text) == {"labels": {"on": "a", "Yes": "b", "null": "c", "~": "d", "a.b": "e",
                                               "team": "f", "n": "g"}}


def test_rules_file_parses_back_to_rule_groups():
    spec = make_spec(NASTY_SPEC)
    text = render_rules_file(spec, SITE, ["# header"])
    assert text.startswith("# header\ngroups:\n")
    assert strict_load_all(text) == [{"groups": rule_groups(spec, SITE)}]
    g = rule_groups(spec, SITE)[0]
    assert (g["name"], g["interval"], g["query_offset"], g["limit"]) == ("g: #1", "30s", "1m", 0)
    assert g["rules"][0]["annotations"]["runbook_url"] == f"{SITE}/plain/#a0"


@pytest.mark.tools
def test_nasty_rules_file_passes_promtool_and_equals_helm(promtool_bin, helm_bin, tmp_path):
    spec = make_spec(NASTY_SPEC)
    f = tmp_path / "plain.rules.yaml"
    f.write_text(render_rules_file(spec, SITE, ["# test"]), encoding="utf-8")
    out = _check(promtool_bin, f)
    assert f"SUCCESS: {len(STRINGS) + 1} rules found" in out
    chart, _ = write_chart(tmp_path / "chart", NASTY_SPEC)
    (pr,) = strict_load_all(helm_run.template(chart).text)
    assert pr["spec"]["groups"] == strict_load_all(f.read_text(encoding="utf-8"))[0]["groups"]


@pytest.mark.tools
@pytest.mark.parametrize("spec_file", SPEC_FILES)
def test_bundled_rules_files_pass_promtool_and_equal_helm(spec_file, promtool_bin, helm_bin, project):
    loaded = load_project(project)
    specs = {Path(s.file).name: s for s in loaded.specs}
    assert spec_file in specs, [str(f) for f in loaded.findings]
    spec = specs[spec_file]
    site_url = site.site_url(project)
    f = project / f"{spec.app}.rules.yaml"
    f.write_text(render_rules_file(spec, site_url, ["# test"]), encoding="utf-8")
    out = _check(promtool_bin, f)
    assert f"SUCCESS: {len(list(spec.rules()))} rules found" in out
    # The chart rebuilt with the current generator, gates on, no knobs.
    chart, _ = _rebuilt_chart(project, spec, site_url)
    gates = gate_values(spec.chart.gates)
    (pr,) = [d for d in strict_load_all(helm_run.template(chart, values=[values_yaml(gates)]).text)
             if d.get("kind") == "PrometheusRule"]
    assert pr["spec"]["groups"] == strict_load_all(f.read_text(encoding="utf-8"))[0]["groups"]


def _rebuilt_chart(root: Path, spec, site_url: str):
    from rulegen.render import helm as helm_render
    from rulegen.render import values as values_render
    chart = root / spec.chart.path
    (chart / "templates").mkdir(parents=True, exist_ok=True)
    if not (chart / "Chart.yaml").is_file():
        (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: {spec.app}\nversion: 0.1.0\n", encoding="utf-8")
    for path, text in helm_render.render_chart(spec, root, site_url, ["# test"]):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    write_library(root, spec.chart.path)
    vpath = chart / "values.yaml"
    existing = vpath.read_text(encoding="utf-8") if vpath.is_file() else None
    vpath.write_text(values_render.render_values(spec, existing, site_url), encoding="utf-8")
    spath = chart / "values.schema.json"
    existing = spath.read_text(encoding="utf-8") if spath.is_file() else None
    spath.write_text(values_render.render_values_schema(spec, existing), encoding="utf-8")
    return chart, spec
