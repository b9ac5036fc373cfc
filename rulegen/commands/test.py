"""``rulegen test``: render charts with helm and run promtool test rules on them (see
:mod:`rulegen.run.testing`), and mutation testing (:mod:`rulegen.run.mutation`)."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..findings import RulegenError
from ..formatters import render as render_findings

if TYPE_CHECKING:
    from ..run.mutation import MutantResult, RuleScore
    from ..run.testing import Coverage, TestCase

NAME = "test"
EXAMPLE = ("rulegen test --app shop --min-coverage 100 --junit report.xml\n"
           "rulegen test --min-mutation-score 100   # would the tests notice a wrong rule?")


def add_parser(sub, common) -> None:
    s = sub.add_parser("test", parents=[common], help="render charts with helm and run promtool test rules on them",
                       description="Render charts with helm and run promtool test rules on them. Expected "
                                   "alerts compare all labels exactly, and only the annotations a test states, "
                                   "as Prometheus renders them (exact_annotations: true on a test compares all).")
    s.add_argument("paths", nargs="*")
    s.add_argument("--app", action="append", default=[], help="only this app (repeatable)")
    s.add_argument("--alert", action="append", default=[], help="only tests of this rule (repeatable)")
    s.add_argument("--run", dest="name", default=None, help="only tests whose name contains this text")
    s.add_argument("--base", "--changed-since", dest="base", default=None, metavar="REF",
                   help="only the rules a pull request touched: those added or changed since Git REF (its "
                        "base branch), the rules reading them, and every rule of a chart whose own files "
                        "changed; their tests, and with --mutate their mutants")
    s.add_argument("--junit", default=None, help="write a JUnit XML report to this file")
    s.add_argument("--min-coverage", type=_percent, default=None,
                   help="fail when fewer than this percentage of alerts have both a firing and a non-firing test")
    s.add_argument("--jobs", type=int, default=None, help="promtool processes at once (default: CPU count)")
    s.add_argument("--mutate", action="store_true",
                   help="mutation testing: once the tests pass, make small wrong versions of every rule with "
                        "tests (comparison, threshold, for, matchers, by labels, range windows, and/or/unless "
                        "operands, absent, recording rule output) and report those no test fails on, with "
                        "the spec line and the test that would catch them")
    s.add_argument("--by-alert", action="store_true",
                   help="mutation testing (implies --mutate) reported in short, as an adoption report: the alerts "
                        "whose tests kill the fewest mutants first, and the alerts without tests "
                        "(for `rulegen derive-tests`), instead of every rule and survivor")
    s.add_argument("--min-mutation-score", type=_percent, default=None,
                   help="fail when fewer than this percentage of mutants are killed (implies --mutate; "
                        "mutants declared in equivalent_mutants are not counted)")
    s.set_defaults(func=run)


def _percent(text: str) -> float:
    """A percentage from 0 to 100 (argparse type)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= v <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not a percentage from 0 to 100")
    return v


def run(args) -> int:
    if args.min_mutation_score is not None or getattr(args, "by_alert", False):
        args.mutate = True
    return run_tests(Path(args.root), args)


def _only_apps(loaded, apps: list[str]):
    """``loaded`` narrowed to the specs of ``apps`` when every validation error lies in other
    spec files (another app's mistake does not stop ``rulegen test --app X``); a note on stderr
    says so. Unchanged when an error is in a spec of ``apps`` or in one of their chart folders."""
    from ..pipeline import Loaded
    mine = {s.file for s in loaded.specs if s.app in apps}
    charts = tuple(s.chart.path.rstrip("/") + "/" for s in loaded.specs if s.app in apps)
    if not mine or any(f.is_error and (f.file in mine or f.file.startswith(charts)) for f in loaded.findings):
        return loaded
    others = sorted({f.file for f in loaded.findings if f.is_error})
    print(f"rulegen: the errors above are in other specs ({', '.join(others)}); testing "
          f"{', '.join(sorted(set(apps)))} anyway (`rulegen build` still needs them fixed)",
          file=sys.stderr)
    return Loaded(root=loaded.root, config=loaded.config,
                  specs=[s for s in loaded.specs if s.app in apps],
                  findings=[f for f in loaded.findings if f.file in mine])


