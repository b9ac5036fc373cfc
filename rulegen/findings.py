"""Findings: the one data type every check produces and every formatter prints.

A finding is plain data (code, severity, file, line, column, rule name, message), in the
manner of yamllint's problems and pint's reports: checks produce findings, formatters in
:mod:`rulegen.formatters` print them, nothing else decides how they look.

Codes are stable and public: they are used in the project configuration to switch checks
off and are documented on the site. Their prefixes follow the pipeline:

* ``RG1xx`` loading (YAML syntax, YAML traps, files),
* ``RG2xx`` spec schema,
* ``RG3xx`` PromQL, durations and templates,
* ``RG4xx`` names, duplicates and cross-references,
* ``RG5xx`` conventions,
* ``RG6xx`` tests declared in specs,
* ``RG7xx`` generated files (ownership, drift, runbook links),
* ``RG8xx`` ``rulegen import`` notes (what could not be carried into a spec).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class Severity(str, enum.Enum):
    """How bad a finding is. ``error`` fails ``validate``/``build``; ``warning`` does not."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Finding:
    """One problem found in a spec or a generated file.

    Attributes:
        file: path as given by the user (relative to the project root when possible).
        line: 1-based line, 0 when the problem concerns the whole file.
        col: 1-based column, 0 when unknown.
        code: stable code such as ``RG301`` (see the module docstring).
        severity: :class:`Severity`.
        message: one sentence saying what is wrong and what to change.
        rule: alert, recording rule or group name the finding is about, or ``""``.
    """

    file: str
    line: int
    col: int
    code: str
    severity: Severity = field(compare=False)
    message: str = field(compare=False)
    rule: str = field(default="", compare=False)

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def location(self) -> str:
        """``file:line:col`` as editors and CI annotations read it."""
        return f"{self.file}:{self.line}:{self.col}"

    def to_dict(self) -> dict:
        return {
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "code": self.code,
            "severity": self.severity.value,
            "rule": self.rule,
            "message": self.message,
        }


class RulegenError(Exception):
    """A usage or environment fault that stops a command (exit code 2).

    Raised for things that are not findings in a spec: a missing ``rules/`` folder, a tool
    that is not installed, a file that cannot be written.
    """


def has_errors(findings: list[Finding]) -> bool:
    """True when any finding is an error."""
    return any(f.is_error for f in findings)


def error(file: str, line: int, col: int, code: str, message: str, rule: str = "") -> Finding:
    """A :class:`Finding` of severity error (the checks that make only errors use it)."""
    return Finding(file, line, col, code, Severity.ERROR, message, rule)
