"""Sample inputs several test modules share: odd strings, a spec made of them, a small rule
file to import, and an alert full of Prometheus templates."""

from __future__ import annotations

# Strings that YAML, Helm, Go templates, Markdown or a terminal treat specially.
NASTY = [
    "{{", "}}", "{{{", "{}}", "{{ $labels.job }}", "{{- x -}}", "{{`{{`}}", "}}{{", "{", "}",
    "`", "``", '"', "'", "''", "%", "%s", "%%", "%!", "\\", "\\n", "\\\"", "\n", "\n\n", "\t",
    "\r", "\r\n", " ", "  ", "\u2028", "\u2029", "\u0085", "\ufeff", "\x00", "\x07", "\x1b",
    "\x7f", "\u00a0", "é", "漢字", "😀", "🏳️‍🌈", "off", "yes", "no", "on", "y", "n", "true",
    "False", "null", "~", "0x1F", "1e3", "0777", "12:30", ".inf", "*", "*a", "&", "&a", "!",
    "!!str", "-", "- ", "--- ", "...", "?", "? ", "|", "|-", ">", ">-", "@", "#", " #", ": ",
    ":", "[", "]", ",", "=", "<%= x %>", "$1", "${x}",
]

# promtool checks label and annotation values as Go templates, so only valid ones here.
STRINGS = [s for s in NASTY if "{{" not in s] + ["{{ $labels.job }}", "{{ \"{{\" }} }}", "{{ $value | humanize }}%"]

NASTY_SPEC = {
    "app": "plain", "labels": {"team": "{{ \"ai\" }}"},
    "groups": [
        {"name": "g: #1", "interval": "30s", "query_offset": "1m", "limit": 0, "rules": [
            {"alert": f"A{i}", "expr": "up{job=\"x\"}\n  # {{ c }}\n  == 0", "for": "90s", "keep_firing_for": "1h30m",
             "severity": "warning", "summary": s, "description": s + "\n" + s,
             "labels": {"on": s, "yes": "yes"}, "annotations": {"null": s}}
            for i, s in enumerate(STRINGS)]},
        {"name": "rec", "rules": [{"record": "job:up:sum", "expr": "sum by (job) (up)", "labels": {"off": "off"}}]},
    ],
}

# A rule file to import (two critical alerts, no runbook content).
RULES = """\
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 5m
        labels:
          severity: critical
        annotations:
          summary: Shop is down
          description: No shop target is up.
      - alert: ShopSlow
        expr: histogram_quantile(0.9, rate(http_request_duration_seconds_bucket{job="shop"}[5m])) > 1
        labels:
          severity: critical
        annotations:
          summary: Shop is slow
          description: p90 latency above 1s.
"""

# A spec with one alert of a severity the default conventions do not allow.
TWO_SEVERITIES = """\
app: shop
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        severity: page
        summary: Shop is down
        description: No shop target is up.
"""


def add_templated_alert(project):
    """Append to the llama-swap spec of ``project`` an alert whose name, summary, description
    and runbook hold Prometheus templates and characters Markdown and HTML treat specially."""
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text() + '''
  - name: templated
    rules:
      - alert: "LlamaSwap Pod_Restarts {x}"
        expr: increase(kube_pod_container_status_restarts_total{namespace="ai"}[15m]) > 3
        severity: warning
        summary: "Pod {{ $labels.pod }} restarts <often> | {{ $value }}"
        description: "{{ $labels.namespace }}/{{ $labels.pod }} restarted more than 3 times."
        runbook:
          explanation: |
            The summary shows `{{ $labels.pod }}`; so does this sentence: {{ $labels.pod }}
          causes:
            - "{{ $labels.container }} crashes"
          resolution:
            - "Fix it in Git."
''')


#: The start of a one-group spec for app ``fixture`` (chart ``charts/fixture``); a test appends
#: its rules, indented six spaces (the live and backtest tests' fixture project).
FIXTURE_SPEC_HEAD = """\
app: fixture
title: fixture
chart:
  path: charts/fixture
groups:
  - name: fixture
    rules:
"""
