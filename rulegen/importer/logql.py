"""Loki rule files among the sources of an import: recognised and left out.

Loki's ruler reads rule files of the same shape as Prometheus' (``groups:``, ``alert``,
``expr``...; also shipped as PrometheusRule-like manifests in charts), but their ``expr`` is
LogQL. rulegen makes Prometheus rules, so such a file is not imported: instead of an RG806
error for each LogQL ``expr`` (which would stop the whole import), the file gets one
``RG817`` warning and the other sources are imported.

A rule set (a rule file, or one PrometheusRule of a file) is Loki's when one of its ``expr``
is LogQL: it does not parse as PromQL and has what only LogQL has, outside its strings:

* a pipe, ``|`` (a line filter ``|=``, ``|~``, ``|>``; a parser stage ``| json``,
  ``| logfmt``...; PromQL has no ``|`` operator);
* a line filter ``!=``/``!~``/``!>`` with a string right after a stream selector
  (``{app="x"} != "debug"``);
* a function only LogQL has (``bytes_over_time``, ``bytes_rate``, ``rate_counter``,
  ``approx_topk``).

An expression that is PromQL and LogQL alike (``sum(rate({app="x"}[5m]))``) decides nothing
alone; with a LogQL one beside it in its rule set, it is left out with it.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from ..findings import Finding, Severity
from ..promql.syntax import parse
from .helmtext import PLACEHOLDER_RE
from .sources import RuleSet

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_LOGQL = re.compile(r'\||}\s*!(?:=|~|>)\s*""'
                    r'|\b(?:bytes_over_time|bytes_rate|rate_counter|approx_topk)\s*\(')


def is_logql(expr: str) -> bool:
    """True when ``expr`` is LogQL, not PromQL (see the module docstring)."""
    bare = _STRINGS.sub('""', PLACEHOLDER_RE.sub("0", expr))
    return _LOGQL.search(bare) is not None and parse(expr)[1] is not None


def _exprs(rs: RuleSet) -> Iterator[tuple[int, str]]:
    """``(1-based line, expr)`` of each rule of ``rs`` with a string ``expr``."""
    for g in rs.groups if isinstance(rs.groups, list) else ():
        rules = g.get("rules") if isinstance(g, dict) else None
        for r in rules if isinstance(rules, list) else ():
            if isinstance(r, dict) and isinstance(r.get("expr"), str):
                try:
                    line = r.lc.value("expr")[0] + 1
                except (AttributeError, KeyError, TypeError):
                    line = rs.line
                yield line, r["expr"]


def without_loki(sets: list[RuleSet], notes_out: list[Finding]) -> list[RuleSet]:
    """``sets`` without the rule sets of Loki (see the module docstring); one ``RG817``
    warning per source file left out of, into ``notes_out``, at its first LogQL ``expr``."""
    kept: list[RuleSet] = []
    dropped: dict[str, list] = {}    # source -> [first (line, expr), rules left out]
    for rs in sets:
        exprs = list(_exprs(rs))
        first = next(((ln, e) for ln, e in exprs if is_logql(e)), None)
        if first is None:
            kept.append(rs)
            continue
        d = dropped.setdefault(rs.source, [first, 0])
        d[1] += len(exprs)
    partly = {rs.source for rs in kept}
    for source, ((line, expr), n) in dropped.items():
        shown = " ".join(expr.split())
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        what = f"its Loki rule set's {n} rule(s) are" if source in partly else f"the {n} rule(s) of this file are"
        notes_out.append(Finding(source, max(line, 1), 1, "RG817", Severity.WARNING,
                                 f"Loki rules, not Prometheus rules: `{shown}` is LogQL; {what} left out (Loki's "
                                 "ruler loads them; rulegen makes Prometheus rules), the other sources imported"))
    return kept
