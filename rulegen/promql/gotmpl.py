"""The Go ``text/template`` action lexer, shared by alert templates and Helm templates.

Prometheus expands alert labels and annotations with Go's ``text/template``, and Helm charts
are Go templates too. This module reads the actions of such text the way Go's
``text/template/parse`` lexer does (package documentation "text/template": Actions, Arguments,
Pipelines, Variables):

* actions are ``{{ ... }}``; ``{{- `` and `` -}}`` trim the surrounding text (the dash must be
  followed, resp. preceded, by a space: ``{{-3}}`` is the number -3);
* comments are ``{{/* ... */}}`` (optionally with trim markers) and must end at the delimiter;
* strings are ``"..."`` with Go escapes (no newline inside), raw strings are backquoted,
  character constants are ``'x'``;
* a word (variable, field, name) must be followed by a space, ``.``, ``,``, ``|``, ``:``,
  ``(``, ``)`` or the closing delimiter.

:func:`lex_action` is strict (Go's errors, as :class:`TemplateSyntaxError` with the offset);
with ``strict=False`` it only finds where an action ends, accepting what Go would reject
(a newline inside a string, an unknown character), for readers of text that may not be a
valid template. :func:`split` cuts text into text and :class:`Action` pieces;
:func:`body_tokens` and :func:`unquote` read an action's body.
"""

from __future__ import annotations

import functools

import re
from dataclasses import dataclass

#: Go template keywords.
KEYWORDS = frozenset({"if", "else", "end", "range", "with", "define", "template", "block", "break",
                      "continue"})
_SPACE = " \t\r\n"
_NUMBER = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F_]+(?:\.[0-9a-fA-F_]*)?|\.[0-9a-fA-F_]+)(?:[pP][+-]?[0-9_]+)?"
    r"|0[oO][0-7_]+|0[bB][01_]+"
    r"|(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9_]+)?)i?")
#: ASCII letters, digits and ``_``, and every character beyond ASCII: the same set as
#: ``[A-Za-z0-9_\u0080-\U0010ffff]``, written as "anything but the other ASCII characters",
#: which compiles about ten times faster (a few ms of every start-up).
_ALNUM = re.compile(r"[^\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f]*")
_ESCAPES = re.compile(r"""\\(?:[abfnrtv\\"]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3})""")
_PUNCT = {"=": "assign", "|": "pipe", ",": "comma", "(": "lparen", ")": "rparen"}
_SIMPLE_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v",
                   "\\": "\\", '"': '"', "'": "'"}


@dataclass
class Token:
    """One token of an action. ``typ``: space, ident, keyword, field, var, dot, string, raw,
    char, number, bool, nil, declare, assign, pipe, lparen, rparen, comma, other (a stray
    character), end (the right delimiter); ``val`` its text; ``pos`` its offset in the text."""

    typ: str
    val: str
    pos: int


class TemplateSyntaxError(Exception):
    """A template that Go's lexer or parser rejects: ``offset`` into the text, ``message``."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


def is_space(c: str) -> bool:
    """Is ``c`` a space character of Go's template lexer (space, tab, CR, LF)?"""
    return c != "" and c in _SPACE


def after_left_delim(text: str, start: int) -> int:
    """The offset after ``{{`` at ``start`` and its trim marker (``-`` and a space), if any."""
    k = start + 2
    if text.startswith("-", k) and k + 1 < len(text) and is_space(text[k + 1]):
        k += 2
    return k


def comment_end(text: str, start: int, k: int, strict: bool = True) -> int:
    """The offset after the comment action ``{{/* ... */}}`` that starts at ``start``, whose
    ``/*`` is at ``k``. Go wants ``*/`` right before the delimiter (`` -}}`` with a trim
    marker).

    Raises:
        TemplateSyntaxError: the comment is not closed, or (``strict``) ``*/`` does not stand
            right before the delimiter; not strict, any spaces and dashes may stand between.
    """
    end = text.find("*/", k + 2)
    if end < 0:
        raise TemplateSyntaxError(start, "unclosed comment: end it with */}}")
    after = end + 2
    if not strict:
        while after < len(text) and text[after] in " \t\n-":
            after += 1
        if text.startswith("}}", after):
            return after + 2
        raise TemplateSyntaxError(after, "comment ends before closing delimiter: write */}} together")
    if text.startswith("}}", after):
        return after + 2
    if text.startswith("-}}", after + 1) and is_space(text[after:after + 1]):
        return after + 4
    raise TemplateSyntaxError(after, "comment ends before closing delimiter: write */}} together")


#: Tokens of action texts already lexed, as ``(typ, val, offset in the action)``, keyed by the
#: action's text from after ``{{`` up to and including its ``}}``. Alerts repeat a handful of
#: actions (``{{ $labels.instance }}``, ``{{ $value | humanize }}``) thousands of times.
_LEXED: dict[str, tuple] = {}
_LEXED_MAX = 20_000


