"""The bundled llama-swap project alone, freshly built, and the paths of what rulegen generates
in it: shared by the tests of ``rulegen check``/``build`` ownership and of line endings.

Import the ``project`` fixture into a test module to replace conftest's ``project`` there.
"""

from __future__ import annotations

import shutil

import pytest

from rulegen.cli import main

TEMPLATE = "charts/llama-swap/rules/llama-swap.rules.yaml"  # the rules file: where the alerts are
HELM_TEMPLATE = "charts/llama-swap/templates/prometheusrule.yaml"
HELPERS = "charts/rulegen-library/templates/_rulegen.tpl"  # the chart library's named templates
LIBRARY_CHART = "charts/rulegen-library/Chart.yaml"
LINK = "charts/llama-swap/charts/rulegen-library"  # the chart's symlink to the chart library
META = "charts/llama-swap/rules/llama-swap.meta.yaml"
PAGE = "runbooks/llama-swap.md"
SUM = ".rulegen-sums/llama-swap.sum.yaml"  # what rulegen wrote from rules/llama-swap.yaml
SITE_SUM = ".rulegen-sums/_site.sum.yaml"
LIBRARY_SUM = ".rulegen-sums/_library.sum.yaml"
SUMS = [LIBRARY_SUM, SITE_SUM, SUM]
GENERATED = [TEMPLATE, "charts/llama-swap/values.yaml", "charts/llama-swap/values.schema.json",
             "charts/llama-swap/tests/llama-swap.test.yaml", "mkdocs.yml", "runbooks/alerts.md",
             "runbooks/assets/rulegen.css", "runbooks/assets/rulegen.js", "runbooks/index.md", PAGE, HELM_TEMPLATE, HELPERS, LIBRARY_CHART, META]


@pytest.fixture
def project(project, capsys):
    """The bundled llama-swap project alone, freshly built, so these tests depend neither on
    other specs added to ``rules/`` nor on whether the checkout's generated files are current
    (``make test`` checks that with ``rulegen check``)."""
    for p in (project / "rules").iterdir():
        if p.name != "llama-swap.yaml":
            p.unlink()
    for p in (project / "charts").iterdir():
        if p.name not in ("llama-swap", "rulegen-library"):
            shutil.rmtree(p)
    for p in (project / "runbooks").glob("*.md"):
        if p.name not in ("index.md", "alerts.md"):
            p.unlink()
    assert main(["-C", str(project), "build", "--force"]) == 0
    capsys.readouterr()
    return project


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
