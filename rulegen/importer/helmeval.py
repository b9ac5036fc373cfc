"""Evaluate the Helm actions charts use around rules, with the chart's default values.

A small reader of Go ``text/template`` pipelines (Go docs, "text/template": arguments,
pipelines, variables, functions) and of the Sprig/Helm functions charts use around rules
(Helm docs, "Template Function List"), so that the static reading of a template
(:mod:`rulegen.importer.helmtext`) knows what an action prints with the chart's
``values.yaml``:

* ``{{ dig "<Alert>" "for" "15m" .Values.customRules }}`` prints ``15m`` (the knob's default;
  rulegen's chart reads the same ``customRules.<Alert>.for`` knob);
* ``{{ .Values.defaultRules.runbookUrl }}/alertmanager/x`` prints the value's default;
* a variable assigned in the template (``{{- $kubeletJob := include "x.kubelet.name" . }}``)
  is evaluated, and so is a helper (``define``) that prints the same text each time, with the
  chart's values, the chart's name, and the release name and namespace given to import
  (``--release``, default the chart's name; ``--namespace``, default ``default``);
* ``if``/``with`` conditions and ``range`` collections on values: a block that renders
  nothing with the default values is known to (see :func:`truthy`).

What depends on anything else (``.Capabilities``, ``lookup``, ``semverCompare``, ``.Files``,
functions not listed in :data:`FUNCS`) is :data:`UNKNOWN`, and so is everything computed from
it; the reader then reports it (never guesses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..promql.gotmpl import Action, body_tokens, defined_name, lex_action, split, unquote
from ..promql.gotmpl import TemplateSyntaxError


class _Unknown:
    """The value of an expression that cannot be known statically."""

    def __repr__(self) -> str:
        return "UNKNOWN"

    def __bool__(self) -> bool:
        raise TypeError("UNKNOWN has no truth value")


UNKNOWN = _Unknown()


def known(v) -> bool:
    """True when ``v`` (deeply) holds no :data:`UNKNOWN`."""
    if v is UNKNOWN:
        return False
    if isinstance(v, dict):
        return all(known(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return all(known(x) for x in v)
    return True


def truthy(v):
    """Go template truth: false, 0, nil, empty string/list/map are false. UNKNOWN stays."""
    if v is UNKNOWN:
        return UNKNOWN
    if v is None or v is False:
        return False
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return v != 0
    if isinstance(v, (str, list, dict, tuple)):
        return len(v) > 0
    return True


@dataclass
class Context:
    """What a template can read: ``values`` (the chart's values.yaml), ``chart``
    (``Name``, ``Version``, ``AppVersion``), ``release`` (``Name``, ``Namespace``,
    ``Service``), ``helpers`` (define name -> body) and the template's variables."""

    values: dict = field(default_factory=dict)
    chart: dict = field(default_factory=dict)
    release: dict = field(default_factory=dict)
    helpers: dict = field(default_factory=dict)
    variables: dict = field(default_factory=dict)
    depth: int = 0

    def root(self) -> dict:
        return {"Values": self.values, "Chart": self.chart, "Release": self.release,
                "Capabilities": UNKNOWN, "Files": UNKNOWN, "Template": UNKNOWN}


#: The number operands the evaluator reads (others, such as ``0x10`` or ``1e3``, are UNKNOWN).
_PLAIN_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_OPS = {"lparen": "(", "rparen": ")", "pipe": "|"}


def _tokens(expr: str) -> list[tuple[str, str]] | None:
    """(kind, text) operands and operators of the pipeline ``expr``, from Go's lexer
    (:func:`rulegen.promql.gotmpl.body_tokens`): ``str`` (a string or raw string), ``num``,
    ``field`` (a variable or ``.`` with the fields chained to it: ``$x.a.b``), ``ident`` and
    ``op`` (``(``, ``)``, ``|``). None for what the evaluator does not read (declarations,
    character constants, commas, a field of a function's result)."""
    toks = body_tokens(expr)
    if toks is None:
        return None
    out: list[tuple[str, str]] = []
    prev = None
    for t in toks:
        adjacent = prev is not None and prev.pos + len(prev.val) == t.pos and t.typ == "field"
        if adjacent and prev.typ == "ident":
            return None  # `name.field`: a field of a function's result
        if adjacent and prev.typ in ("var", "dot", "field"):
            out[-1] = ("field", out[-1][1] + t.val)
        elif t.typ in ("var", "dot", "field"):
            out.append(("field", t.val))
        elif t.typ in ("string", "raw"):
            out.append(("str", t.val))
        elif t.typ == "number" and _PLAIN_NUMBER.fullmatch(t.val):
            out.append(("num", t.val))
        elif t.typ in ("ident", "keyword", "bool", "nil"):
            out.append(("ident", t.val))
        elif t.typ in _OPS:
            out.append(("op", _OPS[t.typ]))
        else:
            return None
        prev = t
    return out


def evaluate(expr: str, ctx: Context, dot=None):
    """The value of the pipeline ``expr`` (an action's body without ``{{ }}``), or UNKNOWN."""
    toks = _tokens(expr)
    if toks is None:
        return UNKNOWN
    try:
        val, rest = _pipeline(toks, 0, ctx, dot)
    except (IndexError, ValueError, TypeError, KeyError, RecursionError):
        return UNKNOWN
    return val if rest == len(toks) else UNKNOWN


def _pipeline(toks, i, ctx, dot):
    prev = _NOTHING
    while True:
        args = []
        while i < len(toks) and toks[i] not in (("op", "|"), ("op", ")")):
            kind, text = toks[i]
            if text == "(":
                v, i = _pipeline(toks, i + 1, ctx, dot)
                if i >= len(toks) or toks[i] != ("op", ")"):
                    raise ValueError("unbalanced")
                args.append(("val", v))
                i += 1
            else:
                args.append((kind, text))
                i += 1
        if prev is not _NOTHING:
            args.append(("val", prev))
        prev = _command(args, ctx, dot)
        if i < len(toks) and toks[i] == ("op", "|"):
            i += 1
            continue
        return prev, i


_NOTHING = object()


def _operand(kind, text, ctx, dot):
    if kind == "val":
        return text
    if kind == "str":
        return unquote(text)
    if kind == "num":
        return float(text) if "." in text else int(text)
    if kind == "ident":
        return {"true": True, "false": False, "nil": None}.get(text, UNKNOWN)
    if kind == "field":
        return _field(text, ctx, dot)
    return UNKNOWN


def _field(text, ctx, dot):
    if text == ".":
        return dot
    if text.startswith("$"):
        name, _, rest = text.partition(".")
        base = ctx.root() if name == "$" else ctx.variables.get(name[1:], UNKNOWN)
        parts = rest.split(".") if rest else []
    else:
        base = dot
        parts = text[1:].split(".")
    for p in parts:
        if base is UNKNOWN:
            return UNKNOWN
        if isinstance(base, dict):
            base = base.get(p)
        elif base is None:
            return None
        else:
            return UNKNOWN
    return base


def _command(args, ctx, dot):
    if not args:
        return UNKNOWN
    kind, text = args[0]
    if kind == "ident" and text not in ("true", "false", "nil"):
        fn = FUNCS.get(text)
        vals = [_operand(k, t, ctx, dot) for k, t in args[1:]]
        if text in ("include", "template"):
            return _include(vals, ctx)
        if fn is None:
            return UNKNOWN
        return fn(*vals)
    if len(args) != 1:
        return UNKNOWN
    return _operand(kind, text, ctx, dot)


def _include(vals, ctx):
    if len(vals) < 1 or not isinstance(vals[0], str) or vals[0] not in ctx.helpers or ctx.depth > 20:
        return UNKNOWN
    dot = vals[1] if len(vals) > 1 else None
    sub = Context(ctx.values, ctx.chart, ctx.release, ctx.helpers, {}, ctx.depth + 1)
    return execute(ctx.helpers[vals[0]], sub, dot)


def _strict(fn):
    """``fn`` made to return UNKNOWN when any argument is (deeply) unknown."""
    def wrapped(*a):
        if not all(known(x) for x in a):
            return UNKNOWN
        return fn(*a)
    return wrapped


def _default(*a):
    if len(a) < 2:
        return a[0] if a else UNKNOWN
    d, v = a[0], a[-1]
    t = truthy(v)
    return UNKNOWN if t is UNKNOWN else (v if t else d)


def _and(*a):
    """Go's ``and``: the first false argument, else the last. A known false argument decides
    even after an unknown one (whatever the unknown is, the result is false)."""
    for x in a:
        t = truthy(x)
        if t is not UNKNOWN and not t:
            return x
    return UNKNOWN if any(truthy(x) is UNKNOWN for x in a) else (a[-1] if a else UNKNOWN)


def _or(*a):
    """Go's ``or``: the first true argument, else the last; UNKNOWN once an unknown argument
    comes before the deciding one."""
    unknown = False
    for x in a:
        t = truthy(x)
        if t is UNKNOWN:
            unknown = True
        elif t:
            return UNKNOWN if unknown else x   # (true, but which value is not known)
    return UNKNOWN if unknown else (a[-1] if a else UNKNOWN)


def _not(x):
    t = truthy(x)
    return UNKNOWN if t is UNKNOWN else not t


def _dig(*a):
    if len(a) < 3:
        return UNKNOWN
    *keys, default, d = a
    cur = d
    for k in keys:
        if cur is UNKNOWN or not isinstance(k, str):
            return UNKNOWN
        if not isinstance(cur, dict) or k not in cur:
            return default
        cur = cur[k]
    return cur


def _index(d, *keys):
    cur = d
    for k in keys:
        if cur is UNKNOWN:
            return UNKNOWN
        if cur is None:
            return None
        if isinstance(cur, dict):
            cur = cur.get(k)
        elif isinstance(cur, list) and isinstance(k, int) and 0 <= k < len(cur):
            cur = cur[k]
        else:
            return UNKNOWN
    return cur


def _merge(dst, *srcs):
    if not isinstance(dst, dict) or not all(isinstance(s, dict) for s in srcs):
        return UNKNOWN
    out = dict(dst)
    for s in srcs:
        out.update(s)
    return out


def _printf(fmt, *args):
    if not isinstance(fmt, str):
        return UNKNOWN
    out, rest, i = [], list(args), 0
    while i < len(fmt):
        c = fmt[i]
        if c == "%" and i + 1 < len(fmt):
            verb = fmt[i + 1]
            if verb == "%":
                out.append("%")
            elif verb in "svdq" and rest:
                v = rest.pop(0)
                out.append(_text(v) if verb != "q" else '"' + _text(v) + '"')
            else:
                return UNKNOWN
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _text(v) -> str:
    """``v`` as Go's fmt prints it with ``%v`` (for the values charts print)."""
    if v is None:
        return "<no value>"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, float) and v.is_integer():
        return str(int(v)) if abs(v) < 1e21 else str(v)
    if isinstance(v, dict):
        return "map[" + " ".join(f"{k}:{_text(x)}" for k, x in sorted(v.items())) + "]"
    if isinstance(v, list):
        return "[" + " ".join(_text(x) for x in v) + "]"
    return str(v)


