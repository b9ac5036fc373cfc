"""``rulegen derive-tests``: promtool tests written from a rule's ``expr`` and ``for``.

For an alert without tests, the expression is read for a shape rulegen knows how to feed:

* a **threshold on a selector**: ``x{a="b"} > 80``;
* an **aggregation** of one: ``max by (namespace, name) (x{...}) > 0`` (``sum``, ``max``,
  ``min``, ``avg``; ``by`` labels become the expected alert's labels);
* a **rate of a counter**: ``rate(x{...}[5m]) > 0.5`` or ``increase(x{...}[10m]) >= 3``,
  aggregated or not;
* a **ratio of two selectors**: ``a{...} / b{...} > 0.05``, of their rates, or of their
  aggregations by the same labels;
* any of these **scaled** by a number: ``a / b * 100 < 10``;
* two of these joined by **and** (a guard), ``a > 80 and b == 0``, when they read different
  series and match on all their labels;
* **absent**: ``absent(x{...})`` or ``absent(x{...} == 1)``.

From the shape come the tests (promtool's vocabulary, one sample a minute, or the rule
group's interval):

* selectors give series with the labels their matchers require (``=`` the value, ``=~`` a
  value the regular expression matches, ``!=``/``!~`` another value) plus a value for each
  ``by`` label; ratio sides share their labels so they match one-to-one;
* the threshold gives a value on each side, the boundary value itself on the side the
  comparison puts it (``> 80``: 80 does not fire; ``>= 80``: it does);
* ``for`` gives the eval times: the firing test asserts quiet one evaluation interval before
  ``for`` has passed and firing when it has (both sides of the boundary);
* ``absent`` gives a missing series (firing) and a present one (quiet);
* rates give counters growing at the pace that puts the rate (or the increase over the
  window) on the wanted side; the condition holds from the first evaluation with two samples.
  ``rate``'s extrapolation (Prometheus docs, "rate()") makes the first windows read a lower
  pace, which is accounted for when placing the eval times;
* a counter that grows then stops (for a ratio: a numerator that stops, a denominator that
  speeds up) is asserted while the window still holds the change and after, so a halved or
  doubled window fails; a counter that jumps by exactly the threshold tests ``>``/``>=`` at
  the boundary where a steady pace cannot hit it;
* the quiet test also holds, for each label matcher, a series that misses only that matcher
  with a firing value, so a matcher removed from the rule makes it fire;
* mutants no input can tell apart from the rule (``!= 0`` for ``rate(...) > 0``, a matcher
  that another one-to-one matched selector repeats) are written into ``equivalent_mutants``
  with the reason; what the tests cannot pin is printed as a note.

A recording rule of one of these shapes (without the comparison) gets a ``promql_expr_test``
with the value it must compute, once its window is full, and the near-miss series it must
leave out.

Other shapes (``bool``, ``on``/``ignoring``, ``or``/``unless``, functions other than
``rate``/``increase``, ``offset``, subqueries) are reported as "write this one by hand" with
the reason. The tests are inserted into the spec text after the rule's last
line, as a ``tests:`` block emitted by ruamel.yaml; the rest of the file is kept byte for byte
(comments, layout, quoting).
"""


from __future__ import annotations

from ..fs import read as fs_read
from ..fs.write import atomic_write
from .derivation.cases import Derived, derive  # noqa: F401  (the public names callers use)
from .derivation.shape import COMPARISONS, Manual, Shape, Side, analyze, analyze_record  # noqa: F401
from .derivation.writing import insert_tests, tests_yaml  # noqa: F401


