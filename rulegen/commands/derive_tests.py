"""``rulegen derive-tests``: write promtool tests derived from ``expr`` and ``for`` into the
specs (see :mod:`rulegen.run.derive`)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..findings import RulegenError
from ..formatters import render as render_findings

NAME = "derive-tests"
EXAMPLE = "rulegen derive-tests --alert ShopDown --dry-run   # print what it would write"


def add_parser(sub, common) -> None:
    s = sub.add_parser("derive-tests", parents=[common],
                       help="write promtool tests into the specs for alerts without tests, derived from expr and for")
    s.add_argument("paths", nargs="*", help="spec files or folders (default: rules/)")
    s.add_argument("--alert", action="append", default=[], help="only this alert (repeatable)")
    s.add_argument("--dry-run", action="store_true", help="print the specs with the tests instead of writing them")
    s.set_defaults(func=run)


def run(args) -> int:
    return run_derive(Path(args.root), args)


def _derived(spec, args, out) -> tuple[list, int]:
    """``([(line, rule, derived)], rules to write by hand)`` for the rules of ``spec`` that get
    derived tests (no tests yet; named with ``--alert`` when given), printing why for each rule
    left to write by hand."""
    from ..run.derive import Manual, derive
    edits, manual = [], 0
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
    return edits, manual


def _new_errors(config, file: str, text: str, new: str) -> list:
    """The error findings of spec ``file`` as ``new`` (with ``config`` applied) that its
    ``text`` did not have."""
    from ..spec import load_text
    from ..validate import validate

    def errors_of(t: str) -> list:
        found = config.apply(validate([load_text(t, file)]).findings)
        return [f for f in found if f.is_error]
    before = {(f.code, f.rule, f.message) for f in errors_of(text)}
    return [f for f in errors_of(new) if (f.code, f.rule, f.message) not in before]


def run_derive(root, args, out=None) -> int:
    """The ``rulegen derive-tests`` command: derive tests for every alert without tests (or
    those named with ``--alert``) of the specs under ``args.paths`` and write them into the
    spec files (``--dry-run``: print the blocks instead). Prints one line per rule: tests
    written, or "write this one by hand" with the reason. Returns the exit code (0; 1 when
    the specs do not validate).

    Raises:
        RulegenError: an ``--alert`` names no rule of the specs (with "did you mean")."""
    from ..fs import read as fs_read
    from ..fs.write import atomic_write
    from ..hints import unknown_names
    from ..pipeline import load_project
    from ..run.derive import Manual, insert_tests
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
        raise RulegenError(unknown_names(unknown, names, "alert or recording rule"))
    written = manual = 0
    generated = {r.name: g.slo for s in loaded.specs for g in s.groups if g.slo is not None for r in g.rules}
    for name in sorted(set(args.alert) & set(generated)):
        print(f"{name}: generated from SLO {generated[name]} (slos:), with its tests; nothing to derive",
              file=out)
    for spec in loaded.specs:
        edits, by_hand = _derived(spec, args, out)
        manual += by_hand
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
        errors = _new_errors(loaded.config, spec.file, text, new)
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
