"""Issue 23, attacker's review: variants of classes 1-8 the first round could have missed.

Each attack runs on a scratch copy of the bundled project (``project`` fixture, in tmp_path)
and asserts the safe behaviour: refused with a code, or neutralised.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.fs.containment import tree_problems
from rulegen.render import safe
from rulegen.spec import triage
from rulegen.tools import find, process

SECRET = "ghs_s3cr3tT0ken9f1e"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          cwd=root, check=True, capture_output=True, text=True).stdout


def spy(path: Path, marker: Path, real: str) -> None:
    """An executable at ``path`` that notes it ran in ``marker``, then runs ``real``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho ran >> '{marker}'\nexec {real} \"$@\"\n", encoding="utf-8")
    path.chmod(0o755)


def _run(capsys, *argv) -> tuple[int, str]:
    rc = main(list(argv))
    out = capsys.readouterr()
    return rc, out.out + out.err


# --- class 2: a chart link that stays in the project but reads git's credentials -----------------

@pytest.fixture
def checkout(project: Path) -> Path:
    """The bundled project as a CI checkout: actions/checkout leaves the job's token in
    ``.git/config`` (``http.<url>.extraheader``)."""
    git(project, "init", "-q")
    git(project, "config", "http.https://github.com/.extraheader", f"AUTHORIZATION: basic {SECRET}")
    return project


@pytest.mark.tools("helm")
@pytest.mark.parametrize("link,get", [("../../../.git/config", "files/cfg"),
                                      ("../../../.git", "files/cfg/config")],
                         ids=["file in .git", "the .git folder"])
@pytest.mark.parametrize("cmd", ["test", "check", "validate"])
def test_a_chart_link_into_git_metadata_is_refused(checkout, capsys, link, get, cmd):
    chart = checkout / "charts/llama-swap"
    (chart / "files").mkdir()
    (chart / "files/cfg").symlink_to(link)
    (chart / "templates/leak.yaml").write_text(f'{{{{ fail (.Files.Get "{get}") }}}}\n', encoding="utf-8")
    rc, out = _run(capsys, "-C", str(checkout), cmd)
    assert rc != 0
    assert SECRET not in out
    assert "RG742 charts/llama-swap/files/cfg leads into git's own folder .git" in out or \
        "charts/llama-swap/files/cfg:0:0: error RG742 charts/llama-swap/files/cfg leads into git's own folder .git" in out, out


def test_a_chart_link_to_the_project_root_is_a_loop_and_refused(checkout, capsys):
    # helm follows it to .git/config; `test`'s copy followed it into .rulegen/test forever
    (checkout / "charts/llama-swap/files").mkdir()
    (checkout / "charts/llama-swap/files/all").symlink_to("../../..")
    problems = tree_problems(checkout, "charts/llama-swap")
    assert problems[0][:2] == ("RG742", "charts/llama-swap/files/all") and "above itself" in problems[0][2]
    rc, out = _run(capsys, "-C", str(checkout), "test")
    assert rc != 0 and "RG742 charts/llama-swap/files/all is a symlink to a folder above itself" in out
    assert not (checkout / ".rulegen/test/llama-swap").exists()


def test_a_link_to_another_folder_is_walked_where_it_leads(checkout):
    # charts/a/files/shared -> ../../../docs, and docs/cfg -> ../.git/config: found through the link
    (checkout / "docs").mkdir()
    (checkout / "docs/cfg").symlink_to("../.git/config")
    (checkout / "charts/llama-swap/files").mkdir()
    (checkout / "charts/llama-swap/files/shared").symlink_to("../../../docs")
    assert [p[:2] for p in tree_problems(checkout, "charts/llama-swap")] == \
        [("RG742", "charts/llama-swap/files/shared/cfg")]


