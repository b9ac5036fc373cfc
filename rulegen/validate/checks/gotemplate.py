"""A small parser for Go ``text/template`` text, as Prometheus uses it for alert labels and
annotations. It checks what Go's parser checks at load time (syntax, defined functions,
defined variables) plus what rulegen cares about (uses of the alert value), and reports
offsets into the template text. It never executes anything.

Faithful to Go's ``text/template/parse`` lexer and parser for the parts that matter here
(package documentation "text/template": Actions, Arguments, Pipelines, Variables, Functions):

* actions are ``{{ ... }}``; ``{{- `` and `` -}}`` trim the surrounding text (the dash must be
  followed, resp. preceded, by a space: ``{{-3}}`` is the number -3);
* comments are ``{{/* ... */}}`` (optionally with trim markers) and must end at the delimiter;
* strings are ``"..."`` with Go escapes (no newline inside), raw strings are backquoted,
  character constants are ``'x'``;
* ``if``/``range``/``with``/``define``/``block`` open a block closed by ``end``; ``else``,
  ``else if`` and ``else with`` continue it; ``break``/``continue`` only inside ``range``;
* a variable exists from the action declaring it (``$x := ...``) to the ``end`` of the
  enclosing block; ``$`` always exists.

This module has no check codes of its own; :mod:`.templates` turns its issues into findings.
"""

from __future__ import annotations

import functools

import re
from dataclasses import dataclass, field

#: Go's builtin template functions (text/template "Functions").
GO_FUNCS = frozenset({
    "and", "or", "not", "len", "index", "slice", "print", "printf", "println", "html", "js",
    "urlquery", "call", "eq", "ne", "lt", "le", "gt", "ge",
})
#: Functions Prometheus adds for alert templates (prometheus/template/template.go and the
#: "Template reference" docs). ``tmpl`` exists only in console templates, so it is not here.
PROMETHEUS_FUNCS = frozenset({
    "query", "first", "label", "value", "strvalue", "sortByLabel", "args", "reReplaceAll",
    "safeHtml", "match", "title", "toUpper", "toLower", "graphLink", "tableLink", "stripPort",
    "stripDomain", "humanize", "humanize1024", "humanizeDuration", "humanizePercentage",
    "humanizeTimestamp", "toTime", "toDuration", "now", "pathPrefix", "externalURL",
    "parseDuration",
})
FUNCS = GO_FUNCS | PROMETHEUS_FUNCS
#: Variables Prometheus defines before expanding an alert template.
ALERT_VARS = ("$labels", "$value", "$externalLabels", "$externalURL")

_KEYWORDS = {"if", "else", "end", "range", "with", "define", "template", "block", "break",
             "continue"}
_SPACE = " \t\r\n"
_NUMBER = re.compile(
    r"[+-]?(?:0[xX](?:[0-9a-fA-F_]+(?:\.[0-9a-fA-F_]*)?|\.[0-9a-fA-F_]+)(?:[pP][+-]?[0-9_]+)?"
    r"|0[oO][0-7_]+|0[bB][01_]+"
    r"|(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9][0-9_]*)(?:[eE][+-]?[0-9_]+)?)i?")
_ALNUM = re.compile(r"[A-Za-z0-9_\u0080-\U0010ffff]*")
_ESCAPES = re.compile(r"""\\(?:[abfnrtv\\"]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-7]{3})""")


@dataclass
class Issue:
    """A problem in a template. ``kind`` is ``syntax``, ``variable`` or ``function``;
    ``offset`` is the 0-based index into the template text; ``name`` is the undefined
    variable or function (else ``""``)."""

    kind: str
    offset: int
    message: str
    name: str = ""


@dataclass
class Template:
    """What :func:`parse` found: ``issues`` (the first syntax error stops parsing, as in Go),
    ``value_uses`` (offsets of ``$value`` and ``.Value``), ``actions`` (number of actions),
    ``label_uses`` ((label name, offset) of each read of an alert label: ``$labels.x``,
    ``.Labels.x`` and ``index $labels "x"``, the offset being that of ``$labels``/``.Labels``/
    ``index``)."""

    issues: list = field(default_factory=list)
    value_uses: list = field(default_factory=list)
    actions: int = 0
    label_uses: list = field(default_factory=list)


@dataclass
class _Tok:
    typ: str   # space, ident, keyword, field, var, dot, string, raw, char, number, bool, nil,
    #            declare, assign, pipe, lparen, rparen, comma, other (a stray character),
    #            end (the right delimiter)
    val: str
    pos: int


