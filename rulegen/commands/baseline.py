"""``rulegen baseline``: update ``.rulegen-baseline.yaml`` (see :mod:`rulegen.baseline`)."""

from __future__ import annotations

import sys
from pathlib import Path

NAME = "baseline"
EXAMPLE = ("rulegen baseline                     # drop entries whose findings are fixed\n"
           "rulegen baseline --add               # also accept today's policy findings")


def add_parser(sub, common) -> None:
    s = sub.add_parser("baseline", parents=[common],
                       help="update .rulegen-baseline.yaml: drop fixed findings (--add records new ones)")
    s.add_argument("--add", action="store_true",
                   help="also record the current policy errors (naming, conventions) in the baseline")
    s.set_defaults(func=run)


def run(args) -> int:
    return run_baseline(Path(args.root), args.add, sys.stdout)


def run_baseline(root: Path, add: bool, stream) -> int:
    """``rulegen baseline``: remove the entries that match no finding; with ``add`` (or when
    there is no baseline yet) also record the current policy errors. A version 1 entry is
    rewritten as one entry per finding it covers. Prints what changed; returns 0.

    Raises:
        RulegenError: no ``rules/`` folder, or an invalid config or baseline file.
    """
    from ..baseline import BASELINE_FILE, load, update, write
    from ..pipeline import load_project
    loaded = load_project(root, use_baseline=False)
    u = update(loaded.findings, {s.file: s.app for s in loaded.specs}, load(root), add)
    after, removed, added, migrated, n_old = u.after, u.removed, u.added, u.migrated, u.n_old
    for k in removed:
        print(f"removed {k[2]} on {k[0]}/{k[1]}: no longer found", file=stream)
    if n_old:
        print(f"rewrote {n_old} version 1 entr{'y' if n_old == 1 else 'ies'} (app, rule and code) as "
              f"{len(migrated)} entr{'y' if len(migrated) == 1 else 'ies'} keyed by the finding's message", file=stream)
    if len(added) <= 20:
        for k in added:
            print(f"recorded {k[2]} on {k[0]}/{k[1]}: {k[3]}", file=stream)
    else:
        by_code: dict = {}
        for k in added:
            by_code[k[2]] = by_code.get(k[2], 0) + 1
        print(f"recorded {len(added)} finding(s): " + ", ".join(f"{c} {n}" for c, n in sorted(by_code.items())),
              file=stream)
    if u.left_out:
        print(f"{len(u.left_out)} policy error(s) not in the baseline stay errors; fix them, or run "
              "`rulegen baseline --add` to accept them on purpose", file=stream)
    if u.changed:
        write(root, after)
        print(f"{BASELINE_FILE}: {len(after)} entr{'y' if len(after) == 1 else 'ies'} "
              f"({len(removed)} removed, {len(added)} added)", file=stream)
    else:
        print(f"{BASELINE_FILE}: unchanged, {len(after)} entr{'y' if len(after) == 1 else 'ies'}", file=stream)
    return 0
