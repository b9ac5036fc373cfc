"""Durations beyond their syntax (the schema checks the syntax, RG302).

Codes:

* ``RG309`` a duration Prometheus rejects as out of range: Go's ``time.Duration`` holds at most
  2^63-1 nanoseconds (about 292 years), so ``for: 300y``, ``interval: 300y``,
  ``rate(x[300y])`` or ``x offset 300y`` load in no Prometheus. Applies to ``for``,
  ``keep_firing_for``, group ``interval``/``query_offset``, test ``interval``/``eval_time``,
  and to ranges, subquery steps and offsets inside ``expr``.
  Bad: ``for: 300y``; good: ``for: 10m``.
"""

from __future__ import annotations

import datetime

from ...findings import Finding, Severity
from ...spec.durations import MAX_MS, DurationError, parse_ms
from ...promql.syntax import nodes, parse
from .promql import expr_position

ID = "durations"

_MAX = datetime.timedelta(milliseconds=MAX_MS)


def _too_long(text) -> str | None:
    try:
        parse_ms(text)
    except DurationError as e:
        return f"{e}; use a shorter duration" if "out of range" in str(e) else None
    return None


def check_spec(spec, ctx):
    lf = spec.source
    for gi, g in enumerate(spec.groups):
        for key in ("interval", "query_offset"):
            v = getattr(g, key)
            if v and (msg := _too_long(v)):
                yield lf.finding(g.path + (key,), "RG309", f"`{key}`: {msg}", rule=g.name)
    for _, r in spec.rules():
        for key, v in (("for", r.for_), ("keep_firing_for", r.keep_firing_for)):
            if v and (msg := _too_long(v)):
                yield lf.finding(r.path + (key,), "RG309", f"`{key}`: {msg}", rule=r.name)
        for t in r.tests:
            if "interval" in t.data and (msg := _too_long(t.data["interval"])):
                yield lf.finding(t.path + ("interval",), "RG309", f"`interval`: {msg}", rule=r.name)
            for kind in ("alert_rule_test", "promql_expr_test"):
                for i, a in enumerate(t.data.get(kind) or []):
                    if (msg := _too_long(a.get("eval_time", ""))):
                        yield lf.finding(t.path + (kind, i, "eval_time"), "RG309", f"`eval_time`: {msg}",
                                         rule=r.name)
        ast, _ = parse(r.expr)
        if ast is None:
            continue
        bad = []
        for node in nodes(ast):
            for attr in ("range", "step", "offset"):
                v = getattr(node, attr, None)
                if isinstance(v, datetime.timedelta) and abs(v) > _MAX:
                    bad.append(attr)
        if bad:
            line, col = expr_position(lf, r.path + ("expr",))
            what = {"range": "a range", "step": "a subquery step", "offset": "an offset"}[bad[0]]
            yield Finding(lf.path, line, col, "RG309", Severity.ERROR,
                          f"expr has {what} longer than Prometheus' longest duration (about 292 years); "
                          "shorten it",
                          r.name)
