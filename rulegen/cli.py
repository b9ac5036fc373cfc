"""The ``rulegen`` command line. This module only wires arguments to the pipeline and prints;
every decision lives in the modules it calls.

Exit codes (all commands): 0 success, 1 findings/drift/test failures, 2 usage or internal fault.
"""

from __future__ import annotations

import argparse
import gc
import sys
from pathlib import Path

from . import __version__
from .findings import RulegenError

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _err(msg: str) -> None:
    print(f"rulegen: {msg}", file=sys.stderr)


def _print_findings(findings, fmt: str = "text", stream=None) -> None:
    from .formatters import render
    if findings or fmt == "json":
        print(render(findings, fmt), file=stream or sys.stdout)


def cmd_schema(args) -> int:
    from .spec import SCHEMA_PATH
    sys.stdout.write(SCHEMA_PATH.read_text(encoding="utf-8"))
    return EXIT_OK


def cmd_validate(args) -> int:
    from .pipeline import load_project
    loaded = load_project(Path(args.root), args.paths or None)
    _print_findings(loaded.findings, args.output)
    if args.output == "text" and not loaded.findings:
        print(f"{len(loaded.specs)} spec(s), {sum(1 for s in loaded.specs for _ in s.rules())} rule(s): no findings")
    return EXIT_OK if loaded.ok else EXIT_FAIL


def cmd_build(args) -> int:
    from .gitops import write
    from .pipeline import load_project, plan_project
    root = Path(args.root)
    # `rulegen new`: the whole project is planned (the site's home page, alert index and nav
    # list every app), and only the new spec's files and the site-wide ones are written
    new_spec = getattr(args, "new_spec", None)
    loaded = load_project(root, None if new_spec else args.paths or None)
    shown = [f for f in loaded.findings if not new_spec or f.file == new_spec]
    if shown:
        _print_findings(shown, stream=sys.stderr)
    if not loaded.ok:
        _err("validation failed; nothing was written")
        return EXIT_FAIL
    release = getattr(args, "release_label", None)
    if release is not None:  # `rulegen new --release NAME`: the new chart's rule-selector label
        import dataclasses
        labels = {**loaded.config.rule_selector_labels, "release": release}
        loaded.config = dataclasses.replace(loaded.config, rule_selector_labels=labels)
    outputs, findings = plan_project(loaded, args.format)
    if findings:
        _print_findings(findings, stream=sys.stderr)
    if any(f.is_error for f in findings):
        _err("some outputs could not be made; nothing was written")
        return EXIT_FAIL
    partial = bool(args.paths)
    if new_spec:
        outputs = [o for o in outputs if o.source in (new_spec, "")]
        partial, loaded_files = False, {new_spec}
    else:
        loaded_files = {s.file for s in loaded.specs} if partial else None
    outputs = write.scope(outputs, partial)
    status = write.compare(outputs, root, args.format, loaded_files)
    if status.hand_edited and not args.force:
        for p in status.hand_edited:
            _err(f"{p}: edited by hand since rulegen generated it; refusing to overwrite. Move the "
                 "change into the spec (or a notes slot) and rerun, or rerun with --force to discard it")
        _err("nothing was written")
        return EXIT_FAIL
    for p in write.clean_temp_files(root, outputs, args.format):
        print("removed leftover " + p)
    touched = write.apply(outputs, root, status)
    for p in touched:
        print(("removed " if p in status.stale else "wrote ") + p)
    gates_of = {f"{s.chart.path}/Chart.yaml": (s.chart.path, s.chart.gates) for s in loaded.specs}
    for p in touched:
        if p in gates_of and p not in status.stale:  # a Chart.yaml is only written for a new chart
            chart, gates = gates_of[p]
            print(f"new chart {chart}: its PrometheusRule renders only when {' and '.join(gates)} "
                  f"are true; {chart}/values.yaml sets them false until you turn them on there "
                  "(or with helm --set, or in the Argo CD Application)")
    print(f"{len(loaded.specs)} spec(s): {len(touched)} file(s) written, {len(status.unchanged)} unchanged")
    kinds = (("chart rules file(s)", "/rules/"), ("promtool test file(s)", ".test.yaml"),
             ("runbook page(s)", "runbooks/"), ("plain rule file(s)", "rules-out/"))
    have = [f"{sum(1 for o in outputs if part in o.path)} {what}" for what, part in kinds
            if any(part in o.path for o in outputs)]
    print("outputs: " + ", ".join(have) + "; run `rulegen test` to run the promtool tests")
    return EXIT_OK


