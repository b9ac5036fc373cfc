"""The size of a new team's first pull request and of a one-knob change (issue 29), measured
by benchmarks/pr_size_bench.py: the spec of a team with one Deployment, three alerts, a
recording rule, a 99.5% SLO, runbook text and tests, added with `rulegen new` and edits."""

from __future__ import annotations

import importlib.util
import sys

import pytest

from helpers import REPO


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    spec = importlib.util.spec_from_file_location("pr_size_bench", REPO / "benchmarks" / "pr_size_bench.py")
    bench = importlib.util.module_from_spec(spec)
    sys.modules["pr_size_bench"] = bench  # its dataclass looks its module up
    spec.loader.exec_module(bench)
    root = tmp_path_factory.mktemp("pr") / "project"
    report = bench.measure(root)
    report.root = root  # the pull request's files, as committed
    return report


def test_the_chart_files_of_the_pull_request_are_readable(report):
    """No SLO test is committed (``rulegen test`` makes them), the chart's generated files
    have no line over 120 characters, and no metadata rides in comment lines."""
    chart = {p: n for p, n in report.added.items() if p.startswith("charts/shop/")}
    assert set(chart) == {"charts/shop/Chart.yaml", "charts/shop/values.yaml", "charts/shop/values.schema.json",
                          "charts/shop/rules/shop.rules.yaml", "charts/shop/rules/shop.meta.yaml",
                          "charts/shop/templates/prometheusrule.yaml", "charts/shop/charts/rulegen-library",
                          "charts/shop/tests/shop.test.yaml"}
    assert report.generated_tests > 1000  # what `rulegen test` generates for the SLO, not committed
    assert chart["charts/shop/tests/shop.test.yaml"] <= 100  # the spec's own tests only
    assert [x for x in report.long_lines if x[0].startswith("charts/")] == []
    assert chart["charts/shop/rules/shop.meta.yaml"] < 100


def test_a_new_chart_adds_no_copy_of_the_chart_library(report):
    """The chart library is the project's one library chart (in the base already); the new
    chart adds its template (the notice and one include), its one-line symlink
    to the library and the library's three-line entry in Chart.yaml's dependencies: 353
    lines of library copies before (296 + 57), 4 now."""
    assert not [p for p in report.added if p.startswith("charts/rulegen-library/") or p.endswith("_rulegen.tpl")]
    assert report.added["charts/shop/templates/prometheusrule.yaml"] == 2
    assert report.added["charts/shop/charts/rulegen-library"] == 1
    assert report.added["charts/shop/Chart.yaml"] <= 8
    assert report.total <= 1140  # measured: 1,486 with the copies


@pytest.mark.parametrize("what", ["threshold", "for", "label"])
def test_one_knob_changes_one_line_of_each_generated_chart_file(report, what):
    """A threshold, a `for` or a label changed in the spec changes one line of the rules file
    and the digest line of the app's sum file (no checksum line in the generated files, issue
    29), nothing in the metadata file."""
    changed = report.edits[what]
    assert changed["charts/shop/rules/shop.rules.yaml"] == 1
    assert changed[".rulegen-sums/shop.sum.yaml"] == 1  # its digest
    assert "charts/shop/rules/shop.meta.yaml" not in changed
    assert not [p for p in changed if p.startswith("charts/shop/templates/")]


def test_an_slo_objective_changes_one_line_of_each_generated_file(report):
    """The objective is written once, as the budget of the `slo:error_budget:ratio` rule that
    every other rule of the SLO reads, and the runbook page states it in one fact: an edit
    of the objective changes one line of the rules file, the fact on the page and the digest
    line of the app's sum file, nothing in the metadata file (placeholders only) or the
    chart's templates."""
    changed = report.edits["SLO objective"]
    assert changed.keys() == {"charts/shop/rules/shop.rules.yaml", "runbooks/shop.md", ".rulegen-sums/shop.sum.yaml"}
    assert changed["charts/shop/rules/shop.rules.yaml"] == 1
    assert changed[".rulegen-sums/shop.sum.yaml"] == 1
    # the page: the one Objective fact. Its budget figures make it longer
    # than a page line (issue 29: none over 120 characters), so the fact is wrapped over a few
    # lines of one list item; those lines are all that change.
    lines = (report.root / "runbooks/shop.md").read_text(encoding="utf-8").split("\n")
    start = next(i for i, x in enumerate(lines) if x.startswith("- Objective: "))
    end = next(i for i in range(start + 1, len(lines)) if not lines[i].startswith("  "))
    assert changed["runbooks/shop.md"] == end - start and end - start <= 3