class _SyntaxError(Exception):
    def __init__(self, offset: int, message: str):
        self.offset = offset
        self.message = message


def _is_space(c: str) -> bool:
    return c != "" and c in _SPACE


#: Tokens of action texts already lexed, as ``(typ, val, offset in the action)``, keyed by the
#: action's text from after ``{{`` up to and including its ``}}``. Alerts repeat a handful of
#: actions (``{{ $labels.instance }}``, ``{{ $value | humanize }}``) thousands of times.
_LEXED: dict[str, tuple] = {}
_LEXED_MAX = 20_000


def _lex(text: str, k: int) -> tuple[list[_Tok], int]:
    """:func:`_lex_action`, from :data:`_LEXED` when the same action text was lexed before.
    Only an action that ends at the first ``}}`` after ``k`` is kept (a ``}}`` inside a
    string literal makes the action longer than that key), and the lexer reads nothing
    outside the action, so a kept entry is exactly what lexing again would give."""
    end = text.find("}}", k)
    key = text[k:end + 2] if end >= 0 else None
    hit = _LEXED.get(key) if key is not None else None
    if hit is not None:
        return [_Tok(t, v, k + p) for t, v, p in hit], end + 2
    toks, i = _lex_action(text, k)
    if key is not None and i == end + 2 and len(_LEXED) < _LEXED_MAX:
        _LEXED[key] = tuple((t.typ, t.val, t.pos - k) for t in toks)
    return toks, i


def _lex_action(text: str, i: int) -> tuple[list[_Tok], int]:
    """Tokens of the action whose body starts at ``i`` (after ``{{`` and any trim marker),
    up to and including its right delimiter; returns (tokens, index after the delimiter)."""
    toks: list[_Tok] = []
    depth = 0
    n = len(text)
    while True:
        if text.startswith(" -}}", i) or text.startswith("\t-}}", i) or text.startswith("\n-}}", i) \
                or text.startswith("\r-}}", i):
            if depth:
                raise _SyntaxError(i, "unclosed left paren")
            toks.append(_Tok("end", "-}}", i))
            return toks, i + 4
        if text.startswith("}}", i):
            if depth:
                raise _SyntaxError(i, "unclosed left paren")
            toks.append(_Tok("end", "}}", i))
            return toks, i + 2
        if i >= n:
            raise _SyntaxError(i, "unclosed action: add the closing }}")
        c = text[i]
        start = i
        if _is_space(c):
            while i < n and _is_space(text[i]):
                if text.startswith("-}}", i + 1) and _is_space(text[i]):
                    break
                i += 1
            if i == start:  # a single space before -}}
                continue
            toks.append(_Tok("space", text[start:i], start))
            continue
        if c == "=":
            toks.append(_Tok("assign", "=", i))
            i += 1
        elif c == ":":
            if not text.startswith(":=", i):
                raise _SyntaxError(i, "expected :=")
            toks.append(_Tok("declare", ":=", i))
            i += 2
        elif c == "|":
            toks.append(_Tok("pipe", "|", i))
            i += 1
        elif c == "(":
            depth += 1
            toks.append(_Tok("lparen", "(", i))
            i += 1
        elif c == ")":
            depth -= 1
            if depth < 0:
                raise _SyntaxError(i, "unexpected right paren")
            toks.append(_Tok("rparen", ")", i))
            i += 1
        elif c == ",":
            toks.append(_Tok("comma", ",", i))
            i += 1
        elif c == '"':
            i += 1
            while True:
                if i >= n or text[i] == "\n":
                    raise _SyntaxError(start, "unterminated quoted string")
                if text[i] == "\\":
                    if i + 1 >= n or text[i + 1] == "\n":
                        raise _SyntaxError(start, "unterminated quoted string")
                    i += 2
                    continue
                if text[i] == '"':
                    i += 1
                    break
                i += 1
            body = text[start + 1:i - 1]
            bad = _bad_escape(body)
            if bad is not None:
                raise _SyntaxError(start + 1 + bad, f"invalid escape in string {text[start:i]}")
            toks.append(_Tok("string", text[start:i], start))
        elif c == "`":
            j = text.find("`", i + 1)
            if j < 0:
                raise _SyntaxError(start, "unterminated raw quoted string")
            i = j + 1
            toks.append(_Tok("raw", text[start:i], start))
        elif c == "'":
            i += 1
            while True:
                if i >= n or text[i] == "\n":
                    raise _SyntaxError(start, "unterminated character constant")
                if text[i] == "\\":
                    i += 2
                    continue
                if text[i] == "'":
                    i += 1
                    break
                i += 1
            toks.append(_Tok("char", text[start:i], start))
        elif c == "$":
            m = _ALNUM.match(text, i + 1)
            i = m.end()
            toks.append(_Tok("var", text[start:i], start))
            _terminator(text, i)
        elif c == "." and not (i + 1 < n and text[i + 1].isdigit()):
            m = _ALNUM.match(text, i + 1)
            i = m.end()
            if i == start + 1:
                toks.append(_Tok("dot", ".", start))
            else:
                toks.append(_Tok("field", text[start:i], start))
            _terminator(text, i)
        elif c in "+-." or c.isdigit():
            m = _NUMBER.match(text, i)
            if not m or (m.end() < n and (text[m.end()].isalnum() or text[m.end()] == "_")):
                end = m.end() + 1 if m else i + 1
                raise _SyntaxError(start, f"bad number syntax: {text[start:end]!r}")
            i = m.end()
            toks.append(_Tok("number", text[start:i], start))
        elif c.isalpha() or c == "_" or ord(c) > 127 and c.isalnum():
            m = _ALNUM.match(text, i)
            i = m.end()
            word = text[start:i]
            if word in _KEYWORDS:
                typ = "keyword"
            elif word in ("true", "false"):
                typ = "bool"
            elif word == "nil":
                typ = "nil"
            else:
                typ = "ident"
            toks.append(_Tok(typ, word, start))
            _terminator(text, i)
        elif ord(c) < 128 and c.isprintable():
            toks.append(_Tok("other", c, i))  # a stray printable character: the parser says so
            i += 1
        else:
            raise _SyntaxError(i, f"unrecognized character in action: {c!r}")


