"""``rulegen new APP``: a starter spec, and the chart, page and tests when the chart is missing."""

from __future__ import annotations

import argparse
from pathlib import Path

from . import EXIT_OK
from .build import run as build

NAME = "new"
EXAMPLE = ("rulegen new shop          # writes rules/shop.yaml and charts/shop/ if missing\n"
           "rulegen validate && rulegen build && rulegen test --app shop")


def add_parser(sub, common) -> None:
    s = sub.add_parser("new", parents=[common], help="write a starter spec (and the chart if missing) for an app")
    s.add_argument("app", help="app name, a DNS label (e.g. shop)")
    s.add_argument("--title", default=None, help="display title on the runbook site (default: the app name)")
    s.add_argument("--release", default=None, metavar="NAME",
                   help="the new chart's PrometheusRule gets the label release: NAME, the Helm release of the "
                        "kube-prometheus-stack whose ruleSelector must pick it (default: .rulegen.yaml "
                        "charts.rule_selector_labels, else release: kube-prometheus-stack)")
    s.set_defaults(func=run)


def run(args) -> int:
    from ..config import selector_label
    from ..starter import is_new_project, write_project_config, write_schema_copy, write_site_files, write_starter
    root = Path(args.root)
    if args.release is not None:
        selector_label("release", args.release, "--release")
    fresh = is_new_project(root)
    path = write_starter(root, args.app, args.title)
    print(f"wrote {path.relative_to(root)}")
    said: set[str] = set()  # files said here, with their note: the build below does not say them again
    schema = write_schema_copy(root)
    if schema is not None:
        print(f"wrote {schema.relative_to(root)} (the spec schema, for editors: the spec's $schema line names it)")
    if fresh:
        print(f"wrote {write_project_config(root).relative_to(root)} (policy_changes: fail: "
              "`rulegen check --base` fails a pull request that grows the baseline or weakens a check)")
        for written in write_site_files(root):
            said.add(written.relative_to(root).as_posix())
            print(f"wrote {written.relative_to(root)}" + (" (the runbook site: set its site_url)"
                                                          if written.name == "mkdocs.yml" else ""))
    chart = root / "charts" / args.app
    if not chart.exists():
        # the chart is missing: make it (and the page and the tests) from the new spec, and
        # the site's home page, alert index and nav with the new app in them; when another
        # spec has errors, the new spec's files alone (the site's stay as they are: say so)
        rel = path.relative_to(root).as_posix()
        from ..pipeline import load_project
        whole_ok = load_project(root).ok
        built = argparse.Namespace(root=args.root, paths=[rel], format="helm", force=False,
                                   new_spec=rel if whole_ok else None, release_label=args.release,
                                   said=frozenset(said))
        code = build(built)
        if code != EXIT_OK:
            return code
        if not whole_ok:
            print(f"note: other specs have errors, so the site's home page, alert index and nav "
                  f"(runbooks/index.md, runbooks/alerts.md, mkdocs.yml) do not list {args.app} yet; "
                  "`rulegen build` adds it once they validate")
    print(f"next: edit {path.relative_to(root)}, then `rulegen build` and "
          f"`rulegen test --app {args.app}`")
    return EXIT_OK