def lex(text: str, k: int) -> tuple[list[Token], int]:
    """:func:`lex_action` (strict), from :data:`_LEXED` when the same action text was lexed
    before. Only an action that ends at the first ``}}`` after ``k`` is kept (a ``}}`` inside
    a string literal makes the action longer than that key), and the lexer reads nothing
    outside the action, so a kept entry is exactly what lexing again would give."""
    end = text.find("}}", k)
    key = text[k:end + 2] if end >= 0 else None
    hit = _LEXED.get(key) if key is not None else None
    if hit is not None:
        return [Token(t, v, k + p) for t, v, p in hit], end + 2
    toks, i = lex_action(text, k)
    if key is not None and i == end + 2 and len(_LEXED) < _LEXED_MAX:
        _LEXED[key] = tuple((t.typ, t.val, t.pos - k) for t in toks)
    return toks, i


def _quoted_end(text: str, i: int, quote: str, strict: bool) -> int:
    """The offset after the closing ``quote`` of a string or character constant whose body
    starts at ``i``; -1 when it is not closed (strict: before the line ends)."""
    n = len(text)
    while True:
        if i >= n or (strict and text[i] == "\n"):
            return -1
        if text[i] == "\\":
            if strict and (i + 1 >= n or text[i + 1] == "\n"):
                return -1
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        i += 1


# long: one lexer state machine (as Go text/template lexes an action); split, its state would pass on every character
def lex_action(text: str, i: int, strict: bool = True) -> tuple[list[Token], int]:
    """Tokens of the action whose body starts at ``i`` (after ``{{`` and any trim marker),
    up to and including its right delimiter; returns (tokens, index after the delimiter).

    Raises:
        TemplateSyntaxError: the action is not closed; when ``strict``, also what Go's lexer
            rejects (an unterminated or badly escaped string, a bad number, an unknown
            character, a word followed by a character that cannot follow it, unbalanced
            parentheses). Not strict, those become ``other`` tokens (or are read leniently).
    """
    toks: list[Token] = []
    depth = 0
    n = len(text)
    while True:
        if text.startswith("-}}", i + 1) and is_space(text[i:i + 1]):
            if depth and strict:
                raise TemplateSyntaxError(i, "unclosed left paren")
            toks.append(Token("end", "-}}", i))
            return toks, i + 4
        if text.startswith("}}", i):
            if depth and strict:
                raise TemplateSyntaxError(i, "unclosed left paren")
            toks.append(Token("end", "}}", i))
            return toks, i + 2
        if i >= n:
            raise TemplateSyntaxError(i, "unclosed action: add the closing }}")
        c = text[i]
        start = i
        if is_space(c):
            while i < n and is_space(text[i]):
                if text.startswith("-}}", i + 1):
                    break
                i += 1
            if i == start:  # a single space before -}}
                continue
            toks.append(Token("space", text[start:i], start))
            continue
        if c in _PUNCT:
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth < 0 and strict:
                raise TemplateSyntaxError(i, "unexpected right paren")
            toks.append(Token(_PUNCT[c], c, i))
            i += 1
        elif c == ":":
            if not text.startswith(":=", i):
                if strict:
                    raise TemplateSyntaxError(i, "expected :=")
                toks.append(Token("other", c, i))
                i += 1
                continue
            toks.append(Token("declare", ":=", i))
            i += 2
        elif c in "\"'":
            what = "quoted string" if c == '"' else "character constant"
            i = _quoted_end(text, i + 1, c, strict)
            if i < 0:
                raise TemplateSyntaxError(start, f"unterminated {what}" if strict
                                          else "unclosed action: add the closing }}")
            bad = _bad_escape(text[start + 1:i - 1]) if strict and c == '"' else None
            if bad is not None:
                raise TemplateSyntaxError(start + 1 + bad, f"invalid escape in string {text[start:i]}")
            toks.append(Token("string" if c == '"' else "char", text[start:i], start))
        elif c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise TemplateSyntaxError(start, "unterminated raw quoted string")
            i = j + 1
            toks.append(Token("raw", text[start:i], start))
        elif c == "$":
            i = _ALNUM.match(text, i + 1).end()
            toks.append(Token("var", text[start:i], start))
            _terminator(text, i, strict)
        elif c == "." and not (i + 1 < n and text[i + 1].isdigit()):
            i = _ALNUM.match(text, i + 1).end()
            toks.append(Token("dot", ".", start) if i == start + 1 else Token("field", text[start:i], start))
            _terminator(text, i, strict)
        elif c in "+-." or c.isdigit():
            m = _NUMBER.match(text, i)
            if not m or (m.end() < n and (text[m.end()].isalnum() or text[m.end()] == "_")):
                if strict:
                    end = m.end() + 1 if m else i + 1
                    raise TemplateSyntaxError(start, f"bad number syntax: {text[start:end]!r}")
                if not m:
                    toks.append(Token("other", c, i))
                    i += 1
                    continue
            i = m.end()
            toks.append(Token("number", text[start:i], start))
        elif c.isalpha() or c == "_" or ord(c) > 127 and c.isalnum():
            i = _ALNUM.match(text, i).end()
            word = text[start:i]
            typ = ("keyword" if word in KEYWORDS else "bool" if word in ("true", "false")
                   else "nil" if word == "nil" else "ident")
            toks.append(Token(typ, word, start))
            _terminator(text, i, strict)
        elif (ord(c) < 128 and c.isprintable()) or not strict:
            toks.append(Token("other", c, i))  # a stray printable character: the parser says so
            i += 1
        else:
            raise TemplateSyntaxError(i, f"unrecognized character in action: {c!r}")


