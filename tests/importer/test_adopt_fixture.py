"""The adoption fixture (``tests/fixtures/adopt``, issue 26): rule sets made of what promtool
and Helm accept and rulegen once refused go through the whole chain with no hand-written
configuration and no edit to the sources: import, validate, build, check and ``rulegen
test`` exit 0, and the rules Helm renders from the built charts equal the originals, expr
text byte for byte (raw strings with backslashes included).

The fixture's rules and tests were written for rulegen (see its README); nothing is copied.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from rulegen.cli import main
from rulegen.importer.compare import compare_groups
from rulegen.pipeline import load_project
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm

from helpers import FIXTURES, REPO

ADOPT = FIXTURES / "adopt"

pytestmark = pytest.mark.tools


def _project(tmp_path):
    for d in ("typed", "loki-chart"):
        shutil.copytree(ADOPT / d, tmp_path / d)
    return tmp_path


def test_the_typed_suite_passes_on_the_original_rules(promtool_bin):
    p = subprocess.run([str(promtool_bin), "test", "rules", "api.test.yml"], cwd=ADOPT / "typed",
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    p = subprocess.run([str(promtool_bin), "check", "rules", "api.rules.yml"], cwd=ADOPT / "typed",
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


def test_whole_chain_exits_0(tmp_path, helm_bin, promtool_bin, capsys):
    root = _project(tmp_path)
    assert main(["-C", str(root), "import", "typed/api.rules.yml", "--tests", "typed/api.test.yml"]) == 0
    out = capsys.readouterr()
    # the minority without a severity does not stop the scheme from being read
    conf = yaml.safe_load((root / ".rulegen.yaml").read_text(encoding="utf-8"))
    assert sorted(conf["conventions"]["severities"]) == ["none", "notify", "page", "ticket"]
    assert "2 alert(s) have none: ApiCertExpiring, ApiRestarting" in out.out
    assert "RG814" not in out.err and "RG813" not in out.err
    # the chart's Loki rules are left out with one note; its Prometheus rules imported
    assert main(["-C", str(root), "import", "loki-chart/shop"]) == 0
    err = capsys.readouterr().err
    assert err.count("RG817") == 1 and "loki-rules.yaml (rendered)" in err and "RG806" not in err
    assert sorted(p.name for p in (root / "rules").iterdir()) == ["api-rules.yaml", "shop.yaml"]
    for cmd in ("validate", "build", "check", "test"):
        assert main(["-C", str(root), cmd]) == 0, (cmd, capsys.readouterr())
    out = capsys.readouterr().out
    assert "5 passed, 0 failed" in out
    # the round trip: what helm renders from the built chart is the original, exprs byte for byte
    loaded = load_project(root)
    [spec] = [s for s in loaded.specs if s.app == "api-rules"]
    [pr] = helm.template(root / spec.chart.path, values=[values_yaml(gate_values(spec.chart.gates))],
                         root=REPO).prometheus_rules()
    original = yaml.safe_load((ADOPT / "typed" / "api.rules.yml").read_text(encoding="utf-8"))["groups"]
    equal, diffs = compare_groups(original, pr["spec"]["groups"])
    assert (equal, diffs) == (8, [])
    exprs = {r.get("alert") or r.get("record"): r["expr"] for g in pr["spec"]["groups"] for r in g["rules"]}
    assert exprs["DiskCFull"] == "windows_fs_free_ratio{path=`C:\\`} < 0.1"
    assert exprs["SvcProcessMissing"] == "absent(windows_process_start_time{process=~`svc\\d+`})"
    assert exprs == {r.get("alert") or r.get("record"): r["expr"] for g in original for r in g["rules"]}
