"""PromQL expressions (parsed with promql-parser, the Rust port of Prometheus' parser).

Codes:

* ``RG301`` ``expr`` does not parse, with the parser's message. Reported at the character at
  fault when it can be found (the unclosed ``(`` or ``{``, an extra ``)``, an unexpected
  character inside braces, a lone ``=`` as in ``redis_up{job="x"} = 0``, the end after a
  dangling operator); else at the position and with the message of the installed promtool
  (``promtool check rules``, asked once per spec); else at the expression's start.
  Bad: ``sum(rate(x[5m])``; good: ``sum(rate(x[5m]))``.
* ``RG303`` a range selector on something that is not a series selector, reported at its
  ``[``. Bad: ``max_over_time(x > 0[5m])``; good: ``max_over_time((x > 0)[5m:1m])`` (a subquery).
* ``RG310`` an experimental function or aggregation (``limitk``, ``sort_by_label``,
  ``double_exponential_smoothing``, ``ts_of_max_over_time``, ...): Prometheus 3 rejects it
  unless started with ``--enable-feature=promql-experimental-functions``. Where the feature
  is on, downgrade the code to a warning in ``.rulegen.yaml``. The ``{n}`` repeat count of a
  regex matcher over 1000, which Go's regexp rejects, is an ``RG301``.
  Bad: ``limitk(3, x)`` without the feature; good: ``topk(3, x)``.
* ``RG304`` (warning) an alert that can never resolve: its ``expr`` has no filtering
  comparison (``x > 0``), or only ``bool`` comparisons, so every evaluation returns series and
  the alert always fires. ``absent()``, set operators (``and``, ``unless``) and a bare series
  selector (an alert on a series' presence, which resolves when the series goes) count as
  filters; ``rate(x[5m])`` or ``x > bool 0`` do not.
  A deliberate always-firing alert (a dead man's switch such as ``vector(1)``) can switch the
  code off in ``.rulegen.yaml``.
  Bad: ``expr: rate(errors_total[5m])``; good: ``expr: rate(errors_total[5m]) > 0.1``.
* ``RG316`` ``expr`` is too large for rulegen to check: its operators (binary, set and unary),
  its ranges ``[...]`` and its deepest bracket nesting add up to more than 128
  (:data:`rulegen.promql.syntax.MAX_DEPTH`), the deepest syntax tree rulegen parses; it is not
  parsed, and no other check reads it (``rulegen import`` skips such a rule with this code).
  Prometheus has no such limit, but rulegen's parser (promql-parser, which crashes past some
  4,000 levels) and its checks work through an expression level by level; the largest rule of
  the corpora measures 19. Reported at the expr. Bad: a sum of 200 terms; good: recording rules
  that each record a part, and an alert on their recorded series.
"""

from __future__ import annotations

import functools
import re


from ...findings import Severity
from ...promql.syntax import nodes, parse, too_large
from ...spec.model import PARAM_RE
from ...tools import find

ID = "promql"

_COMPARISONS = {"==", "!=", ">", "<", ">=", "<="}
_FILTER_FUNCS = {"absent", "absent_over_time"}


_CLOSERS = {"parenthesis": ")", "brace": "}", "bracket": "]"}


def _parse_fix(err: str) -> str:
    """What to do about a PromQL parse error: the missing closer of an unclosed ``(``, ``{`` or
    ``[``, else correct the expression where the finding points."""
    m = re.search(r"unclosed left (parenthesis|brace|bracket)", err)
    if m:
        return f"add the missing `{_CLOSERS[m.group(1)]}`"
    return "correct the expression where this points (promtool check rules reads it the same way)"


def expr_position(lf, path) -> tuple[int, int]:
    """(line, col) of the first character of the expression text at ``path`` (skips a ``|``
    or ``>`` block-scalar header onto the next line)."""
    line, col = lf.pos(path)
    lines = lf.lines()
    if 0 < line <= len(lines):
        rest = lines[line - 1][col - 1:].lstrip()
        if rest[:1] in ("|", ">"):
            for n in range(line, len(lines)):
                stripped = lines[n].lstrip()
                if stripped:
                    return n + 1, len(lines[n]) - len(stripped) + 1
    return line, col


