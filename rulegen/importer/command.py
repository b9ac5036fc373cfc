"""``rulegen import``: the command's wiring and printing (:func:`run_import`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from ..fs.containment import refuse_outside
from ..fs.write import write_all
from ..findings import RulegenError
from . import chart
from .build import import_paths
from .plan import plan_import, project_of


def run_import(args) -> int:
    """``rulegen import`` (see :mod:`rulegen.cli`). All or nothing: when every source was
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
    from ..formatters import render as render_notes
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
        from .tests import attach
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
    write_all(root, {Path(os.path.relpath(p, root)).as_posix(): text for p, text in plan["files"].items()})
    for m in plan["messages"]:
        print(m)
    for s in result.specs:
        print(f"wrote {shown_path(out_dir / f'{s.app}.yaml', root)}: {s.alerts} alert(s), {s.records} recording "
              f"rule(s) from {', '.join(s.sources)}")
    from ..pipeline import DEFAULT_SPEC_DIR
    if not by_app:
        print("no rule to import (the notes above say why); nothing was written")
        return 0
    if project.resolve() != root.resolve():
        nxt = f"rulegen -C {shown_path(project, root)} build"
    elif out_dir.resolve() != (root / DEFAULT_SPEC_DIR).resolve():
        nxt = f"rulegen build {shown_path(out_dir, root)}"
    else:
        nxt = "rulegen build"
    print(f"{len(by_app)} spec(s) written; next: `{nxt}`")
    return 0
