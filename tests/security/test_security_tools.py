"""Issue 23, classes 1 and 2: a pull request cannot make rulegen run its programs or print secrets.

Class 1 (binaries from the checkout): a committed ``.tools/bin/helm`` is refused (RG761) by
``rulegen test``, ``diff`` and ``import`` and never run; a tools folder inside the project
(``RULEGEN_TOOLS_DIR``, ``PATH``) is refused (RG762).
Class 2 (secrets through the environment): a chart file linked to ``/proc/self/environ`` (or to
any file outside the project), a special file in a chart, a spec linked outside: refused with
RG742/RG760 and the path before helm runs or import copies anything; and every program rulegen
starts sees only the reduced environment of :mod:`rulegen.tools.process`.

Each attack runs on a scratch copy of the bundled project (``project`` fixture, in tmp_path).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.fs.containment import tree_problems
from rulegen.tools import find, helm, process, promtool

SECRET = "s3cr3t-4f1d9c0e-do-not-print"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          cwd=root, check=True, capture_output=True, text=True).stdout


def fake_tool(path: Path, marker: Path) -> Path:
    """An executable at ``path`` that, if ever run, appends a line to ``marker``: its
    arguments and environment as JSON; it prints nothing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                    f"open({str(marker)!r}, 'a').write(json.dumps({{'argv': sys.argv, 'env': dict(os.environ)}}) + '\\n')\n",
                    encoding="utf-8")
    path.chmod(0o755)
    return path


@pytest.fixture
def outside(tmp_path_factory) -> Path:
    """A folder outside the project (the ``project`` fixture is ``tmp_path`` itself)."""
    return tmp_path_factory.mktemp("outside")


@pytest.fixture
def marker(outside: Path) -> Path:
    return outside / "ran-the-prs-tool.json"


@pytest.fixture
def committed_tools(project: Path, marker: Path) -> Path:
    """The bundled project as a git repo whose last commit adds ``.tools/bin/helm`` and
    ``.tools/bin/promtool`` (and changes a chart, so ``diff`` wants helm)."""
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "base")
    for name in ("helm", "promtool"):
        fake_tool(project / ".tools" / "bin" / name, marker)
    values = project / "charts/llama-swap/values.yaml"
    values.write_text(values.read_text(encoding="utf-8") + "# changed\n", encoding="utf-8")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "a PR that brings its own helm")
    return project


# ---------------------------------------------------------------------------------------------
# Class 1: binaries from the checkout

@pytest.mark.parametrize("argv", [["test"], ["test", "--app", "llama-swap"], ["check"]],
                         ids=["test", "test --app", "check"])
def test_a_committed_tool_is_refused_and_never_run(committed_tools, marker, capsys, argv):
    rc = main(["-C", str(committed_tools), *argv])
    err = "".join(capsys.readouterr())  # findings go to stdout, errors to stderr
    assert rc != 0
    assert "RG761" in err and ".tools/bin/helm" in err, err
    assert not marker.exists()


def test_diff_refuses_a_committed_tool(committed_tools, marker, capsys):
    """diff reports what it can; the values of the changed chart are not compared, and it says why."""
    assert main(["-C", str(committed_tools), "diff", "--base", "HEAD~1"]) == 0
    out = capsys.readouterr().out
    assert "note: values were not compared: RG761 .tools/bin/helm is an executable named helm" in out, out
    assert not marker.exists()


