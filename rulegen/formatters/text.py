"""Text for people reading a terminal or CI log: one finding per line,
``file:line:col: severity CODE [rule] message``, then a count."""

from __future__ import annotations


def render(findings) -> str:
    lines = []
    for f in findings:
        rule = f" [{f.rule}]" if f.rule else ""
        lines.append(f"{f.location()}: {f.severity.value} {f.code}{rule} {f.message}")
    errors = sum(f.is_error for f in findings)
    warnings = len(findings) - errors
    if findings:
        lines.append(f"{errors} error(s), {warnings} warning(s)")
    return "\n".join(lines)