def check_spec(spec, ctx):
    lf = spec.source
    unplaced = [r.expr for _, r in spec.rules() if parse(r.expr)[1] is not None and len(r.expr) <= MAX_ASK
                and not PARAM_RE.search(r.expr)
                and too_large(r.expr) is None and locate_error(r.expr, parse(r.expr)[1]) is None]
    told = promtool_errors(tuple(unplaced), ctx.root) if unplaced else {}
    for _, rule in spec.rules():
        path = rule.path + ("expr",)
        ast, err = parse(rule.expr)
        if err is None and not _flagged(ast, rule.is_alert):
            continue  # the common case: no finding, so no position to work out
        line, col = expr_position(lf, path)
        if err is not None and too_large(rule.expr) is not None:
            yield _f(lf, line, col, "RG316", rule, err)
            continue
        if err is not None and PARAM_RE.search(rule.expr):
            continue  # a [[name]] no parameter fills: RG731 reports it, at the placeholder
        if err is not None:
            at = locate_error(rule.expr, err)
            if at is None and rule.expr in told:
                at, err = told[rule.expr]
            else:
                err = _clearer(rule.expr, err, at)
            if at is not None:
                line, col = _offset_position(lf, path, at, (line, col))
            if "ranges only allowed for vector selectors" in err:
                yield _f(lf, line, col, "RG303", rule,
                         f"{err}: a range [5m] applies only to a series selector; to take a range of "
                         "an expression use a subquery such as (x > 0)[5m:1m]")
            else:
                yield _f(lf, line, col, "RG301", rule, f"expr does not parse as PromQL: {err}; {_parse_fix(err)}")
            continue
        for name in experimental(ast):
            yield _f(lf, line, col, "RG310", rule,
                     f"`{name}` is an experimental PromQL function: Prometheus and promtool reject it "
                     "unless started with --enable-feature=promql-experimental-functions; if yours "
                     "is, downgrade RG310 to a warning in .rulegen.yaml")
        for value in _bad_regexes(ast):
            yield _f(lf, line, col, "RG301", rule,
                     f"regular expression {value!r} repeats more than 1000 times ({{n}} > 1000), "
                     "which Go's regexp engine, and so Prometheus, rejects; use a smaller count, "
                     "or `+`")
        if rule.is_alert and not _filters(ast):
            yield _f(lf, line, col, "RG304", rule,
                     "alert expr has no filtering comparison (or only `bool` ones), so it returns "
                     "series on every evaluation and can never resolve; compare with a threshold "
                     "(e.g. `> 0`)", Severity.WARNING)


def _flagged(ast, is_alert: bool) -> bool:
    """True when :func:`check_spec` has a finding for this parsed expression."""
    return bool(experimental(ast) or _bad_regexes(ast) or (is_alert and not _filters(ast)))


#: Aggregations Prometheus 3 gates behind promql-experimental-functions (not marked by the parser).
_EXPERIMENTAL_AGGREGATIONS = {"limitk", "limit_ratio"}
_REPEAT = re.compile(r"(?<!\\)\{(\d+)(?:,(\d*))?\}")


def experimental(ast) -> list[str]:
    """Names of experimental functions and aggregations used in ``ast``, sorted, unique."""
    found: set[str] = set()
    for node in nodes(ast):
        cls = type(node).__name__
        if cls == "Call" and getattr(node.func, "experimental", False):
            found.add(node.func.name)
        elif cls == "AggregateExpr" and str(node.op) in _EXPERIMENTAL_AGGREGATIONS:
            found.add(str(node.op))
    return sorted(found)


def _bad_regexes(ast) -> list[str]:
    """Regex matcher values with a repeat count over 1000 (RE2's limit, so Go's too)."""
    bad: list[str] = []
    for node in nodes(ast):
        if type(node).__name__ == "VectorSelector":
            for m in node.matchers.matchers:
                if str(m.op).endswith(("Re", "NotRe")) and any(
                        int(x) > 1000 for g in _REPEAT.findall(m.value) for x in g if x):
                    bad.append(m.value)
    return bad


def _offset_position(lf, path, offset, fallback):
    from .positions import offset_position
    got = offset_position(lf, path, offset)
    return got if got != lf.pos(path) or offset == 0 else fallback


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"?|\'(?:[^\'\\]|\\.)*\'?|`[^`]*`?')