def test_a_link_inside_the_project_still_passes(project):
    # legitimate: a chart sharing a file or a folder of the project (no false alarm)
    (project / "shared").mkdir()
    (project / "shared/common.txt").write_text("x\n", encoding="utf-8")
    (project / "charts/llama-swap/files").mkdir()
    (project / "charts/llama-swap/files/common.txt").symlink_to("../../../shared/common.txt")
    (project / "charts/llama-swap/files/shared").symlink_to("../../../shared")
    (project / "charts/llama-swap/files/again").symlink_to("../../../shared")
    assert tree_problems(project, "charts/llama-swap") == []


def test_a_spec_linked_into_git_metadata_is_not_read(checkout, capsys):
    (checkout / "rules/leak.yaml").symlink_to("../.git/config")
    rc, out = _run(capsys, "-C", str(checkout), "validate")
    assert rc != 0 and SECRET not in out
    assert "rules/leak.yaml:0:0: error RG742" in out


# --- class 1: programs by name from a PATH entry the checkout controls ------------------------

@pytest.mark.parametrize("entry", [".", "", "bin", "ABS"], ids=["dot", "empty", "relative", "inside"])
def test_git_and_bash_never_come_from_the_checkout(project, capsys, monkeypatch, tmp_path_factory, entry):
    marker = tmp_path_factory.mktemp("outside") / "ran"
    where = project / ("bin" if entry in ("bin", "ABS") else "")
    for name in ("git", "bash"):
        spy(where / name, marker, f"/usr/bin/{name}" if os.path.exists(f"/usr/bin/{name}") else f"/bin/{name}")
    git(project, "init", "-q")
    git(project, "add", "-A")
    git(project, "commit", "-q", "-m", "base")
    # a command block bash must parse (not plainly valid: a pipe and a here-document)
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text(encoding="utf-8")
    assert "runbook:" in text
    monkeypatch.chdir(project)
    path_entry = str(project / "bin") if entry == "ABS" else entry
    monkeypatch.setenv("PATH", path_entry + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))  # no bash verdict kept
    from rulegen.validate.checks import runbook
    runbook.shell_error.cache_clear()
    assert runbook.shell_error("for x in 1 2; do echo \"$x\" | cat; done") is None  # bash ran, the real one
    rc, out = _run(capsys, "diff", "--base", "HEAD")
    assert rc == 0, out
    assert find.project_tools(project) is None
    assert not marker.exists(), "a program of the checkout ran"
    env = process.environment(tmp_path_factory.mktemp("home"))
    assert all(os.path.isabs(d) for d in env["PATH"].split(os.pathsep)), env["PATH"]


# --- class 4: markup variants in team notes -----------------------------------------------------

NOTES = [
    "[x](&#106;avascript:alert(1))", "[x](jav&#x09;ascript:alert(1))", "<svg onload=alert(1)>",
    "<javascript:alert(1)>", "[x][r]\n\n[r]: javascript:alert(1)", "![i](data:image/svg+xml;base64,PHN2Zz4=)",
    '<div markdown="1">[x](javascript:alert(1))</div>', "[x](  JaVaScRiPt:alert(1))", "[x](<javascript:alert(1)>)",
    "<img srcset='x 1x' src=x onerror=alert(1)>", "[x](java\u0000script:alert(1))",
    "<https://e.example.com/\" onmouseover=\"alert(1)>", "{: onclick=alert(1) }", "<!-- /notes -->\n<script>alert(1)</script>",
]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, list]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, attrs))


@pytest.mark.parametrize("attack", NOTES)
def test_note_markup_variants_are_inert(attack):
    html_text = safe.to_html(safe.notes_markdown("\n" + attack + "\n"))
    assert safe.html_problems(html_text) == []
    parser = _Tags()
    parser.feed(html_text)
    for tag, attrs in parser.tags:
        assert tag in ("p", "a", "code", "em", "strong"), (attack, html_text)
        for k, v in attrs:
            assert not k.startswith("on"), (attack, html_text)
            if k in ("href", "src"):
                assert (v or "").split(":")[0].lower() in ("http", "https", "mailto") or ":" not in (v or ""), \
                    (attack, html_text)


# --- class 5: names a shell or tool reads, in any case ------------------------------------------

