"""RG109: a ` #x` after a plain value is a YAML comment that silently cuts the value short."""

from __future__ import annotations

from pathlib import Path

import pytest

from rulegen.spec import load_text
from rulegen.validate import validate_texts
from rulegen.validate.checks import yamlcomments

from helpers import REPO

SPEC = """\
app: demo
labels: {{team: ai}}
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        for: 5m   # a comment written on purpose
        severity: warning
        labels:
          channel: {channel}
        summary: {summary}
        description: Demo is down.
        runbook:
          resolution:
            - {step}
"""


def found(**kw):
    text = SPEC.format(**{"channel": "ops", "summary": "Demo is down.", "step": "Restart it.", **kw})
    return [(f.code, f.line, f.col, f.severity.value, f.rule, f.message)
            for f in validate_texts({"a.yaml": text}).findings]


def test_fires_where_the_comment_cuts_the_value():
    assert found(summary="Queue #3 is full") == [(
        "RG109", 12, 24, "warning", "DemoDown",
        '`summary` ends at `Queue`: YAML reads ` #3 is full` as a comment and drops it; if it '
        'belongs to the value, quote it: "Queue #3 is full"; if it is a comment, put a space '
        "after the #")]
    assert [f[:3] for f in found(channel="ops #incidents")] == [("RG109", 11, 24)]
    assert [f[:3] for f in found(step="Ask in #oncall, then restart it.")] == [("RG109", 16, 22)]


@pytest.mark.parametrize("kw", [
    dict(summary='"Queue #3 is full"'), dict(summary="'Queue #3 is full'"),
    dict(summary="Queue#3 is full"),  # no space before #: part of the value
    dict(summary="Queue is full  # why: see the dashboard"),  # a comment, with its space
    dict(step="|\n              Ask in #oncall.\n"),  # a block scalar keeps its #
])
def test_quiet_on_quoted_values_block_scalars_and_real_comments(kw):
    assert found(**kw) == []


def _corpus_files(shared_dir: Path):
    return sorted((shared_dir / "corpus" / "awesome-prometheus-alerts" / "rules").rglob("*.y*ml"))


def test_quiet_on_the_real_corpus_and_the_bundled_specs(shared_dir):
    files = _corpus_files(shared_dir) + sorted(REPO.glob("rules/*.yaml"))
    files.append(shared_dir / "corpus" / "kube-prometheus-stack" / "rendered-all-groups.yaml")
    assert len(files) > 100
    noisy = []
    for f in files:
        lf = load_text(f.read_text(encoding="utf-8"), str(f))
        noisy += list(yamlcomments.check_file(lf, None))
    assert noisy == []
