"""rulegen validate against the real promtool: what Prometheus rejects, rulegen must reject.

Each case is checked both ways: ``promtool check rules`` on the plain rule file that
``rulegen build --format rules`` would write, and ``rulegen validate`` on the spec. Cases where
the Rust promql-parser disagrees with Prometheus' Go parser are listed as strict xfails, so a
parser upgrade that fixes one makes the suite say so.
"""

from __future__ import annotations

import subprocess

import pytest

from rulegen.render.plain import render_rules_file
from rulegen.spec import build_spec, load_text
from rulegen.validate import validate_texts


def spec_text(expr: str = "up == 0", extra: str = "") -> str:
    return (
        "app: demo\ngroups:\n  - name: demo\n    rules:\n      - alert: DemoDown\n"
        f"        expr: '{expr}'\n        severity: warning\n        summary: s\n        description: d\n{extra}"
    )


def promtool_ok(promtool_bin, tmp_path, text: str) -> bool:
    spec = build_spec(load_text(text, "a.yaml"))
    f = tmp_path / "rules.yaml"
    f.write_text(render_rules_file(spec, "https://rb.example/", ["# test"]))
    return subprocess.run([str(promtool_bin), "check", "rules", str(f)], capture_output=True).returncode == 0


REJECTED = [
    ("limitk(1, up) > 0", "", "RG310"),
    ('sort_by_label(up, "job") > 0', "", "RG310"),
    ("double_exponential_smoothing(up[5m], 0.5, 0.5) > 0", "", "RG310"),
    ("ts_of_max_over_time(up[5m]) > 0", "", "RG310"),
    ('up{job=~"x{1001}"} > 0', "", "RG301"),
    ("rate(up[300y]) > 0", "", "RG309"),
    ("up offset 300y > 0", "", "RG309"),
    ("up == 0", "        for: 300y\n", "RG309"),
    ("up == 0", "        keep_firing_for: 99999999999999999999999h\n", "RG309"),
]


@pytest.mark.parametrize("expr,extra,code", REJECTED)
def test_what_promtool_rejects_rulegen_rejects(promtool_bin, tmp_path, expr, extra, code):
    text = spec_text(expr, extra)
    res = validate_texts({"a.yaml": text})
    assert [f.code for f in res.findings if f.is_error] == [code]
    # for the duration cases the spec cannot even be rendered canonically, which is the point
    if code != "RG309" or "offset" in expr or "rate" in expr:
        assert not promtool_ok(promtool_bin, tmp_path, text)


@pytest.mark.parametrize("expr", [
    "up > 0",
    'up{job=~"x{1000}"} > 0',
    "rate(up[5m]) > 0",
])
def test_what_promtool_accepts_rulegen_accepts(promtool_bin, tmp_path, expr):
    text = spec_text(expr)
    assert validate_texts({"a.yaml": text}).ok
    assert promtool_ok(promtool_bin, tmp_path, text)


@pytest.mark.xfail(strict=True, reason="promql-parser 0.11 lags Prometheus 3.16's Go parser")
@pytest.mark.parametrize("expr", [
    "up > 1_000",                 # number literals with underscores
    "rate(up[5m+1m]) > 0",        # duration arithmetic
    'up{job=~"\\\\Q.\\\\E"} > 0',  # Go regexp quoting
])
def test_known_parser_gaps(promtool_bin, tmp_path, expr):
    text = spec_text(expr)
    assert promtool_ok(promtool_bin, tmp_path, text)
    assert validate_texts({"a.yaml": text}).ok