def cmd_new(args) -> int:
    from .config import selector_label
    from .starter import is_new_project, write_project_config, write_starter
    root = Path(args.root)
    if args.release is not None:
        selector_label("release", args.release, "--release")
    fresh = is_new_project(root)
    path = write_starter(root, args.app, args.title)
    print(f"wrote {path.relative_to(root)}")
    if fresh:
        print(f"wrote {write_project_config(root).relative_to(root)} (policy_changes: fail: "
              "`rulegen check --base` fails a pull request that grows the baseline or weakens a check)")
    chart = root / "charts" / args.app
    if not chart.exists():
        # the chart is missing: make it (and the page and the tests) from the new spec, and
        # the site's home page, alert index and nav with the new app in them; when another
        # spec has errors, the new spec's files alone (the site's stay as they are: say so)
        rel = path.relative_to(root).as_posix()
        from .pipeline import load_project
        whole_ok = load_project(root).ok
        built = argparse.Namespace(root=args.root, paths=[rel], format="helm", force=False,
                                   new_spec=rel if whole_ok else None, release_label=args.release)
        code = cmd_build(built)
        if code != EXIT_OK:
            return code
        if not whole_ok:
            print(f"note: other specs have errors, so the site's home page, alert index and nav "
                  f"(runbooks/index.md, runbooks/alerts.md, mkdocs.yml) do not list {args.app} yet; "
                  "`rulegen build` adds it once they validate")
    print(f"next: edit {path.relative_to(root)}, then `rulegen build` and "
          f"`rulegen test --app {args.app}`")
    return EXIT_OK


def cmd_check(args) -> int:
    from .gitops.check import run_check
    return run_check(Path(args.root), args.paths or None, sys.stdout, args.format, args.base,
                     args.fail_on_policy_changes)


def cmd_test(args) -> int:
    from .run.testing import run_tests
    if args.min_mutation_score is not None:
        args.mutate = True
    return run_tests(Path(args.root), args)


def cmd_derive(args) -> int:
    from .run.derive import run_derive
    return run_derive(Path(args.root), args)


def cmd_diff(args) -> int:
    from .gitops.diff import run_diff
    return run_diff(Path(args.root), args.base, args.output, sys.stdout)


def cmd_baseline(args) -> int:
    from .baseline import run_baseline
    return run_baseline(Path(args.root), args.add, sys.stdout)


def cmd_import(args) -> int:
    from .importer import run_import
    return run_import(args)


def cmd_checks(args) -> int:
    from . import checkdocs
    if args.code:
        known = checkdocs.codes()
        code = args.code.upper()
        if code not in known:
            import difflib
            # codes that begin with what was typed first (RG40 -> RG401...), then look-alikes
            near = [c for c in known if c.startswith(code)][:3] or \
                difflib.get_close_matches(code, known, n=3, cutoff=0.6)
            _err(f"no check {args.code}" + (f"; did you mean {', '.join(near)}?" if near else "")
                 + " (`rulegen checks` lists every code)")
            return EXIT_USAGE
        if args.format == "markdown":
            _err("--format markdown prints the whole reference; drop the code")
            return EXIT_USAGE
    sys.stdout.write(checkdocs.render_markdown() if args.format == "markdown"
                     else checkdocs.render_text(args.code))
    return EXIT_OK


#: One line saying what rulegen does (``rulegen --help``; pyproject's description says the same).
DESCRIPTION = ("Prometheus alerting as code: validate YAML specs, then write Helm-gated "
               "PrometheusRules, runbook pages and promtool tests from them.")

