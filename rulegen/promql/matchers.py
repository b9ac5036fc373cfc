"""Label matchers: does ``label op "value"`` accept a label value, as Prometheus decides.

Prometheus (``model/labels/matcher.go``, ``regexp.go``; the "Querying basics" page of its
docs) compares a matcher with the label's value, ``""`` for a series without the label:

* ``=`` and ``!=`` compare the strings;
* ``=~`` and ``!~`` match a Go RE2 regex against the **whole** value: Prometheus 3 compiles
  ``^(?s:regex)$``, so the regex is anchored at both ends and ``.`` matches a newline too.

Python's :mod:`re` reads most RE2 the same way; where it reads a regex otherwise (Unicode
classes ``\\p{..}``, ``\\C``, ``\\Q..\\E``, ``\\z``, word boundaries, POSIX classes
``[[:alpha:]]``, flags other than ``imsU``), :func:`regex` gives None and every verdict on it
is None ("not known"), which callers treat as "cannot tell". ``\\d``, ``\\w`` and ``\\s`` are
ASCII classes in RE2, and are read so (with ``(?i)``, where Python cannot keep them ASCII, the
regex is not known).
"""

from __future__ import annotations

import functools
import re

#: promql_parser's ``MatchOp`` (as ``str(op)``) -> the operator as PromQL writes it.
OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}

_NOT_LIKE_RE2 = re.compile(r"\\[pPCQEzbB]|\(\?[^:imsU)]|\[\[:")
_SHORTHAND = re.compile(r"\\[dDwWsS]")


def op_text(m) -> str:
    """The operator of a promql_parser ``Matcher`` as PromQL writes it (``=~``), ``?`` when
    unknown."""
    return OPS.get(str(m.op), "?")


def selector_matchers(vs) -> list[tuple[str, str, str]]:
    """(label, op, value) of a promql_parser ``VectorSelector``'s matchers (those outside
    ``or`` groups), with the metric name last as ``("__name__", "=", name)`` when it has one."""
    out = [(m.name, op_text(m), m.value) for m in vs.matchers.matchers]
    if vs.name:
        out.append(("__name__", "=", vs.name))
    return out


@functools.lru_cache(maxsize=4096)
def regex(pattern: str):
    """``pattern`` compiled so that ``fullmatch`` decides as Prometheus' matcher does, or None
    when Python's :mod:`re` would read it otherwise than RE2 (or not at all)."""
    if _NOT_LIKE_RE2.search(pattern):
        return None
    ignorecase = "(?i" in pattern or re.search(r"\(\?[ms]*i", pattern) is not None
    if ignorecase and _SHORTHAND.search(pattern):
        return None  # Python's ASCII flag would also make (?i) ASCII-only; RE2's is Unicode
    flags = re.DOTALL | (0 if ignorecase else re.ASCII)
    try:
        return re.compile(pattern.replace("(?U)", ""), flags)  # (?U) only changes which match
    except (re.error, ValueError, OverflowError):
        return None


def matches(op: str, pattern: str, value: str) -> bool | None:
    """Does the matcher ``op pattern`` (``op`` one of ``=``, ``!=``, ``=~``, ``!~``) accept the
    label value ``value`` (``""`` for a label the series lacks)? None when not known: the regex
    is one Python does not read like RE2, or ``op`` is not a matcher operator."""
    if op == "=":
        return value == pattern
    if op == "!=":
        return value != pattern
    if op not in ("=~", "!~"):
        return None
    rx = regex(pattern)
    if rx is None:
        return None
    hit = rx.fullmatch(value) is not None
    return hit if op == "=~" else not hit


def selects(ms, labels: dict) -> bool | None:
    """Do the matchers ``ms`` ((label, op, value) triples, ``__name__`` for the metric name)
    all accept the series ``labels`` (a missing label is ``""``)? False as soon as one
    refuses; None when none refuses but one is not known."""
    verdict: bool | None = True
    for label, op, value in ms:
        got = matches(op, value, labels.get(label, ""))
        if got is False:
            return False
        if got is None:
            verdict = None
    return verdict
