"""``rulegen build``: validate, then write charts, runbook pages and promtool tests."""

from __future__ import annotations

import sys
from pathlib import Path

from . import EXIT_FAIL, EXIT_OK, err, print_findings

NAME = "build"
EXAMPLE = ("rulegen build                        # charts, runbook pages and promtool tests\n"
           "rulegen build rules/shop.yaml        # only what that spec makes")


def add_parser(sub, common) -> None:
    s = sub.add_parser("build", parents=[common], help="validate, then write charts, runbook pages and promtool tests")
    s.add_argument("paths", nargs="*", help="spec files or folders (default: rules/)")
    s.add_argument("--format", choices=("helm", "rules"), default="helm",
                   help="helm: PrometheusRule templates in charts (default); rules: plain rule files in rules-out/")
    s.add_argument("--force", action="store_true", help="overwrite generated files edited by hand")
    s.set_defaults(func=run)


def run(args) -> int:
    from ..gitops import write
    from ..pipeline import load_project, plan_project
    root = Path(args.root)
    # `rulegen new`: the whole project is planned (the site's home page, alert index and nav
    # list every app), and only the new spec's files and the site-wide ones are written
    new_spec = getattr(args, "new_spec", None)
    loaded = load_project(root, None if new_spec else args.paths or None)
    shown = [f for f in loaded.findings if not new_spec or f.file == new_spec]
    if shown:
        print_findings(shown, stream=sys.stderr)
    if not loaded.ok:
        err("validation failed; nothing was written")
        return EXIT_FAIL
    release = getattr(args, "release_label", None)
    if release is not None:  # `rulegen new --release NAME`: the new chart's rule-selector label
        import dataclasses
        labels = {**loaded.config.rule_selector_labels, "release": release}
        loaded.config = dataclasses.replace(loaded.config, rule_selector_labels=labels)
    outputs, findings = plan_project(loaded, args.format)
    if findings:
        print_findings(findings, stream=sys.stderr)
    if any(f.is_error for f in findings):
        err("some outputs could not be made; nothing was written")
        return EXIT_FAIL
    partial = bool(args.paths)
    if new_spec:
        from ..render import library
        outputs = [o for o in outputs if o.source in (new_spec, "", library.SOURCE)]
        partial, loaded_files = False, {new_spec}
    else:
        loaded_files = {s.file for s in loaded.specs} if partial else None
    outputs = write.scope(outputs, partial)
    status = write.compare(outputs, root, args.format, loaded_files)
    if status.hand_edited and not args.force:
        for p in status.hand_edited:
            why = f" ({status.why[p]})" if p in status.why else ""
            # one digest covers all the files of a spec: a mismatch cannot name the edited file
            lead = ("differs from what rulegen wrote, so it may have been edited by hand" if write.SUM_MISMATCH in why
                    else "edited by hand since rulegen generated it")
            err(f"{p}: {lead}; refusing to overwrite{why}. Move the "
                "change into the spec (or a notes slot) and rerun, or rerun with --force to discard it")
        if any(write.SUM_MISMATCH in w for w in status.why.values()):
            err("a sum file records one digest for all the files made from a spec, so rulegen cannot tell which "
                "of them was edited: look at them (git diff); once every hand edit is in the spec or undone, "
                "`rulegen build --force` loses nothing")
        err("nothing was written")
        return EXIT_FAIL
    for p in write.clean_temp_files(root, outputs, args.format):
        print("removed leftover " + p)
    gates_of = {f"{s.chart.path}/Chart.yaml": (s.chart.path, s.chart.gates) for s in loaded.specs}
    new_charts = {p for p in gates_of if not (root / p).exists()}
    touched = write.apply(outputs, root, status)
    said = getattr(args, "said", frozenset())  # `rulegen new`: files it wrote and said (mkdocs.yml)
    for p in touched:
        if p not in said or p in status.stale:
            print(("removed " if p in status.stale else "wrote ") + p)
    for p in touched:
        if p in new_charts and p not in status.stale:
            chart, gates = gates_of[p]
            print(f"new chart {chart}: its PrometheusRule renders only when {' and '.join(gates)} "
                  f"are true; {chart}/values.yaml sets them false until you turn them on there "
                  "(or with helm --set, or in the Argo CD Application)")
    print(f"{len(loaded.specs)} spec(s): {len(touched)} file(s) written, {len(status.unchanged)} unchanged")
    kinds = (("chart rules file(s)", "/rules/", ".rules.yaml"), ("promtool test file(s)", ".test.yaml", ""),
             ("runbook page(s)", "runbooks/", ""), ("plain rule file(s)", "rules-out/", ""))
    counts = [(what, sum(1 for o in outputs if part in o.path and o.path.endswith(end))) for what, part, end in kinds]
    have = [f"{n} {what}" for what, n in counts if n]
    print("outputs: " + ", ".join(have) + "; run `rulegen test` to run the promtool tests")
    return EXIT_OK