#: An example for each command's ``--help`` (a test requires one for every command).
EXAMPLES = {
    "new": "rulegen new shop          # writes rules/shop.yaml and charts/shop/ if missing\n"
           "rulegen validate && rulegen build && rulegen test --app shop",
    "validate": "rulegen validate                     # every spec under rules/\n"
                "rulegen validate rules/shop.yaml -o github",
    "build": "rulegen build                        # charts, runbook pages and promtool tests\n"
             "rulegen build rules/shop.yaml        # only what that spec makes",
    "check": "rulegen check                        # in CI: exit 1 when outputs and specs disagree\n"
             "rulegen check --base origin/main     # on a PR: also fail when it grows the baseline or weakens a check",
    "test": "rulegen test --app shop --min-coverage 100 --junit report.xml\n"
            "rulegen test --min-mutation-score 100   # would the tests notice a wrong rule?",
    "derive-tests": "rulegen derive-tests --alert ShopDown --dry-run   # print what it would write",
    "diff": "rulegen diff --base origin/main -o markdown > pr-comment.md",
    "import": "rulegen import alerts.rules.yml --app shop   # writes rules/shop.yaml\n"
              "rulegen import charts/kube-prometheus-stack --tests tests/*.yaml",
    "baseline": "rulegen baseline                     # drop entries whose findings are fixed\n"
                "rulegen baseline --add               # also accept today's policy findings",
    "schema": "rulegen schema > spec.schema.json",
    "checks": "rulegen checks RG404                 # one code, with a bad and a good example\n"
              "rulegen checks --format markdown > docs/checks.md",
}


