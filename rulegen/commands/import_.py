"""``rulegen import``: turn rule files, PrometheusRule manifests or Helm templates into specs
(see :mod:`rulegen.importer`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..fs.containment import refuse_outside
from ..findings import RulegenError
from ..formatters import render as render_notes

NAME = "import"
EXAMPLE = ("rulegen import alerts.rules.yml --app shop   # writes rules/shop.yaml\n"
           "rulegen import charts/kube-prometheus-stack --tests tests/*.yaml")


def add_parser(sub, common) -> None:
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
    s.add_argument("--report", action="store_true",
                   help="after writing, a short adoption report: which imported alerts' tests state the fewest "
                        "of a firing case, a non-firing case and both sides of `for` (as declared, not run), "
                        "and which have none (for `rulegen derive-tests`)")
    s.add_argument("--static", action="store_true",
                   help="read a chart folder's templates statically instead of rendering it with helm")
    s.set_defaults(func=run)


def run(args) -> int:
    return run_import(args)


def run_import(args) -> int:
    """``rulegen import`` (options: :func:`add_parser`). All or nothing: when every source was
    imported and the project validates with the specs (policy findings baselined), writes the
    specs into ``--out``, and the conventions read from them (``.rulegen.yaml``), the
    baseline and chart values into the project of ``--out`` (:func:`project_of`), and
    returns 0; otherwise writes nothing, names every problem and returns 1.

    Raises:
        RulegenError: a source path does not exist, ``--app`` is not a DNS label, helm
            fails on a chart, ``--out`` is not a relative path inside the project, or a file to
            write lies behind a symlink leading outside it
            (:mod:`rulegen.fs.containment`; exit 2).
    """
    from ..importer import chart, import_paths, plan_import, project_of
    from ..pipeline import DEFAULT_SPEC_DIR
    from ..spec import shown_path
    root = Path(getattr(args, "root", ".") or ".")
    paths = [Path(p) if Path(p).is_absolute() else root / p for p in args.sources]
    refuse_outside(root, args.out.rstrip("/") or args.out, "--out")  # relative, inside the project (RG740-RG743)
    out_dir = root / args.out
    project = project_of(root, args.out)
    opts = chart.RenderOptions(
        values=[Path(v) if Path(v).is_absolute() else root / v for v in getattr(args, "values", None) or []],
        set_values=list(getattr(args, "set", None) or []),
        release=getattr(args, "release", None),
        namespace=getattr(args, "namespace", None) or chart.helm.DEFAULT_NAMESPACE,
        kube_version=getattr(args, "kube_version", None),
        helm_args=list(getattr(args, "helm_arg", None) or []),
        static=bool(getattr(args, "static", False)),
        variant=getattr(args, "variant", None))
    result = import_paths(paths, args.app, out_dir, display_base=root, render=opts, project=project)
    test_files = [Path(t) if Path(t).is_absolute() else root / t
                  for group in (getattr(args, "tests", None) or []) for t in group]
    if test_files:
        from ..importer.tests import attach
        for t in test_files:
            if not t.is_file():
                raise RulegenError(f"{t}: no such test file")
        result.notes.extend(attach([(t, shown_path(t, root)) for t in test_files], result.specs))
    release_label = getattr(args, "release_label", None)
    if release_label is not None:
        from ..config import selector_label
        selector_label("release", release_label, "--release-label")
    plan = plan_import(result, root, out_dir, bool(getattr(args, "force", False)), args.app,
                       opts.variant, project, release_label) if result.ok else None
    if result.notes:
        result.notes.sort(key=lambda f: (f.file, f.line, f.col, f.code, f.message))
        print(render_notes(result.notes, "text"), file=sys.stderr)
    if plan is None or not result.ok:
        n = sum(1 for x in result.notes if x.is_error)
        hint = " (or, for a Helm chart, import what helm renders: `rulegen import CHART_DIR`)" if result.helm else ""
        print(f"rulegen: {n} problem(s) above; nothing was written. Fix the sources{hint}, then import again",
              file=sys.stderr)
        return 1
    by_app = {s.app: s for s in result.specs}
    # all or nothing, every file inside the project with no symlink leading out (RG747)
    from ..fs.write import write_all
    write_all(root, {Path(os.path.relpath(p, root)).as_posix(): text for p, text in plan["files"].items()})
    for m in plan["messages"]:
        print(m)
    for s in result.specs:
        print(f"wrote {shown_path(out_dir / f'{s.app}.yaml', root)}: {s.alerts} alert(s), {s.records} recording "
              f"rule(s) from {', '.join(s.sources)}")
    if not by_app:
        print("no rule to import (the notes above say why); nothing was written")
        return 0
    if project.resolve() != root.resolve():
        nxt = f"rulegen -C {shown_path(project, root)} build"
    elif out_dir.resolve() != (root / DEFAULT_SPEC_DIR).resolve():
        nxt = f"rulegen build {shown_path(out_dir, root)}"
    else:
        nxt = "rulegen build"
    if getattr(args, "report", False):
        _adoption_report(project, [out_dir / f"{s.app}.yaml" for s in result.specs])
    print(f"{len(by_app)} spec(s) written; next: `{nxt}`")
    return 0


def _adoption_report(project: Path, written: list[Path]) -> None:
    """Print the adoption report (:func:`rulegen.run.adoption.declared_report`) of the specs
    just written (loaded from the project, as every command reads them)."""
    from ..pipeline import load_project
    from ..run.adoption import declared_report
    loaded = load_project(project, [str(p) for p in written], use_baseline=False)
    for line in declared_report(loaded.specs):
        print(line)
