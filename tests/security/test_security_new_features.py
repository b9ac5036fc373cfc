"""Attacker's review of the routing, owners, live Prometheus and chart-metadata features:
each test is a hostile pull request (or a hostile server) and asserts the safe behaviour."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from rulegen.cli import main

#: Helm template code that, executed, prints a line break and a YAML key of its own.
HELM_CODE = "Down{{ printf `%c` 10 }}  injected: {{ .Release.Namespace }}"


def _rename_alert(project: Path, old: str, new: str) -> None:
    """Rename alert ``old`` to ``new`` everywhere in the bundled specs (definition and references)."""
    for spec in (project / "rules").glob("*.yaml"):
        text = spec.read_text(encoding="utf-8")
        fixed = re.sub(rf"(alert: *){re.escape(old)}\b", lambda m: m.group(1) + "'" + new + "'", text)
        fixed = fixed.replace(f"{{alert: {old}}}", f"{{alert: '{new}'}}")
        if fixed != text:
            spec.write_text(fixed, encoding="utf-8")


@pytest.mark.tools("helm")
def test_an_alert_name_with_helm_code_stays_text_in_the_alertmanagerconfig(project, capsys, helm_bin):
    """An alert name (any string Prometheus accepts) reaches the inhibit rules of the chart's
    AlertmanagerConfig; Helm must output it, not run it (no template or YAML injection)."""
    _rename_alert(project, "InferenceCacheServerDown", HELM_CODE)
    assert main(["-C", str(project), "build"]) == 0, capsys.readouterr()
    chart = project / "charts" / "inferencecache"
    out = subprocess.run([str(helm_bin), "template", "r", str(chart), "--namespace", "ns1", "-s",
                          "templates/alertmanagerconfig-inferencecache.yaml"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    import yaml
    doc = yaml.safe_load(out.stdout)
    values = [m["value"] for r in doc["spec"]["inhibitRules"] for m in r["sourceMatch"]]
    assert HELM_CODE in values
    assert "injected" not in str(doc["spec"]["inhibitRules"][0].keys())


@pytest.mark.parametrize("var", ["$prompt", "${path}", "$PROMPT_COMMAND"])
def test_a_silence_matcher_variable_the_shell_acts_on_is_refused_in_any_case(project, capsys, var):
    """``silence.matchers: {namespace: $prompt}`` made the page's preamble set ``prompt=...``
    (zsh's PS1, filled from a crafted link): RG514 for every name, lower-case included."""
    spec = project / "rules" / "llama-swap.yaml"
    text = spec.read_text(encoding="utf-8")
    assert "matchers: {namespace: ai, deployment: llama-swap}" in text
    spec.write_text(text.replace("matchers: {namespace: ai, deployment: llama-swap}",
                                 f"matchers: {{namespace: '{var}', deployment: llama-swap}}"), encoding="utf-8")
    assert main(["-C", str(project), "validate"]) == 1
    out = capsys.readouterr()
    assert "RG514" in out.out + out.err


def test_a_plain_lower_case_silence_variable_still_passes(project, capsys):
    spec = project / "rules" / "llama-swap.yaml"
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("matchers: {namespace: ai, deployment: llama-swap}",
                                 "matchers: {namespace: $ns, deployment: llama-swap}"), encoding="utf-8")
    main(["-C", str(project), "validate"])
    out = capsys.readouterr()
    assert "RG514" not in out.out + out.err


# --- files the config names: a link that stays in the project but leads into .git ---------------

def _git_checkout(project: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=project, check=True)
    subprocess.run(["git", "config", "http.https://github.com/.extraheader", "AUTHORIZATION: basic ghs_s3cr3t"],
                   cwd=project, check=True)


def test_an_alertmanager_config_linked_into_git_metadata_is_not_read(project, capsys, monkeypatch):
    _git_checkout(project)
    (project / "deploy" / "am.yml").symlink_to("../.git/config")
    cfg = project / ".rulegen.yaml"
    cfg.write_text(cfg.read_text(encoding="utf-8").replace("config: deploy/alertmanager.yml",
                                                           "config: deploy/am.yml"), encoding="utf-8")
    from rulegen.fs import read as fs_read
    real = fs_read.read_text
    opened = []
    monkeypatch.setattr(fs_read, "read_text", lambda path, *a, **k: (opened.append(str(path)), real(path, *a, **k))[1])
    main(["-C", str(project), "validate"])
    out = capsys.readouterr()
    assert "RG742" in out.out + out.err
    assert not any(p.endswith("am.yml") for p in opened)


@pytest.mark.parametrize("key", ["bearer_token_file", "ca_file"])
def test_a_prometheus_file_linked_into_git_metadata_is_not_read(project, key):
    from rulegen.config import prometheus_settings
    from rulegen.live.connect import LiveError, resolve
    _git_checkout(project)
    (project / ".git" / "token").write_text("ghs_s3cr3t\n", encoding="utf-8")  # a one-line file in .git
    (project / "ci").mkdir()
    (project / "ci" / "tok").symlink_to("../.git/token")
    settings = prometheus_settings({"url": "https://prometheus.example.com", key: "ci/tok"})
    with pytest.raises(LiveError, match="RG742"):
        resolve(project, settings)


# --- a hostile Prometheus (prometheus.url comes with the pull request) ----------------------------

def _drip_server(headers_first: bool):
    """A server on 127.0.0.1 that answers one byte every 0.2 s, forever (until stopped):
    after a complete header when ``headers_first``, else inside the status line."""
    import socket
    import threading
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    stop = threading.Event()

    def serve():
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                conn.recv(65536)
                try:
                    if headers_first:
                        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                                     b"Content-Length: 100000000\r\n\r\n")
                    else:
                        conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                    while not stop.wait(0.2):
                        conn.sendall(b" ")
                except OSError:
                    pass

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return srv, stop


