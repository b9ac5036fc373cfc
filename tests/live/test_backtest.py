"""``rulegen backtest`` (:mod:`rulegen.live.backtest`, ``tools/rulegen-backtest``) against the
real pinned Prometheus with known history (``prometheus_server``, :mod:`helpers.prometheus`):
an alert that fires 3 times, one that never fires, a flapping one and ``keep_firing_for``,
with the episodes the history's :data:`~helpers.prometheus.EPISODES` imply; the same numbers
from one instant query per step; and the command's table and JSON."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.live.backtest import replay
from rulegen.live.connect import SKIPPED, Connection

from helpers.samples import FIXTURE_SPEC_HEAD

pytestmark = pytest.mark.tools("prometheus", "promtool", "rulegen-backtest")

GROUPS = [{"name": "fixture", "rules": [
    {"alert": "Errors", "expr": "rg_fixture_errors_ratio > 0.5", "for": "5m",
     "labels": {"severity": "page", "job_copy": "{{ $labels.job }}"},
     "annotations": {"summary": "ratio {{ $value }}"}},
    {"alert": "Never", "expr": "rg_fixture_latency_seconds > 1", "for": "1m"},
    {"alert": "Flap", "expr": "rg_fixture_flap > 0.5"},
    {"alert": "Kff", "expr": "rg_fixture_kff > 0.5", "keep_firing_for": "5m"},
]}]


def _by_name(result):
    return {a.alert: a for a in result.alerts}


def _minutes(server, a):
    return [((e.start - server.start) / 60, (e.end - server.start) / 60) for e in a.episodes]


@pytest.fixture(scope="module")
def replayed(prometheus_server, backtest_bin):
    conn = Connection(url=prometheus_server.url, timeout=30)
    start, end = prometheus_server.window
    return replay(conn, GROUPS, start, end, step=60)


def test_an_alert_firing_three_times(prometheus_server, replayed):
    a = _by_name(replayed)["Errors"]
    # bad during [600, 630), [2000, 2045), [3500, 3520): firing 5 minutes (for: 5m) after each start
    assert _minutes(prometheus_server, a) == [(605, 630), (2005, 2045), (3505, 3520)]
    assert (a.episodes_total, a.firing_seconds, a.longest_seconds) == (3, (25 + 40 + 15) * 60, 40 * 60)
    assert a.label_sets_total == 1
    # templated labels are Prometheus' own expansion
    assert a.episodes[0].labels == {"alertname": "Errors", "instance": "a", "job": "api", "job_copy": "api",
                                    "severity": "page"}
    assert a.evaluations == 3 * 24 * 60 + 1 and a.eval_errors == 0 and a.error is None


def test_an_alert_that_never_fires(replayed):
    a = _by_name(replayed)["Never"]
    assert (a.episodes_total, a.firing_seconds, a.longest_seconds, a.label_sets_total) == (0, 0, 0, 0)
    assert a.episodes == []


def test_a_flapping_alert_counts_every_episode(prometheus_server, replayed):
    a = _by_name(replayed)["Flap"]
    assert a.episodes_total == 30 and a.longest_seconds == 120 and a.firing_seconds == 30 * 120
    assert _minutes(prometheus_server, a)[:2] == [(1000, 1002), (1004, 1006)]


def test_keep_firing_for_bridges_a_gap(prometheus_server, replayed):
    a = _by_name(replayed)["Kff"]
    # [1500, 1510) and [1513, 1523) are one episode (the 3-minute gap is under keep_firing_for: 5m),
    # which ends 5 minutes after the condition does
    assert _minutes(prometheus_server, a) == [(1500, 1528), (3000, 3015)]


def test_one_instant_query_per_step_gives_the_same_episodes(prometheus_server, backtest_bin):
    conn = Connection(url=prometheus_server.url, timeout=30)
    start, end = prometheus_server.at(590), prometheus_server.at(640)
    batched = replay(conn, GROUPS, start, end, step=60)
    per_step = replay(conn, GROUPS, start, end, step=60, per_step=True)
    assert [(a.alert, a.episodes) for a in batched.alerts] == [(a.alert, a.episodes) for a in per_step.alerts]
    assert _minutes(prometheus_server, _by_name(per_step)["Errors"]) == [(605, 630)]


def test_bounded_lists_keep_complete_counts(prometheus_server, backtest_bin):
    conn = Connection(url=prometheus_server.url, timeout=30)
    start, end = prometheus_server.window
    a = _by_name(replay(conn, GROUPS, start, end, step=60, alerts=["Flap"], max_episodes=5))["Flap"]
    assert len(a.episodes) == 5 and a.episodes_truncated and a.episodes_total == 30


HEAD = FIXTURE_SPEC_HEAD


def _project(tmp_path: Path) -> Path:
    rules = "".join(textwrap.indent(text, " " * 6) for text in (
        "- alert: Errors\n  expr: rg_fixture_errors_ratio > 0.5\n  for: 5m\n  severity: warning\n"
        "  summary: s\n  description: d\n",
        "- alert: Kff\n  expr: rg_fixture_kff > 0.5\n  for: 0s\n  keep_firing_for: 5m\n  severity: warning\n"
        "  summary: s\n  description: d\n"))
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "fixture.yaml").write_text(HEAD + rules, encoding="utf-8")
    return tmp_path


@pytest.mark.tools("prometheus", "promtool", "rulegen-backtest", "helm")
def test_the_command_prints_a_table_per_alert(prometheus_server, tmp_path, capsys):
    root = _project(tmp_path)
    code = main(["backtest", "-C", str(root), "--since", "4d", "--prometheus", prometheus_server.url])
    out, err = capsys.readouterr()
    assert code == 0, err
    rows = {line.split()[1]: line.split() for line in out.splitlines() if line.startswith("fixture ")}
    assert rows["Errors"][2:] == ["severity=warning", "3", "1h20m", "40m", "1"]
    assert rows["Kff"][2:] == ["severity=warning", "2", "43m", "28m", "1"]
    assert "for 25m {component=\"fixture\", instance=\"a\", job=\"api\", severity=\"warning\"}" in out
    code = main(["backtest", "-C", str(root), "--since", "4d", "--alert", "Kff", "-o", "json",
                 "--prometheus", prometheus_server.url])
    doc = json.loads(capsys.readouterr().out)
    assert [a["alert"] for app in doc["apps"] for a in app["alerts"]] == ["Kff"]


def test_without_a_prometheus_it_is_skipped_in_one_line(tmp_path, capsys):
    root = _project(tmp_path)
    assert main(["backtest", "-C", str(root)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err == f"rulegen: note: {SKIPPED}\n"


def _corpus_groups(shared_dir: Path) -> list[tuple[str, list]]:
    """(file, groups) of every rule file of the shared corpus that parses as YAML: the
    rendered kube-prometheus-stack defaults (PrometheusRule documents) and the
    awesome-prometheus-alerts rule files (plain ``groups:``)."""
    import yaml
    out = []
    files = [shared_dir / "corpus/kube-prometheus-stack/rendered-defaults.yaml",
             *sorted((shared_dir / "corpus/awesome-prometheus-alerts").rglob("*.y*ml"))]
    for f in files:
        try:
            docs = list(yaml.safe_load_all(f.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue
        groups = []
        for d in docs:
            if isinstance(d, dict) and d.get("kind") == "PrometheusRule":
                groups += (d.get("spec") or {}).get("groups") or []
            elif isinstance(d, dict) and isinstance(d.get("groups"), list):
                groups += d["groups"]
        if any("alert" in r for g in groups for r in g.get("rules") or []):
            out.append((str(f.relative_to(shared_dir)), groups))
    return out


def test_every_corpus_alert_replays_without_error(prometheus_server, backtest_bin, shared_dir):
    """The real corpora load in the helper (Prometheus' rulefmt) and every alert is evaluated by
    the server at each step without an error; none fires on the fixture's unrelated series."""
    conn = Connection(url=prometheus_server.url, timeout=30)
    start = prometheus_server.at(600)
    files = _corpus_groups(shared_dir)
    alerts = errors = 0
    for name, groups in files:
        result = replay(conn, groups, start, start + 600, step=60)
        alerts += len(result.alerts)
        errors += sum(1 for a in result.alerts if a.error or a.eval_errors)
        assert all(a.evaluations == 11 for a in result.alerts), name
    assert len(files) >= 50 and alerts >= 500, (len(files), alerts)
    assert errors == 0
    print(f"corpus: {alerts} alerts of {len(files)} files replayed, {errors} errors")
