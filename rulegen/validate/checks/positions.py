"""Map a character offset inside a string value to its ``(line, col)`` in the spec file.

Used by the template and PromQL checks to point at the exact character of a problem. This
module has no check codes. The value's own position comes from the loader; the offset is
mapped by walking the source text of the value:

* plain scalars, on one line or folded over several (continuation lines lose their
  indentation, line breaks become spaces);
* ``"double"`` quoted scalars on one line (escapes such as ``\\t`` or ``\\x41`` decoded) and
  ``'single'`` quoted ones on one line (``''`` decoded);
* block scalars (``|``, ``>``, with chomping or indentation indicators): each content line
  without its indentation, line breaks kept or folded.

When the walk cannot account for every character before the offset (multi-line quoted
scalars, unusual layouts), the value's own position is returned.
"""

from __future__ import annotations

import re

_BLOCK_HEADER = re.compile(r"[|>][-+0-9]*\s*(?:#.*)?$")


def offset_position(lf, path, offset: int) -> tuple[int, int]:
    """File (line, col), 1-based, of character ``offset`` of the string value at ``path`` of
    the loaded file ``lf``; the value's own position when the offset cannot be mapped."""
    line, col = lf.pos(path)
    value = value_at(lf.data, path)
    lines = lf.lines()
    if not isinstance(value, str) or not 0 < line <= len(lines) or not 0 <= offset <= len(value):
        return line, col
    src = lines[line - 1][col - 1:]
    if not src:
        return line, col
    q = src[0]
    if q in "\"'":
        cols = _quoted_columns(src, q)
        if cols is None or len(cols) != len(value) + 1:
            return line, col
        return line, col + cols[offset]
    if q in "|>" and _BLOCK_HEADER.match(src):
        got = _block_position(lines, line, value, offset)
        return got or (line, col)
    got = _plain_position(lines, line, col, value, offset)
    return got or (line, col)


def _quoted_columns(src: str, q: str) -> list[int] | None:
    """For a quoted scalar starting at ``src[0]``: the source index of each decoded character
    plus one past the end, or None when the closing quote is not on this line."""
    out = []
    i, n = 1, len(src)
    while i < n:
        c = src[i]
        if c == q:
            if q == "'" and src.startswith("''", i):
                out.append(i)
                i += 2
                continue
            out.append(i)
            return out
        if q == '"' and c == "\\":
            if i + 1 >= n:
                return None
            out.append(i)
            i += {"x": 4, "u": 6, "U": 10}.get(src[i + 1], 2)
            continue
        out.append(i)
        i += 1
    return None


def _walk(pieces, value: str, offset: int):
    """``pieces``: (line, first col, text) of consecutive source lines. Value characters are
    matched against the text of each piece in turn; the break between two pieces accounts for
    one value character when that character is a space or a newline (folding)."""
    vi = 0
    for line, col0, text in pieces:
        for j, c in enumerate(text):
            if vi == offset:
                return line, col0 + j
            if vi >= len(value) or value[vi] != c:
                return None
            vi += 1
        if vi == offset:
            return line, col0 + len(text)
        if vi < len(value) and value[vi] in " \n":
            vi += 1
    return None


def _plain_position(lines, line, col, value, offset):
    first = lines[line - 1][col - 1:]
    first = re.split(r"\s#", first, maxsplit=1)[0].rstrip()
    pieces = [(line, col, first)]
    indent = len(lines[line - 1]) - len(lines[line - 1].lstrip())
    for n in range(line, len(lines)):
        text = lines[n]
        stripped = text.strip()
        if stripped and (len(text) - len(text.lstrip()) <= indent or stripped.startswith("#")):
            break
        pieces.append((n + 1, len(text) - len(text.lstrip()) + 1, stripped))
    return _walk(pieces, value, offset)


def _block_position(lines, line, value, offset):
    header = lines[line - 1]
    parent_indent = len(header) - len(header.lstrip())
    body = []
    indent = None
    for n in range(line, len(lines)):
        text = lines[n]
        if not text.strip():
            body.append((n + 1, 1, ""))
            continue
        ind = len(text) - len(text.lstrip())
        if indent is None:
            indent = ind
        if ind < indent or ind <= parent_indent:
            break
        body.append((n + 1, indent + 1, text[indent:].rstrip("\r")))
    return _walk(body, value, offset)


def value_at(data, path):
    """The value at ``path`` (keys and list indexes) in plain spec ``data``, or None."""
    cur = data
    for p in path:
        try:
            cur = cur[p]
        except (KeyError, IndexError, TypeError):
            return None
    return cur
