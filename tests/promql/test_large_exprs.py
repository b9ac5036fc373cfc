"""An expr too large or too deeply nested for rulegen to check is an RG316 finding at the expr,
never a crash (regression: 60,000 `+` terms crashed the interpreter inside promql-parser, the
Rust-backed parser, which recurses once per operator; a few hundred made validate, build and
check die with a RecursionError in the label flow; a chain of a few hundred recording rules
did too). Prometheus itself has no such limit (`promtool check rules` reads 200,000 terms), so
the finding says it is rulegen's, and how to split the expr.

The CLI runs in a child process here: a crash of the parser kills the process it runs in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from rulegen.promql import labelflow, syntax

from helpers import REPO

SPEC = """\
app: big
labels: {team: web}
groups:
  - name: big
    rules:
      - alert: BigSum
        expr: EXPR > 0
        for: 5m
        severity: warning
        summary: Big.
        description: Big.
"""

#: Expressions past the limit, each of a shape that nests its syntax tree as it grows.
HUGE = {
    "60,000 terms": " + ".join(["up"] * 60_000),  # crashed promql-parser
    "600 terms": " + ".join(["up"] * 600),  # RecursionError in the label flow
    "600 or": " or ".join(f"up{{i=\"{i}\"}}" for i in range(600)),
    "600 powers": " ^ ".join(["up"] * 600),
    "600 unary minus": "1 " + "- " * 600 + "up",
    "300 parentheses": "(" * 300 + "up" + ")" * 300,
    "300 sums": "sum(" * 300 + "up" + ")" * 300,
}


def rulegen(root: Path, *args: str, timeout: int = 600) -> subprocess.CompletedProcess:
    """``rulegen -C root ARGS`` in a child process; it must end by itself, without a signal
    or a traceback."""
    proc = subprocess.run([sys.executable, "-m", "rulegen", "-C", str(root), *args], capture_output=True,
                          text=True, timeout=timeout, cwd=str(REPO), env=dict(os.environ))
    assert proc.returncode >= 0, (proc.returncode, proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]
    return proc


def project(tmp_path: Path, expr: str) -> Path:
    root = tmp_path / "p"
    (root / "rules").mkdir(parents=True)
    (root / "rules/big.yaml").write_text(SPEC.replace("EXPR", expr), encoding="utf-8")
    return root


@pytest.mark.parametrize("shape", list(HUGE))
def test_validate_reports_rg316_at_the_expr(tmp_path, shape):
    proc = rulegen(project(tmp_path, HUGE[shape]), "validate")
    assert proc.returncode == 1, proc.stdout[-2000:]
    (line,) = [ln for ln in proc.stdout.splitlines() if " RG316 " in ln]
    assert line.startswith("rules/big.yaml:7:15: error RG316 [BigSum] expr is too large for rulegen to check: "), line
    assert f"at most {syntax.MAX_DEPTH}" in line and "Prometheus has no such limit" in line, line
    assert "recording rules" in line, line
    # one finding for it: no parse error, no other check tripping on it
    assert " RG301 " not in proc.stdout, proc.stdout[-2000:]


@pytest.mark.tools
@pytest.mark.parametrize("command", ["build", "check", "test"])
def test_build_check_and_test_report_it_too(tmp_path, command):
    proc = rulegen(project(tmp_path, HUGE["60,000 terms"]), command)
    assert proc.returncode != 0
    assert "rules/big.yaml:7:15: error RG316 " in proc.stdout + proc.stderr, (proc.stdout + proc.stderr)[-2000:]


def test_diff_compares_a_spec_with_one(tmp_path):
    root = project(tmp_path, "up")

    def git(*args):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root, check=True,
                       capture_output=True)
    git("init", "-q")
    git("add", "rules")
    git("commit", "-q", "-m", "base")
    (root / "rules/big.yaml").write_text(SPEC.replace("EXPR", HUGE["60,000 terms"]), encoding="utf-8")
    proc = rulegen(root, "diff", "--base", "HEAD")
    assert "BigSum" in proc.stdout and "these specs have errors" in proc.stdout, proc.stdout[-2000:]


def test_import_refuses_the_rule_with_rg316(tmp_path):
    src = tmp_path / "big.rules.yml"
    src.write_text("groups:\n  - name: big\n    rules:\n"
                   f"      - alert: BigSum\n        expr: {HUGE['60,000 terms']} > 0\n"
                   f"      - alert: Deep\n        expr: {HUGE['600 terms']} > 0\n"
                   "      - alert: Small\n        expr: up == 0\n", encoding="utf-8")
    proc = rulegen(tmp_path / "p", "import", str(src))
    notes = [ln for ln in proc.stderr.splitlines() if " RG316 " in ln]
    assert [n.split(" RG316 ")[0] for n in notes] == [f"{src}:5:1: error", f"{src}:7:1: error"], proc.stderr[-2000:]
    assert all("expr is too large for rulegen to check" in n and "skipped" in n for n in notes), notes
    # an error note, as for a rule Prometheus rejects (RG806): nothing is written
    assert proc.returncode == 1 and "nothing was written" in proc.stderr and not (tmp_path / "p").exists()


def test_the_limit_is_exact_and_an_expr_at_it_is_checked(tmp_path):
    """An expr at the limit is parsed and checked like any other (the label flow finds the
    missing label); one operator more is RG316."""
    body = " + ".join(["up"] * (syntax.MAX_DEPTH - 2)) + " + sum by (job) (up)"
    at = body + " > 0"  # the spec's expr
    assert syntax.depth_bound(at) == syntax.MAX_DEPTH and syntax.too_large(at) is None
    assert syntax.parse(at)[1] is None
    assert labelflow.can_carry(at, "instance") is False
    assert syntax.depth_bound("up + " + at) == syntax.MAX_DEPTH + 1 and syntax.too_large("up + " + at)
    root = project(tmp_path, body)
    spec = root / "rules/big.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("description: Big.",
                                                             "description: \"{{ $labels.instance }}\""),
                    encoding="utf-8")
    proc = rulegen(root, "validate")
    assert " RG316 " not in proc.stdout and " RG311 " in proc.stdout, proc.stdout[-2000:]


@pytest.mark.parametrize("text", [
    'up{job="a+b-c*d"} + on (job) sum(rate(x[5m])) # 1 - 2 - 3 and or',
    "sum by (job) (rate(http_requests_total{code=~\"5..\"}[5m])) / ignoring (code) group_left "
    "sum by (job) (rate(http_requests_total[5m])) > 0.05",
])
def test_the_bound_counts_no_operator_inside_strings_comments_or_matchers(text):
    """Strings, comments and the matchers inside braces hold no operator of the expression."""
    ast, err = syntax.parse(text)
    assert err is None
    depth = 1
    stack = [(ast, 1)]
    while stack:
        node, d = stack.pop()
        depth = max(depth, d)
        for attr in syntax._CHILDREN[type(node).__name__]:
            v = getattr(node, attr, None)
            stack.extend((c, d + 1) for c in (v if isinstance(v, (list, tuple)) else [v]) if c is not None)
    assert depth <= syntax.depth_bound(text) + 1 <= 12


def test_a_long_chain_of_recording_rules_is_no_crash(tmp_path):
    """Each recording rule reads the one before: the label flow follows them to a depth, then
    knows nothing (and says nothing); a short chain is still followed."""
    def chain(n: int) -> str:
        rules = "".join(f"      - record: job:r{i}:sum\n        expr: sum by (job) (job:r{i - 1}:sum)\n"
                        for i in range(1, n))
        return ("app: chain\nlabels: {team: web}\ngroups:\n  - name: chain\n    rules:\n"
                "      - record: job:r0:sum\n        expr: sum by (job) (up)\n" + rules +
                f"      - alert: ChainHigh\n        expr: job:r{n - 1}:sum > 0\n        for: 5m\n"
                "        severity: warning\n        summary: \"{{ $labels.instance }} high.\"\n"
                "        description: High.\n")
    for n, reported in ((20, True), (400, False)):
        root = tmp_path / str(n)
        (root / "rules").mkdir(parents=True)
        (root / "rules/chain.yaml").write_text(chain(n), encoding="utf-8")
        proc = rulegen(root, "validate")
        assert (" RG311 " in proc.stdout) is reported, proc.stdout[-2000:]


@pytest.mark.parametrize("word", ["AND", "Or", "UNLESS", "Atan2"])
def test_the_bound_counts_set_operators_and_atan2_in_any_case(tmp_path, word):
    """Prometheus' lexer reads its keywords in any case (``a AND b`` is ``a and b``), and so
    does promql-parser: the bound counts them so (regression: 5,000 terms joined by ``AND``
    measured 0 and crashed the interpreter inside promql-parser)."""
    op = f" {word} "
    assert syntax.depth_bound(op.join(["up"] * 3)) == 2
    assert syntax.depth_bound(f"up{op}(down)") == 2
    huge = op.join(f"up{{i=\"{i}\"}}" for i in range(5000))
    assert syntax.depth_bound(huge) == 4999 and syntax.too_large(huge)
    proc = rulegen(project(tmp_path, f"({huge})"), "validate")
    assert proc.returncode == 1 and "rules/big.yaml:7:15: error RG316 " in proc.stdout, proc.stdout[-2000:]
