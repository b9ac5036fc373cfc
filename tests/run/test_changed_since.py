"""`rulegen test --base REF` (issue 25): only the rules a pull request touched, with the tests
that see them, and with --mutate only their mutants."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.commands.test import touched_rules
from rulegen.pipeline import load_project


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          cwd=root, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(project):
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "base")
    return project


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def test_nothing_touched_is_nothing_to_test(repo):
    assert touched_rules(repo, "HEAD", load_project(repo)) == set()


def test_a_changed_alert_is_touched_alone(repo):
    _edit(repo / "rules" / "llama-swap.yaml", "for: 5m", "for: 6m")
    assert touched_rules(repo, "HEAD", load_project(repo)) == {("llama-swap", "LlamaSwapDown")}


def test_a_changed_recording_rule_touches_the_rules_that_read_it(tmp_path, capsys):
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "base")
    _edit(tmp_path / "rules" / "shop.yaml", "errors from 8m on", "errors from minute 8 on")
    # the recording rule's test changed; the alert reads the recording rule
    assert touched_rules(tmp_path, "HEAD", load_project(tmp_path)) == {
        ("shop", "job:http_requests_errors:ratio_rate5m"), ("shop", "ShopHighErrorRate")}


def test_a_changed_chart_file_touches_every_rule_of_its_app(repo):
    values = repo / "charts" / "llama-swap" / "values.yaml"
    values.write_text(values.read_text(encoding="utf-8") + "\n# a comment\n", encoding="utf-8")
    got = touched_rules(repo, "HEAD", load_project(repo))
    assert got == {("llama-swap", n) for n in ("LlamaSwapDown", "LlamaSwapNoMetrics")}
    # the generated rules/ and tests/ of a chart follow the specs: they touch nothing alone
    git(repo, "checkout", "-q", "--", "charts")
    gen = repo / "charts" / "llama-swap" / "tests" / "llama-swap.test.yaml"
    gen.write_text(gen.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert touched_rules(repo, "HEAD", load_project(repo)) == set()


def test_a_ref_that_does_not_exist_is_an_error(repo, capsys):
    assert main(["-C", str(repo), "test", "--base", "no-such-ref"]) != 0
    assert "no-such-ref" in capsys.readouterr().err


@pytest.mark.tools
def test_mutate_a_pull_request_touching_one_alert(repo, helm_bin, promtool_bin, capsys):
    assert main(["-C", str(repo), "test", "--mutate", "--base", "HEAD"]) == 0
    assert "no rule with tests changed since HEAD: nothing to test" in capsys.readouterr().out
    _edit(repo / "rules" / "llama-swap.yaml", "the single pod has no redundancy", "its single pod has no redundancy")
    assert touched_rules(repo, "HEAD", load_project(repo)) == {("llama-swap", "LlamaSwapDown")}
    assert main(["-C", str(repo), "test", "--mutate", "--changed-since", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"mutation testing: 12 mutant\(s\) of 1 rule\(s\)", out), out
    assert "  llama-swap LlamaSwapDown: 11/11 mutants killed, 1 declared equivalent" in out
    assert "noctaya" not in out and "inferencecache" not in out
