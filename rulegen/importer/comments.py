"""Find YAML comments in a source file and the node each one is about.

Comments are found with PyYAML's scanner: every token (scalars, including block scalars, and
indicators) covers a range of the text, and a ``#`` outside every token, at a line start or
after whitespace, starts a comment (YAML 1.2 spec, 6.6 "Comments"). A ``#`` inside a quoted
string or a block scalar (a PromQL comment in a multi-line ``expr``) is therefore not taken.

A full-line comment is about the next node below it (a mapping key or a sequence item), when
only comments and blank lines lie in between; an end-of-line comment is about the innermost
key on its line. Anchors (key and item positions) come from ruamel.yaml's round-trip nodes.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import yaml
from ruamel.yaml.comments import CommentedMap, CommentedSeq


@dataclass
class Comment:
    """One comment: 1-based ``line``, ``col`` of the ``#``, ``text`` from ``#`` to line end,
    ``eol`` True when code precedes it on its line."""

    line: int
    col: int
    text: str
    eol: bool


def find_comments(text: str) -> list[Comment] | None:
    """All comments of ``text`` in order, or None when PyYAML cannot scan it."""
    # libyaml's scanner when the text is ASCII (its marks then count characters as Python
    # does); the pure-Python one otherwise. Same tokens, a tenth of the time.
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader) if text.isascii() else yaml.SafeLoader
    try:
        tokens = list(yaml.scan(text, Loader=loader))
    except yaml.YAMLError:
        return None
    spans = sorted((t.start_mark.index, t.end_mark.index) for t in tokens
                   if t.end_mark.index > t.start_mark.index)
    starts = [s for s, _ in spans]
    # running max of span ends, so "is i inside any span" is one bisect
    ends_max = []
    m = -1
    for _, e in spans:
        m = max(m, e)
        ends_max.append(m)
    out = []
    offset = 0
    for lineno, line in enumerate(text.split("\n"), start=1):
        col = line.find("#")
        while col >= 0:
            idx = offset + col
            k = bisect.bisect_right(starts, idx) - 1
            inside = k >= 0 and ends_max[k] > idx
            if not inside and (col == 0 or line[col - 1] in " \t"):
                before = line[:col]
                out.append(Comment(lineno, col + 1, line[col:].rstrip(), bool(before.strip())))
                break
            col = line.find("#", col + 1)
        offset += len(line) + 1
    return out


def anchors(node, path: tuple = (), out: dict | None = None) -> dict:
    """Map each key and sequence item under ``node`` to its 1-based line:
    ``{path: line}`` with paths like ``("groups", 0, "rules", 2, "labels", "severity")``."""
    if out is None:
        out = {}
    if isinstance(node, CommentedMap):
        for k, v in node.items():
            sub = path + (k,)
            try:
                out[sub] = node.lc.key(k)[0] + 1
            except (KeyError, TypeError, AttributeError):
                pass
            anchors(v, sub, out)
    elif isinstance(node, CommentedSeq):
        for i, v in enumerate(node):
            sub = path + (i,)
            try:
                out[sub] = node.lc.item(i)[0] + 1
            except (KeyError, TypeError, AttributeError, IndexError):
                pass
            anchors(v, sub, out)
    return out


def attach(comments: list[Comment], anchor_lines: dict, text: str) -> tuple[dict, list[Comment]]:
    """Decide which node each comment is about.

    Returns ``({path: {"before": [text...], "eol": [text...]}}, unattached)``.
    """
    by_line: dict[int, list[tuple]] = {}
    for p, ln in anchor_lines.items():
        by_line.setdefault(ln, []).append(p)
    lines = text.split("\n")
    anchor_line_list = sorted(by_line)
    out: dict = {}
    unattached = []
    for c in comments:
        if c.eol:
            paths = by_line.get(c.line)
            if not paths:
                unattached.append(c)
                continue
            target = max(paths, key=len)
            out.setdefault(target, {"before": [], "eol": []})["eol"].append(c.text)
            continue
        k = bisect.bisect_right(anchor_line_list, c.line)
        if k >= len(anchor_line_list):
            unattached.append(c)
            continue
        nxt = anchor_line_list[k]
        between = lines[c.line:nxt - 1]
        if any(b.strip() and not b.strip().startswith("#") for b in between):
            unattached.append(c)
            continue
        target = min(by_line[nxt], key=len)
        out.setdefault(target, {"before": [], "eol": []})["before"].append(c.text)
    return out, unattached
