"""Positions of an imported spec told in the terms of the source it came from."""

from __future__ import annotations

import re

from ..findings import Finding
from ..spec import load_text
from .result import ImportedSpec


def source_position(spec: ImportedSpec, text: str, display: str, line: int, col: int,
                    group_offset: int = 0) -> tuple[str, int, int] | None:
    """Where in the imported source the position ``(line, col)`` of the spec ``text``
    (shown as ``display``) comes from: ``(source display, line, col)``, 1-based, or None when
    no imported node starts at or before it (a finding on a spec's own part). The column is
    carried over when the node starts on the finding's line. ``group_offset``: the imported
    groups start at this index (``--app`` into an existing spec, :func:`merge_spec_text`)."""
    lf = load_text(text, display)
    best = None
    for p, (src, kp, vp) in spec.origins.items():
        if group_offset and len(p) > 1 and p[0] == "groups" and isinstance(p[1], int):
            p = ("groups", p[1] + group_offset) + p[2:]
        for at, there in ((lf.key_positions.get(p), kp), (lf.positions.get(p), vp)):
            if at and there and tuple(at) <= (line, col) and (best is None or tuple(at) > best[0]):
                best = (tuple(at), src, there)
    if best is None:
        return None
    (sl, sc), src, (ol, oc) = best
    return (src, ol, max(1, oc + col - sc)) if sl == line else (src, ol, oc)


def _at_source(spec: ImportedSpec, text: str, f: Finding, group_offset: int | None) -> tuple[str, int, int, str]:
    """``(file, line, col, message)`` of the finding ``f`` on an imported spec not yet written,
    told in the source's terms: at the source line it comes from, with every ``line N`` of
    the message mapped the same way. ``group_offset`` None: the spec is new (a position
    outside the imported nodes is shown at the first source); else the spec exists and such a
    position is a real line of it."""
    off = group_offset or 0
    at = source_position(spec, text, f.file, f.line, f.col, off)
    if at is None:
        if group_offset is not None:
            return f.file, f.line, f.col, f.message
        at = (spec.first_source[0], spec.first_source[1], 1)

    def line_ref(m):
        there = source_position(spec, text, f.file, int(m.group(1)), 10 ** 6, off)
        if there is None:
            return m.group(0)
        return f"line {there[1]}" if there[0] == at[0] else f"line {there[1]} of {there[0]}"
    return at[0], at[1], at[2], re.sub(r"\bline (\d+)\b", line_ref, f.message)
