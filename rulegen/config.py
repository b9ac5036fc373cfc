"""Project configuration: ``.rulegen.yaml`` at the project root (optional).

Shape::

    checks:
      disable: [RG502]          # codes switched off
      severity: {RG403: warning} # change a code's severity (error | warning)
    conventions:
      severities: [critical, warning, info]
      require_summary: true
      require_description: true
      require_runbook_for: [critical]
    duplicate_alert_across_apps: error   # or warning

Everything has a default, so a project without the file behaves as documented in the README.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import yaml

from .findings import Finding, RulegenError, Severity

CONFIG_FILE = ".rulegen.yaml"


@dataclass
class Config:
    """Validated project configuration (see the module docstring for the file shape)."""

    disabled: frozenset = frozenset()
    severity_overrides: dict = field(default_factory=dict)
    severities: tuple = ("critical", "warning", "info")
    require_summary: bool = True
    require_description: bool = True
    require_runbook_for: tuple = ("critical",)
    duplicate_alert_across_apps: str = "error"

    def apply(self, findings: list[Finding]) -> list[Finding]:
        """Drop disabled codes and apply severity overrides; result sorted by file, line, col."""
        out = []
        for f in findings:
            if f.code in self.disabled:
                continue
            sev = self.severity_overrides.get(f.code)
            if sev is not None and sev != f.severity:
                f = Finding(f.file, f.line, f.col, f.code, sev, f.message, f.rule)
            out.append(f)
        return sorted(set(out), key=lambda f: (f.file, f.line, f.col, f.code, f.message))


def load_config(root: Path) -> Config:
    """Read ``.rulegen.yaml`` under ``root``; defaults when absent.

    Raises:
        RulegenError: the file exists but is not valid (says which key and why).
    """
    p = root / CONFIG_FILE
    if not p.is_file():
        return Config()
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as e:
        raise RulegenError(f"{CONFIG_FILE}: not valid YAML: {e}") from None
    if not isinstance(raw, dict):
        raise RulegenError(f"{CONFIG_FILE}: must be a mapping")
    unknown = set(raw) - {"checks", "conventions", "duplicate_alert_across_apps"}
    if unknown:
        raise RulegenError(f"{CONFIG_FILE}: unknown key(s) {sorted(unknown)}; "
                           "known: checks, conventions, duplicate_alert_across_apps")
    checks = raw.get("checks") or {}
    conv = raw.get("conventions") or {}
    sev = {}
    for code, s in (checks.get("severity") or {}).items():
        try:
            sev[str(code)] = Severity(s)
        except ValueError:
            raise RulegenError(f"{CONFIG_FILE}: checks.severity.{code}: use error or warning") from None
    dup = raw.get("duplicate_alert_across_apps", "error")
    if dup not in ("error", "warning"):
        raise RulegenError(f"{CONFIG_FILE}: duplicate_alert_across_apps: use error or warning")
    return Config(
        disabled=frozenset(str(c) for c in checks.get("disable") or ()),
        severity_overrides=sev,
        severities=tuple(conv.get("severities", Config.severities)),
        require_summary=bool(conv.get("require_summary", True)),
        require_description=bool(conv.get("require_description", True)),
        require_runbook_for=tuple(conv.get("require_runbook_for", Config.require_runbook_for)),
        duplicate_alert_across_apps=dup,
    )
