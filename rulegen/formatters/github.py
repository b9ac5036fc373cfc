"""GitHub Actions workflow commands (``::error file=F,line=L,col=C,title=CODE::message``),
so findings show as annotations on the pull request's diff."""

from __future__ import annotations


def _esc(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


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