def _mask_strings(expr: str) -> str:
    """``expr`` with the content of string literals replaced by spaces (same length)."""
    return _STRING.sub(lambda m: " " * len(m.group()), expr)


#: Longest expression whose parse error rulegen asks promtool about (longer ones keep the
#: expression's start as their position; one too large to check is RG316, never asked about).
MAX_ASK = 20_000
_PROMTOOL_ERR = re.compile(r'rule (\d+), "r\d+": could not parse expression: (\d+):(\d+): parse error: (.*)$')


@functools.lru_cache(maxsize=256)
def promtool_errors(exprs: tuple, root=None) -> dict:
    """Ask the real promtool (when installed: :func:`rulegen.tools.find.find`) where and why
    each of ``exprs`` fails to parse: ``{expr: (offset in expr, promtool's message)}``.
    Expressions promtool accepts, or all of them when promtool is missing or fails to run,
    are left out, and so are all when no promtool may be taken (the paths check reports a
    project that carries tools, RG761; a command that needs promtool stops on RG762). One ``promtool check rules`` run for all of them (a
    recording rule each)."""
    import json
    import tempfile
    from pathlib import Path

    from ...tools import process

    try:
        exe = find.find("promtool", Path(root) if root is not None else None)
    except find.UntrustedTool:
        return {}
    if exe is None or not exprs:
        return {}
    rules = [{"record": f"r{i}", "expr": e} for i, e in enumerate(exprs)]
    with tempfile.TemporaryDirectory(prefix="rulegen-promql-") as tmp:
        f = Path(tmp) / "rules.yaml"
        f.write_text(json.dumps({"groups": [{"name": "g", "rules": rules}]}), encoding="utf-8")
        try:
            proc = process.run([exe, "check", "rules", f], timeout=60)
        except (OSError, process.TimeoutExpired):
            return {}
    out = {}
    for text in (proc.stdout + proc.stderr).splitlines():
        m = _PROMTOOL_ERR.search(text)
        if not m:
            continue
        i, line, col, msg = int(m.group(1)) - 1, int(m.group(2)), int(m.group(3)), m.group(4)
        if 0 <= i < len(exprs):
            out[exprs[i]] = (_byte_position_to_offset(exprs[i], line, col), msg.strip())
    return out


def _byte_position_to_offset(expr: str, line: int, col: int) -> int:
    """Offset in ``expr`` of Prometheus' ``line:col`` (1-based; col counted in UTF-8 bytes)."""
    start = 0
    for _ in range(line - 1):
        nl = expr.find("\n", start)
        if nl < 0:
            break
        start = nl + 1
    raw = expr[start:].encode("utf-8")[:max(col - 1, 0)]
    return min(start + len(raw.decode("utf-8", "ignore")), len(expr))


_TRAILING_OP = re.compile(r"(?:==|!=|>=|<=|[-+*/%^<>]|\b(?:and|or|unless|atan2|bool))\s*$")


def _clearer(expr: str, message: str, at: int | None) -> str:
    """The parser's ``message``, or a clearer one where rulegen placed the error itself."""
    if message == "invalid promql query" and at is not None:
        if expr[at:at + 1] == "=":
            return 'unexpected "="; compare with "=="'
        if at >= len(expr.rstrip()):
            return "unexpected end of input: an operator needs a right-hand side"
    return message


