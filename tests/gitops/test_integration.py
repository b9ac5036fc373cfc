"""Integration files: ``.pre-commit-hooks.yaml`` and the CI examples in ``examples/ci``.

They are YAML with the shape their tool expects, and every ``rulegen`` command line in them
parses with rulegen's own argument parser (so a renamed command or option breaks this test,
not a team's CI). The pre-commit hooks are also run for real on the bundled project.
"""

from __future__ import annotations

import shlex

import pytest
import yaml

from rulegen.cli import main, parser

from helpers import REPO

HOOKS = REPO / ".pre-commit-hooks.yaml"
GITHUB = REPO / "examples/ci/github-actions.yml"
GITLAB = REPO / "examples/ci/.gitlab-ci.yml"
SHELL_STOP = {">", ">>", "|", "||", "&&", ";", "2>&1"}


def rulegen_commands(script: str) -> list[list[str]]:
    """argv lists (without the ``rulegen`` word) of every rulegen call in a shell snippet."""
    out = []
    for line in script.splitlines():
        words = shlex.split(line, comments=True)
        for i, w in enumerate(words):
            if w == "rulegen":
                argv = []
                for x in words[i + 1:]:
                    if x in SHELL_STOP:
                        break
                    argv.append(x)
                out.append(argv)
    return out


def assert_parses(argv: list[str]) -> None:
    args = parser().parse_args(argv)  # argparse exits on an unknown command or option
    assert getattr(args, "func", None) is not None, argv


def test_pre_commit_hooks_shape():
    hooks = yaml.safe_load(HOOKS.read_text(encoding="utf-8"))
    assert [h["id"] for h in hooks] == ["rulegen-validate", "rulegen-check"]
    for h in hooks:
        assert {"id", "name", "entry", "language"} <= h.keys()
        assert h["language"] == "python" and h["pass_filenames"] is False
        argv = shlex.split(h["entry"])
        assert argv[0] == "rulegen"
        assert_parses(argv[1:])
    assert [shlex.split(h["entry"])[1] for h in hooks] == ["validate", "check"]


def test_pre_commit_hooks_run_clean_on_a_built_project(project, capsys):
    assert main(["-C", str(project), "build", "--force"]) == 0
    for h in yaml.safe_load(HOOKS.read_text(encoding="utf-8")):
        assert main(["-C", str(project), *shlex.split(h["entry"])[1:]]) == 0, h["id"]
    capsys.readouterr()


def test_github_workflow():
    wf = yaml.safe_load(GITHUB.read_text(encoding="utf-8"))
    # YAML 1.1 reads the key `on` as True; GitHub reads it as "on"
    triggers = wf.get("on", wf.get(True))
    assert set(triggers) == {"pull_request", "push"}
    steps = wf["jobs"]["rulegen"]["steps"]
    assert all(("run" in s) != ("uses" in s) for s in steps)
    cmds = [c for s in steps if "run" in s for c in rulegen_commands(s["run"])]
    assert [c[0] for c in cmds] == ["validate", "check", "test", "diff"]
    for c in cmds:
        assert_parses(c)
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout"))
    assert checkout["with"]["fetch-depth"] == 0  # diff needs the base branch


def test_gitlab_ci():
    ci = yaml.safe_load(GITLAB.read_text(encoding="utf-8"))
    stages = ci["stages"]
    jobs = {k: v for k, v in ci.items() if isinstance(v, dict) and "script" in v}
    assert sorted(jobs) == ["rulegen-check", "rulegen-diff", "rulegen-test", "rulegen-validate"]
    cmds = []
    for job in jobs.values():
        assert job["stage"] in stages
        for line in job["script"]:
            cmds += rulegen_commands(line)
    assert sorted(c[0] for c in cmds) == ["check", "diff", "test", "validate"]
    for c in cmds:
        assert_parses(c)
    assert ci["variables"]["GIT_DEPTH"] == "0"


@pytest.mark.parametrize("path", [GITHUB, GITLAB])
def test_ci_examples_install_tools_that_exist(path):
    text = path.read_text(encoding="utf-8")
    assert "scripts/install-tools.sh" in text and (REPO / "scripts/install-tools.sh").is_file()


def test_rulegen_commands_helper():
    assert rulegen_commands('rulegen diff --base "origin/main" -o markdown > x.md  # c') == [
        ["diff", "--base", "origin/main", "-o", "markdown"]]
    assert rulegen_commands("pip install . && rulegen check | tee log") == [["check"]]
