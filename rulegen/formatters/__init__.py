"""Formatters: findings in, text out. One module per format; findings are data
(:class:`rulegen.findings.Finding`) and never format themselves."""

from __future__ import annotations

from . import github, json_format, text

FORMATS = {"text": text, "json": json_format, "github": github}


def render(findings, fmt: str = "text") -> str:
    """Findings as text in format ``fmt`` (``text``, ``json`` or ``github``)."""
    return FORMATS[fmt].render(findings)
