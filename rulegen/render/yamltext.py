"""Exact YAML scalars, and Helm-safe literal text.

rulegen never lets a user's string be reinterpreted on its way to Prometheus:

* :func:`yaml_string` writes any string as a YAML scalar that parses back to exactly that
  string, whatever it holds (quotes, ``#``, ``: ``, ``%``, ``off``, control characters,
  unicode line separators). Single-line text is a JSON-style double-quoted scalar (every YAML
  parser, YAML 1.1 or 1.2, reads it back the same); multi-line text such as a PromQL
  ``expr`` is a literal block (``|``/``|-``), never folded, when that is exact, else quoted.
* :func:`helm_literal` makes text that Helm's template engine (Go text/template) outputs
  unchanged: each ``{{`` becomes the action ``{{`{{`}}``, whose output is ``{{``. Only the
  left delimiter starts an action, so ``}}`` needs nothing; ``{{`` is replaced left to right,
  so text before an inserted action never ends in ``{`` and cannot form a new delimiter.
"""

from __future__ import annotations

import json
import re

#: YAML c-printable minus the characters that YAML 1.1 parsers treat as line breaks (NEL, LS,
#: PS) and the BOM (tab and line feed are outside too); everything else is escaped inside
#: double quotes.
SAFE_RANGES = ((0x20, 0x7E), (0xA0, 0x2027), (0x202A, 0xD7FF), (0xE000, 0xFEFE), (0xFF00, 0xFFFD),
               (0x10000, 0x10FFFF))
# _UNSAFE: the code points outside SAFE_RANGES as a class of their own. The negated class of
# SAFE_RANGES means the same, but Python's re builds that table code point by code point
# (about 3 ms of every run that renders); tests/render/test_yamltext.py checks they agree
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff\ufeff\ufffe\uffff]")
_HELM_LEFT = "{{`{{`}}"
#: Strings go_string writes as they are: printable ASCII without ``"`` and ``\``.
_GO_PLAIN = re.compile(r"[\x20\x21\x23-\x5b\x5d-\x7e]*")


def _escape_char(m: re.Match) -> str:
    c = m.group(0)
    o = ord(c)
    if c == "\n":
        return "\\n"
    if c == "\t":
        return "\\t"
    if c == "\r":
        return "\\r"
    if o <= 0xFF:
        return f"\\x{o:02x}"
    if o <= 0xFFFF:
        return f"\\u{o:04x}"
    return f"\\U{o:08x}"


def double_quoted(s: str) -> str:
    """``s`` as a YAML double-quoted scalar on one line. Exact for every string."""
    if _GO_PLAIN.fullmatch(s):
        return '"' + s + '"'  # printable ASCII but " and \: neither JSON nor YAML escapes any of it
    body = json.dumps(s, ensure_ascii=False)[1:-1]
    # json.dumps escapes " \ and C0 controls; escape what YAML would read differently.
    return '"' + _UNSAFE.sub(_escape_char, body) + '"'


def _block_ok(s: str) -> bool:
    if "\n" not in s or s.endswith("\n\n") or s.startswith((" ", "\n")):
        return False
    if _UNSAFE.search(s.replace("\n", "")) or "\t" in s or "\r" in s:
        return False
    lines = s.rstrip("\n").split("\n")
    return all(line == line.rstrip(" ") and (line.strip() or line == "") for line in lines)


def yaml_string(s: str, indent: int) -> str:
    """The text to put after ``key: `` for string ``s``.

    ``indent`` is the column (number of spaces) at which block-literal lines start. The result
    has no trailing newline. Multi-line strings become ``|-`` or ``|`` blocks when exact.
    """
    if _block_ok(s):
        chomp = "" if s.endswith("\n") else "-"
        pad = " " * indent
        lines = s.rstrip("\n").split("\n")
        return f"|{chomp}\n" + "\n".join(pad + line if line else "" for line in lines)
    return double_quoted(s)


def helm_literal(text: str) -> str:
    """``text`` escaped so that a Helm template outputs it unchanged (see the module docstring)."""
    return text.replace("{{", _HELM_LEFT)


def go_string(s: str) -> str:
    """``s`` as a Go interpreted string literal, for use inside a Helm action
    (``{{ dict "k" "v" }}``). Exact for every string; the literal itself holds only printable
    characters (controls, NEL, U+2028/U+2029, BOM and non-characters are escaped), so no
    invisible character lands in a generated template."""
    if _GO_PLAIN.fullmatch(s):
        return '"' + s + '"'  # printable ASCII but " and \: every character stands for itself
    out = []
    for c in s:
        o = ord(c)
        if c == '"':
            out.append('\\"')
        elif c == "\\":
            out.append("\\\\")
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif o < 0x20 or o == 0x7F:
            out.append(f"\\x{o:02x}")
        elif _UNSAFE.match(c):
            # \x is a byte in Go, so code points from U+0080 use \u / \U.
            out.append(f"\\u{o:04x}" if o <= 0xFFFF else f"\\U{o:08x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


# Plain scalars that YAML 1.1 or 1.2 reads as booleans or null.
_YAML_WORDS = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "~"}
_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")


def yaml_key(k: str) -> str:
    """A mapping key that reads back as the string ``k``: plain when it is an identifier no
    YAML version reads as anything else (``expr``, ``llama-swap``), else double-quoted
    (``"on"``, ``"null"``, ``"a.b"``, ``"g: #1"``)."""
    if _PLAIN_KEY.fullmatch(k) and k.lower() not in _YAML_WORDS:
        return k
    return double_quoted(k)


