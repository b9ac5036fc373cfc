"""GitHub Actions workflow commands (``::error file=F,line=L,col=C,title=CODE::message``),
so findings show as annotations on the pull request's diff."""

from __future__ import annotations

from .text import printable


def _esc(s: str) -> str:
    """A workflow-command value: ``%``, CR and LF percent-encoded (GitHub decodes them), every
    other control character written as its escape (:func:`rulegen.formatters.text.printable`)."""
    lines = s.replace("%", "%25").replace("\r", "%0D").split("\n")
    return "%0A".join(printable(line) for line in lines)


def _prop(s: str) -> str:
    return _esc(s).replace(":", "%3A").replace(",", "%2C")


def render(findings) -> str:
    out = []
    for f in findings:
        kind = "error" if f.is_error else "warning"
        rule = f" [{f.rule}]" if f.rule else ""
        out.append(f"::{kind} file={_prop(f.file)},line={f.line},col={f.col},title={_prop(f.code)}::"
                   f"{_esc(f.code + rule + ' ' + f.message)}")
    return "\n".join(out)