def _terminator(text: str, i: int) -> None:
    """Go's lexer requires a word to be followed by space, ``.``, ``,``, ``|``, ``:``,
    ``)``, ``(`` or the right delimiter's first character (so ``$x=1`` is an error)."""
    if i >= len(text):
        return
    c = text[i]
    if _is_space(c) or c in ".,|:)(}":
        return
    raise _SyntaxError(i, f"bad character {c!r} after a name; separate arguments with spaces")


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


class _Parser:
    def __init__(self, text: str, funcs: frozenset, variables: tuple):
        self.text = text
        self.funcs = funcs
        self.out = Template()
        self.scopes: list[list[str]] = [["$", *variables]]
        self.blocks: list[dict] = []  # {kind, pos, else}
        self.base = 0  # first scope visible: a define body sees only its own variables

    # -- variables -------------------------------------------------------------------------
    def _defined(self, name: str) -> bool:
        return any(name in s for s in self.scopes[self.base:])

    def _use_var(self, tok: _Tok) -> None:
        name = tok.val
        if name == "$value":
            self.out.value_uses.append(tok.pos)
        if not self._defined(name):
            self.out.issues.append(Issue("variable", tok.pos, f"undefined variable {name}", name))

    # -- top level -------------------------------------------------------------------------
    def run(self) -> Template:
        text, i, n = self.text, 0, len(self.text)
        try:
            while True:
                j = text.find("{{", i)
                if j < 0:
                    break
                k = j + 2
                if text.startswith("-", k) and k + 1 < n and _is_space(text[k + 1]):
                    k += 2
                if text.startswith("/*", k):
                    i = self._comment(j, k)
                    continue
                toks, i = _lex(text, k)
                self.out.actions += 1
                self._action(toks, j)
            if self.blocks:
                b = self.blocks[-1]
                raise _SyntaxError(b["pos"], f"{{{{{b['kind']}}}}} is never closed: add {{{{end}}}}")
        except _SyntaxError as e:
            self.out.issues.append(Issue("syntax", e.offset, e.message))
        return self.out

    def _comment(self, start: int, k: int) -> int:
        end = self.text.find("*/", k + 2)
        if end < 0:
            raise _SyntaxError(start, "unclosed comment: end it with */}}")
        after = end + 2
        if self.text.startswith("}}", after):
            return after + 2
        if self.text.startswith(" -}}", after) or self.text.startswith("\t-}}", after) \
                or self.text.startswith("\n-}}", after) or self.text.startswith("\r-}}", after):
            return after + 4
        raise _SyntaxError(after, "comment ends before closing delimiter: write */}} together")

    # -- actions ---------------------------------------------------------------------------
    def _action(self, toks: list[_Tok], start: int) -> None:
        p = 0
        while toks[p].typ == "space":
            p += 1
        first = toks[p]
        if first.typ == "keyword":
            kw = first.val
            rest = toks[p + 1:]
            if kw in ("if", "with", "range"):
                self.blocks.append({"kind": kw, "pos": start, "else": False})
                self.scopes.append([])
                self._pipeline(rest, kw, allow_two=(kw == "range"))
                return
            if kw == "else":
                if not self.blocks or self.blocks[-1]["kind"] not in ("if", "with", "range"):
                    raise _SyntaxError(start, "unexpected {{else}}: no {{if}}, {{with}} or {{range}} is open")
                b = self.blocks[-1]
                if b["else"]:
                    raise _SyntaxError(start, "expected {{end}}; found a second {{else}}")
                r = _skip_space(rest)
                if r and r[0].typ == "keyword" and r[0].val in ("if", "with"):
                    if r[0].val != b["kind"]:
                        raise _SyntaxError(r[0].pos, f"{{{{else {r[0].val}}}}} inside {{{{{b['kind']}}}}}")
                    self._pipeline(r[1:], r[0].val)
                    return
                b["else"] = True
                self._expect_end(rest, "else")
                return
            if kw == "end":
                if not self.blocks:
                    raise _SyntaxError(start, "unexpected {{end}}: no block is open")
                self._expect_end(rest, "end")
                closed = self.blocks.pop()
                if "base" in closed:
                    self.base = closed["base"]
                self.scopes.pop()
                return
            if kw in ("break", "continue"):
                if not any(b["kind"] == "range" for b in self.blocks):
                    raise _SyntaxError(start, f"{{{{{kw}}}}} outside {{{{range}}}}")
                self._expect_end(rest, kw)
                return
            if kw in ("define", "block"):
                if kw == "define" and self.blocks:
                    raise _SyntaxError(start, "{{define}} only at the top level")
                r = _skip_space(rest)
                if not r or r[0].typ not in ("string", "raw"):
                    raise _SyntaxError(first.pos, f"{kw} needs a quoted template name")
                if kw == "block":
                    self._pipeline(r[1:], kw)  # evaluated where the block stands
                else:
                    self._expect_end(r[1:], kw)
                self.blocks.append({"kind": kw, "pos": start, "else": False, "base": self.base})
                self.scopes.append(["$"])
                self.base = len(self.scopes) - 1
                return
            if kw == "template":
                r = _skip_space(rest)
                if not r or r[0].typ not in ("string", "raw"):
                    raise _SyntaxError(first.pos, "template needs a quoted template name")
                if _skip_space(r[1:])[0].typ != "end":
                    self._pipeline(r[1:], "template")
                return
        self._pipeline(toks[p:], "command")

    def _expect_end(self, toks: list[_Tok], what: str) -> None:
        r = _skip_space(toks)
        if r[0].typ != "end":
            raise _SyntaxError(r[0].pos, f"unexpected {r[0].val!r} in {{{{{what}}}}}")

    def _pipeline(self, toks: list[_Tok], context: str, allow_two: bool = False,
                  closer: str = "end") -> int:
        """Parse a pipeline from ``toks`` up to ``closer`` (``end`` or ``rparen``); returns the
        number of tokens consumed, closer included."""
        p = 0
        p = _skip(toks, p)
        decls: list[_Tok] = []
        assign = False
        # declarations: $x :=  |  $x =  |  $i, $x := (range only)
        while toks[p].typ == "var":
            q = _skip(toks, p + 1)
            nxt = toks[q]
            if nxt.typ in ("declare", "assign"):
                decls.append(toks[p])
                assign = nxt.typ == "assign"
                p = q + 1
                break
            if nxt.typ == "comma" and allow_two and not decls:
                decls.append(toks[p])
                p = _skip(toks, q + 1)
                if toks[p].typ != "var":
                    raise _SyntaxError(toks[p].pos, "range can only initialize variables")
                continue
            if nxt.typ == "comma":
                raise _SyntaxError(nxt.pos, f"too many declarations in {context}")
            break
        if assign:
            for d in decls:
                self._use_var(d)
        stages = 0
        while True:
            p = _skip(toks, p)
            t = toks[p]
            if t.typ == closer:
                if stages == 0:
                    raise _SyntaxError(t.pos, f"missing value for {context}")
                break
            if t.typ == "end" or (t.typ == "rparen" and closer != "rparen"):
                raise _SyntaxError(t.pos, f"unexpected {t.val!r} in {context}")
            p = self._command(toks, p, stages, context, closer)
            stages += 1
            if toks[p].typ == "pipe":
                p += 1
                q = _skip(toks, p)
                if toks[q].typ in (closer, "end", "rparen"):
                    raise _SyntaxError(toks[q].pos, "missing command after |")
                continue
        if not assign:
            for d in decls:
                self.scopes[-1].append(d.val)
        return p + 1

    def _command(self, toks: list[_Tok], p: int, stage: int, context: str, closer: str) -> int:
        args = 0
        while True:
            p = _skip(toks, p)
            t = toks[p]
            if t.typ in ("pipe", "end", "rparen"):
                break
            if args == 0 and t.typ == "nil":
                raise _SyntaxError(t.pos, "nil is not a command")
            if args == 0 and stage > 0 and t.typ in ("bool", "dot", "nil", "number", "string", "raw", "char"):
                raise _SyntaxError(t.pos, f"non executable command in pipeline stage {stage + 1}")
            p = self._operand(toks, p)
            args += 1
            if toks[p].typ == "space":
                continue
            if toks[p].typ in ("pipe", "end", "rparen"):
                break
            raise _SyntaxError(toks[p].pos, f"unexpected {toks[p].val!r} in operand; separate "
                               "arguments with spaces")
        if args == 0:
            raise _SyntaxError(toks[p].pos, f"empty command in {context}")
        return p

    def _operand(self, toks: list[_Tok], p: int) -> int:
        t = toks[p]
        if t.typ == "ident":
            if t.val not in self.funcs:
                self.out.issues.append(Issue("function", t.pos, f"function {t.val!r} not defined", t.val))
            if t.val == "index":
                args = [x for x in toks[p + 1:p + 6] if x.typ != "space"]
                if len(args) >= 2 and args[0].typ == "var" and args[0].val == "$labels" and \
                        args[1].typ == "string" and "\\" not in args[1].val:
                    self.out.label_uses.append((args[1].val[1:-1], t.pos))
            p += 1
        elif t.typ == "var":
            self._use_var(t)
            p += 1
            if t.val == "$labels" and toks[p].typ == "field":
                self.out.label_uses.append((toks[p].val[1:], t.pos))
            if t.val == "$" and toks[p].typ == "field" and toks[p].val == ".Value":
                self.out.value_uses.append(t.pos)
        elif t.typ == "field":
            if t.val == ".Value" and len(self.blocks_with_dot()) == 0:
                self.out.value_uses.append(t.pos)
            if t.val == ".Labels" and toks[p + 1].typ == "field" and len(self.blocks_with_dot()) == 0:
                self.out.label_uses.append((toks[p + 1].val[1:], t.pos))
            p += 1
        elif t.typ in ("dot", "nil", "bool", "number", "string", "raw", "char"):
            p += 1
        elif t.typ == "lparen":
            p += 1 + self._pipeline(toks[p + 1:], "parenthesized pipeline", closer="rparen")
        else:
            what = f"{{{{{t.val}}}}}" if t.typ == "keyword" else repr(t.val)
            raise _SyntaxError(t.pos, f"unexpected {what} in operand")
        if toks[p].typ == "field":
            if t.typ in ("bool", "string", "raw", "number", "nil", "dot", "char"):
                raise _SyntaxError(toks[p].pos, f"unexpected . after term {t.val!r}")
            while toks[p].typ == "field":
                p += 1
        return p

    def blocks_with_dot(self) -> list:
        """Open blocks that rebind ``.`` (``range``, ``with``, ``define``, ``block``): inside
        them ``.Value`` is not the alert value."""
        return [b for b in self.blocks if b["kind"] in ("range", "with", "define", "block")]


def _skip(toks: list[_Tok], p: int) -> int:
    while toks[p].typ == "space":
        p += 1
    return p


def _skip_space(toks: list[_Tok]) -> list[_Tok]:
    return toks[_skip(toks, 0):] if toks else toks


@functools.lru_cache(maxsize=8192)
def parse(text: str, funcs: frozenset = FUNCS, variables: tuple = ALERT_VARS) -> Template:
    """Parse Go template ``text``. Never raises. Cached per arguments (alerts repeat their
    annotation texts, e.g. ``VALUE = {{ $value }}``): the returned Template is shared, so
    treat it as read-only.

    Args:
        text: the template (a label or annotation value).
        funcs: defined function names (default: Go builtins and Prometheus' alert functions).
        variables: predefined variables besides ``$`` (default: Prometheus' alert variables).

    Returns:
        A :class:`Template`; syntax errors stop at the first, like Go's parser, while undefined
        variables and functions are all collected.
    """
    if "{{" not in text:
        return Template()
    return _Parser(text, funcs, variables).run()