def _to_yaml(v):
    import yaml
    if isinstance(v, (dict, list)) and not v:
        return "{}" if isinstance(v, dict) else "[]"
    return yaml.safe_dump(v, default_flow_style=False, sort_keys=True).rstrip("\n") \
        if isinstance(v, (dict, list)) else _text(v)


def _indent(n, s):
    pad = " " * int(n)
    return "\n".join(pad + line for line in str(s).split("\n"))


FUNCS = {
    "default": _default,
    "and": _and,
    "or": _or,
    "not": _not,
    "dig": _dig,
    "index": _index,
    "get": _strict(lambda d, k: d.get(k, "") if isinstance(d, dict) else UNKNOWN),
    "hasKey": _strict(lambda d, k: isinstance(d, dict) and k in d),
    "dict": _strict(lambda *a: {a[i]: a[i + 1] for i in range(0, len(a) - 1, 2)}),
    "list": _strict(lambda *a: list(a)),
    "empty": lambda x: UNKNOWN if truthy(x) is UNKNOWN else not truthy(x),
    "mergeOverwrite": _strict(_merge),
    "merge": _strict(lambda dst, *srcs: _merge(*reversed((dst,) + srcs)) if srcs else dst),
    "printf": _strict(_printf),
    "print": _strict(lambda *a: "".join(_text(x) for x in a)),
    "quote": _strict(lambda *a: " ".join('"' + _text(x) + '"' for x in a)),
    "squote": _strict(lambda *a: " ".join("'" + _text(x) + "'" for x in a)),
    "toString": _strict(_text),
    "toYaml": _strict(_to_yaml),
    "indent": _strict(_indent),
    "nindent": _strict(lambda n, s: "\n" + _indent(n, s)),
    "trunc": _strict(lambda n, s: s[:n] if n >= 0 else s[n:]),
    "trimSuffix": _strict(lambda suf, s: s[:-len(suf)] if suf and s.endswith(suf) else s),
    "trimPrefix": _strict(lambda pre, s: s[len(pre):] if pre and s.startswith(pre) else s),
    "trim": _strict(lambda s: s.strip()),
    "lower": _strict(lambda s: s.lower()),
    "upper": _strict(lambda s: s.upper()),
    "replace": _strict(lambda old, new, s: s.replace(old, new)),
    "contains": _strict(lambda sub, s: sub in s),
    "hasPrefix": _strict(lambda pre, s: s.startswith(pre)),
    "hasSuffix": _strict(lambda suf, s: s.endswith(suf)),
    "eq": _strict(lambda a, *b: any(a == x for x in b)),
    "ne": _strict(lambda a, b: a != b),
    "required": lambda msg, v: v,
    "ternary": lambda a, b, c: UNKNOWN if truthy(c) is UNKNOWN else (a if truthy(c) else b),
    "kindIs": _strict(lambda k, v: {"map": isinstance(v, dict), "string": isinstance(v, str),
                                    "slice": isinstance(v, list), "bool": isinstance(v, bool)}.get(k, UNKNOWN)),
}


