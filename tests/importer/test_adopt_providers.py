"""Issue 26 item 3, end to end: ``tests/fixtures/adopt/providers`` holds the same
node-exporter PrometheusRule (same name, namespace and alert names, another threshold) for two
providers, with each provider's promtool tests. With no hand-written ``.rulegen.yaml``,
``rulegen import`` reads the provider folders as two Prometheus scopes, and validate, build,
check, test and diff all exit 0 and keep the two apart.

Rules: "Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0 (see the
fixture's README).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main

from helpers import FIXTURES, flat

pytestmark = [pytest.mark.tools("helm", "promtool")]

SRC = FIXTURES / "adopt" / "providers"
APPS = {"aws": "aws-node-exporter-node-exporter", "gcp": "gcp-node-exporter-node-exporter"}


def _cli(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


@pytest.fixture
def adopted(tmp_path, capsys) -> Path:
    shutil.copytree(SRC, tmp_path / "providers")
    (tmp_path / "mkdocs.yml").write_text("site_name: Runbooks\nsite_url: https://runbooks.example.com/\n"
                                         "docs_dir: runbooks\n", encoding="utf-8")
    p = [f"providers/{x}/node-exporter" for x in ("aws", "gcp")]
    assert _cli(tmp_path, "import", p[0] + ".yaml", p[1] + ".yaml",
                "--tests", p[0] + ".test.yml", p[1] + ".test.yml", "--report") == 0, capsys.readouterr().err
    (tmp_path / "import.out").write_text(capsys.readouterr().out, encoding="utf-8")
    return tmp_path


def test_two_providers_go_through_the_whole_chain(adopted, capsys):
    raw = yaml.safe_load((adopted / ".rulegen.yaml").read_text(encoding="utf-8"))
    assert raw["prometheus_scopes"] == {k: [v] for k, v in APPS.items()}
    for cmd in ("validate", "build", "check", "test"):
        assert _cli(adopted, cmd) == 0, (cmd, capsys.readouterr())
    out = capsys.readouterr().out
    assert "3 passed, 0 failed" in out      # each provider's tests ran against its own rules
    # the adoption report: after import (declared tests), and by mutation score
    report = (adopted / "import.out").read_text(encoding="utf-8")
    assert "adoption report: 2 of 4 alert(s) have tests" in report
    assert f"  weak: {APPS['aws']} HostOutOfMemory: needs a non-firing case" in report
    assert "no test: 2 alert(s)" in report and "`rulegen derive-tests`" in report
    assert _cli(adopted, "test", "--by-alert") == 0
    out = capsys.readouterr().out
    assert "mutation score by alert, weakest first (2 of 2 shown):" in out
    ranked = [x.split()[1] for x in out.splitlines() if x.endswith("mutants killed") and "%" in x.split()[0]]
    assert ranked == [APPS["aws"], APPS["gcp"]]   # aws states no quiet case: its tests kill fewer
    specs = {k: yaml.safe_load((adopted / f"rules/{v}.yaml").read_text(encoding="utf-8")) for k, v in APPS.items()}
    for k, spec in specs.items():
        assert spec["chart"]["name"] == "node-exporter"
        [mem] = [r for r in spec["groups"][0]["rules"] if r["alert"] == "HostOutOfMemory"]
        assert [t["name"] for t in mem["tests"]] == (
            ["memory at 8% of total"] if k == "aws" else ["memory at 8% of total", "memory at 4% of total"])
    for k, app in APPS.items():
        page = (adopted / f"runbooks/{app}.md").read_text(encoding="utf-8")
        # each provider's page has its own sections, and shows its team's runbook
        assert "## HostOutOfMemory { #hostoutofmemory }" in page
        assert f"**Loaded by:** the Prometheus of scope `{k}` (`prometheus_scopes` in .rulegen.yaml)" in page
        # (pages wrap at 120 characters: the sentence may go on over lines)
        assert f"**Team runbook:** [https://wiki.example.org/ops/{k}/host-out-of-disk-space]" in flat(page)
        other = "gcp" if k == "aws" else "aws"
        assert f"/ops/{other}/" not in page


def test_diff_keeps_the_providers_apart(adopted, capsys):
    assert _cli(adopted, "build") == 0
    git = ["git", "-C", str(adopted), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "base"], check=True)
    spec = adopted / f"rules/{APPS['gcp']}.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("< .05", "< .04"), encoding="utf-8")
    capsys.readouterr()
    assert _cli(adopted, "diff", "--base", "HEAD") == 0
    out = capsys.readouterr().out
    assert APPS["gcp"] in out and APPS["aws"] not in out, out


def test_without_the_scopes_the_providers_collide(adopted, capsys):
    """Both ways: the inferred scopes removed, the same names are RG412 and RG415 again."""
    cfg = adopted / ".rulegen.yaml"
    raw = yaml.safe_load(cfg.read_text(encoding="utf-8"))
    del raw["prometheus_scopes"]
    cfg.write_text(yaml.safe_dump(raw), encoding="utf-8")
    assert _cli(adopted, "validate") == 1
    out = capsys.readouterr().out
    assert "RG412" in out and "RG415" in out


def test_by_alert_lists_the_alerts_of_an_app_without_any_test(tmp_path, capsys):
    """Only the aws provider's tests imported: `test --by-alert` listed under "no test" only
    the untested alerts of apps that had some test, never the gcp app's (it has none)."""
    shutil.copytree(SRC, tmp_path / "providers")
    p = [f"providers/{x}/node-exporter" for x in ("aws", "gcp")]
    assert _cli(tmp_path, "import", p[0] + ".yaml", p[1] + ".yaml", "--tests", p[0] + ".test.yml") == 0
    capsys.readouterr()
    assert _cli(tmp_path, "test", "--by-alert") == 0
    [line] = [x for x in capsys.readouterr().out.splitlines() if x.startswith("  no test:")]
    assert f"{APPS['gcp']} HostOutOfMemory" in line and "no test: 3 alert(s)" in line, line