def _percent(text: str) -> float:
    """A percentage from 0 to 100 (argparse type)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 <= v <= 100:
        raise argparse.ArgumentTypeError(f"{text} is not a percentage from 0 to 100")
    return v


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="rulegen", description=DESCRIPTION,
                                epilog="Run `rulegen COMMAND --help` for a command's options and an example.")
    p.add_argument("--version", action="version", version=f"rulegen {__version__}")
    p.add_argument("-C", "--root", default=".", help="project root (default: current folder)")
    # -C also works after the command (`rulegen validate -C DIR`)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("-C", "--root", default=argparse.SUPPRESS, help="project root (default: current folder)")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")

    s = sub.add_parser("new", parents=[common], help="write a starter spec (and the chart if missing) for an app")
    s.add_argument("app", help="app name, a DNS label (e.g. shop)")
    s.add_argument("--title", default=None, help="display title on the runbook site (default: the app name)")
    s.add_argument("--release", default=None, metavar="NAME",
                   help="the new chart's PrometheusRule gets the label release: NAME, the Helm release of the "
                        "kube-prometheus-stack whose ruleSelector must pick it (default: .rulegen.yaml "
                        "charts.rule_selector_labels, else release: kube-prometheus-stack)")
    s.set_defaults(func=cmd_new)

    s = sub.add_parser("validate", parents=[common], help="check specs; exit 1 on any error")
    s.add_argument("paths", nargs="*", help="spec files or folders (default: rules/)")
    s.add_argument("-o", "--output", choices=("text", "json", "github"), default="text")
    s.set_defaults(func=cmd_validate)

    s = sub.add_parser("build", parents=[common], help="validate, then write charts, runbook pages and promtool tests")
    s.add_argument("paths", nargs="*", help="spec files or folders (default: rules/)")
    s.add_argument("--format", choices=("helm", "rules"), default="helm",
                   help="helm: PrometheusRule templates in charts (default); rules: plain rule files in rules-out/")
    s.add_argument("--force", action="store_true", help="overwrite generated files edited by hand")
    s.set_defaults(func=cmd_build)

    s = sub.add_parser("check", parents=[common], help="drift check for CI: regenerate in memory and diff against the disk")
    s.add_argument("paths", nargs="*")
    s.add_argument("--format", choices=("helm", "rules"), default="helm",
                   help="the output format build was run with (default helm)")
    s.add_argument("--base", default=None, metavar="REF",
                   help="Git ref the pull request goes into: also report each change since REF that weakens "
                        "what is checked (baseline entries added, codes switched off or lowered, conventions "
                        "relaxed: RG820-RG823), as errors unless REF's .rulegen.yaml says policy_changes: warn")
    s.add_argument("--fail-on-policy-changes", action="store_true",
                   help="with --base: those changes are errors whatever REF's .rulegen.yaml says")
    s.set_defaults(func=cmd_check)

    s = sub.add_parser("test", parents=[common], help="render charts with helm and run promtool test rules on them",
                       description="Render charts with helm and run promtool test rules on them. Expected "
                                   "alerts compare all labels exactly, and only the annotations a test states, "
                                   "as Prometheus renders them (exact_annotations: true on a test compares all).")
    s.add_argument("paths", nargs="*")
    s.add_argument("--app", action="append", default=[], help="only this app (repeatable)")
    s.add_argument("--alert", action="append", default=[], help="only tests of this rule (repeatable)")
    s.add_argument("--run", dest="name", default=None, help="only tests whose name contains this text")
    s.add_argument("--junit", default=None, help="write a JUnit XML report to this file")
    s.add_argument("--min-coverage", type=_percent, default=None,
                   help="fail when fewer than this percentage of alerts have both a firing and a non-firing test")
    s.add_argument("--jobs", type=int, default=None, help="promtool processes at once (default: CPU count)")
    s.add_argument("--mutate", action="store_true",
                   help="mutation testing: once the tests pass, make small wrong versions of every rule with "
                        "tests (comparison, threshold, for, matchers, by labels, range windows, and/or/unless "
                        "operands, absent, recording rule output) and report those no test fails on, with "
                        "the spec line and the test that would catch them")
    s.add_argument("--min-mutation-score", type=_percent, default=None,
                   help="fail when fewer than this percentage of mutants are killed (implies --mutate; "
                        "mutants declared in equivalent_mutants are not counted)")
    s.set_defaults(func=cmd_test)

    s = sub.add_parser("derive-tests", parents=[common],
                       help="write promtool tests into the specs for alerts without tests, derived from expr and for")
    s.add_argument("paths", nargs="*", help="spec files or folders (default: rules/)")
    s.add_argument("--alert", action="append", default=[], help="only this alert (repeatable)")
    s.add_argument("--dry-run", action="store_true", help="print the specs with the tests instead of writing them")
    s.set_defaults(func=cmd_derive)

    s = sub.add_parser("diff", parents=[common], help="what changed since a Git ref, in alert terms")
    s.add_argument("--base", default="HEAD", help="Git ref to compare with (default HEAD)")
    s.add_argument("-o", "--output", choices=("text", "markdown"), default="text")
    s.set_defaults(func=cmd_diff)

    s = sub.add_parser("import", parents=[common], help="turn rule files, PrometheusRule manifests or Helm templates into specs",
                       description="Turn rule files, PrometheusRule manifests or Helm templates into specs. All or "
                                   "nothing: when any source cannot be imported, or the project would not validate "
                                   "with the imported specs next to its own (an alert or app name another spec "
                                   "uses...), nothing is written; policy findings of the imported rules are "
                                   "baselined (.rulegen-baseline.yaml).")
    s.add_argument("sources", nargs="+")
    s.add_argument("--app", default=None, help="app name for all imported rules")
    s.add_argument("--out", default="rules", metavar="DIR",
                   help="folder to write specs to (default rules/). The project files (.rulegen.yaml, "
                        ".rulegen-baseline.yaml, .rulegen/schema.json, charts/APP/values.yaml) go to the "
                        "folder holding DIR when DIR is named rules (--out team/rules: team/, then "
                        "`rulegen -C team build`), else to the project root (then `rulegen build DIR`)")
    s.add_argument("--force", action="store_true", help="overwrite existing spec files")
    s.add_argument("--values", "-f", action="append", default=[], metavar="FILE",
                   help="values file for a chart folder, rendered by helm or read --static (repeatable, later wins)")
    s.add_argument("--set", action="append", default=[], metavar="K=V", help="--set for a chart folder, as helm takes it (repeatable)")
    s.add_argument("--release", default=None, help="release name for helm template (default: the chart's name)")
    s.add_argument("--release-label", default=None, metavar="NAME",
                   help="a new chart's PrometheusRule gets the label release: NAME, the Helm release of the "
                        "kube-prometheus-stack whose ruleSelector must pick it (default: .rulegen.yaml "
                        "charts.rule_selector_labels, else release: kube-prometheus-stack); --release names "
                        "the release helm template renders a chart folder with")
    s.add_argument("--namespace", "-n", default=None, help="release namespace for helm template (default: default)")
    s.add_argument("--kube-version", default=None, metavar="V",
                   help="helm --kube-version: the cluster's Kubernetes version, for a chart whose kubeVersion "
                        "helm's default (the current version helm was built for) does not meet, "
                        "or to render for an older cluster")
    s.add_argument("--helm-arg", action="append", default=[], metavar="ARG",
                   help="any other helm template argument, passed as is (repeatable: --helm-arg=--api-versions "
                        "--helm-arg=monitoring.coreos.com/v1)")
    s.add_argument("--tests", action="append", nargs="+", default=[], metavar="FILE",
                   help="promtool test files: each test group is attached to the imported rules it exercises")
    s.add_argument("--variant", default=None, metavar="NAME",
                   help="name of this value set: apps are named <app>-NAME, one app per variant "
                        "(import a chart once per --values file)")
    s.add_argument("--static", action="store_true",
                   help="read a chart folder's templates statically instead of rendering it with helm")
    s.set_defaults(func=cmd_import)

    s = sub.add_parser("baseline", parents=[common],
                       help="update .rulegen-baseline.yaml: drop fixed findings (--add records new ones)")
    s.add_argument("--add", action="store_true",
                   help="also record the current policy errors (naming, conventions) in the baseline")
    s.set_defaults(func=cmd_baseline)

    s = sub.add_parser("schema", parents=[common], help="print the spec JSON Schema")
    s.set_defaults(func=cmd_schema)

    s = sub.add_parser("checks", parents=[common], help="print the documentation of every check, or of one code")
    s.add_argument("code", nargs="?", help="one code, e.g. RG404 (default: all)")
    s.add_argument("--format", choices=("text", "markdown"), default="text",
                   help="markdown: the check reference page, docs/checks.md")
    s.set_defaults(func=cmd_checks)

    for name, cmd in sub.choices.items():
        if name in EXAMPLES:
            cmd.formatter_class = argparse.RawDescriptionHelpFormatter
            cmd.epilog = "example:\n" + "\n".join("  " + line for line in EXAMPLES[name].splitlines())
            if cmd.description is None:
                summary = next(a.help for a in sub._choices_actions if a.dest == name)
                cmd.description = summary[:1].upper() + summary[1:] + "."
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``rulegen`` console script; returns the exit code.

    Python's cyclic garbage collector is off while a command runs (and back as it was after):
    a run is short, its data (specs, findings, rendered text) holds few reference cycles, and
    reference counting frees the rest, while the collector re-scanning the growing heap of
    loaded specs cost about a sixth of a ``check`` on a 100-app project (peak memory there is
    the same either way, about 100 MB)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _main(argv)
    finally:
        if collecting:
            gc.enable()


def _main(argv: list[str] | None) -> int:
    p = parser()
    try:
        args = p.parse_args(argv)
    except SystemExit as e:
        return EXIT_USAGE if e.code not in (0, None) else EXIT_OK
    if not getattr(args, "func", None):
        p.print_help(sys.stderr)
        return EXIT_USAGE
    try:
        return args.func(args)
    except RulegenError as e:
        _err(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        _err("interrupted")
        return EXIT_USAGE
    except BrokenPipeError:
        return EXIT_OK
    except OSError as e:
        _err(f"{e.filename or ''}: {e.strerror or e}" if getattr(e, "filename", None) else str(e))
        return EXIT_USAGE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