def execute(body: str, ctx: Context, dot=None):
    """What the template text ``body`` (a ``define``'s body) prints, or UNKNOWN: text,
    value actions, assignments, ``if``/``else if``/``else``/``with``/``end``, trim markers.
    ``range`` over a known empty collection prints nothing; otherwise UNKNOWN."""
    out: list[str] = []
    # each frame: [keyword, taking (bool), taken_any (bool), saved dot]
    stack: list[list] = []
    trim_next = False

    def active() -> bool:
        return all(f[1] for f in stack)

    for kind, piece in split(body):
        if kind == "text":
            if trim_next:
                piece = piece.lstrip(" \t\r\n")
                trim_next = False
            if active():
                out.append(piece)
            continue
        a = piece
        if a.trim_left and out:
            out[-1] = out[-1].rstrip(" \t\r\n")
        trim_next = a.trim_right
        k = action_kind(a)
        b = a.body
        if k in ("if", "with"):
            if not active():
                stack.append([k, False, True, dot])
                continue
            cond = evaluate(b[len(k):], ctx, dot)
            t = truthy(cond)
            if t is UNKNOWN:
                return UNKNOWN
            stack.append([k, t, t, dot])
            if k == "with" and t:
                dot = cond
        elif k == "range":
            coll = evaluate(re.sub(r"^range\s+(\$\w+\s*(,\s*\$\w+\s*)?:=\s*)?", "", b), ctx, dot) \
                if active() else None
            if active() and (coll is UNKNOWN or truthy(coll)):
                return UNKNOWN
            stack.append(["range", False, True, dot])
        elif k == "else":
            if not stack:
                return UNKNOWN
            f = stack[-1]
            dot = f[3]
            outer = all(x[1] for x in stack[:-1])
            rest = b[4:].strip()
            if f[2] or not outer:
                f[1] = False
            elif rest.startswith("if"):
                t = truthy(evaluate(rest[2:], ctx, dot))
                if t is UNKNOWN:
                    return UNKNOWN
                f[1] = f[2] = t
            else:
                f[1] = f[2] = True
        elif k == "end":
            if stack:
                dot = stack.pop()[3]
        elif not active():
            continue
        elif k == "comment":
            continue
        elif k == "assign":
            m = re.match(r"\$(\w*)\s*:?=\s*(.*)", b, re.S)
            ctx.variables[m.group(1)] = evaluate(m.group(2), ctx, dot)
        else:
            v = evaluate(b, ctx, dot)
            if not known(v):
                return UNKNOWN
            out.append(_text(v))
    return "".join(out)


