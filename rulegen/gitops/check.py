"""Part of the drift check (:mod:`rulegen.commands.check`, ``rulegen check``): the unified
diff of a generated file against the disk."""

from __future__ import annotations

import difflib


def unified_diff(path: str, old: str | None, new: str | None) -> str:
    """A ``git diff``-style unified diff of one file (3 lines of context).

    ``old``/``new`` is None for a missing file, shown as ``/dev/null``. Returns ``""`` when the
    texts are equal. A text that does not end with a newline gets git's
    ``\\ No newline at end of file`` marker, so the diff stays line-based.
    """
    if old == new:
        return ""
    a = "/dev/null" if old is None else f"a/{path}"
    b = "/dev/null" if new is None else f"b/{path}"
    lines = difflib.unified_diff(_lines(old), _lines(new), a, b)
    return "".join(lines)


def _lines(text: str | None) -> list[str]:
    if not text:
        return []
    out = text.splitlines(keepends=True)
    if not out[-1].endswith("\n"):
        out[-1] += "\n\\ No newline at end of file\n"
    return out


