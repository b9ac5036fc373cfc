"""Benchmark: ``rulegen validate`` against ``promtool check rules`` on the same real rules.

Corpus: "Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0
(https://creativecommons.org/licenses/by/4.0/), read from ``../shared/corpus/``.

The corpus rule files are imported to specs once (``rulegen import``, not timed); then, in the
same run, each command is timed ``--repeat`` times as a fresh process (wall time, interpreter
start included, as CI runs it) and the best and median are printed with the ratio
rulegen/promtool (issue 3 aims at <= 2x). The two commands run alternately, after one untimed
run each, so a busy machine slows both alike. rulegen runs with Python's bytecode cache on (in
a temp folder), as an installed tool runs: with ``PYTHONDONTWRITEBYTECODE`` set in the
environment, every run would otherwise compile rulegen's sources again, which is no more
promtool-vs-rulegen than timing ``go build`` would be (``--no-bytecode-cache`` measures that way). ``--profile`` also prints where rulegen's time goes
(cProfile of one in-process ``validate``, top functions by cumulative time).

Run: ``python benchmarks/validate_corpus.py [--repeat N] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py, when loaded by path
from timing import python_env, time_pair  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "awesome-prometheus-alerts" / "rules"
ATTRIBUTION = '"Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0'


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command (default 3)")
    ap.add_argument("--profile", action="store_true", help="also profile one in-process rulegen validate")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="keep the inherited PYTHONDONTWRITEBYTECODE (rulegen compiles its sources every run)")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from rulegen.importer import import_paths, write_specs
    from rulegen.tools import find

    promtool = find.find("promtool", REPO)
    if promtool is None:
        print("promtool is not installed; run scripts/install-tools.sh", file=sys.stderr)
        return 2
    if not CORPUS.is_dir():
        print(f"corpus not found at {CORPUS}", file=sys.stderr)
        return 2
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yml", ".yaml"))
    with tempfile.TemporaryDirectory(prefix="rulegen-bench-") as tmp:
        root = Path(tmp)
        res = import_paths([CORPUS], out_dir=root / "rules", display_base=CORPUS)
        write_specs(res, root / "rules")
        alerts = sum(s.alerts for s in res.specs)
        rulegen_cmd = [sys.executable, "-m", "rulegen", "-C", str(root), "validate", "-o", "json"]
        promtool_cmd = [str(promtool), "check", "rules", *map(str, files)]
        env = python_env(None if args.no_bytecode_cache else str(root / "pycache"))
        rg, pt = time_pair(rulegen_cmd, promtool_cmd, args.repeat, a_ok=(0, 1), a_env=env)
        print(f"corpus: {ATTRIBUTION}")
        print(f"  {len(files)} rule files, {len(res.specs)} specs, {alerts} alerts; {args.repeat} run(s) each, "
              f"alternating; bytecode cache {'off' if args.no_bytecode_cache else 'on'}; "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"  rulegen validate     best {min(rg):6.2f}s  median {statistics.median(rg):6.2f}s")
        print(f"  promtool check rules best {min(pt):6.2f}s  median {statistics.median(pt):6.2f}s")
        print(f"  ratio (best) {min(rg) / min(pt):.1f}x  (median) {statistics.median(rg) / statistics.median(pt):.1f}x"
              "  (aim: <= 2x)")
        if args.profile:
            from rulegen.pipeline import load_project
            prof = cProfile.Profile()
            prof.enable()
            load_project(root)
            prof.disable()
            buf = io.StringIO()
            pstats.Stats(prof, stream=buf).sort_stats("cumulative").print_stats(30)
            print(buf.getvalue())
    return 0


if __name__ == "__main__":
    sys.exit(main())