def _mutate(loaded, outputs, root: Path, apps: list[str], cases: list[TestCase], args, jobs: int, out,
            selected_apps: set | None = None):
    """Run mutation testing (:mod:`rulegen.run.mutation`) on the rules the selected tests
    belong to; prints the report and returns the results. ``selected_apps``: the apps whose
    alerts without tests ``--by-alert`` lists (an app with no test at all too), unless the run
    is narrowed to some rules; None: ``apps``."""
    from ..run.mutation import run_mutation
    rules = {(c.app, c.rule.name) for c in cases} if _narrowed(args) else None
    results, rows = run_mutation(loaded, outputs, root, apps, rules, jobs,
                                 progress=lambda line: print(line, file=sys.stderr, flush=True))
    print(f"mutation testing: {len(results)} mutant(s) of {len(rows)} rule(s)", file=out)
    if getattr(args, "by_alert", False):
        from ..run.adoption import mutation_report
        # the alerts without tests of every selected app, also of an app with none at all
        report_apps = set(apps) if selected_apps is None or _narrowed(args) else selected_apps
        for line in mutation_report([sp for sp in loaded.specs if sp.app in report_apps], rows):
            print(line, file=out)
        print_score(results, out)
    else:
        report_mutants(results, rows, out)
    return results


def _narrowed(args) -> bool:
    """Whether the run is narrowed to some rules (``--alert``, ``--run`` or ``--base``)."""
    return bool(args.alert or args.name or getattr(args, "base", None))


def touched_rules(root: Path, base: str, loaded) -> set[tuple[str, str]]:
    """``(app, rule name)`` of the rules a pull request touched since Git ``base``: added or
    changed in their spec (:func:`rulegen.gitops.diff.compare_specs`: expr, ``for``, labels,
    annotations, runbook, tests, group), every rule of an app whose chart has a changed or new
    file other than the generated ``rules/`` and ``tests/`` (values and templates change what
    renders), and the rules reading a touched rule (transitively, as mutation testing follows
    them).

    Raises:
        RulegenError: not a Git work tree, no such ref, or git failed.
    """
    from ..gitops.diff import compare_specs
    from ..gitops.gitbase import _git, load_base
    from ..run.mutation import _Deps
    old_specs, _findings, _n = load_base(root, base, loaded.config)
    summary = compare_specs(old_specs, loaded.specs)
    names = {(v.app, v.name.split("{")[0].split("#")[0]) for v in summary.added}
    names |= {(c.new.app, c.new.name.split("{")[0].split("#")[0]) for c in summary.changed}
    charts = sorted({s.chart.path.rstrip("/") for s in loaded.specs})
    files = _git(root, "diff", "--name-only", "--relative", base, "--", *charts).splitlines()
    files += _git(root, "ls-files", "--others", "--exclude-standard", "--", *charts).splitlines()
    changed = {c for c in charts if any(f.startswith(c + "/") and not f[len(c) + 1:].startswith(("rules/", "tests/"))
                                        for f in files)}
    out: set[tuple[str, str]] = set()
    for spec in loaded.specs:
        deps = _Deps(spec)
        for _g, rule in spec.rules():
            if spec.chart.path.rstrip("/") in changed or (spec.app, rule.name) in names:
                out |= {(spec.app, n) for n in deps.dependents(rule)}
    return out


def _check_names(loaded, args) -> None:
    """Raise RulegenError naming each ``--app`` or ``--alert`` no loaded spec has."""
    from ..hints import unknown_apps, unknown_names
    known_apps = {s.app for s in loaded.specs}
    unknown = set(args.app) - known_apps
    if unknown:
        raise RulegenError(unknown_apps(unknown, known_apps))
    names = {r.name for s in loaded.specs for _, r in s.rules()}
    unknown = set(args.alert) - names
    if unknown:
        raise RulegenError(unknown_names(unknown, names, "alert or recording rule"))