@pytest.mark.parametrize("name", ["bash_env", "Prompt_Command", "ps1", "http_proxy", "no_proxy", "GIT_SSH_COMMAND",
                                  "LESSOPEN", "EDITOR", "ld_preload", "BASH_FUNC_x", "shellopts", "PYTHONSTARTUP",
                                  "KUBECONFIG", "NODE_OPTIONS", "GCONV_PATH", "globignore", "ifs"])
def test_special_names_in_any_case_are_not_plain(name):
    assert triage.unplain_reason(name) is not None


@pytest.mark.parametrize("name", ["NAMESPACE", "POD", "INSTANCE", "JOB", "SERVICE", "MODEL"])
def test_plain_label_names_stay_plain(name):
    assert triage.unplain_reason(name) is None


# --- class 6: nesting with no anchor at all ----------------------------------------------------

DEEP = "x: " + "[" * 100000 + "]" * 100000 + "\n"


@pytest.mark.parametrize("rel", [".rulegen.yaml", ".rulegen-baseline.yaml"])
def test_deeply_nested_policy_yaml_is_rg105_not_a_traceback(project, capsys, rel):
    (project / rel).write_text(DEEP, encoding="utf-8")
    rc, out = _run(capsys, "-C", str(project), "check")
    assert rc == 2 and f"RG105 {rel}: the YAML is nested too deeply to be read" in out, out
    assert "Traceback" not in out


def test_deeply_nested_import_source_is_refused(project, capsys, tmp_path_factory):
    src = tmp_path_factory.mktemp("src") / "deep.yml"
    src.write_text("groups:\n- name: g\n  rules:\n  - alert: A\n    expr: up\n    labels: "
                   + "{a: " * 5000 + "1" + "}" * 5000 + "\n", encoding="utf-8")
    before = sorted(p.name for p in (project / "rules").iterdir())
    rc, out = _run(capsys, "-C", str(project), "import", str(src), "--out", "rules")
    assert rc != 0 and "deep.yml:1:1: error" in out and "Traceback" not in out, out
    assert sorted(p.name for p in (project / "rules").iterdir()) == before


# --- class 7: the config cannot unlock a guarding code -----------------------------------------

@pytest.mark.parametrize("cfg", ["checks:\n  disable: [RG742]\n", "checks:\n  severity: {RG721: info}\n",
                                 "checks:\n  disable: [rg514]\n", "checks:\n  severity: {RG760: warning}\n",
                                 "checks:\n  disable: [RG773]\n", "checks:\n  severity: {RG776: info}\n"])
def test_config_cannot_switch_off_a_locked_code(project, capsys, cfg):
    (project / ".rulegen.yaml").write_text(cfg, encoding="utf-8")
    rc, out = _run(capsys, "-C", str(project), "validate")
    assert rc == 2 and ("cannot be switched off" in out or "is not a check code" in out), out


# --- class 8: two files of one docs folder served as one page ----------------------------------

@pytest.mark.parametrize("name,kept", [("README.md", "index.md"), ("llama-swap.markdown", "llama-swap.md")])
def test_a_file_mkdocs_would_drop_fails_check_as_it_fails_the_strict_build(project, capsys, tmp_path_factory,
                                                                          name, kept):
    from helpers.site import mkdocs_build
    assert main(["-C", str(project), "build"]) == 0
    capsys.readouterr()
    (project / "runbooks" / name).write_text("# Our team\n", encoding="utf-8")
    site = mkdocs_build(project, tmp_path_factory.mktemp("site"))
    assert site.returncode != 0 and f"Excluding '{name}' from the site because it conflicts with '{kept}'" in site.stderr
    rc, out = _run(capsys, "-C", str(project), "check")
    assert rc == 1 and f"runbooks/{name}:1:1: error RG709 runbooks/{name} and runbooks/{kept} are both served" in out, out


def test_pages_in_different_folders_are_no_conflict(project, capsys):
    (project / "runbooks/guides").mkdir(exist_ok=True)
    (project / "runbooks/guides/index.md").write_text("# Guides\n", encoding="utf-8")
    (project / "runbooks/guides/README.txt").write_text("plain\n", encoding="utf-8")
    rc, out = _run(capsys, "-C", str(project), "check")
    assert "RG709" not in out, out


