"""The README gets a platform engineer going: set-up commands first, what rulegen does with a
picture of the path, the steps in the order they work, links to the reference pages that
exist, and a LICENSE matching pyproject (issue 17)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text(encoding="utf-8")


def test_setup_commands_come_first_then_what_rulegen_does_with_a_picture():
    lines = README.splitlines()
    assert lines[:5] == ["# rulegen", "", "```sh", lines[3], lines[4]]
    assert lines[3].startswith("make build ") and lines[4].startswith("make test ")
    top = README.split("## Commands", 1)[0]
    picture = top.split("```text\n", 1)[1].split("```", 1)[0]
    for step in ("rules/<app>.yaml", "rulegen build", "charts/<app>/rules/<app>.rules.yaml",
                 "runbooks/<app>.md", "charts/<app>/tests/<app>.test.yaml", "rulegen test"):
        assert step in picture, step
    # build writes the rules file; the template is the same hand-written file in every chart
    assert "templates/prometheusrule.yaml" not in picture
    assert (REPO / "charts/llama-swap/rules/llama-swap.rules.yaml").is_file()


def test_kube_version_advice_does_not_claim_helm_defaults_to_1_20():
    """Regression (new-user review): README and `rulegen import --help` said helm's default
    Kubernetes version is 1.20; the pinned, release-stamped helm assumes a current one, and
    kube-prometheus-stack imports without --kube-version (tests/test_import_kps.py)."""
    import contextlib
    import io

    from rulegen.cli import main
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["import", "--help"]) == 0
    help_text = " ".join(buf.getvalue().split())
    assert "--kube-version V helm --kube-version: the cluster's Kubernetes version, for a chart whose " \
           "kubeVersion helm's default (the current version helm was built for) does not meet, or to " \
           "render for an older cluster" in help_text
    assert "1.20" not in help_text
    text = " ".join(README.split())
    assert "(1.20)" not in text
    assert "kube-prometheus-stack imports without more; `--kube-version V` is for charts" in text


def test_adding_an_app_steps_are_in_the_true_order():
    steps = README.split("### Adding an app\n", 1)[1].split("\n## ", 1)[0]
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


def test_reference_links_point_at_pages_that_exist():
    links = set(re.findall(r"\]\((runbooks/[^)#]+)\)", README))
    assert {"runbooks/guides/spec-format.md", "runbooks/guides/checks.md"} <= links
    for link in links:
        assert (REPO / link).is_file(), link


def test_license_is_the_apache_2_text_pyproject_declares():
    assert tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.split("\n", 3)[:3] == ["                                 Apache License",
                                       "                           Version 2.0, January 2004",
                                       "                        http://www.apache.org/licenses/"]
    assert "END OF TERMS AND CONDITIONS" in text and "APPENDIX: How to apply the Apache License" in text
    assert len(text.splitlines()) == 201
