"""Read a Helm chart template statically: Helm actions out, the YAML that Helm would print in.

Helm templates are Go ``text/template`` (Helm docs, "Template Guide"). This module does not run
them; it reads what a template holding a PrometheusRule prints with its values' conditions
true, and keeps **one output line per input line**, so every later position (YAML errors,
comments, notes) is the template's own line.

What is understood:

* escape forms that print a fixed string: a string action ``{{`{{`}}`` / ``{{ "{{" }}``, and
  ``print``/``printf`` with only string arguments (``{{ print "{{" }}``,
  ``{{ printf "%s" "{{" }}``; printf verbs ``%s``, ``%v`` and ``%%``);
* comments ``{{/* ... */}}``, assignments ``{{ $x := ... }}``;
* trim markers ``{{-`` and ``-}}`` within a line;
* ``if``/``with`` blocks: their body is kept (the condition is assumed true), an ``else``
  branch is skipped; ``range``, ``define`` and ``block`` bodies are skipped;
* a line holding only Helm actions (``{{- if ... }}``, ``{{- end }}``,
  ``{{- toYaml .Values.x | nindent 4 }}``) is dropped whole, as Helm's ``{{-`` usually does.

What cannot be read statically is reported with its line: a value action inside a line
(``{{ .Values.x }}``, ``{{ include ... }}``) becomes a placeholder (:data:`PLACEHOLDER`) that the
importer resolves or reports, and whole-line value actions (extra labels from values) are
reported as not imported. An unescaped Prometheus template (``{{ $labels.x }}``) is kept as
text, with a warning that ``helm template`` fails on it (``undefined variable``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..promql.gotmpl import Action, TemplateSyntaxError, lex_action, split
from . import helmeval as ev
from .helmeval import action_kind, literal_value

#: Placeholder for an action whose output depends on values: ``__helm_<n>__``.
PLACEHOLDER = "__helm_{}__"
PLACEHOLDER_RE = re.compile(r"__helm_(\d+)__")

#: Objects only Helm defines (Helm docs, "Built-in Objects"); Prometheus' template data has none.
_HELM_OBJECTS = frozenset({".Values", ".Release", ".Chart", ".Capabilities", ".Files", ".Template", ".Subcharts"})
#: Functions only Helm (and its Sprig library) defines, among those charts use around rules.
#: Go's builtins (``print``, ``printf``...) and Prometheus' functions are not here.
_HELM_FUNCS = frozenset({
    "include", "tpl", "required", "lookup", "toYaml", "toYamlPretty", "fromYaml", "fromYamlArray", "toJson",
    "fromJson", "toToml", "nindent", "indent", "quote", "squote", "default", "trunc", "trimSuffix",
    "trimPrefix", "trim", "replace", "lower", "upper", "dict", "list", "get", "hasKey", "merge", "ternary",
    "empty", "coalesce", "semverCompare", "b64enc", "b64dec", "sha256sum", "contains", "hasPrefix", "toString",
})
_CHAINED = re.compile(r"[\w$.]")


def _helm_only(body: str) -> bool:
    """True when the action ``body`` uses a Helm object (``.Values``...) or function
    (``include``...): a name or field that starts an operand (not one chained to a word,
    ``$`` or ``.`` before it; string literals aside)."""
    if body.lstrip().startswith("/*"):
        return False
    try:
        toks, _ = lex_action(body + " }}", 0, strict=False)
    except TemplateSyntaxError:
        return False
    for t in toks:
        if t.pos and _CHAINED.match(body, t.pos - 1):
            continue
        if (t.typ == "field" and t.val in _HELM_OBJECTS) or \
                (t.typ in ("ident", "keyword", "bool", "nil") and t.val in _HELM_FUNCS):
            return True
    return False


def looks_like_helm(text: str) -> bool:
    """True when ``text`` is a Helm template by its content:

    * an action stands where YAML expects structure, not inside a string (``name: {{ include
      "x" . }}`` scans as a flow mapping ``{{``), or the text is YAML only after its actions
      are read (a line ``{{- if .Values.on }}``);
    * an action inside a string value uses a Helm-only object or function (``.Values``,
      ``.Release``, ``include``, ``toYaml``...). String values are read as YAML unescapes them,
      the text Prometheus would get; YAML comments do not count.

    Go-template text that Prometheus reads the same way does not count: Prometheus templates
    (``{{ $labels.x }}``), escapes (``{{`{{`}}``, ``{{ "{{" }}``, ``print``/``printf`` of
    strings) and template comments inside a string value are Prometheus' own syntax in a plain
    rule file or a PrometheusRule, which Prometheus evaluates itself; they must be imported
    byte for byte, not read as Helm would print them."""
    if "{{" not in text:
        return False
    import yaml
    try:
        tokens = list(yaml.scan(text, Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        # not YAML as it stands: a Helm template when reading its actions makes it YAML
        try:
            list(yaml.scan(read_template(text).text, Loader=yaml.SafeLoader))
        except yaml.YAMLError:
            return False
        return True
    for tok in tokens:
        if isinstance(tok, yaml.FlowMappingStartToken) and text.startswith("{{", tok.start_mark.index):
            return True
        if isinstance(tok, yaml.ScalarToken) and "{{" in tok.value and any(
                kind == "action" and _helm_only(a.body) for kind, a in split(tok.value)):
            return True
    return False


@dataclass
class HelmNote:
    """Something the reader could not take over as is. ``level`` is ``error`` (text lost) or
    ``warning`` (read with an assumption)."""

    line: int
    level: str
    message: str


@dataclass
class HelmText:
    """Result of :func:`read_template`.

    Attributes:
        text: the YAML text, same number of lines as the template.
        placeholders: placeholder index -> (line, action text) for value actions left in lines.
        notes: what was skipped or assumed.
        assumed_true: lines of ``if``/``with`` actions whose condition was assumed true.
        empty_blocks: lines of ``if``/``with``/``range`` blocks that render nothing with the
            chart's default values (skipped; not an error).
        dropped: 1-based lines that held only actions and were emptied (Helm prints no line
            there; inside a block scalar the reader removes the empty line again, see
            :func:`rulegen.importer.sources.read_source`).
    """

    text: str
    placeholders: dict = field(default_factory=dict)
    notes: list = field(default_factory=list)
    assumed_true: list = field(default_factory=list)
    empty_blocks: list = field(default_factory=list)
    dropped: set = field(default_factory=set)


# long: one line-by-line reader whose nested closures share the block stack, dot and line state
def read_template(text: str, ctx=None) -> HelmText:
    """Read a Helm template as the YAML it prints (see the module docstring).

    ``ctx``: a :class:`rulegen.importer.helmeval.Context` (the chart's values, helpers,
    release) to evaluate actions with; then an action whose output is known with the default
    values prints it (``dig`` defaults, ``.Values`` defaults, variables, helpers), ``if`` and
    ``with`` follow their condition, and a block that renders nothing with the default values
    is skipped and listed in :attr:`HelmText.empty_blocks` (not an error). Without ``ctx``,
    only literals are known and conditions are assumed true.

    Returns a :class:`HelmText` whose ``text`` has exactly as many lines as ``text``.
    """
    nlines = text.count("\n") + 1
    out = [""] * nlines
    has_action = [False] * nlines
    keeps = [False] * nlines       # a line with text or printed literals: never dropped
    values_on = [[] for _ in range(nlines)]
    res = HelmText(text="")
    stack: list[list] = []         # [keyword, skipping_body, condition (True/False/None unknown), saved dot]
    line = 0                       # 0-based current line
    lstrip_next = False
    dot = ctx.root() if ctx is not None else None

    def skipping() -> bool:
        return any(s[1] for s in stack)

    def cond_of(expr: str):
        if ctx is None:
            return None, None
        v = ev.evaluate(expr, ctx, dot)
        t = ev.truthy(v)
        return (None, None) if t is ev.UNKNOWN else (t, v)

    def value_text(body: str, after_text: bool):
        """What a value action prints, when known and on one line; None otherwise. A known
        mapping or list printed over several lines (``{{- include "x.labels" . | nindent 4 }}``
        after ``labels:``) is written in flow style on the key's line (``after_text``)."""
        if ctx is None:
            return None
        v = ev.evaluate(body, ctx, dot)
        if not ev.known(v) or isinstance(v, (dict, list)):
            return None
        t = ev._text(v)
        if t.strip() == "":
            return ""
        if "\n" in t:
            import yaml
            try:
                parsed = yaml.safe_load(t)
            except yaml.YAMLError:
                return None
            if isinstance(parsed, (dict, list)) and after_text:
                import json
                return " " + json.dumps(parsed, ensure_ascii=False)   # flow style, on the key's line
            return None
        return t

    for kind, piece in split(text):
        if kind == "text":
            segs = piece.split("\n")
            for si, seg in enumerate(segs):
                if si:
                    line += 1
                    lstrip_next = False
                if lstrip_next:
                    seg = seg.lstrip(" \t")
                    lstrip_next = False
                if skipping():
                    continue
                out[line] += seg
                if seg.strip():
                    keeps[line] = True
            continue
        a: Action = piece
        first = line
        span = a.raw.count("\n")
        for k in range(first, first + span + 1):
            has_action[k] = True
        if a.trim_left:
            out[line] = out[line].rstrip(" \t")
        k = action_kind(a)
        if k in ("if", "with", "range", "define", "block"):
            skip_body = k in ("range", "define", "block")
            cond, cval = (None, None)
            if not skipping() and k in ("if", "with"):
                cond, cval = cond_of(a.body[len(k):])
                if cond is None:
                    res.assumed_true.append(a.line)
                elif not cond:
                    skip_body = True
                    res.empty_blocks.append(a.line)
            if k == "range" and not skipping():
                coll = ev.evaluate(re.sub(r"^range\s+(\$\w+\s*(,\s*\$\w+\s*)?:=\s*)?", "", a.body), ctx, dot) \
                    if ctx is not None else ev.UNKNOWN
                if ev.known(coll) and not ev.truthy(coll):
                    res.empty_blocks.append(a.line)
                    cond = False
                else:
                    res.notes.append(HelmNote(a.line, "error", f"`{a.raw.strip()}` repeats its body once per "
                                              "item of a value known only at install time; its body "
                                              "is not imported"))
            stack.append([k, skip_body, cond, dot])
            if k == "with" and cond:
                dot = cval
        elif k == "else":
            if stack:
                f = stack[-1]
                dot = f[3]
                outer_skip = any(s[1] for s in stack[:-1])
                rest = a.body[4:].strip()
                if f[0] in ("if", "with") and not f[1] and not outer_skip and f[2] is None:
                    res.notes.append(HelmNote(a.line, "warning", f"`{a.raw.strip()}`: the import assumes "
                                              "the `if` above is true, so this branch is not imported"))
                    f[1] = True
                elif f[0] in ("if", "with") and f[2] is False and not outer_skip:
                    # the branch above renders nothing with the default values: this one does
                    if rest.startswith("if"):
                        c, _ = cond_of(rest[2:])
                        f[2] = c
                        f[1] = c is False
                        if c is None:
                            res.assumed_true.append(a.line)
                    else:
                        f[1], f[2] = False, True
                else:
                    f[1] = True
        elif k == "end":
            if stack:
                dot = stack.pop()[3]
        elif k == "assign" and not skipping():
            if ctx is not None:
                m = re.match(r"\$(\w*)\s*:?=\s*(.*)", a.body, re.S)
                if m:
                    ctx.variables[m.group(1)] = ev.evaluate(m.group(2), ctx, dot)
        elif k == "literal" and not skipping():
            out[line] += literal_value(a.body)
            keeps[line] = True
        elif k == "prometheus" and not skipping():
            out[line] += a.raw
            keeps[line] = True
            res.notes.append(HelmNote(a.line, "warning", f"`{a.raw}` is a Prometheus template written "
                                      "without Helm escaping: `helm template` fails on it (undefined "
                                      "variable); imported as the Prometheus template it was meant to be"))
        elif k in ("value", "template") and not skipping():
            known_text = value_text(a.body, bool(out[line].strip()))
            if known_text is not None:
                out[line] += known_text
                if known_text:
                    keeps[line] = True
            elif out[line].rstrip().endswith(":") and re.search(r"\b(nindent|indent|toYaml)\b", a.body):
                # `labels: {{- include "x.labels" . | nindent 4 }}`: a block printed under the
                # key, which Helm accepts; unknown here, so the key is left empty, with a note
                res.notes.append(HelmNote(a.line, "error", f"`{a.raw.strip()}` prints a block that Helm "
                                          "computes at install time (from values or helpers); it cannot be "
                                          "read statically and is not imported"))
            else:
                idx = len(res.placeholders)
                res.placeholders[idx] = (a.line, a.raw.strip())
                out[line] += PLACEHOLDER.format(idx)
                values_on[line].append(idx)
        line += span
        if a.trim_right:
            lstrip_next = True
    for i in range(nlines):
        if has_action[i] and not keeps[i]:
            for idx in values_on[i]:
                ln, raw = res.placeholders.pop(idx)
                res.notes.append(HelmNote(ln, "error", f"`{raw}` prints text that Helm computes at install "
                                          "time (from values or helpers); it cannot be read "
                                          "statically and is not imported"))
            out[i] = ""
            res.dropped.add(i + 1)
    res.text = "\n".join(out)
    return res
