"""The README fits on a screen and gets a platform engineer going: the two set-up commands
first, what rulegen is with a picture of the path, a five-command quick start, the security
model, and links into the tool documentation site (``docs/``, ``mkdocs.docs.yml``), where every
section the README used to hold now lives (issue 24). The reference pages built from code
(``docs/checks.md``) and the argocd/spec-format pages left the on-call runbook site. Also: the
LICENSE matches pyproject (issue 17)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
import subprocess
import sys
import tomllib

import yaml
from markdown.extensions.toc import slugify

from rulegen.cli import main

from helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
DOCS = REPO / "docs"

#: Every heading the 77 KB README had, except the three it keeps, and the docs/ page that holds
#: it now (issue 24).
MOVED_HEADINGS = {
    "Commands": "commands.md", "Adding an app": "commands.md",
    "The spec format": "spec-format.md",
    "What a test compares": "testing.md", "Tests that prove something": "testing.md",
    "Mutation testing: `rulegen test --mutate`": "testing.md",
    "Tests derived from the rule: `rulegen derive-tests`": "testing.md",
    "Validation": "validation.md", "Label flow": "validation.md",
    "Project configuration: `.rulegen.yaml`": "configuration.md",
    "Chart values (per-alert knobs)": "chart.md", "Chart layout": "chart.md",
    "Thresholds as knobs": "chart.md", "Generated files": "chart.md",
    "The runbook site": "runbook-site.md",
    "The 3 a.m. page: triage, copy-ready commands, the alert index": "runbook-site.md",
    "Runbook text: what Markdown and HTML a spec may hold": "runbook-site.md",
    "SLOs": "slos.md", "Importing existing rules": "import.md", "GitOps": "gitops.md",
    "Security": "security.md", "Layout": "development.md",
}


def section(text: str, heading: str) -> str:
    """The body of the ``## heading`` section of ``text`` (up to the next ``## ``)."""
    return text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]


def headings(text: str) -> dict[str, str]:
    """Markdown headings outside code fences: ``{text: anchor}``, the anchor as mkdocs makes it
    (an explicit ``{ #id }``, else Python-Markdown's toc slug of the text without code marks)."""
    out, fence = {}, False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"#{1,6} (.*?)(?:\s*\{\s*#([\w-]+)\s*\})?\s*$", line)
        if m:
            out[m.group(1)] = m.group(2) or slugify(m.group(1).replace("`", ""), "-")
    return out


def readme_links() -> set[str]:
    return set(re.findall(r"\]\((docs/[^)]+)\)", README))


def help_of(*argv: str) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main([*argv, "--help"]) == 0, argv
    return " ".join(buf.getvalue().split())


def test_readme_is_at_most_8_kib():
    assert len(README.encode("utf-8")) <= 8192


def test_setup_commands_come_first_then_what_rulegen_does_with_a_picture():
    lines = README.splitlines()
    assert lines[:6] == ["# rulegen", "", "```sh", lines[3], lines[4], "```"]
    assert lines[3].startswith("make build ") and lines[4].startswith("make test ")
    # both are true commands: Makefile targets
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert re.search(r"^build:", makefile, re.M) and re.search(r"^test:", makefile, re.M)
    top = README.split("\n## ", 1)[0]
    picture = top.split("```text\n", 1)[1].split("```", 1)[0]
    for step in ("rules/<app>.yaml", "rulegen build", "charts/<app>/rules/<app>.rules.yaml",
                 "runbooks/<app>.md", "charts/<app>/tests/<app>.test.yaml", "rulegen test"):
        assert step in picture, step
    # build writes the rules file; the template is the same hand-written file in every chart
    assert "templates/prometheusrule.yaml" not in picture
    assert (REPO / "charts/llama-swap/rules/llama-swap.rules.yaml").is_file()


def test_quick_start_is_five_real_commands_in_the_order_they_work():
    block = section(README, "Quick start").split("```sh\n", 1)[1].split("```", 1)[0]
    cmds = [shlex.split(line, comments=True) for line in block.splitlines()]
    assert [c[:2] for c in cmds] == [["rulegen", "new"], ["rulegen", "validate"], ["rulegen", "build"],
                                     ["rulegen", "test"], ["rulegen", "check"]]
    for cmd in cmds:
        text = help_of(cmd[1])
        for opt in (a for a in cmd[2:] if a.startswith("-")):
            assert opt in text, (cmd, opt)


def test_security_model_is_short_and_links_the_details():
    body = section(README, "Security model").strip()
    assert 5 <= len(body.splitlines()) <= 8
    text = " ".join(body.split())
    for fact in ("$RULEGEN_TOOLS_DIR/bin", "~/.cache/rulegen/tools/bin", "`PATH`", "never from the checkout",
                 "reduced environment", "escaped", "rulegen diff", "(docs/security.md)"):
        assert fact in text, fact
    page = " ".join((DOCS / "security.md").read_text(encoding="utf-8").split())
    for fact in ("$RULEGEN_TOOLS_DIR/bin", "~/.cache/rulegen/tools/bin", "reduced environment",
                 "symlinks", "special files", "check --base REF"):
        assert fact in page, fact