def _terminator(text: str, i: int, strict: bool = True) -> None:
    """Go's lexer requires a word to be followed by space, ``.``, ``,``, ``|``, ``:``,
    ``)``, ``(`` or the right delimiter's first character (so ``$x=1`` is an error)."""
    if not strict or i >= len(text):
        return
    c = text[i]
    if is_space(c) or c in ".,|:)(}":
        return
    raise TemplateSyntaxError(i, f"bad character {c!r} after a name; separate arguments with spaces")


def _bad_escape(body: str) -> int | None:
    """Offset of the first invalid backslash escape in a double-quoted Go string body."""
    i = 0
    while True:
        j = body.find("\\", i)
        if j < 0:
            return None
        m = _ESCAPES.match(body, j)
        if not m:
            return j
        i = m.end()


def unquote(literal: str) -> str:
    """The value of a Go string literal token (``"a\\tb"`` or a backquoted raw string), as
    :func:`lex_action` found it (so its escapes are valid); character constants give their
    character."""
    if literal.startswith("`"):
        return literal[1:-1]
    body, out, i = literal[1:-1], [], 0
    while i < len(body):
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1]
        if e in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[e])
            i += 2
        elif e in "xuU":
            size = {"x": 2, "u": 4, "U": 8}[e]
            out.append(chr(int(body[i + 2:i + 2 + size], 16)))
            i += 2 + size
        else:  # three octal digits
            out.append(chr(int(body[i + 1:i + 4], 8)))
            i += 4
    return "".join(out)


def body_tokens(body: str) -> list[Token] | None:
    """The tokens of an action's ``body`` (the text between the delimiters and trim markers),
    spaces left out, or None when Go's lexer rejects it (or it holds a ``}}`` outside a
    string)."""
    text = body.strip() + " }}"
    try:
        toks, end = lex_action(text, 0)
    except TemplateSyntaxError:
        return None
    if end != len(text):
        return None
    return [t for t in toks if t.typ not in ("space", "end")]


@dataclass
class Action:
    """One ``{{ ... }}`` action: ``raw`` as written, ``body`` without delimiters and trim
    markers (stripped), 1-based ``line``, the trim markers, and ``start``, its offset."""

    raw: str
    body: str
    line: int
    trim_left: bool
    trim_right: bool
    start: int = 0


def action_end(text: str, start: int) -> int:
    """Index just past the ``}}`` closing the action at ``start``, or -1 when it is not closed.
    Lenient (see :func:`lex_action`): only where the action ends is read."""
    k = after_left_delim(text, start)
    j = k
    while j < len(text) and text[j] in " \t\n":
        j += 1
    try:
        if text.startswith("/*", j):
            return comment_end(text, start, j, strict=False)
        return lex_action(text, k, strict=False)[1]
    except TemplateSyntaxError:
        return -1


def split(text: str):
    """Yield ("text", str) and ("action", :class:`Action`) pieces of ``text``, in order. An
    action that is not closed is text, with everything after it."""
    pos = 0
    line = 1
    n = len(text)
    while pos < n:
        start = text.find("{{", pos)
        if start < 0:
            yield "text", text[pos:]
            return
        if start > pos:
            yield "text", text[pos:start]
            line += text.count("\n", pos, start)
        end = action_end(text, start)
        if end < 0:
            yield "text", text[start:]
            return
        raw = text[start:end]
        inner = raw[2:-2]
        trim_left = inner.startswith("- ") or inner.startswith("-\t") or inner.startswith("-\n")
        trim_right = inner.endswith(" -") or inner.endswith("\t-") or inner.endswith("\n-")
        body = inner[1:] if trim_left else inner
        body = body[:-1] if trim_right else body
        yield "action", Action(raw, body.strip(), line, trim_left, trim_right, start)
        line += raw.count("\n")
        pos = end


def defined_name(action: Action) -> str | None:
    """The template name a ``{{ define "name" }}`` action declares, else None."""
    if not action.body.startswith("define"):
        return None  # the keyword comes first: no other action needs lexing here
    toks = body_tokens(action.body)
    if toks and len(toks) == 2 and toks[0].val == "define" and toks[1].typ in ("string", "raw"):
        return unquote(toks[1].val)
    return None


def defined_names(text: str) -> list[str]:
    """The names of the templates ``text`` defines (``{{ define "x.fullname" }}``), in order."""
    return list(_defined_names(text))


@functools.lru_cache(maxsize=64)
def _defined_names(text: str) -> tuple[str, ...]:
    # every chart of a project carries the same helper file (_rulegen.tpl, thousands of
    # actions), asked about three times per chart: lexed once per text
    return tuple(n for kind, a in split(text) if kind == "action" and (n := defined_name(a)) is not None)