def locate_error(expr: str, message: str) -> int | None:
    """Offset in ``expr`` of the character a promql-parser error is about, or None.

    The parser's messages carry no position; these are found from the text: the unclosed
    ``(`` for "unclosed left parenthesis", the unclosed ``{`` for "unexpected end of input
    inside braces", the character named by "unexpected character inside braces: 'X'" (or
    brackets), the ``[`` after a non-selector for "ranges only allowed for vector selectors",
    the extra ``)`` for "unexpected right parenthesis", the ``!`` of a bad ``!`` matcher, the
    label of a matcher with an illegal regex or an unquoted value, and for the bare "invalid
    promql query" a lone ``=`` or the end after a dangling operator (where promtool places
    them). String literals and comments are skipped."""
    text = _mask_strings(re.sub(r"#[^\n]*", lambda m: " " * len(m.group()), expr))
    if "unclosed left parenthesis" in message:
        return _unclosed(text, "(", ")")
    if "end of input inside braces" in message:
        return _unclosed(text, "{", "}")
    m = re.search(r"unexpected character inside braces: '(.)'", message)
    if m:
        return _inside(text, "{", m.group(1))
    m = re.match(r"illegal regex for (.*)$", message, re.S)
    if m:
        hit = re.search(r"([a-zA-Z_]\w*)\s*[=!]~\s*([\"'`])" + re.escape(m.group(1)) + r"\2", expr)
        return hit.start() if hit else None
    if message == "invalid promql query":
        # the parser says nothing more: a lone `=` (for `==`) or a dangling operator
        m = re.search(r"(?<![=!<>~])=(?![=~])", _outside_braces(text))
        if m:
            return m.start()
        if _TRAILING_OP.search(text):
            return len(expr)
        return None
    if "unexpected right parenthesis" in message:
        depth = 0
        for i, c in enumerate(text):
            depth += {"(": 1, ")": -1}.get(c, 0)
            if depth < 0:
                return i
        return None
    m = re.search(r"unexpected character inside brackets: '(.)'", message)
    if m:
        return _inside(text, "[", m.group(1))
    if "unexpected character after '!' inside braces" in message:
        return _inside(text, "{", "!")
    m = re.search(r"unexpected identifier '([^']+)' in label matching", message)
    if m:
        for b in re.finditer(r"\{[^}]*", text):
            hit = re.search(rf"(?<![\w\"]){re.escape(m.group(1))}\b", b.group()[1:])
            if hit:
                return b.start() + 1 + hit.start()
        return None
    if "ranges only allowed for vector selectors" in message:
        for b in re.finditer(r"\[", text):
            before = text[:b.start()].rstrip()
            if before.endswith(")") or re.search(r"(?:^|[^\w.:])[0-9][0-9.eE+-]*$", before):
                return b.start()
        return None
    return None


def _inside(text: str, opener: str, char: str) -> int | None:
    """Offset of the first ``char`` inside a ``{...}`` (``opener`` ``{``) or ``[...]`` of
    ``text``, or None."""
    closer = {"{": "}", "[": "]"}[opener]
    for b in re.finditer(re.escape(opener) + f"[^{re.escape(closer)}]*", text):
        i = b.group().find(char)
        if i >= 0:
            return b.start() + i
    return None


def _outside_braces(text: str) -> str:
    """``text`` with the inside of ``{...}`` blanked (same length)."""
    return re.sub(r"\{[^}]*\}?", lambda m: " " * len(m.group()), text)


def _unclosed(text: str, opener: str, closer: str) -> int | None:
    stack = []
    for i, c in enumerate(text):
        if c == opener:
            stack.append(i)
        elif c == closer and stack:
            stack.pop()
    return stack[-1] if stack else None


def _f(lf, line, col, code, rule, msg, sev=Severity.ERROR):
    from ...findings import Finding
    return Finding(lf.path, line, col, code, sev, msg, rule.name)


def _filters(node) -> bool:
    """True when ``node`` can return an empty result (so an alert on it can resolve)."""
    cls = type(node).__name__
    if cls == "BinaryExpr":
        op = str(node.op)
        if op in _COMPARISONS:
            mod = node.modifier
            if mod is not None and getattr(mod, "return_bool", False):
                return _filters(node.lhs) or _filters(node.rhs)
            return True
        if op in ("and", "unless"):
            return True
        if op == "or":
            return _filters(node.lhs) and _filters(node.rhs)
        return _filters(node.lhs) or _filters(node.rhs)
    if cls in ("ParenExpr", "UnaryExpr", "SubqueryExpr", "AggregateExpr"):
        return _filters(node.expr)
    if cls == "MatrixSelector":
        return False
    if cls == "Call":
        if node.func.name in _FILTER_FUNCS:
            return True
        return any(_filters(a) for a in node.args if a is not None)
    if cls == "VectorSelector":
        # an alert on a series' presence (`ALERTS{...}`, `x{name=~".*ccnew.*"}`) resolves when
        # the series goes away; what cannot resolve is a computation over it (rate, bool, ...)
        return True
    return False