@pytest.mark.parametrize("headers_first", [True, False], ids=["dripping body", "dripping headers"])
def test_a_dripping_prometheus_cannot_outlast_the_timeout(headers_first):
    """Each byte arrives before the socket timeout, so only a deadline on the whole request
    stops it: the request must fail within a little more than the timeout, not hang CI."""
    import threading
    import time
    from rulegen.live.client import Client
    from rulegen.live.connect import Connection, LiveError
    srv, stop = _drip_server(headers_first)
    try:
        client = Client(Connection(url=f"http://127.0.0.1:{srv.getsockname()[1]}", timeout=1.0))
        got = []

        def ask():
            try:
                client.query("up", 0)
            except LiveError as e:
                got.append(e)
        t = threading.Thread(target=ask, daemon=True)
        start = time.monotonic()
        t.start()
        t.join(15)
        assert not t.is_alive(), "the request outlived its timeout by far"
        assert got and "within 1s" in str(got[0]), got
        assert time.monotonic() - start < 5
    finally:
        stop.set()
        srv.close()


def test_hostile_label_values_and_errors_of_a_backtest_reach_no_terminal_or_comment_raw():
    """Label values, rule labels and error texts come from the server (a pull request can name
    it): no control character (ESC sequences, CR that ends a Markdown code span) survives
    into the terminal report or the review comment."""
    from rulegen.gitops.backtest import DiffRow, diff_markdown, report_text
    from rulegen.live.backtest import parse
    evil = "x\x1b]8;;http://evil\x07click\x1b[2J\r<img src=https://evil/p.png>\n- [y](https://evil)\u2028"
    ep = {"start": "2026-12-01T00:00:00Z", "end": "2026-12-01T01:00:00Z", "ongoing": False,
          "labels": {"alertname": "A", "pod": evil, evil[:5]: "v"}}
    doc = {"start": "2026-12-01T00:00:00Z", "end": "2026-12-02T00:00:00Z", "alerts": [{
        "group": "g", "alert": "A", "index": 0, "expr": "up", "step_seconds": 60, "evaluations": 1,
        "episodes_total": 1, "firing_seconds": 3600, "longest_seconds": 3600, "label_sets_total": 1,
        "rule_labels": {"severity": evil}, "episodes": [ep], "episodes_truncated": False,
        "label_sets": [ep["labels"]], "label_sets_truncated": False, "eval_errors": 1,
        "first_eval_error": evil, "error": None}]}
    bt = parse(doc, "http://127.0.0.1:9")
    text = report_text([("app", bt)], 0, 86400, bt.url)
    md = "\n".join(diff_markdown([DiffRow("app", "A", None, bt.alerts[0])], (0, 86400), bt.url))
    for out in (text, md):
        assert not any(c in out for c in "\x1b\x07\r\u2028"), repr(out)
    assert "\n- [y]" not in md


def test_a_backtracking_regex_against_a_long_value_is_decided_in_linear_time(project, capsys):
    """``reason=~"(a|aa)+c"`` in an expr and a 60-character ``reason`` in a test's
    input_series held ``rulegen validate`` for years (Python's backtracking regex engine);
    RE2 decides it at once."""
    import time
    from rulegen.promql.matchers import matches
    start = time.monotonic()
    assert matches("=~", "(a|aa)+c", "a" * 60) is False
    assert matches("=~", "(a|aa)+", "a" * 60) is True
    assert matches("=~", "(.*a){20}x", "a" * 5000) is False
    assert time.monotonic() - start < 2
    spec = project / "rules" / "noctaya.yaml"
    text = spec.read_text(encoding="utf-8")
    text = text.replace('condition="Degraded", status="True"})', 'condition="Degraded", status="True", reason=~"(a|aa)+c"})', 1)
    text = text.replace('reason="OOMKilled"', 'reason="' + "a" * 60 + '"', 1)
    spec.write_text(text, encoding="utf-8")
    start = time.monotonic()
    main(["-C", str(project), "validate"])
    assert time.monotonic() - start < 30


def test_a_template_of_adjacent_parameters_does_not_hold_diff():
    """``rulegen diff`` explains an expr change by the spec's ``[[param]]`` template: adjacent
    placeholders against an expr the template does not explain took Python's backtracking
    engine O(n^k); RE2 answers at once, and the values of a repeated placeholder must agree."""
    import time
    from rulegen.gitops.diff import _param_values
    start = time.monotonic()
    assert _param_values("[[a]][[b]][[c]][[d]][[e]][[f]] > 1", "x" * 3000) is None
    assert time.monotonic() - start < 2
    assert _param_values("rate(x[[[w]]]) > [[t]]", "rate(x[5m]) > 0.9") == {"w": "5m", "t": "0.9"}
    assert _param_values("a [[t]] b [[t]]", "a 1 b 1") == {"t": "1"}
    assert _param_values("a [[t]] b [[t]]", "a 1 b 2") is None


@pytest.mark.parametrize("fmt", ["text", "github"])
def test_finding_messages_reach_the_terminal_without_control_characters(fmt):
    """Receiver names (an Alertmanager configuration), alert names and server texts are quoted
    in findings raw: an OSC 8 link or a screen clear in one reached the CI log."""
    from rulegen.findings import Finding, Severity
    from rulegen.formatters import github, text
    evil = "blackhole\x1b]8;;http://evil\x07\x1b[2J\u202e\r"
    f = Finding("rules/a.yaml", 1, 1, "RG951", Severity.ERROR, f"receivers: {evil}, default", rule=evil)
    out = (text if fmt == "text" else github).render([f])
    assert not any(c in out for c in "\x1b\x07\u202e\r"), repr(out)
    assert "blackhole" in out
