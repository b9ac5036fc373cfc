"""``rulegen diff --prometheus``: every alert a pull request adds or changes is replayed as the
chart rendered it at the base ref and as it renders now, over the history of the real
Prometheus fixture, and the review summary gets a short old-vs-new table."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from rulegen.cli import main

from helpers.samples import FIXTURE_SPEC_HEAD

pytestmark = pytest.mark.tools("prometheus", "promtool", "rulegen-backtest", "helm")

SPEC = FIXTURE_SPEC_HEAD + """\
      - alert: Errors
        expr: rg_fixture_errors_ratio > 0.5
        for: 5m
        severity: warning
        summary: s
        description: d
"""
KFF = """\
      - alert: Kff
        expr: rg_fixture_kff > 0.5
        keep_firing_for: 5m
        severity: warning
        summary: s
        description: d
"""


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root, check=True,
                   capture_output=True)


def test_changed_and_added_alerts_get_an_old_vs_new_table(prometheus_server, tmp_path, capsys):
    root = tmp_path / "repo"
    (root / "rules").mkdir(parents=True)
    (root / "rules" / "fixture.yaml").write_text(SPEC, encoding="utf-8")
    assert main(["-C", str(root), "build"]) == 0
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "base")
    (root / "rules" / "fixture.yaml").write_text(SPEC.replace("for: 5m", "for: 30m") + KFF, encoding="utf-8")
    capsys.readouterr()
    code = main(["-C", str(root), "diff", "-o", "markdown", "--backtest-since", "4d",
                 "--prometheus", prometheus_server.url])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert f"#### Backtest: the last 4d on `{prometheus_server.url}` (old → new)" in out
    # for 5m -> 30m: of the three bad stretches (30, 45 and 20 minutes) only the 45-minute one fires
    assert "| `Errors` (warning) | fixture | 3 → 1 | 1h20m → 15m | 40m → 15m | 1 |" in out
    assert "| `Kff` (warning) | fixture | — → 2 | — → 43m | — → 28m | — → 1 |" in out
    code = main(["-C", str(root), "diff", "--backtest-since", "4d", "--prometheus", prometheus_server.url])
    out = capsys.readouterr().out
    assert "  fixture Errors: episodes 3 -> 1, firing 1h20m -> 15m, longest 40m -> 15m" in out


def test_label_values_from_the_server_cannot_break_out_of_the_markdown():
    from rulegen.gitops.backtest import DiffRow, diff_markdown
    from rulegen.live.backtest import AlertReplay, Episode
    bad = {"alertname": "A", "x": "`</details><script>alert(1)</script>\n| cell |"}
    a = AlertReplay(group="g", alert="A", index=0, expr="up", step=60, evaluations=2, episodes_total=1,
                    firing_seconds=60, longest_seconds=60, label_sets_total=1,
                    rule_labels={"severity": "<b>x</b>|"}, episodes=[Episode(0, 60, False, bad)])
    text = "\n".join(diff_markdown([DiffRow("app", "A", None, a)], (0, 600), "http://p`x"))
    assert "`</details>" not in text and "\n| cell |" not in text and "<b>" not in text
    assert "| `A` (bxb) | app | — → 1 |" in text
    episode = [line for line in text.splitlines() if line.startswith("- `A`")]
    assert len(episode) == 1 and episode[0].count("`") == 4
