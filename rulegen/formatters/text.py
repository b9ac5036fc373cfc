"""Text for people reading a terminal or CI log: one finding per line,
``file:line:col: severity CODE [rule] message``, then a count."""

from __future__ import annotations


def printable(s: str) -> str:
    """``s`` with every character a terminal would act on (ESC sequences, BEL, CR, line
    breaks, bidi controls: ``not str.isprintable()``) written as its Python escape (``\\x1b``):
    alert names, receiver names and server texts in messages come from pull requests."""
    s = str(s)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in s)


def render(findings) -> str:
    lines = []
    for f in findings:
        rule = f" [{f.rule}]" if f.rule else ""
        lines.append(printable(f"{f.location()}: {f.severity.value} {f.code}{rule} {f.message}"))
    errors = sum(f.is_error for f in findings)
    warnings = len(findings) - errors
    if findings:
        lines.append(f"{errors} error(s), {warnings} warning(s)")
    return "\n".join(lines)