#: A Prometheus duration (``5m``, ``1h30m``, ``500ms``): never a number, date or word in YAML.
_DURATION = re.compile(r"[0-9]+(?:ms|[smhdwy])(?:[0-9]+(?:ms|[smhdwy]))*")
#: Printable ASCII starting with a letter or ``_``: no YAML indicator at the start.
_PLAIN_TEXT = re.compile(r"[A-Za-z_][\x20-\x7e]*")


def plain_ok(s: str) -> bool:
    """True when ``s`` can be written as a plain (unquoted) scalar after ``key: `` and every
    YAML reader rulegen's outputs meet (PyYAML and Helm's go-yaml v2, YAML 1.1; Prometheus'
    go-yaml v3, YAML 1.2) reads it back as exactly this string: a duration, or printable ASCII
    starting with a letter or ``_`` that holds no ``": "`` or ``" #"``, does not end with a
    space or ``:`` and is not a YAML 1.1 word (``yes``, ``off``, ``null``...). Deliberately
    narrow: anything else is quoted or a literal block. The chart template's
    ``rulegen.v3.scalar`` helper applies the same rule."""
    if _DURATION.fullmatch(s):
        return True
    return (_PLAIN_TEXT.fullmatch(s) is not None and ": " not in s and " #" not in s
            and not s.endswith((" ", ":")) and s.lower() not in _YAML_WORDS)


def readable_string(s: str, indent: int) -> str:
    """Like :func:`yaml_string`, but plain when :func:`plain_ok` says that is exact: the text
    after ``key: `` as a person writes it (``severity: critical``, ``for: 5m``)."""
    return s if plain_ok(s) else yaml_string(s, indent)


#: A space with a non-space on both sides: where a long plain scalar may be cut.
_FOLD_AT = re.compile(r"(?<=\S) (?=\S)")


def folded_plain(s: str, first: int, indent: int, width: int = 120) -> str | None:
    """``s`` as a plain scalar over several lines, none longer than ``width`` where a cut
    allows, or None when ``s`` fits on the first line, is not :func:`plain_ok` or has no
    place to cut. ``first``: the column the scalar starts at (after ``key: ``); ``indent``:
    the column of the continuation lines (deeper than the key).

    Exact in every YAML reader: a plain scalar folds each line break between two non-space
    characters into one space, and ``s`` is cut only at single spaces between non-spaces. A
    continuation line never starts with ``#`` or ``: `` (``plain_ok`` refuses ``" #"`` and
    ``": "``), so it cannot end the scalar."""
    if len(s) + first <= width or not plain_ok(s):
        return None
    words = _FOLD_AT.split(s)
    if len(words) < 2:
        return None
    lines, room = [words[0]], width - first
    for w in words[1:]:
        if len(lines[-1]) + 1 + len(w) <= room:
            lines[-1] += " " + w
        else:
            lines.append(w)
            room = width - indent
    return ("\n" + " " * indent).join(lines)


def folded_quoted(s: str, first: int, indent: int, width: int = 120) -> str | None:
    """``s`` as a double-quoted scalar (:func:`double_quoted`) over several lines, none longer
    than ``width`` where a cut allows, or None when it fits on the first line, is a literal
    block (:func:`yaml_string`) or has no place to cut. Arguments as for
    :func:`folded_plain`.

    Exact in every YAML reader: each line but the last ends with ``\\`` (an escaped line
    break, which adds nothing; the space before it is kept), and ``s`` is cut only after a
    single space followed by a non-space, so no continuation line starts with white space
    (which a reader would drop)."""
    quoted = double_quoted(s)
    if len(quoted) + first <= width or _block_ok(s):
        return None
    words = _FOLD_AT.split(s)
    if len(words) < 2:
        return None
    parts = [double_quoted(w)[1:-1] for w in words]
    parts = [p + " " for p in parts[:-1]] + parts[-1:]
    lines, room = ['"' + parts[0]], width - first - 1
    for p in parts[1:]:
        if len(lines[-1]) + len(p) + 1 <= room:
            lines[-1] += p
        else:
            lines.append(p)
            room = width - indent - 1
    lines[-1] += '"'
    return ("\\\n" + " " * indent).join(lines)


def values_yaml(value) -> str:
    """``value`` (dicts, lists, str, bool, int, float, None) as one line of flow-style YAML
    that Helm reads back exactly (a values file for :func:`rulegen.tools.helm.template`):
    every string and key double-quoted with :func:`double_quoted`. (PyYAML's ``safe_dump``
    writes ``n``, ``y`` or ``Y`` plain, which Helm's YAML 1.1 reader turns into booleans.) A
    ``None`` is written as ``null``, which Helm reads as "delete this key from the chart's
    defaults".

    Raises:
        TypeError: a value of another type.
    """
    if isinstance(value, dict):
        return "{" + ", ".join(f"{double_quoted(str(k))}: {values_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(values_yaml(v) for v in value) + "]"
    if isinstance(value, str):
        return double_quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} as a Helm value")


def line_ending(text: str | None) -> str:
    r"""The line ending a shared file uses: ``"\r\n"`` when its first line ends with CRLF,
    else ``"\n"`` (also for an empty or one-line file)."""
    i = (text or "").find("\n")
    return "\r\n" if i > 0 and text[i - 1] == "\r" else "\n"
