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

import re2

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
    """``pattern`` compiled (by RE2, ``google-re2``) so that ``fullmatch`` decides as
    Prometheus' matcher does, or None when Python's :mod:`re` would read it otherwise than RE2
    (or not at all): the verdicts stay those rulegen gave before it matched with RE2."""
    if _NOT_LIKE_RE2.search(pattern):
        return None
    ignorecase = "(?i" in pattern or re.search(r"\(\?[ms]*i", pattern) is not None
    if ignorecase and _SHORTHAND.search(pattern):
        return None  # Python's ASCII flag would also make (?i) ASCII-only; RE2's is Unicode
    flags = re.DOTALL | (0 if ignorecase else re.ASCII)
    try:
        re.compile(pattern.replace("(?U)", ""), flags)  # (?U) only changes which match
    except (re.error, ValueError, OverflowError):
        return None
    # Matched by RE2 itself, in time linear in the value: Python's backtracking engine takes
    # exponential time on a regex such as (a|aa)+c, and both the regex (a spec) and the values
    # (a spec's input_series, a live Prometheus a pull request names) are hostile.
    try:
        return re2.compile(f"(?s:{pattern})")
    except (re2.error, ValueError, TypeError):
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


# ---------------------------------------------------------------------------------------------
# Go's Regexp.Expand, which label_replace uses for its replacement


_GO_REF = re.compile(r"\$(?:\{(\w+)\}|(\w+))")


def go_template_parts(template: str) -> list:
    """``template`` (a ``label_replace`` replacement) read as Go's ``Regexp.Expand`` reads it:
    a list of literal strings and ``(name,)`` group references. ``$$`` is ``$``; ``$name``
    takes the longest run of letters, digits and ``_`` (so ``$1x`` names the group "1x"),
    ``${name}`` is braced; a ``$`` that starts no reference stays as it is."""
    out, i = [], 0
    while i < len(template):
        j = template.find("$", i)
        if j < 0:
            out.append(template[i:])
            break
        out.append(template[i:j])
        if template.startswith("$$", j):
            out.append("$")
            i = j + 2
            continue
        ref = _GO_REF.match(template, j)
        if ref is None:
            out.append("$")
            i = j + 1
            continue
        out.append((ref.group(1) or ref.group(2),))
        i = ref.end()
    return out


def group_of(rx, name: str) -> int | str | None:
    """The group of ``rx`` that a Go template reference ``name`` reads (a number without a
    leading zero is a group number, anything else a group name), or None when there is none."""
    if name.isdigit() and not (name[0] == "0" and len(name) > 1):
        return int(name) if int(name) <= rx.groups else None
    return name if name in rx.groupindex else None


def go_expand(template: str, m) -> str:
    """``template`` expanded with the groups of the match ``m`` (a group that does not exist
    or did not take part expands to nothing), as ``label_replace`` does."""
    out = []
    for part in go_template_parts(template):
        if isinstance(part, str):
            out.append(part)
        else:
            g = group_of(m.re, part[0])
            out.append("" if g is None else (m.group(g) or ""))
    return "".join(out)
