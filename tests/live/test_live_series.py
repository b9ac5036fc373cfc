"""The series checks (RG900-RG906, :mod:`rulegen.live.series`) against the real pinned
Prometheus with known history (``prometheus_server``, :mod:`helpers.prometheus`): each check
fires on its bug at the selector's ``file:line:col`` and stays quiet on series that exist."""

from __future__ import annotations

import textwrap
import time
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.config import load_config
from rulegen.gitops.live import live_rules, series_findings
from rulegen.live.client import Client
from rulegen.live.connect import SKIPPED, Connection
from rulegen.live.options import CliOptions
from rulegen.live.series import check_series, duration
from rulegen.pipeline import load_project

from helpers import REPO
from helpers.samples import FIXTURE_SPEC_HEAD

pytestmark = pytest.mark.tools("prometheus", "promtool")

HEAD = FIXTURE_SPEC_HEAD


def _alert(name: str, expr: str, for_: str = "5m") -> str:
    return textwrap.indent(f"- alert: {name}\n  expr: {expr}\n  for: {for_}\n  severity: warning\n"
                           f"  summary: s\n  description: d\n", " " * 6)


def _record(name: str, expr: str) -> str:
    return textwrap.indent(f"- record: {name}\n  expr: {expr}\n", " " * 6)


GOOD = [
    _alert("Up", 'up{job="api"} == 0'),
    _alert("Errors", 'rg_fixture_errors_ratio{job="api", instance=~"a|b"} > 0.5'),
    _alert("Queue", 'rg_fixture_queue_depth{queue="ingest"} > 100'),
    _alert("NotLegacy", 'rg_fixture_queue_depth{queue!="legacy"} > 100'),
    _alert("Requests", 'rate(rg_fixture_requests_total[5m]) > 100'),
    _alert("Batch", 'time() - rg_fixture_batch_last_success{job="batch"} > 3600', "10m"),
    _alert("NoFor", 'rg_fixture_batch_last_success{job="batch"} < 0', "0s"),
    _record("job:rg_fixture_errors:max", "max by (job) (rg_fixture_errors_ratio)"),
    _alert("Recorded", 'job:rg_fixture_errors:max{job="api"} > 0.5'),   # produced by the project: not missing
    _alert("Absent", 'absent(up{job="api"})'),
]

BAD = {
    "RG900": _alert("Typo", "rg_fixture_eror_ratio > 0.5"),
    "RG901": _alert("WrongValue", 'rg_fixture_queue_depth{queue="ingst"} > 100'),
    "RG901v": _alert("Vanished", 'rg_fixture_queue_depth{queue="legacy"} > 100'),
    "RG902": _alert("Renamed", "rate(rg_fixture_requests_old_total[5m]) > 100"),
    "RG903": _alert("NoSuchPair", 'up{job="api", instance="b"} == 0'),
    "RG904": _record("rg_fixture:joined", "rg_fixture_errors_ratio / on(queue) rg_fixture_queue_depth"),
    "RG905": _alert("Fast", "rg_fixture_batch_last_success > 0", "1m"),
}


def _project(tmp_path: Path, rules: list[str]) -> Path:
    (tmp_path / "rules").mkdir(parents=True, exist_ok=True)
    (tmp_path / "rules" / "fixture.yaml").write_text(HEAD + "".join(rules), encoding="utf-8")
    return tmp_path


def _findings(server, root: Path, **kw):
    loaded = load_project(root, None)
    assert loaded.ok, loaded.findings
    conn = Connection(url=server.url, timeout=20)
    # "now" is a minute after the history ends (the session may last longer than the hour
    # that counts as "recently"; the command-line tests below use the real time)
    return check_series(Client(conn), live_rules(loaded.specs), now=server.end + 60, **kw)


def test_quiet_on_series_that_exist(prometheus_server, tmp_path):
    assert _findings(prometheus_server, _project(tmp_path, GOOD)) == []


def test_each_check_fires_at_its_selector(prometheus_server, tmp_path):
    root = _project(tmp_path, GOOD + list(BAD.values()))
    got = {(f.rule, f.code): f for f in _findings(prometheus_server, root)}
    assert sorted(got) == sorted([("Typo", "RG900"), ("WrongValue", "RG901"), ("Vanished", "RG901"),
                                  ("Renamed", "RG902"), ("NoSuchPair", "RG903"), ("rg_fixture:joined", "RG904"),
                                  ("Fast", "RG905")])
    lines = (root / "rules" / "fixture.yaml").read_text().splitlines()

    def at(f):  # the text a finding points at
        return lines[f.line - 1][f.col - 1:]

    assert at(got["Typo", "RG900"]).startswith("rg_fixture_eror_ratio")
    assert "did you mean `rg_fixture_errors_ratio`" in got["Typo", "RG900"].message
    assert at(got["WrongValue", "RG901"]).startswith('queue="ingst"')
    assert 'did you mean "ingest"' in got["WrongValue", "RG901"].message
    assert "vanished" in got["Vanished", "RG901"].message and at(got["Vanished", "RG901"]).startswith('queue="legacy"')
    assert at(got["Renamed", "RG902"]).startswith("rg_fixture_requests_old_total")
    assert "`rg_fixture_requests_total` is present now" in got["Renamed", "RG902"].message
    assert at(got["NoSuchPair", "RG903"]).startswith("up{")
    assert at(got["rg_fixture:joined", "RG904"]).startswith("rg_fixture_errors_ratio / on(queue)")
    assert at(got["Fast", "RG905"]) == "1m" and "4m between samples" in got["Fast", "RG905"].message
    assert got["Fast", "RG905"].severity.value == "warning"
    assert all(f.file == "rules/fixture.yaml" for f in got.values())


