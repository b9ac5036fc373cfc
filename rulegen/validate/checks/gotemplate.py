"""A small parser for Go ``text/template`` text, as Prometheus uses it for alert labels and
annotations. It checks what Go's parser checks at load time (syntax, defined functions,
defined variables) plus what rulegen cares about (uses of the alert value), and reports
offsets into the template text. It never executes anything.

Actions are lexed by :mod:`rulegen.promql.gotmpl` (Go's lexer: trim markers, strings, raw
strings, comments); the parser here is faithful to Go's ``text/template/parse`` for the parts
that matter (package documentation "text/template": Actions, Arguments, Pipelines, Variables,
Functions):

* ``if``/``range``/``with``/``define``/``block`` open a block closed by ``end``; ``else``,
  ``else if`` and ``else with`` continue it; ``break``/``continue`` only inside ``range``;
* a variable exists from the action declaring it (``$x := ...``) to the ``end`` of the
  enclosing block; ``$`` always exists.

This module has no check codes of its own; :mod:`.templates` turns its issues into findings.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ...promql.gotmpl import Token, TemplateSyntaxError, after_left_delim, comment_end, lex

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

    def _use_var(self, tok: Token) -> None:
        name = tok.val
        if name == "$value":
            self.out.value_uses.append(tok.pos)
        if not self._defined(name):
            self.out.issues.append(Issue("variable", tok.pos, f"undefined variable {name}", name))

    # -- top level -------------------------------------------------------------------------
    def run(self) -> Template:
        text, i = self.text, 0
        try:
            while True:
                j = text.find("{{", i)
                if j < 0:
                    break
                k = after_left_delim(text, j)
                if text.startswith("/*", k):
                    i = comment_end(text, j, k)
                    continue
                toks, i = lex(text, k)
                self.out.actions += 1
                self._action(toks, j)
            if self.blocks:
                b = self.blocks[-1]
                raise TemplateSyntaxError(b["pos"], f"{{{{{b['kind']}}}}} is never closed: add {{{{end}}}}")
        except TemplateSyntaxError as e:
            self.out.issues.append(Issue("syntax", e.offset, e.message))
        return self.out

    # -- actions ---------------------------------------------------------------------------
    def _action(self, toks: list[Token], start: int) -> None:
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
                    raise TemplateSyntaxError(start, "unexpected {{else}}: no {{if}}, {{with}} or {{range}} is open")
                b = self.blocks[-1]
                if b["else"]:
                    raise TemplateSyntaxError(start, "expected {{end}}; found a second {{else}}")
                r = _skip_space(rest)
                if r and r[0].typ == "keyword" and r[0].val in ("if", "with"):
                    if r[0].val != b["kind"]:
                        raise TemplateSyntaxError(r[0].pos, f"{{{{else {r[0].val}}}}} inside {{{{{b['kind']}}}}}")
                    self._pipeline(r[1:], r[0].val)
                    return
                b["else"] = True
                self._expect_end(rest, "else")
                return
            if kw == "end":
                if not self.blocks:
                    raise TemplateSyntaxError(start, "unexpected {{end}}: no block is open")
                self._expect_end(rest, "end")
                closed = self.blocks.pop()
                if "base" in closed:
                    self.base = closed["base"]
                self.scopes.pop()
                return
            if kw in ("break", "continue"):
                if not any(b["kind"] == "range" for b in self.blocks):
                    raise TemplateSyntaxError(start, f"{{{{{kw}}}}} outside {{{{range}}}}")
                self._expect_end(rest, kw)
                return
            if kw in ("define", "block"):
                if kw == "define" and self.blocks:
                    raise TemplateSyntaxError(start, "{{define}} only at the top level")
                r = _skip_space(rest)
                if not r or r[0].typ not in ("string", "raw"):
                    raise TemplateSyntaxError(first.pos, f"{kw} needs a quoted template name")
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
                    raise TemplateSyntaxError(first.pos, "template needs a quoted template name")
                if _skip_space(r[1:])[0].typ != "end":
                    self._pipeline(r[1:], "template")
                return
        self._pipeline(toks[p:], "command")

    def _expect_end(self, toks: list[Token], what: str) -> None:
        r = _skip_space(toks)
        if r[0].typ != "end":
            raise TemplateSyntaxError(r[0].pos, f"unexpected {r[0].val!r} in {{{{{what}}}}}")

    def _pipeline(self, toks: list[Token], context: str, allow_two: bool = False,
                  closer: str = "end") -> int:
        """Parse a pipeline from ``toks`` up to ``closer`` (``end`` or ``rparen``); returns the
        number of tokens consumed, closer included."""
        p = 0
        p = _skip(toks, p)
        decls: list[Token] = []
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
                    raise TemplateSyntaxError(toks[p].pos, "range can only initialize variables")
                continue
            if nxt.typ == "comma":
                raise TemplateSyntaxError(nxt.pos, f"too many declarations in {context}")
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
                    raise TemplateSyntaxError(t.pos, f"missing value for {context}")
                break
            if t.typ == "end" or (t.typ == "rparen" and closer != "rparen"):
                raise TemplateSyntaxError(t.pos, f"unexpected {t.val!r} in {context}")
            p = self._command(toks, p, stages, context, closer)
            stages += 1
            if toks[p].typ == "pipe":
                p += 1
                q = _skip(toks, p)
                if toks[q].typ in (closer, "end", "rparen"):
                    raise TemplateSyntaxError(toks[q].pos, "missing command after |")
                continue
        if not assign:
            for d in decls:
                self.scopes[-1].append(d.val)
        return p + 1

    def _command(self, toks: list[Token], p: int, stage: int, context: str, closer: str) -> int:
        args = 0
        while True:
            p = _skip(toks, p)
            t = toks[p]
            if t.typ in ("pipe", "end", "rparen"):
                break
            if args == 0 and t.typ == "nil":
                raise TemplateSyntaxError(t.pos, "nil is not a command")
            if args == 0 and stage > 0 and t.typ in ("bool", "dot", "nil", "number", "string", "raw", "char"):
                raise TemplateSyntaxError(t.pos, f"non executable command in pipeline stage {stage + 1}")
            p = self._operand(toks, p)
            args += 1
            if toks[p].typ == "space":
                continue
            if toks[p].typ in ("pipe", "end", "rparen"):
                break
            raise TemplateSyntaxError(toks[p].pos, f"unexpected {toks[p].val!r} in operand; separate "
                               "arguments with spaces")
        if args == 0:
            raise TemplateSyntaxError(toks[p].pos, f"empty command in {context}")
        return p

    def _operand(self, toks: list[Token], p: int) -> int:
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
            raise TemplateSyntaxError(t.pos, f"unexpected {what} in operand")
        if toks[p].typ == "field":
            if t.typ in ("bool", "string", "raw", "number", "nil", "dot", "char"):
                raise TemplateSyntaxError(toks[p].pos, f"unexpected . after term {t.val!r}")
            while toks[p].typ == "field":
                p += 1
        return p

    def blocks_with_dot(self) -> list:
        """Open blocks that rebind ``.`` (``range``, ``with``, ``define``, ``block``): inside
        them ``.Value`` is not the alert value."""
        return [b for b in self.blocks if b["kind"] in ("range", "with", "define", "block")]


def _skip(toks: list[Token], p: int) -> int:
    while toks[p].typ == "space":
        p += 1
    return p


def _skip_space(toks: list[Token]) -> list[Token]:
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