# over 80 lines: the command's wiring and printing, bound for the command layer (issue 24)
def run_derive(root, args, out=None) -> int:
    """The ``rulegen derive-tests`` command: derive tests for every alert without tests (or
    those named with ``--alert``) of the specs under ``args.paths`` and write them into the
    spec files (``--dry-run``: print the blocks instead). Prints one line per rule: tests
    written, or "write this one by hand" with the reason. Returns the exit code (0; 1 when
    the specs do not validate).

    Raises:
        RulegenError: an ``--alert`` names no rule of the specs (with "did you mean")."""
    import sys
    from pathlib import Path

    from ..formatters import render as render_findings
    from ..pipeline import load_project
    from ..spec import load_text
    from ..validate import validate
    out = out or sys.stdout
    root = Path(root)
    loaded = load_project(root, getattr(args, "paths", None) or None)
    if not loaded.ok:
        print(render_findings(loaded.findings), file=sys.stderr)
        print("rulegen: validation failed; no test derived", file=sys.stderr)
        return 1
    names = {r.name for s in loaded.specs for _, r in s.rules()}
    unknown = set(args.alert) - names
    if unknown:  # else nothing matches and "0 rule(s) given derived tests" reads as done
        from ..findings import RulegenError
        from ..hints import unknown_names
        raise RulegenError(unknown_names(unknown, names, "alert or recording rule"))
    written = manual = 0
    generated = {r.name: g.slo for s in loaded.specs for g in s.groups if g.slo is not None for r in g.rules}
    for name in sorted(set(args.alert) & set(generated)):
        print(f"{name}: generated from SLO {generated[name]} (slos:), with its tests; nothing to derive",
              file=out)
    for spec in loaded.specs:
        edits = []
        # only rules written under groups: have spec text to put tests into; the rules an SLO
        # generates get generated tests (rulegen.spec.slo) and have no text of their own
        for group, rule in spec.written_rules():
            if rule.tests or (args.alert and rule.name not in args.alert):
                continue
            line = spec.source.pos(rule.path + ("alert" if rule.is_alert else "record",), key=True)[0]
            try:
                d = derive(spec, group, rule)
            except Manual as e:
                manual += 1
                print(f"{spec.file}:{line}: {rule.name}: write this one by hand: {e}", file=out)
                continue
            edits.append((line, rule, d))
        if not edits:
            continue
        path = root / spec.file
        text = fs_read.read_text(path, spec.file)
        new = text
        for line, rule, d in sorted(edits, key=lambda e: -e[0]):
            try:
                new = insert_tests(new, spec, rule, d.tests, d.equivalent)
            except Manual as e:
                manual += 1
                print(f"{spec.file}:{line}: {rule.name}: write this one by hand: {e}", file=out)
                continue
        def errors_of(t: str) -> list:
            found = loaded.config.apply(validate([load_text(t, spec.file)]).findings)
            return [f for f in found if f.is_error]
        before = {(f.code, f.rule, f.message) for f in errors_of(text)}
        errors = [f for f in errors_of(new) if (f.code, f.rule, f.message) not in before]
        if errors:  # a bug here, never the user's: say so and write nothing
            print(render_findings(errors), file=sys.stderr)
            print(f"rulegen: the derived tests for {spec.file} do not validate; nothing written", file=sys.stderr)
            return 2
        for line, rule, d in sorted(edits, key=lambda e: e[0]):
            written += 1
            eq = f", {len(d.equivalent)} equivalent mutant(s) declared" if d.equivalent else ""
            print(f"{spec.file}:{line}: {rule.name}: {len(d.tests)} test(s) derived{eq}", file=out)
            for note in d.notes:
                print(f"{spec.file}:{line}: {rule.name}: note: {note}", file=out)
        if args.dry_run:
            print(new, file=out)
            continue
        atomic_write(path, new, root=root)
    slo_rules = sum(1 for s in loaded.specs for g in s.groups if g.slo is not None for _ in g.rules)
    print(f"{written} rule(s) given derived tests, {manual} to write by hand"
          + (f", {slo_rules} generated from slos: (tested by their generated tests)" if slo_rules else "")
          + ("" if args.dry_run or not written else "; run `rulegen test --mutate` to see what they prove"),
          file=out)
    return 0

