"""YAML comments that cut a value short: text after `` #`` that was meant to be part of it.

In YAML (1.1 and 1.2 alike) a ``#`` after a space ends a plain (unquoted) value and starts a
comment, so ``summary: Queue #3 is full`` is the summary ``Queue``: Prometheus, the page and
the notification get the cut value, and nothing fails. A comment written on purpose almost
always has a space after its ``#`` (``for: 5m  # slow start``); text such as ``#3``,
``#incidents`` or ``#L42`` does not, and that is what this check looks for.

Codes:

* ``RG109`` (warning) a plain value on one line is followed by `` #`` and a non-space
  character: YAML reads the rest of the line as a comment and drops it from the value. Quote
  the value when the ``#`` text belongs to it; put a space after the ``#`` when it is a
  comment. Bad: ``summary: Queue #3 is full`` (the summary is ``Queue``); good:
  ``summary: "Queue #3 is full"``.
"""

from __future__ import annotations

import re

from ...findings import Finding, Severity
from .positions import value_at

ID = "yaml-comments"

_CUT = re.compile(r"([ \t]+)#(\S.*)$")


def check_file(lf, ctx):
    """Yield RG109 for each plain scalar value that a `` #x`` comment cut short."""
    data = lf.data
    if not isinstance(data, dict):
        return
    suspect = _suspect_lines(lf.text)
    if not suspect:
        return  # most files: no ` #x` anywhere, nothing to map back
    lines = lf.text.splitlines()
    for path in sorted((p for p in lf.plain if lf.positions.get(p, (0,))[0] in suspect),
                       key=lambda p: lf.positions[p]):
        value = value_at(data, path)
        pos = lf.positions[path]
        if not isinstance(value, str) or not value:
            continue
        line, col = pos
        text = lines[line - 1]
        if text[col - 1:col - 1 + len(value)] != value:
            continue  # a plain value over several lines, or one rulegen cannot map back
        m = _CUT.match(text[col - 1 + len(value):])
        if m is None:
            continue
        dropped = m.group(2).rstrip()
        key = next((p for p in reversed(path) if isinstance(p, str)), "value")
        quoted = '"' + f"{value} #{dropped}".replace("\\", "\\\\").replace('"', '\\"') + '"'
        where = col + len(value) + len(m.group(1))
        yield Finding(lf.path, line, where, "RG109", Severity.WARNING,
                      f"`{key}` ends at `{value}`: YAML reads ` #{dropped}` as a comment and drops "
                      f"it; if it belongs to the value, quote it: {quoted}; if it is a comment, put "
                      "a space after the #", _rule_of(data, path))


def _suspect_lines(text: str) -> set[int]:
    """1-based numbers of the lines holding a ``#`` after a space or tab and before a
    non-space (found with ``str.find``: a regular expression over the whole text costs
    more than all the other checks of a file)."""
    found = set()
    i = text.find("#")
    while i != -1:
        if i > 0 and text[i - 1] in " \t" and i + 1 < len(text) and text[i + 1] not in " \t\r\n":
            found.add(text.count("\n", 0, i) + 1)
        i = text.find("#", i + 1)
    return found


def _rule_of(data, path) -> str:
    """The alert or recording rule name at ``path`` (``""`` outside a rule)."""
    if len(path) >= 4 and path[0] == "groups" and path[2] == "rules":
        rule = value_at(data, path[:4])
        if isinstance(rule, dict):
            return str(rule.get("alert") or rule.get("record") or "")
    return ""