# --- class 2: project files a PR links out of the project ---------------------------------------

@pytest.fixture
def creds(tmp_path_factory) -> Path:
    """A file outside the project that is YAML (a credentials file, say)."""
    f = tmp_path_factory.mktemp("home") / "credentials.yaml"
    f.write_text(f"{SECRET}: value\nchecks: {{disable: [RG504]}}\n", encoding="utf-8")
    return f


@pytest.mark.parametrize("rel", [".rulegen.yaml", ".rulegen-baseline.yaml"])
@pytest.mark.parametrize("cmd", ["validate", "check", "baseline"])
def test_policy_files_linked_out_are_not_read(project, capsys, creds, rel, cmd):
    (project / rel).unlink(missing_ok=True)
    (project / rel).symlink_to(creds)
    rc, out = _run(capsys, "-C", str(project), cmd)
    assert rc == 2 and SECRET not in out, out
    assert f"RG742 {rel} is a symlink to {creds}, outside the project; {rel} was not read" in out
    assert creds.read_text(encoding="utf-8").startswith(SECRET)  # and not rewritten by `baseline`


def test_a_site_page_linked_out_is_refused_before_its_title_reaches_the_nav(project, capsys, creds):
    leak = creds.with_name("leak.md")
    leak.write_text(f"# {SECRET}\n", encoding="utf-8")
    (project / "runbooks/guides").mkdir(exist_ok=True)
    (project / "runbooks/guides/leak.md").symlink_to(leak)
    nav = (project / "mkdocs.yml").read_text(encoding="utf-8")
    for cmd in ("check", "build"):
        rc, out = _run(capsys, "-C", str(project), cmd)
        assert rc != 0 and SECRET not in out, out
        assert "runbooks/guides/leak.md:0:0: error RG742 runbooks/guides/leak.md is a symlink to" in out
    assert (project / "mkdocs.yml").read_text(encoding="utf-8") == nav


# --- class 2: an extra values file the config names, inside .git -------------------------------

def test_a_values_file_in_git_metadata_is_refused_by_the_config(project, capsys):
    (project / ".rulegen.yaml").write_text("charts:\n  values_files:\n    charts/llama-swap: [.git/config]\n",
                                           encoding="utf-8")
    rc, out = _run(capsys, "-C", str(project), "validate")
    assert rc == 2 and "'.git/config' must be a path inside the project" in out and "RG743" in out, out


@pytest.mark.tools
def test_a_values_file_linked_into_git_metadata_is_not_read(checkout, capsys):
    (checkout / "prod-values.yaml").symlink_to(".git/config")
    (checkout / ".rulegen.yaml").write_text("charts:\n  values_files:\n    charts/llama-swap: [prod-values.yaml]\n",
                                            encoding="utf-8")
    rc, out = _run(capsys, "-C", str(checkout), "check")
    assert SECRET not in out
    assert "RG738 charts.values_files.charts/llama-swap: RG742 .git/config leads into git's own folder .git" in out, out
    assert "RG735" not in out  # helm never read it


def test_a_hidden_runbook_page_linked_outside_the_project_is_not_read(tmp_path):
    """mkdocs leaves hidden files out of the site, so the link check does not read them either:
    a hidden page that is a symlink to a file outside the project is never opened."""
    from rulegen.outputs.pages import _pages
    from rulegen.render import site as site_mod
    outside = tmp_path / "outside.md"
    outside.write_text("# secret heading\n", encoding="utf-8")
    root = tmp_path / "proj"
    (root / "runbooks" / ".cache").mkdir(parents=True)
    (root / "runbooks" / "index.md").write_text("# Home\n", encoding="utf-8")
    (root / "runbooks" / ".cache" / "x.md").symlink_to(outside)
    (root / "mkdocs.yml").write_text("site_name: x\ndocs_dir: runbooks\n", encoding="utf-8")
    pages = _pages([], root, site_mod.settings(root))
    assert list(pages) == ["index.md"]
