"""``rulegen check``: the drift check CI runs on every pull request (parts in
:mod:`rulegen.gitops.check`).

It does what ``build`` does, in memory (:func:`rulegen.pipeline.load_project` then
:func:`rulegen.pipeline.plan_project`), compares the plan with the working tree
(:func:`rulegen.gitops.write.compare`) and writes nothing. It reports, in this order:

1. validation findings (any error fails the check; drift is then not computed, because a plan
   made from the specs that did load would call every file of the broken spec stale);
2. runbook link findings from :func:`rulegen.outputs.links.check_links`, and (``helm``
   format) what the Argo CD sync of the charts would reject (:mod:`rulegen.gitops.sync`:
   values files through helm, the CRD schema, the webhook);
3. a unified diff (``--- a/<path>`` / ``+++ b/<path>``, as ``git diff`` prints it: ``a`` is
   the disk, ``b`` what ``build`` would write) for every file that differs;
4. generated files edited by hand, stale generated files (made from a spec that no longer
   produces them) and temp files left by an interrupted build;
5. one summary line.

With ``--base REF`` it also compares the baseline and the check configuration with those at
Git ``REF`` (:mod:`rulegen.gitops.policy`): each change that weakens what is checked (an entry
added to ``.rulegen-baseline.yaml``, a code switched off or lowered to a warning, a convention
relaxed) is a finding, RG820-RG823, reported with the validation findings. They are errors
when ``REF``'s own ``.rulegen.yaml`` says ``policy_changes: fail`` or does not say (the
default), or with ``--fail-on-policy-changes``; warnings when ``REF`` says ``warn``. The pull
request's own ``.rulegen.yaml`` has no say in it.

Exit codes: 0 nothing to do, 1 findings with errors or any drift, 2 usage or internal fault.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..findings import RulegenError
from ..formatters import render
from ..live.options import add_options, from_args
from . import EXIT_FAIL, EXIT_OK, EXIT_USAGE

NAME = "check"
EXAMPLE = ("rulegen check                        # in CI: exit 1 when outputs and specs disagree\n"
           "rulegen check --base origin/main     # on a PR: also fail when it grows the baseline or weakens a check")


def add_parser(sub, common) -> None:
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
    add_options(s)
    s.set_defaults(func=run)


def run(args) -> int:
    return run_check(Path(args.root), args.paths or None, sys.stdout, args.format, args.base,
                     args.fail_on_policy_changes, from_args(args))


def run_check(root: Path, paths: list[str] | None, stream=None, fmt: str = "helm", base: str | None = None,
              fail_on_policy_changes: bool = False, live=None) -> int:
    """Run the drift check on the project at ``root`` and print the report to ``stream``.

    Args:
        root: project root.
        paths: spec files or folders (default ``rules/``). With paths, only the files made from
            those specs are checked: site-wide pages and stale files of other specs are not.
        stream: text stream for the report (default stdout); usage errors go to stderr.
        fmt: output format to check, ``helm`` (default) or ``rules``, as for ``build``.
        base: a Git ref (the pull request's base branch): also report the policy changes since
            it (see the module docstring); None: not compared.
        fail_on_policy_changes: make those findings errors whatever ``base``'s config says.
        live: :class:`rulegen.live.options.CliOptions` of a live Prometheus (``--prometheus``...);
            with one configured (there or in ``.rulegen.yaml``) the series checks run too
            (RG900-RG906, after validation passes); without, one line on stderr says they were
            skipped.

    Returns:
        0 clean, 1 validation errors or drift, 2 usage or internal fault.
    """
    stream = stream or sys.stdout
    try:
        if fail_on_policy_changes and base is None:
            raise RulegenError("--fail-on-policy-changes needs --base REF (the branch the pull request goes into)")
        return _run(root, paths, stream, fmt, base, fail_on_policy_changes, live)
    except RulegenError as e:
        print(f"rulegen: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (OSError, ValueError) as e:
        print(f"rulegen: check failed: {type(e).__name__}: {e}", file=sys.stderr)
        return EXIT_USAGE


def _policy_summary(out, policy_findings: list, base: str | None) -> None:
    """One line on the policy changes since ``base`` (nothing when there are none)."""
    if not policy_findings:
        return
    n = len(policy_findings)
    if any(f.is_error for f in policy_findings):
        out(f"check: {n} policy change(s) since {base} weaken what rulegen checks (RG820-RG823 above); they "
            "fail the check until a reviewer agrees to them (merged past this check) or they are undone")
    else:
        out(f"check: {n} policy change(s) since {base} weaken what rulegen checks (RG820-RG823 above); "
            f"reported only, as {base}'s .rulegen.yaml says policy_changes: warn")


def _missing_links(outputs, root: Path) -> list:
    """RG770 for each chart whose link to the chart library is missing (one that is something
    else is RG770 of validation, :mod:`rulegen.validate.checks.paths`)."""
    from ..findings import Finding, Severity
    from ..render import library
    out = []
    for o in outputs:
        if o.link and library.link_state(root, o.path)[0] == "missing":
            out.append(Finding(o.path, 0, 0, "RG770", Severity.ERROR,
                               library.missing_link_message(o.path.rsplit("/", 2)[0])))
    return out


def _run(root: Path, paths, stream, fmt: str, base: str | None = None, force_policy: bool = False,
         live=None) -> int:
    from ..gitops import write
    from ..render import ownership
    from ..outputs import links
    from ..gitops.check import unified_diff
    from ..pipeline import load_project, plan_project, warm_render

    def out(text: str = "") -> None:
        print(text, file=stream)

    loaded = load_project(root, paths, warm_render, stale_baseline_is_error=True)
    findings = list(loaded.findings)
    policy_findings: list = []
    if base is not None:
        from ..gitops import policy
        report = policy.compare(root, base, loaded.config, None if paths else loaded)
        policy_findings = policy.findings(report, base, force_policy)
        findings += policy_findings
        for note in report.notes:
            out(f"note: {note}")
    if not loaded.ok:
        out(render(findings, "text"))
        _policy_summary(out, policy_findings, base)
        out("check: validation failed; fix the errors above, then run `rulegen build` "
            "(drift was not checked)")
        return EXIT_FAIL
    partial = bool(paths)
    # what the Argo CD sync of the charts would reject (rulegen.gitops.sync): its helm renders
    # start now and run while the outputs are planned; an error starting them is raised where
    # the sync check's findings are taken, as when it started there
    synced, sync_error = None, None
    if fmt == "helm":
        from ..gitops import sync
        try:
            synced = sync.start(loaded, root, sorted({s.chart.path for s in loaded.specs}) if partial else None)
        except Exception as e:  # noqa: BLE001 (raised below, in its place)
            sync_error = e
    try:
        outputs, plan_findings = plan_project(loaded, fmt)
        findings += plan_findings
        if any(f.is_error for f in plan_findings):
            out(render(findings, "text"))
            _policy_summary(out, policy_findings, base)
            out("check: some outputs could not be made; fix the errors above (drift was not checked)")
            return EXIT_FAIL
        outputs = write.scope(outputs, partial)
        findings += _missing_links(outputs, root)
        findings += loaded.config.apply(list(links.check_links(outputs, loaded.specs, root)))
        if fmt == "helm":
            # a knob naming no rule is RG730 already (with its own advice): not again as RG735
            seen = {(f.file, f.line, f.col) for f in findings if f.code == "RG730"}
            # a chart without its library link is RG770 (run `rulegen build`): helm's failure
            # to render it, which advises `helm dependency build`, is not reported again
            unlinked = {f.file.rsplit("/", 2)[0] + "/" for f in findings if f.code == "RG770"}
            selector = sync.selector_findings(loaded.config, root)
            if sync_error is not None:
                raise sync_error
            findings += loaded.config.apply(selector + [
                f for f in synced.findings() if (f.file, f.line, f.col) not in seen
                and not (f.code == "RG735" and any(f.file.startswith(c) for c in unlinked))])
    finally:
        if synced is not None:
            synced.close()
    from ..gitops.live import series_findings
    found, note = series_findings(root, loaded.config, loaded.specs, live)
    findings += loaded.config.apply(found)
    if note:
        print(f"rulegen: note: {note}", file=sys.stderr)
    if findings:
        out(render(findings, "text"))
    _policy_summary(out, policy_findings, base)

    sources = {s.file for s in loaded.specs} if partial else None
    status = write.compare(outputs, root, fmt, sources)
    by_path = {o.path: o for o in outputs}
    for path in status.changed:
        if not by_path[path].link:  # a link: RG770 above
            out(unified_diff(path, write.read(root / path), by_path[path].content).rstrip("\n"))
    for path in status.hand_edited:
        why = f" ({status.why[path]})" if path in status.why else ""
        lead = ("differs from what rulegen wrote, so it may have been changed by hand" if write.SUM_MISMATCH in why
                else "changed by hand since rulegen generated it")
        out(f"hand-edited: {path}: {lead}{why}; move the change "
            "into the spec (or a runbook notes slot) and run `rulegen build`, or run "
            "`rulegen build --force` to discard it")
    for path in status.stale:
        text = write.read(root / path) or ""
        out(f"stale: {path}: generated from {ownership.source_of(text) or 'a spec'}, which no "
            "longer produces it; `rulegen build` removes it")
    temps = write.temp_files(root, outputs, fmt)
    for path in temps:
        out(f"leftover: {path}: temp file of an interrupted build; `rulegen build` removes it")

    drift = len(status.changed) + len(status.stale) + len(temps)
    errors = sum(f.is_error for f in findings)
    if drift:
        out(f"check: {len(status.changed)} file(s) differ, {len(status.stale)} stale, "
            f"{len(status.hand_edited)} edited by hand, {len(temps)} leftover temp file(s); "
            + ("settle the hand edits as said above, then " if status.hand_edited else "")
            + "run `rulegen build` and commit the result")
    else:
        out(f"check: {len(status.unchanged)} generated file(s) up to date")
    return EXIT_FAIL if drift or errors else EXIT_OK
