"""A spec's display `title` names its app on the site (nav, home, alert index, page), and
`component: false` shows no component (issue 17)."""

from __future__ import annotations

import re

import yaml

from rulegen.cli import main

SPEC = """\
app: ci-build
title: CI Build
component: false
runbook:
  owner: {team: ci}  # the bundled project requires an owner for critical alerts (RG515)
groups:
  - name: ci-build
    rules:
      - alert: CiBuildQueueStuck
        expr: ci_queue_length > 100
        for: 15m
        severity: warning
        summary: The CI queue holds more than 100 jobs.
        description: Builds wait; check the runners.
      - alert: CiBuildRunnersDown
        expr: ci_runners_up == 0
        severity: critical
        component: runners
        summary: No CI runner is up.
        description: No build can run.
        runbook:
          resolution: [Restart the runners.]
"""


def _built(root):
    (root / "rules" / "ci-build.yaml").write_text(SPEC)
    assert main(["-C", str(root), "build"]) == 0
    return root


def test_title_is_shown_in_the_nav_home_index_and_page(project, capsys):
    root = _built(project)
    nav = yaml.safe_load((root / "mkdocs.yml").read_text())["nav"]
    assert nav[2]["Apps"][0] == {"CI Build": "ci-build.md"}  # sorted by app, shown by title
    assert "| [CI Build](ci-build.md) | 2 | 0 |" in (root / "runbooks/index.md").read_text()
    index = (root / "runbooks/alerts.md").read_text()
    # the index groups alerts under each app's title
    assert "\n## [CI Build](ci-build.md) { #app-ci-build }\n" in index
    assert re.search(r"^- \[CiBuildQueueStuck\]\(ci-build\.md#cibuildqueuestuck\) <span class=\"rg-sev rg-sev-warning\">"
                     r"warning</span>\n  · team <span class=\"rg-team\">[^<\n]+</span>\n"
                     r"  <span class=\"rg-summary\">The CI queue holds more than 100 jobs\.</span>\n", index, re.M)
    page = (root / "runbooks/ci-build.md").read_text()
    assert "\n# CI Build alert runbook\n" in page


def test_component_false_shows_no_component(project, capsys):
    page = (_built(project) / "runbooks/ci-build.md").read_text()
    stuck = page.split("## CiBuildQueueStuck", 1)[1].split("\n## ", 1)[0]
    assert "**Group:** ci-build\n" in stuck and "continuously for **15m**." in stuck  # severity: the badge
    assert "Component" not in stuck
    down = page.split("## CiBuildRunnersDown", 1)[1]
    assert "**Component:** runners · **Group:** ci-build\n" in down
