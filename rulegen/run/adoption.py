"""The adoption report: which alerts' tests are weakest, in a few lines, with the way to fill
the gaps (issue 26 item 6). Two measures:

* **declared** (:func:`declared_report`, ``rulegen import ... --report``; cheap, no promtool
  run): per alert, which of the cases :func:`rulegen.run.testing.coverage` asks for its tests
  state (a firing case, a non-firing case, both sides of the ``for`` boundary), read from the
  tests as written, as if they pass. Weakest: the most cases missing.
* **mutation** (:func:`mutation_report`, ``rulegen test --by-alert``; runs promtool
  on every mutant, :mod:`rulegen.run.mutation`): the share of an alert's mutants its tests
  kill. Weakest: the lowest score.

Both end with the alerts that have no test at all, for which ``rulegen derive-tests`` writes
tests derived from ``expr`` and ``for``. Lines are plain text (names come from specs: shown as
they are, one line each, control characters replaced).
"""

from __future__ import annotations

import re

from ..spec import Spec
from .testing import collect_cases, coverage

#: how many of the weakest alerts a report lists
SHOWN = 10
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
DERIVE_HINT = ("`rulegen derive-tests` writes tests derived from their expr and for where it can "
               "(`--dry-run` shows them first)")


def _plain(text: str) -> str:
    return _CONTROL.sub(" ", str(text))


def untested(specs: list[Spec]) -> list[tuple[str, str]]:
    """``(app, alert)`` of every alert (first rule of each name) no declared test names, in
    spec order."""
    named = {(c.app, a.get("alertname", c.rule.name)) for c in collect_cases(specs)
             for a in c.test.data.get("alert_rule_test") or []}
    out: list = []
    for spec in specs:
        for _, r in spec.rules():
            if r.is_alert and (spec.app, r.name) not in named and (spec.app, r.name) not in out:
                out.append((spec.app, r.name))
    return out


def _untested_line(specs: list[Spec]) -> list[str]:
    gaps = untested(specs)
    if not gaps:
        return []
    few = ", ".join(f"{a} {n}" for a, n in gaps[:3]) + (f" and {len(gaps) - 3} more" if len(gaps) > 3 else "")
    return [_plain(f"  no test: {len(gaps)} alert(s) ({few}): {DERIVE_HINT}")]


def declared_report(specs: list[Spec]) -> list[str]:
    """The adoption report of ``specs`` by the declared measure (see the module docstring)."""
    cases = collect_cases(specs)
    for c in cases:
        c.passed = True   # as written: the cases each test states, not whether it passes
    rows = [r for r in coverage(specs, cases).rows if r.kind == "alert"]
    if not rows:
        return []
    tested = {(r.app, r.name) for r in rows} - set(untested(specs))
    weak = [r for r in rows if (r.app, r.name) in tested and not r.covered]
    missing = {id(r): sum(1 for ok in (r.fires, r.quiet, r.boundary is not False) if not ok) for r in weak}
    weak.sort(key=lambda r: -missing[id(r)])
    out = [f"adoption report: {len(tested)} of {len(rows)} alert(s) have tests; "
           f"{len(tested) - len(weak)} state a firing and a non-firing case and both sides of `for` "
           "(as declared, not run; `rulegen test --by-alert` scores each alert's tests by mutation)"]
    for r in weak[:SHOWN]:
        out.append(_plain(f"  weak: {r.app} {r.name}: needs {r.missing()}"))
    if len(weak) > SHOWN:
        out.append(f"  ... and {len(weak) - SHOWN} more alert(s) with weak tests")
    return out + _untested_line(specs)


def mutation_report(specs: list[Spec], rows: list) -> list[str]:
    """The adoption report by mutation score: ``rows`` (:class:`rulegen.run.mutation.RuleScore`
    of the rules that were mutated), weakest first, and the alerts of ``specs`` without tests."""
    alerts = {(s.app, r.name) for s in specs for _, r in s.rules() if r.is_alert}
    ranked = sorted((r for r in rows if r.total and (r.app, r.name) in alerts),
                    key=lambda r: (r.percent, -r.total, r.app, r.name))
    out = [f"mutation score by alert, weakest first ({min(SHOWN, len(ranked))} of {len(ranked)} shown):"]
    for r in ranked[:SHOWN]:
        out.append(_plain(f"  {r.percent:3.0f}% {r.app} {r.name}: {r.killed}/{r.total} mutants killed"))
    weak = sum(1 for r in ranked if r.killed < r.total)
    if weak:
        out.append(f"  {weak} alert(s) have surviving mutants: `rulegen test --mutate --app APP --alert NAME` says, "
                   "for each, what test would kill it")
    return out + _untested_line(specs)
