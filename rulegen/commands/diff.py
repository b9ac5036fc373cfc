"""``rulegen diff``: what changed since a Git ref, in alert terms (see :mod:`rulegen.gitops.diff`)."""

from __future__ import annotations

import sys
from pathlib import Path

from ..findings import RulegenError
from ..live.options import add_options, from_args
from . import EXIT_OK, EXIT_USAGE

NAME = "diff"
EXAMPLE = ("rulegen diff --base origin/main -o markdown > pr-comment.md\n"
           "rulegen diff --base origin/main -o markdown --prometheus https://prometheus.example.com  # + backtest")


def add_parser(sub, common) -> None:
    s = sub.add_parser("diff", parents=[common], help="what changed since a Git ref, in alert terms")
    s.add_argument("--base", default="HEAD", help="Git ref to compare with (default HEAD)")
    s.add_argument("-o", "--output", choices=("text", "markdown"), default="text")
    s.add_argument("--backtest-since", type=_since, default=7 * 86400.0, metavar="DURATION",
                   help="window of the old-vs-new backtest of added and changed alerts (default 7d; "
                        "needs a Prometheus: --prometheus or prometheus.url)")
    add_options(s)
    s.set_defaults(func=run)


def _since(text: str) -> float:
    from .backtest import _duration
    return _duration(text)


def run(args) -> int:
    return run_diff(Path(args.root), args.base, args.output, sys.stdout, live=from_args(args),
                    since=args.backtest_since)


def _backtest(root: Path, base: str, loaded, old_specs, summary, live, since: float, output: str) -> str:
    """The old-vs-new backtest table of the alerts ``summary`` adds or changes (see
    :func:`rulegen.gitops.backtest.diff_backtest`), as text to append to the summary; with no
    Prometheus configured, a note on stderr and nothing. Raises LiveError/RulegenError."""
    from ..gitops.backtest import diff_backtest, diff_markdown, diff_text
    from ..live.connect import SKIPPED, resolve
    conn = resolve(root, loaded.config.prometheus, live)
    if conn is None:
        print(f"rulegen: note: {SKIPPED}", file=sys.stderr)
        return ""
    rows, window = diff_backtest(root, base, loaded, old_specs, summary, conn, since)
    if output == "markdown":
        return "\n".join(diff_markdown(rows, window, conn.url)) + "\n"
    return "\n".join(diff_text(rows, window, conn.url)) + "\n"


def run_diff(root: Path, base: str, output: str, stream=None, live=None, since: float = 7 * 86400.0) -> int:
    """Print the review summary of ``rules/`` between Git ``base`` and the working tree.

    Args:
        root: project root (inside a Git work tree).
        base: any Git revision (``HEAD``, ``origin/main``, a SHA).
        output: ``text`` or ``markdown``.
        stream: where to print (default stdout); errors go to stderr.
        live: :class:`rulegen.live.options.CliOptions` of a live Prometheus; with one (or
            ``prometheus.url``), every alert added or changed is backtested over the last
            ``since`` seconds, old rule vs new, and the table follows the summary.

    Returns:
        0, or 2 when Git, the ref or the working tree's specs cannot be read, or the backtest
        failed (nothing is printed then).
    """
    from ..gitops import policy
    from ..gitops.diff import compare_specs, values_effects
    from ..gitops.diff_report import render_markdown, render_text
    from ..gitops.gitbase import SPEC_DIR, load_base
    from ..pipeline import load_project
    stream = stream or sys.stdout
    try:
        loaded = load_project(root)
        old_specs, old_findings, n_old = load_base(root, base, loaded.config)
    except RulegenError as e:
        print(f"rulegen: {e}", file=sys.stderr)
        return EXIT_USAGE
    summary = compare_specs(old_specs, loaded.specs)
    try:
        report = policy.compare(root, base, loaded.config, loaded)
    except RulegenError as e:
        print(f"rulegen: {e}", file=sys.stderr)
        return EXIT_USAGE
    summary.policy = report.changes
    summary.notes.extend(report.notes)
    broken_old = sorted({f.file for f in old_findings if f.is_error})
    broken_new = sorted({f.file for f in loaded.findings if f.is_error})
    if broken_old:
        summary.notes.append(f"at {base}, these specs have errors and were compared as far as they "
                             f"loaded: {', '.join(broken_old)}")
    if broken_new:
        summary.notes.append("in the working tree, these specs have errors (run `rulegen validate`) "
                             f"and were compared as far as they loaded: {', '.join(broken_new)}")
    if n_old == 0:
        summary.notes.append(f"{base} has no specs under {SPEC_DIR}/")
    try:
        summary.values, notes = values_effects(root, base, old_specs, loaded.specs)
    except RulegenError as e:
        summary.values, notes = [], [f"values were not compared: {e}"]
    summary.notes.extend(notes)
    from ..gitops.routing_diff import routing_changes
    try:
        summary.routing, notes = routing_changes(root, base, old_specs, loaded.specs, loaded.config)
    except RulegenError as e:
        summary.routing, notes = [], [f"routing was not compared: {e}"]
    summary.notes.extend(notes)
    text = render_markdown(summary, base) if output == "markdown" else render_text(summary, base)
    try:
        text += _backtest(root, base, loaded, old_specs, summary, live, since, output)
    except RulegenError as e:
        print(f"rulegen: {e}", file=sys.stderr)
        return EXIT_USAGE
    stream.write(text)
    return EXIT_OK