def test_every_docs_link_of_the_readme_resolves():
    links = readme_links()
    assert links
    for link in links:
        path, _, anchor = link.partition("#")
        page = REPO / path
        assert page.is_file(), link
        if anchor:
            assert anchor in headings(page.read_text(encoding="utf-8")).values(), link
    # and the README links nothing inside the runbook site's guides any more
    assert "runbooks/guides/" not in README


def test_every_docs_page_and_every_moved_heading_is_reachable_from_the_readme():
    linked = {link.partition("#")[0] for link in readme_links()}
    pages = {p.relative_to(REPO).as_posix() for p in DOCS.glob("*.md")} - {"docs/index.md"}
    assert pages <= linked, pages - linked
    for heading, page in MOVED_HEADINGS.items():
        assert heading in headings((DOCS / page).read_text(encoding="utf-8")), (heading, page)
        assert f"docs/{page}" in linked, page


def test_kube_version_advice_does_not_claim_helm_defaults_to_1_20():
    """Regression (new-user review): README and `rulegen import --help` said helm's default
    Kubernetes version is 1.20; the pinned, release-stamped helm assumes a current one, and
    kube-prometheus-stack imports without --kube-version (tests/importer/test_kps.py)."""
    help_text = help_of("import")
    assert "--kube-version V helm --kube-version: the cluster's Kubernetes version, for a chart whose " \
           "kubeVersion helm's default (the current version helm was built for) does not meet, or to " \
           "render for an older cluster" in help_text
    assert "1.20" not in help_text
    text = " ".join((DOCS / "import.md").read_text(encoding="utf-8").split())
    assert "(1.20)" not in text
    assert "kube-prometheus-stack imports without more; `--kube-version V` is for charts" in text


def test_adding_an_app_steps_are_in_the_true_order():
    steps = section((DOCS / "commands.md").read_text(encoding="utf-8"), "Adding an app")
    firsts = [(m.group(1), m.group(2)) for m in re.finditer(r"^(\d)\. (.*)$", steps, re.M)]
    assert [n for n, _ in firsts] == ["1", "2", "3", "4", "5", "6"]
    wanted = ["`rulegen new <app>`", "`rulegen validate`", "`rulegen build`", "`rulegen test --app",
              "Turn the gates on", "`rulegen check`"]
    for (n, _), what in zip(firsts, wanted):
        step = steps.split(f"\n{n}. ", 1)[1].split(f"\n{int(n) + 1}. ", 1)[0]
        assert what in step, (n, what)
    assert "`charts/<app>/rules/<app>.rules.yaml`" in steps and "writes the chart's template" not in steps
    # `rulegen test` turns the gates on itself (run/testing.py renders with every gate true)
    assert "gate set true itself" in steps


def test_tool_reference_is_not_in_the_on_call_runbook_site():
    nav = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))["nav"]
    assert not re.search(r"checks\.md|spec-format\.md|argocd\.md", str(nav)), nav
    for name in ("checks.md", "spec-format.md", "argocd.md"):
        assert not (REPO / "runbooks/guides" / name).exists(), name
        assert (DOCS / name).is_file(), name
    docs_nav = str(yaml.safe_load((REPO / "mkdocs.docs.yml").read_text(encoding="utf-8"))["nav"])
    for p in DOCS.glob("*.md"):
        assert f"'{p.name}'" in docs_nav, p.name


def test_docs_site_builds_strictly(tmp_path):
    """What `make docs` (and `make test`) runs: a broken link or anchor, or a page left out of
    the nav, fails the build."""
    exe = REPO / ".venv/bin/mkdocs"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mkdocs"]
    r = subprocess.run(cmd + ["build", "--strict", "-f", "mkdocs.docs.yml", "-d", str(tmp_path / "site")],
                       cwd=REPO, capture_output=True, text=True, timeout=300,
                       env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(tmp_path)})
    assert r.returncode == 0, r.stdout + r.stderr
    for page in ("index.html", "checks/index.html", "spec-format/index.html", "security/index.html"):
        assert (tmp_path / "site" / page).is_file(), page
    assert 'id="rg404"' in (tmp_path / "site/checks/index.html").read_text(encoding="utf-8")


def test_license_is_the_apache_2_text_pyproject_declares():
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.split("\n", 3)[:3] == ["                                 Apache License",
                                       "                           Version 2.0, January 2004",
                                       "                        http://www.apache.org/licenses/"]
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
    assert len(text.splitlines()) == 201


def test_every_option_is_in_its_commands_table_row():
    """docs/commands.md's table names every option of each command (a short form counts; the
    row's `--prometheus URL ...` stands for the --prometheus-* options): `test --base REF` was
    missing from it, so a reader of the table did not learn the pull-request mode."""
    import argparse
    from rulegen.cli import parser
    rows = {}
    for line in (DOCS / "commands.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `rulegen ([\w-]+)", line)
        if m:
            rows[m.group(1)] = line
    sub = next(a for a in parser()._actions if isinstance(a, argparse._SubParsersAction))
    missing = []
    for name, sp in sub.choices.items():
        row = rows.get(name, "")
        for a in sp._actions:
            opts = [o for o in a.option_strings if o not in ("-h", "--help", "-C", "--root")]
            if not opts or (opts[0].startswith("--prometheus-") and "--prometheus URL ..." in row):
                continue
            if not any(re.search(re.escape(o) + r"(?![\w-])", row) for o in opts):
                missing.append(f"{name} {opts[0]}")
    assert not missing, missing