def test_import_refuses_a_committed_tool(committed_tools, marker, capsys):
    rc = main(["-C", str(committed_tools), "import", "charts/llama-swap", "--out", "imported"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "RG761 .tools/bin/helm" in err, err
    assert not marker.exists()
    assert not (committed_tools / "imported").exists()


def test_a_tracked_file_under_tools_is_refused_even_without_a_tool_name(project):
    git(project, "init", "-q")
    (project / ".tools").mkdir()
    (project / ".tools" / "README").write_text("x\n", encoding="utf-8")
    git(project, "add", ".tools/README")
    assert find.project_tools(project) == (".tools/README", "is tracked by git")
    with pytest.raises(find.UntrustedTool, match=r"^RG761 \.tools/README is tracked by git"):
        find.find("helm", project)


def test_an_untracked_executable_named_helm_under_tools_is_refused(project, marker):
    fake_tool(project / ".tools" / "x" / "helm", marker)
    assert find.project_tools(project) == (".tools/x/helm", "is an executable named helm")


def test_tools_come_from_rulegen_tools_dir_then_the_cache_then_path(outside, project, monkeypatch, marker):
    trusted = outside / "trusted"
    cache = outside / "cache"
    on_path = outside / "onpath"
    fake_tool(on_path / "helm", marker)
    monkeypatch.setenv("PATH", f"{on_path}:/usr/bin:/bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.delenv("RULEGEN_TOOLS_DIR", raising=False)
    assert find.find("helm", project) == on_path / "helm"
    fake_tool(cache / "rulegen" / "tools" / "bin" / "helm", marker)
    assert find.find("helm", project) == cache / "rulegen" / "tools" / "bin" / "helm"
    fake_tool(trusted / "bin" / "helm", marker)
    monkeypatch.setenv("RULEGEN_TOOLS_DIR", str(trusted))
    assert find.find("helm", project) == trusted / "bin" / "helm"
    assert not marker.exists()


@pytest.mark.parametrize("where", ["RULEGEN_TOOLS_DIR", "XDG_CACHE_HOME", "PATH"])
def test_a_tools_folder_inside_the_project_is_refused(project, monkeypatch, marker, where):
    inside = project / "vendor"
    if where == "RULEGEN_TOOLS_DIR":
        fake_tool(inside / "bin" / "helm", marker)
        monkeypatch.setenv("RULEGEN_TOOLS_DIR", str(inside))
    elif where == "XDG_CACHE_HOME":
        fake_tool(inside / "rulegen" / "tools" / "bin" / "helm", marker)
        monkeypatch.delenv("RULEGEN_TOOLS_DIR", raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(inside))
    else:
        fake_tool(inside / "helm", marker)
        monkeypatch.delenv("RULEGEN_TOOLS_DIR", raising=False)
        monkeypatch.setenv("XDG_CACHE_HOME", str(project.parent / "empty-cache"))
        monkeypatch.setenv("PATH", f"{inside}:/usr/bin:/bin")
    with pytest.raises(find.UntrustedTool, match=rf"^RG762 .*{inside}.* lies inside the project being checked"):
        helm.template(project / "charts/llama-swap", root=project)
    assert not marker.exists()


def test_an_empty_tools_dir_inside_the_project_is_refused_too(project, monkeypatch):
    """Not skipped for the next place: a PR could add the tool there later."""
    monkeypatch.setenv("RULEGEN_TOOLS_DIR", str(project / "vendor"))
    with pytest.raises(find.UntrustedTool, match=r"^RG762 RULEGEN_TOOLS_DIR .*/vendor/bin lies inside"):
        find.find("promtool", project)


# ---------------------------------------------------------------------------------------------
# Class 2: files leaving the project, and the environment

@pytest.fixture
def leaking_chart(project: Path, monkeypatch) -> Path:
    """llama-swap's chart with ``files/env`` linked to /proc/self/environ and a template that
    fails with its content; a secret in the environment."""
    monkeypatch.setenv("RULEGEN_TEST_SECRET", SECRET)
    chart = project / "charts/llama-swap"
    (chart / "files").mkdir()
    (chart / "files" / "env").symlink_to("/proc/self/environ")
    (chart / "templates" / "leak.yaml").write_text('{{ fail (.Files.Get "files/env") }}\n', encoding="utf-8")
    return project


@pytest.mark.parametrize("argv", [["test"], ["test", "--app", "llama-swap"], ["check"], ["build"]],
                         ids=["test", "test --app", "check", "build"])
def test_a_chart_file_linked_to_proc_environ_is_refused(leaking_chart, capsys, argv):
    rc = main(["-C", str(leaking_chart), *argv])
    out, err = capsys.readouterr()
    assert rc != 0
    err += out
    assert "RG742" in err and "charts/llama-swap/files/env" in err and "/proc/self/environ" in err, err
    assert SECRET not in out + err
    assert not (leaking_chart / ".rulegen" / "test" / "llama-swap" / "chart").exists()  # nothing copied


@pytest.mark.tools
def test_the_leak_is_real_with_a_regular_file(project, helm_bin, capsys):
    """Control for the test above: the same template with a regular ``files/env`` prints the
    file's content through helm's error, so the refusal is what keeps the secret out."""
    chart = project / "charts/llama-swap"
    (chart / "files").mkdir()
    (chart / "files" / "env").write_text("CONTROL-TEXT-7731", encoding="utf-8")
    (chart / "templates" / "leak.yaml").write_text('{{ fail (.Files.Get "files/env") }}\n', encoding="utf-8")
    assert main(["-C", str(project), "test", "--app", "llama-swap"]) != 0
    assert "CONTROL-TEXT-7731" in capsys.readouterr().err


@pytest.mark.parametrize("rel", ["charts/llama-swap/templates/extra.yaml", "charts/llama-swap/rules/extra.yaml",
                                 "charts/llama-swap/templates"])
def test_a_chart_link_to_a_file_outside_is_rg742(project, outside, capsys, rel):
    outside = outside / "outside"
    outside.mkdir()
    (outside / "extra.yaml").write_text(f"secret: {SECRET}\n", encoding="utf-8")
    target = project / rel
    if target.is_dir():
        import shutil
        shutil.rmtree(target)
        target.symlink_to(outside)
    else:
        target.symlink_to(outside / "extra.yaml")
    assert main(["-C", str(project), "check"]) == 1
    out, err = capsys.readouterr()
    assert f"{rel}:0:0: error RG742 {rel} is a symlink to {outside}" in out, out
    assert SECRET not in out + err


def test_a_fifo_in_a_chart_is_rg760_and_nothing_waits(project, capsys):
    os.mkfifo(project / "charts/llama-swap/templates/pipe.yaml")
    assert main(["-C", str(project), "check"]) == 1
    out = capsys.readouterr().out
    assert "charts/llama-swap/templates/pipe.yaml:0:0: error RG760 charts/llama-swap/templates/pipe.yaml is a FIFO" in out, out


def test_a_spec_linked_outside_is_not_read(project, outside, capsys):
    secret = outside / "creds.yaml"
    secret.write_text(f"token: [{SECRET}\n", encoding="utf-8")  # a YAML error would quote the line
    (project / "rules" / "stolen.yaml").symlink_to(secret)
    assert main(["-C", str(project), "check"]) == 1
    out, err = capsys.readouterr()
    assert f"rules/stolen.yaml:0:0: error RG742 rules/stolen.yaml is a symlink to {secret}" in out, out
    assert SECRET not in out + err


def test_a_link_inside_the_project_is_fine(project):
    chart = project / "charts/llama-swap"
    (chart / "files").mkdir()
    (chart / "files" / "values-copy.yaml").symlink_to("../values.yaml")
    assert tree_problems(project, "charts/llama-swap") == []


@pytest.mark.parametrize("static", [False, True], ids=["helm", "static"])
def test_import_of_a_chart_with_a_link_outside_copies_nothing(leaking_chart, capsys, static, marker):
    rc = main(["-C", str(leaking_chart), "import", "charts/llama-swap", "--out", "imported",
               *(["--static"] if static else [])])
    out, err = capsys.readouterr()
    assert rc == 2
    assert "RG742 charts/llama-swap/files/env is a symlink to /proc/self/environ" in err, err
    assert SECRET not in out + err
    assert not (leaking_chart / "imported").exists()


def test_import_of_a_chart_outside_the_project_with_a_link_out_of_it(project, outside, capsys):
    ext = outside / "vendor-chart"
    (ext / "templates").mkdir(parents=True)
    (ext / "Chart.yaml").write_text("apiVersion: v2\nname: ext\nversion: 0.1.0\n", encoding="utf-8")
    creds = outside / "creds.yaml"
    creds.write_text(f"groups: [{{name: g, rules: [{{alert: A, expr: up, labels: {{t: {SECRET}}}}}]}}]\n",
                     encoding="utf-8")
    (ext / "templates" / "rules.yaml").symlink_to(creds)
    rc = main(["-C", str(project), "import", str(ext), "--static", "--out", "imported"])
    out, err = capsys.readouterr()
    assert rc == 2
    assert "RG742 templates/rules.yaml is a symlink to" in err, err
    assert SECRET not in out + err
    assert not (project / "imported").exists()


def test_diff_does_not_render_a_chart_with_a_link_outside(project, capsys, monkeypatch, outside, marker):
    monkeypatch.setenv("RULEGEN_TOOLS_DIR", str(outside / "trusted"))
    fake_tool(outside / "trusted" / "bin" / "helm", marker)
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "base")
    (project / "charts/llama-swap/files").mkdir()
    (project / "charts/llama-swap/files/env").symlink_to("/proc/self/environ")
    rc = main(["-C", str(project), "diff", "--base", "HEAD"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "charts/llama-swap at the working tree: values not compared: " in out, out
    assert "RG742 charts/llama-swap/files/env is a symlink to /proc/self/environ" in out
    runs = [json.loads(line)["argv"] for line in marker.read_text(encoding="utf-8").splitlines()]
    assert runs and all(str(project) not in " ".join(a) for a in runs)  # only the base (a copy) rendered


def test_diff_refuses_a_committed_link_outside_in_the_base(project, capsys, monkeypatch, outside, marker):
    monkeypatch.setenv("RULEGEN_TOOLS_DIR", str(outside / "trusted"))
    fake_tool(outside / "trusted" / "bin" / "helm", marker)
    git(project, "init", "-q")
    (project / "charts/llama-swap/files").mkdir()
    (project / "charts/llama-swap/files/env").symlink_to("/proc/self/environ")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "base with a link")
    (project / "charts/llama-swap/files/env").unlink()
    rc = main(["-C", str(project), "diff", "--base", "HEAD"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "charts/llama-swap at HEAD: values not compared: RG742 charts/llama-swap/files/env" in out, out
    assert not marker.exists()


ALLOWED = set(process.KEPT) | set(process.HOMES) | {"LC_CTYPE"}  # LC_CTYPE: Python's own PEP 538 coercion


def _planted(monkeypatch, outside):
    monkeypatch.setenv("RULEGEN_TEST_SECRET", SECRET)
    monkeypatch.setenv("GITHUB_TOKEN", SECRET)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("KUBECONFIG", str(outside / "kubeconfig"))
    monkeypatch.setenv("HELM_PLUGINS", str(outside / "plugins"))
    monkeypatch.setenv("BASH_ENV", str(outside / "bashenv"))
    monkeypatch.setenv("RULEGEN_TOOLS_DIR", str(outside / "trusted"))


def _check_env(dump: Path) -> None:
    env = json.loads(dump.read_text(encoding="utf-8").splitlines()[-1])["env"]
    assert set(env) <= ALLOWED, set(env) - ALLOWED
    assert SECRET not in json.dumps(env)
    assert env["HOME"] != os.path.expanduser("~") and not Path(env["HOME"]).exists()  # private, removed
    for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        assert env[k].startswith(env["HOME"] + "/")


def test_helm_and_promtool_get_only_the_reduced_environment(project, outside, monkeypatch):
    _planted(monkeypatch, outside)
    for name in ("helm", "promtool"):
        fake_tool(outside / "trusted" / "bin" / name, outside / f"{name}.env")
    assert helm.template(project / "charts/llama-swap", root=project).documents == []
    _check_env(outside / "helm.env")
    promtool.check_rules([project / "charts/llama-swap/rules/llama-swap.rules.yaml"], root=project)
    _check_env(outside / "promtool.env")


def test_every_program_gets_the_reduced_environment(outside, monkeypatch):
    """git (diff, check --base) and bash (runbook command checks) run through process.run too."""
    _planted(monkeypatch, outside)
    fake_tool(outside / "any", outside / "any.env")
    process.run([outside / "any"], timeout=60)
    _check_env(outside / "any.env")


def test_a_program_started_in_the_background_gets_the_reduced_environment(outside, monkeypatch):
    """process.start (the sync check's batch renderer runs while rulegen plans) hands on the
    same reduced environment as process.run, and its private home is gone after close()."""
    _planted(monkeypatch, outside)
    fake_tool(outside / "any", outside / "any.env")
    started = process.start([outside / "any"], timeout=60, input="{}")
    assert started.wait().returncode == 0
    started.close()
    _check_env(outside / "any.env")


def test_the_batch_renderer_gets_the_reduced_environment(project, outside, monkeypatch):
    """rulegen-helmrender, and helm for what it does not render, run reduced too."""
    _planted(monkeypatch, outside)
    for name in ("helm", "rulegen-helmrender"):
        fake_tool(outside / "trusted" / "bin" / name, outside / f"{name}.env")
    [rendered] = helm.template_many([helm.Job(project / "charts/llama-swap")], root=project)
    assert rendered.documents == []  # the fake helper answered nothing: the fake helm rendered
    _check_env(outside / "rulegen-helmrender.env")
    _check_env(outside / "helm.env")


def test_the_bash_check_runs_with_the_reduced_environment(outside, monkeypatch):
    """BASH_ENV names a file bash runs at start; the command check must not hand it on."""
    from rulegen.validate.checks import runbook
    ran = outside / "bash-env-ran"
    (outside / "bashenv").write_text(f"touch {ran}\n", encoding="utf-8")
    _planted(monkeypatch, outside)
    assert runbook._ask_bash("/bin/bash", "echo $((") is not None  # a real syntax error, found
    assert not ran.exists()
