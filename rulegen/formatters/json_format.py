"""JSON for machines: ``{"findings": [{file, line, col, code, severity, rule, message}],
"errors": N, "warnings": N}``, keys sorted, stable across runs."""

from __future__ import annotations

import json


def _escape(c: str) -> str:
    """``c`` as JSON's ``\\uXXXX`` escape (a surrogate pair beyond U+FFFF)."""
    n = ord(c)
    if n < 0x10000:
        return f"\\u{n:04x}"
    n -= 0x10000
    return f"\\u{0xD800 + (n >> 10):04x}\\u{0xDC00 + (n & 0x3FF):04x}"


def render(findings) -> str:
    """The findings as JSON, non-ASCII text as it is (``é``, ``漢字``) but every character a
    terminal or a page acts on (``not str.isprintable()``: C1 controls such as U+009B, a
    one-byte CSI; bidirectional and zero-width format characters; the line separators) as its
    ``\\u`` escape: messages quote spec values of a pull request, and a CI log prints this
    (the text and GitHub formats escape the same characters, :func:`rulegen.formatters.text.printable`)."""
    errors = sum(f.is_error for f in findings)
    doc = {"errors": errors, "warnings": len(findings) - errors,
           "findings": [f.to_dict() for f in findings]}
    text = json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False)
    # outside strings JSON holds only printable ASCII and line breaks: these are in strings.
    # Most lines have none (one C call each decides); only the others go character by character.
    return "\n".join(line if line.isprintable() else "".join(c if c.isprintable() else _escape(c) for c in line)
                     for line in text.split("\n"))