def _record_results(cases: list, runs: list) -> None:
    """Set each case's ``passed``/``failure`` from promtool's ``runs``. Raises RulegenError when
    promtool reported no result at all (its output is printed first)."""
    results = {}
    for r in runs:
        for cr in r.cases:
            results[cr.name] = cr
    if not results:
        # promtool could not load a file at all: show what it said
        for r in runs:
            if r.returncode != 0:
                print(r.output.strip(), file=sys.stderr)
        raise RulegenError("promtool reported no test result")
    for c in cases:
        cr = results.get(c.name)
        if cr is None:
            c.passed, c.failure = False, "promtool did not run this test group (duplicate name?)"
        else:
            c.passed, c.failure = cr.passed, cr.failure


def _print_failures(failed: list, runs: list, out) -> None:
    """Each failed case with its spec line and promtool's readable failure; a run's own output
    when it failed without a failed case."""
    from ..run.testing import failure_line, readable_failure
    for c in failed:
        line = failure_line(c)
        print(f"{c.spec.file}:{line}: FAIL [{c.rule.name}] {c.test.name}", file=out)
        for line in readable_failure(c.failure).splitlines():
            print("    " + line, file=out)
    for r in runs:
        if r.returncode != 0 and not any(not c.passed for c in failed):
            print(r.output.strip(), file=sys.stderr)


def _report_no_cases(loaded, all_cases: list, untested: list, selected_apps: set, args, out) -> int:
    """``rulegen test`` when no test group is selected: say so, show the coverage; the exit code."""
    from ..run.testing import coverage
    if not untested:
        print("no test matches" if all_cases else "the specs declare no test", file=out)
    print("0 passed, 0 failed", file=out)
    cov = coverage(loaded.specs, [])
    cov.rows = [r for r in cov.rows if r.app in selected_apps
                and (not args.alert or r.name in args.alert)]
    if not _print_coverage(cov, out, args.min_coverage):
        return 1
    return 1 if all_cases else 0


def _write_junit(path: Path, cases: list, mutated) -> None:
    """The JUnit XML report of ``cases`` at ``path``, with the mutation results when there are any."""
    from ..run.testing import write_junit
    write_junit(path, cases)
    if mutated is not None:
        from ..run.mutation import write_junit as write_mutation_junit
        import xml.etree.ElementTree as ET
        write_mutation_junit(path, mutated, ET.parse(path).getroot())


def _mutation_score_met(mutated, min_score: float | None) -> bool:
    """False (with a line on stderr) when the mutation score of ``mutated`` is below
    ``min_score`` (percent, or None: no minimum)."""
    if min_score is None:
        return True
    from ..run.mutation import total_score
    score = total_score(mutated)
    if score + 1e-9 < min_score:
        print(f"rulegen: mutation score {score:.1f}% is below --min-mutation-score "
              f"{min_score:g}%", file=sys.stderr)
        return False
    return True