def test_positions_are_in_the_expr_as_written_with_parameters(prometheus_server, tmp_path):
    # `[[window]]` is longer than its default `5m`: offsets come from the text as written
    rule = textwrap.indent('- alert: Param\n  expr: rate(up[[[window]]]) > 0 and rg_fixture_queue_depth{queue="ingst"} > 1\n'
                           '  params:\n    window: {default: 5m}\n  for: 5m\n  severity: warning\n'
                           '  summary: s\n  description: d\n', " " * 6)
    root = _project(tmp_path, [rule])
    (f,) = _findings(prometheus_server, root)
    line = (root / "rules" / "fixture.yaml").read_text().splitlines()[f.line - 1]
    assert f.code == "RG901" and line[f.col - 1:].startswith('queue="ingst"')


def test_a_short_lookback_forgets_the_renamed_metric(prometheus_server, tmp_path):
    # the old name stopped two days ago: with a one-day look-back it never existed
    root = _project(tmp_path, [BAD["RG902"]])
    assert [f.code for f in _findings(prometheus_server, root, lookback=86400)] == ["RG900"]


def test_a_recording_rule_that_produces_series_is_quiet(prometheus_server, tmp_path):
    root = _project(tmp_path, [_record("rg_fixture:ok", "rg_fixture_errors_ratio * on(job, instance) up")])
    assert _findings(prometheus_server, root) == []


def test_requests_are_batched_per_metric(prometheus_server, tmp_path):
    alerts = [_alert(f"Q{i}", f'rg_fixture_queue_depth{{queue="ingest"}} > {i}') for i in range(50)]
    loaded = load_project(_project(tmp_path, alerts), None)
    client = Client(Connection(url=prometheus_server.url))
    assert check_series(client, live_rules(loaded.specs), now=prometheus_server.end + 60) == []
    # the two name lists, then one batch for the one metric: its series now, its sample spacing
    assert client.requests == 4


def test_check_command_runs_the_series_checks(prometheus_server, tmp_path, capsys):
    root = _project(tmp_path, GOOD + [BAD["RG900"]])
    assert main(["-C", str(root), "build"]) == 0
    capsys.readouterr()
    code = main(["-C", str(root), "check", "--prometheus", prometheus_server.url])
    out, err = capsys.readouterr()
    assert code == 1 and err == ""
    assert "rules/fixture.yaml:" in out and "error RG900 [Typo] `rg_fixture_eror_ratio` has no series" in out
    assert out.rstrip().endswith("generated file(s) up to date")
    # the same with the URL in .rulegen.yaml
    (root / ".rulegen.yaml").write_text(f"prometheus:\n  url: {prometheus_server.url}\n")
    assert main(["-C", str(root), "build"]) == 0  # the runbook links follow the new URL
    capsys.readouterr()
    assert main(["-C", str(root), "check"]) == 1 and "RG900" in capsys.readouterr().out


def test_without_a_prometheus_the_checks_are_skipped_with_one_line(tmp_path, capsys):
    root = _project(tmp_path, GOOD)
    assert series_findings(root, load_config(root), load_project(root, None).specs) == ([], SKIPPED)
    assert main(["-C", str(root), "build"]) == 0
    capsys.readouterr()
    assert main(["-C", str(root), "check"]) == 0
    out, err = capsys.readouterr()
    assert err == f"rulegen: note: {SKIPPED}\n" and "RG90" not in out


def test_an_unreachable_prometheus_is_an_error_naming_it(tmp_path, capsys):
    from helpers.prometheus import free_port
    root = _project(tmp_path, GOOD)
    assert main(["-C", str(root), "build"]) == 0
    capsys.readouterr()
    url = f"http://127.0.0.1:{free_port()}"
    assert main(["-C", str(root), "check", "--prometheus", url]) == 2
    out, err = capsys.readouterr()
    assert err.startswith(f"rulegen: Prometheus at {url}: connection refused") and "Traceback" not in err


def test_the_bundled_specs_against_the_fixture(prometheus_server):
    # none of the bundled metrics is in the fixture but `up`: every other selector is RG900, a
    # job matcher on `up` RG901 (the fixture has jobs api and batch), nothing else, and no error
    loaded = load_project(REPO, None)
    rules = live_rules(loaded.specs)
    t0 = time.monotonic()
    found = check_series(Client(Connection(url=prometheus_server.url)), rules, now=prometheus_server.end + 60)
    took = time.monotonic() - t0
    assert found and {f.code for f in found} == {"RG900", "RG901"}
    assert all("`job=" in f.message for f in found if f.code == "RG901")
    assert all(f.line > 0 and f.col > 0 for f in found)
    counts = {c: sum(f.code == c for f in found) for c in ("RG900", "RG901")}
    print(f"bundled specs: {len(rules)} rules, {counts} in {took:.2f}s")


def test_duration_text():
    assert [duration(s) for s in (604800, 3600, 90, 0.4)] == ["7d", "1h", "1m30s", "0s"]