def helpers_of(text: str) -> dict:
    """``define`` name -> body for every ``{{ define "name" }}...{{ end }}`` in ``text``
    (a ``_helpers.tpl``), nested blocks counted."""
    out: dict = {}
    name = None
    depth = 0
    buf: list[str] = []
    for kind, piece in split(text):
        if kind == "text":
            if name is not None:
                buf.append(piece)
            continue
        k = action_kind(piece)
        if name is None:
            defined = defined_name(piece)
            if defined is not None:
                # a `-}}` on the define trims the body's leading whitespace
                name, depth, buf, buf_trim = defined, 0, [], piece.trim_right
            continue
        if k in ("if", "with", "range", "define", "block"):
            depth += 1
        elif k == "end":
            if depth == 0:
                body = "".join(buf)
                out[name] = body.lstrip(" \t\r\n") if buf_trim else body
                if piece.trim_left:
                    out[name] = out[name].rstrip(" \t\r\n")
                name = None
                continue
            depth -= 1
        buf.append(piece.raw)
    return out


# ---------------------------------------------------------------------------------------------
# What an action is


_PROM_VARS = re.compile(r"\$(labels|value|externalLabels|externalURL)\b|\.Labels\b|\bhumanize")


def _string_args(body: str) -> list[str] | None:
    """The values of ``body`` when it is only Go string literals separated by spaces, else None."""
    toks = body_tokens(body)
    if toks is None or any(t.typ not in ("string", "raw") for t in toks):
        return None
    return [unquote(t.val) for t in toks]


