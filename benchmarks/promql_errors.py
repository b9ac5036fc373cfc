"""Benchmark: where ``rulegen validate`` places PromQL parse errors, against promtool 3.x.

For each broken expression of :data:`CASES`, promtool's position (``line:col`` inside the
expression, from ``promtool check rules``) is compared with rulegen's, twice:

* **parser only**: what rulegen finds from promql-parser's message alone
  (:func:`rulegen.validate.checks.promql.locate_error`; no position means the expression's
  start, as when promtool is not installed);
* **as shipped**: the parser's position when it has one, else promtool's (what ``rulegen
  validate`` reports when promtool is installed).

A position is "same" when it is promtool's offset; "at the bracket" when rulegen points at
the bracket at fault (the unclosed ``(``/``{``, or the extra ``)``) where promtool points at the
end of the input; anything else is "other". The figure printed last is the agreement:
(same + at the bracket) / cases.

Run: ``python benchmarks/promql_errors.py`` (needs the pinned promtool: scripts/install-tools.sh).
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: Broken expressions: typos people make (``=`` for ``==``, brackets, grouping without
#: parentheses), wrong types, wrong arities, bad matchers, durations, modifiers.
CASES = [
    'redis_up{job="x"} = 0',
    "sum(rate(x[5m])",
    "rate(x[5m]))",
    'x{job="a"',
    'x{job=~"a(" }',
    "up == ",
    "up >> 1",
    "sum by job (x)",
    "rate(x[5m)",
    "foo bar",
    'up{job="a",,}',
    "1 +",
    "x[5m] > 1",
    "rate(x) ",
    "sum(x) by (",
    "topk(x)",
    "x{a=b}",
    'absent(up{job="a"}',
    "histogram_quantile(0.9 rate(x[5m]))",
    "up and",
    '"unterminated',
    "x @ foo",
    "x offset",
    "max_over_time(x > 0[5m])",
    'up{job!"a"}',
    'label_replace(up, "a")',
    "sum without(a) (x",
    "foo{}{}",
    "1 == bool",
    "x / on job y",
    "count_values(x)",
    'up{__name__="x"}',
    "nonexistent_function(x)",
    "x[5m:1m:1m]",
    "(((up))",
    "sum(up) by (job) by (instance)",
    'up{job="a"} unless',
    "rate(x[5m]) > > 1",
    "up{job='a'} == on(job) 1",
    "sum(rate(x[5m]) by (job)",
]


def measure(promtool_root: Path = REPO) -> list[dict]:
    """One row per case: the expression, promtool's (offset, message), rulegen's offsets
    parser-only and as shipped, and their categories."""
    sys.path.insert(0, str(REPO))
    from rulegen.validate.checks.promql import locate_error, parse, promtool_errors

    told = promtool_errors(tuple(CASES), promtool_root)
    rows = []
    for e in CASES:
        _, err = parse(e)
        mine = locate_error(e, err) if err else None
        theirs = told.get(e)
        row = {"expr": e, "promtool": theirs, "rulegen_error": err, "parser_only": mine}
        row["shipped"] = mine if mine is not None else (theirs[0] if theirs else None)
        for key in ("parser_only", "shipped"):
            row[key + "_kind"] = _kind(e, row[key], theirs)
        rows.append(row)
    return rows


def _kind(expr: str, mine: int | None, theirs) -> str:
    if theirs is None:
        return "promtool accepts"
    at = mine if mine is not None else 0
    if at == theirs[0]:
        return "same"
    if expr[at:at + 1] in "({)" and theirs[0] >= len(expr.rstrip()) - 1:
        return "at the bracket"
    return "other"


def main() -> int:
    from rulegen.tools import find

    if find.find("promtool", REPO) is None:
        print("promtool is not installed; run scripts/install-tools.sh", file=sys.stderr)
        return 2
    rows = measure()
    width = max(len(r["expr"]) for r in rows)
    for r in rows:
        t = r["promtool"]
        print(f"{r['expr']:<{width}}  promtool {('1:' + str(t[0] + 1)) if t else '-':>6}  "
              f"parser-only {r['parser_only_kind']:<15} shipped {r['shipped_kind']:<15} "
              f"{t[1][:60] if t else ''}")
    broken = [r for r in rows if r["promtool"] is not None]
    for key in ("parser_only", "shipped"):
        ok = sum(1 for r in broken if r[key + "_kind"] in ("same", "at the bracket"))
        same = sum(1 for r in broken if r[key + "_kind"] == "same")
        print(f"{key.replace('_', ' ')}: {ok}/{len(broken)} agree with promtool "
              f"({100 * ok / len(broken):.0f}%; {same} at promtool's very position, {ok - same} at the "
              "bracket at fault)")
    print(f"rulegen rejects {sum(1 for r in broken if r['rulegen_error'])}/{len(broken)} of what promtool rejects")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
