"""PromQL text cut into its strings, comments and the code around them, as Prometheus' lexer
reads it (:func:`pieces`), and a query written so that a web page shows and copies it
unchanged (:func:`for_page`).

Prometheus' lexer (``promql/parser/lex.go``): a double- or single-quoted string ends at its
unescaped quote (a backslash escapes the next character), a backquoted one (raw, no escapes)
at the next backquote, and a comment runs from ``#`` to the end of the line, which a line feed
*or a carriage return* ends (``isEndOfLine``); promql-parser reads them the same.
"""

from __future__ import annotations

import re

#: Characters a runbook page does not carry as they are, or shows other than they read:
#: C0 controls (Python-Markdown drops STX/ETX, turns a carriage return into a line break and a
#: tab into spaces; a browser drops NUL), DEL, C1 controls, the line and paragraph separators,
#: and the zero-width and bidirectional format characters (a right-to-left override makes the
#: text after it read backwards). The line feed is handled apart (:func:`for_page`).
UNSHOWABLE = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e"
                        "\u2060-\u2064\u2066-\u206f\ufeff]")


def pieces(expr: str):
    """``(kind, text)`` of each piece of ``expr`` in order, their texts joined giving ``expr``
    back: ``kind`` is ``"string"`` (quotes included; an unterminated one runs to the end),
    ``"comment"`` (``#`` up to, not including, the line feed or carriage return that ends it)
    or ``"code"`` (the rest, line breaks included)."""
    k, n, start = 0, len(expr), 0
    while k < n:
        c = expr[k]
        if c in "\"'`":
            end = k + 1
            while end < n and expr[end] != c:
                end += 2 if c != "`" and expr[end] == "\\" else 1
            end = min(end + 1, n)
            kind = "string"
        elif c == "#":
            end = k
            while end < n and expr[end] not in "\r\n":
                end += 1
            kind = "comment"
        else:
            k += 1
            continue
        if k > start:
            yield "code", expr[start:k]
        yield kind, expr[k:end]
        k = start = end
    if start < n:
        yield "code", expr[start:]


def _escape(c: str) -> str:
    """``c`` as an escape of a PromQL string (Go's: ``\\t``, ``\\r``, ``\\n``, ``\\xHH``,
    ``\\uHHHH``), which Prometheus and promql-parser read back as ``c``."""
    named = {"\t": "\\t", "\r": "\\r", "\n": "\\n"}
    if c in named:
        return named[c]
    return f"\\x{ord(c):02x}" if ord(c) < 0x80 else f"\\u{ord(c):04x}"


def _string_for_page(text: str) -> str:
    """A string literal with every :data:`UNSHOWABLE` character (and, in a raw string, a line
    break) written as an escape, so it holds the same value; a raw string that needs one
    becomes the double-quoted string Prometheus reads it as."""
    quote, body = text[0], text[1:]
    closed = len(text) > 1 and text.endswith(quote) and (quote == "`" or not _escaped_end(text))
    if closed:
        body = body[:-1]
    if quote == "`":
        if not UNSHOWABLE.search(body) and "\n" not in body:
            return text
        if not closed:
            return UNSHOWABLE.sub(lambda m: _escape(m.group(0)), text)  # not PromQL: shown readable
        body = body.replace("\\", "\\\\").replace('"', '\\"')
        return '"' + re.sub("[\n]|" + UNSHOWABLE.pattern, lambda m: _escape(m.group(0)), body) + '"'
    if not UNSHOWABLE.search(text):
        return text
    return UNSHOWABLE.sub(lambda m: _escape(m.group(0)), text)


def _escaped_end(text: str) -> bool:
    """Whether the last character of a quoted string's text is escaped (``"a\\"``: unterminated)."""
    run = len(text) - 1 - len(text[:-1].rstrip("\\"))
    return run % 2 == 1


def code_only(expr: str) -> str:
    """``expr`` with its strings and comments (:func:`pieces`) blanked to spaces, each offset
    kept: what of it is PromQL code, for searches that must not look inside either."""
    return "".join(t if kind == "code" else " " * len(t) for kind, t in pieces(expr))


def for_page(expr: str) -> str:
    """``expr`` written so that a runbook page shows, and its script links and copies, the
    same query, each character visible (see :data:`UNSHOWABLE`): Markdown and HTML turn a
    carriage return into a line break or a space, a tab into spaces, and drop NUL, STX and ETX,
    which changed what a string matches or where a comment ends (``sum(x) # c<CR>+ y`` was
    shown, and linked, as ``sum(x) # c + y``: ``sum(x)``).

    * a carriage return (or CR LF) outside strings becomes a line feed: both end a comment,
      and both are white space elsewhere;
    * in a string, each such character is written as its escape (``"a\\tb"``), a raw
      (backquoted) string holding one or a line break as the double-quoted string of the same
      value;
    * in a comment or elsewhere (not PromQL), as the text of an escape (``\\u202e``), which
      reads as what it is.

    Text holding none of them (nearly every expr) is returned as it is, and the function is
    idempotent."""
    if not UNSHOWABLE.search(expr) and not ("`" in expr and "\n" in expr):
        return expr
    out = []
    for kind, text in pieces(expr):
        if kind == "string":
            out.append(_string_for_page(text))
            continue
        if kind == "code":
            text = text.replace("\r\n", "\n").replace("\r", "\n")
            # a tab is white space, shown as spaces; anything else is no PromQL: shown readable
            text = UNSHOWABLE.sub(lambda m: m.group(0) if m.group(0) == "\t" else _escape(m.group(0)), text)
        else:
            text = UNSHOWABLE.sub(lambda m: _escape(m.group(0)), text)
        out.append(text)
    return "".join(out)