def literal_value(body: str) -> str | None:
    """What an action prints when that does not depend on values: a string literal, or
    ``print``/``printf`` of string literals. None otherwise."""
    body = body.strip()
    if body.startswith("(") and body.endswith(")"):
        body = body[1:-1].strip()
    m = re.match(r"(print|printf)\s", body)
    if not m:
        args = _string_args(body)
        return args[0] if args is not None and len(args) == 1 else None
    args = _string_args(body[m.end():])
    if not args:
        return None
    if m.group(1) == "print":
        return "".join(args)
    fmt, rest = args[0], list(args[1:])
    out = []
    i = 0
    while i < len(fmt):
        if fmt[i] == "%":
            verb = fmt[i + 1:i + 2]
            if verb == "%":
                out.append("%")
            elif verb in ("s", "v") and rest:
                out.append(rest.pop(0))
            else:
                return None
            i += 2
        else:
            out.append(fmt[i])
            i += 1
    return None if rest else "".join(out)


def action_kind(a: Action) -> str:
    """What the action ``a`` is: ``comment``, ``literal`` (prints a fixed string, see
    :func:`literal_value`), a keyword (``if``, ``else``, ``end``, ``with``, ``range``,
    ``define``, ``block``, ``template``, ``break``, ``continue``), ``assign`` (``$x := ...``),
    ``prometheus`` (a Prometheus alert template: ``$labels``, ``$value``, ``humanize``...) or
    ``value`` (prints a value)."""
    b = a.body
    if b.startswith("/*"):
        return "comment"
    if literal_value(b) is not None:
        return "literal"
    try:
        toks = [t for t in lex_action(b + " }}", 0, strict=False)[0] if t.typ != "space"]
    except TemplateSyntaxError:
        toks = []
    if toks and toks[0].typ == "keyword":
        return toks[0].val
    if len(toks) > 1 and toks[0].typ == "var" and toks[1].typ in ("declare", "assign"):
        return "assign"
    if _PROM_VARS.search(b):
        return "prometheus"
    return "value"