def run_tests(root: Path, args) -> int:
    """The ``rulegen test`` command; returns the exit code (0 pass, 1 failures or low
    coverage or invalid specs, 2 usage/tools)."""
    from ..fs.write import work_dir
    from ..gitops import write
    from ..pipeline import load_project, plan_project
    from ..run.testing import WORK_DIR, _regex, collect_cases, coverage, prepare_app, run_batches, select
    from ..spec import slo
    out = sys.stdout
    loaded = load_project(root, getattr(args, "paths", None) or None)
    if loaded.findings:
        print(render_findings(loaded.findings), file=sys.stderr)
    if not loaded.ok and args.app:
        loaded = _only_apps(loaded, args.app)
    if not loaded.ok:
        print("rulegen: validation failed; no test ran" + (
            "" if args.app else " (fix the errors above, or test one app with --app)"), file=sys.stderr)
        return 1
    outputs, findings = plan_project(loaded)
    if any(f.is_error for f in findings):
        print(render_findings(findings), file=sys.stderr)
        return 1
    # before the SLOs' tests are added: the specs at the base ref have none either
    touched = touched_rules(root, args.base, loaded) if getattr(args, "base", None) else None
    # the SLOs' tests are generated now, not committed (loading and building make none)
    loaded = replace(loaded, specs=[slo.with_tests(s) for s in loaded.specs])
    all_cases = collect_cases(loaded.specs)
    cases = select(all_cases, args.app, args.alert, args.name)
    _check_names(loaded, args)
    if touched is not None:
        cases = [c for c in cases if (c.app, c.rule.name) in touched]
        if not cases:
            print(f"no rule with tests changed since {args.base}: nothing to test", file=out)
            return 0
    # Coverage counts every rule of every selected spec: an app without a single test is
    # uncovered, not left out (importing 12 untested alerts must not read "100%").
    selected_apps = set(args.app) or {s.app for s in loaded.specs}
    untested = sorted(a for a in set(args.app) if a not in {c.app for c in all_cases})
    for app in untested:
        print(f"app {app} has no tests (add `tests:` under its alerts; `rulegen new` shows the shape)", file=out)
    if not cases:
        return _report_no_cases(loaded, all_cases, untested, selected_apps, args, out)
    status = write.compare(outputs, root)
    from ..render.sums import SUM_DIR  # here, not at the top: `rulegen --help` imports no library (test_layout)
    drift = [p for p in status.changed if not p.endswith((".md", "mkdocs.yml")) and not p.startswith(SUM_DIR + "/")]
    if drift:
        print(f"note: testing what `rulegen build` would write; on disk these differ: {', '.join(drift)}",
              file=sys.stderr)
    work = work_dir(root, WORK_DIR)
    apps = sorted({c.app for c in cases})
    files = []
    for spec in loaded.specs:
        if spec.app in apps:
            files.extend(prepare_app(spec, outputs, root, work))
    jobs = args.jobs or os.cpu_count() or 1
    run_regex = _regex(cases) if len(cases) != len(all_cases) else None
    runs = run_batches(files, jobs, root, run_regex)
    _record_results(cases, runs)
    failed = [c for c in cases if not c.passed]
    _print_failures(failed, runs, out)
    cov = coverage(loaded.specs, cases)
    print(f"promtool test rules: {len(cases)} test group(s) in {len(files)} file(s), "
          f"{len(cases) - len(failed)} passed, {len(failed)} failed", file=out)
    selected_rules = {(c.app, c.rule.name) for c in cases} if _narrowed(args) else None
    cov.rows = [r for r in cov.rows
                if r.app in selected_apps and (selected_rules is None or (r.app, r.name) in selected_rules)]
    print(f"coverage: {sum(1 for r in cov.rows if r.covered)}/{len(cov.rows)} rules ({cov.percent:.0f}%) "
          "have a firing and a non-firing test, and both sides of `for` (recording rules: a test "
          "that reads them)", file=out)
    from collections import Counter
    failing = Counter((c.app, c.rule.name) for c in failed)  # coverage counts passing test groups only
    for r in cov.rows:
        if not r.covered:
            n = failing.get((r.app, r.name))
            why = f" ({n} failing test group(s) of it, FAIL above, count once they pass)" if n else ""
            print(f"  uncovered: {r.app} {r.name}: needs {r.missing()}{why}", file=out)
    mutated = None
    if getattr(args, "mutate", False) and failed:
        print("mutation testing skipped: the tests must pass on the rules first", file=out)
    elif getattr(args, "mutate", False):
        mutated = _mutate(loaded, outputs, root, apps, cases, args, jobs, out, selected_apps)
    if args.junit:
        _write_junit(Path(args.junit), cases, mutated)
    print(f"{len(cases) - len(failed)} passed, {len(failed)} failed", file=out)
    if failed:
        return 1
    if mutated is not None and not _mutation_score_met(mutated, args.min_mutation_score):
        return 1
    return 0 if _min_coverage_met(cov, args.min_coverage) else 1


def _min_coverage_met(cov: Coverage, min_coverage: float | None) -> bool:
    """False (with a line on stderr) when ``cov`` is below ``min_coverage`` (percent, or None)."""
    if min_coverage is not None and cov.percent + 1e-9 < min_coverage:
        print(f"rulegen: coverage {cov.percent:.1f}% is below --min-coverage {min_coverage:g}%", file=sys.stderr)
        return False
    return True


