"""The real ``promtool`` (Prometheus 3.x): ``check rules`` and ``test rules``.

Commands and exit codes as in the promtool docs: ``promtool check rules FILE...`` (0 ok,
1 problems, 3 lint-fatal) and ``promtool test rules [--junit=FILE] FILE...`` (0 all passed,
1 any failure). ``test rules`` writes a JUnit XML report, which is how results are read
back: one ``testsuite`` per test file, one ``testcase`` per test group (its ``name``).
"""

from __future__ import annotations

import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import RulegenError
from . import find, process

TIMEOUT_S = 900


@dataclass
class CaseResult:
    """One promtool test group's outcome: ``name`` as in the test file, ``failure`` text or ``""``."""

    file: str
    name: str
    failure: str = ""

    @property
    def passed(self) -> bool:
        return not self.failure


class PromtoolTimeout(RulegenError):
    """``promtool test rules`` ran longer than :data:`TIMEOUT_S` seconds (the command stops
    with this message and exit code 2, not a traceback)."""


@dataclass
class TestRun:
    """Outcome of one ``promtool test rules`` process."""

    returncode: int
    output: str
    cases: list[CaseResult] = field(default_factory=list)


def check_rules(files: list[Path], root: Path | None = None) -> tuple[int, str]:
    """``promtool check rules FILES``; returns (exit code, combined output). promtool runs with
    the reduced environment of :func:`rulegen.tools.process.run`.

    Raises:
        RulegenError: promtool is not installed, or would come from the project ``root``.
    """
    promtool = find.require("promtool", root)
    proc = process.run([promtool, "check", "rules", *files], timeout=TIMEOUT_S)
    return proc.returncode, proc.stdout + proc.stderr


def test_rules(files: list[Path], cwd: Path, root: Path | None = None, run: str | None = None,
               timeout: float | None = None) -> TestRun:
    """``promtool test rules --junit=... FILES`` in ``cwd``; results parsed from the JUnit report.

    ``run`` is promtool's ``--run`` regular expression on test group names; ``timeout`` the
    seconds it may take (None: :data:`TIMEOUT_S`).

    Raises:
        RulegenError: promtool is not installed, or would come from the project ``root``.
        PromtoolTimeout: it ran longer than ``timeout`` seconds.
    """
    timeout = TIMEOUT_S if timeout is None else timeout
    promtool = find.require("promtool", root)
    with tempfile.TemporaryDirectory(prefix="rulegen-promtool-") as tmp:
        junit = Path(tmp) / "junit.xml"
        args = [str(promtool), "test", "rules", f"--junit={junit}"]
        if run:
            args.append(f"--run={run}")
        args += [str(f) for f in files]
        try:
            proc = process.run(args, timeout=timeout, cwd=cwd)
        except process.TimeoutExpired:
            raise PromtoolTimeout(f"promtool test rules did not finish within {timeout:g} s "
                                  f"({len(files)} test file(s) in {cwd}); the machine may be overloaded, "
                                  "or a test evaluates very long series: run fewer at once (--app, --alert)") from None
        cases = parse_junit(junit.read_text(encoding="utf-8")) if junit.is_file() else []
    return TestRun(proc.returncode, proc.stdout + proc.stderr, cases)


def parse_junit(text: str) -> list[CaseResult]:
    """Test group results from promtool's JUnit XML."""
    out = []
    root = ET.fromstring(text)
    for suite in root.iter("testsuite"):
        fname = suite.get("name", "")
        for case in suite.iter("testcase"):
            fail = case.find("failure")
            err = case.find("error")
            msg = ""
            for node in (fail, err):
                if node is not None:
                    msg += (node.get("message") or "") + (node.text or "")
            if (fail is not None or err is not None) and not msg:
                msg = "failed"
            out.append(CaseResult(fname, case.get("name", ""), msg))
    return out