def _print_coverage(cov: Coverage, out, min_coverage: float | None) -> bool:
    """When no test ran: the coverage line (every selected rule uncovered) and the
    ``--min-coverage`` verdict (see :func:`_min_coverage_met`)."""
    if cov.rows:
        print(f"coverage: 0/{len(cov.rows)} rules (0%): no test ran", file=out)
    return _min_coverage_met(cov, min_coverage)


def report_mutants(results: list[MutantResult], rows: list[RuleScore], out) -> None:
    """Print per-rule scores, survivors in words, the excluded mutants (one line per rule and
    reason: their number, their texts in brief, the reason) and stale equivalence declarations."""
    from ..run.mutation import _declaration_line, brief, excluded_groups
    for row in rows:
        eq = f", {row.equivalent} declared equivalent" if row.equivalent else ""
        print(f"  {row.app} {row.name}: {row.killed}/{row.total} mutants killed{eq}", file=out)
    excluded = {id(rs[0]): (rs, why) for rs, why in excluded_groups(results)}
    for r in results:
        if r.counted and not r.killed:
            print(f"{r.spec.file}:{r.line()}: SURVIVED [{r.rule.name}] {r.describe()}", file=out)
        elif id(r) in excluded:
            rs, why = excluded[id(r)]
            count = f"{len(rs)} mutants: " if len(rs) > 1 else ""
            print(f"{r.spec.file}:{r.line()}: excluded [{r.rule.name}] {count}{brief([x.mutant.text for x in rs])}: "
                  f"{why}", file=out)
        elif r.equivalent is not None and r.killed:
            line = _declaration_line(r.spec, r.rule, r.mutant.text)
            print(f"{r.spec.file}:{line}: note [{r.rule.name}] {r.mutant.text} is declared equivalent, "
                  f"but `{r.killed_by[0]}` kills it: remove the declaration", file=out)
    declared = {(id(r.rule), r.mutant.text) for r in results}
    seen_rules = {id(r.rule): r for r in results}
    for r in seen_rules.values():
        for text in r.rule.equivalent_mutants:
            if (id(r.rule), text) not in declared:
                line = _declaration_line(r.spec, r.rule, text)
                print(f"{r.spec.file}:{line}: note [{r.rule.name}] equivalent_mutants names `{text}`, "
                      "which is not a mutant of this rule", file=out)
    print_score(results, out)


def print_score(results: list[MutantResult], out) -> None:
    """The overall mutation score line."""
    from ..run.mutation import total_score
    killed = sum(1 for r in results if r.counted and r.killed)
    counted = sum(1 for r in results if r.counted)
    eq = sum(1 for r in results if r.equivalent is not None)
    invalid = sum(1 for r in results if r.invalid)
    excluded = sum(1 for r in results if r.excluded)
    extra = (f", {eq} declared equivalent" if eq else "") + (f", {invalid} not runnable" if invalid else "") \
        + (f", {excluded} excluded (generated from slos:)" if excluded else "")
    print(f"mutation score: {killed}/{counted} mutants killed ({total_score(results):.0f}%){extra}", file=out)
    unseen = [r for r in results if r.unseen]
    if unseen:
        # each survives, as it would have run, and is scored as any survivor: say where each one went
        # (a "counted as before" beside a 100% score read as if they had been killed)
        n_eq = sum(1 for r in unseen if r.equivalent is not None)
        n_ex = sum(1 for r in unseen if r.excluded)
        n_sv = sum(1 for r in unseen if r.counted)
        where = [f"{n} {what}" for n, what in ((n_sv, "counted as survivors (SURVIVED above)"),
                                               (n_eq, "declared equivalent"),
                                               (n_ex, "excluded (generated from slos:, listed above)")) if n]
        print(f"skipped: cannot change a test: {len(unseen)} mutant(s) not run, since no test of their rule "
              f"can tell them from it, as proved before promtool starts; they survive, as they would have "
              f"if run: {', '.join(where)}", file=out)
