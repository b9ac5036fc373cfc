"""Benchmark: ``rulegen validate`` against ``promtool check rules`` on the same real rules.

Corpus: "Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0
(https://creativecommons.org/licenses/by/4.0/), read from ``../shared/corpus/``.

The corpus rule files are imported to specs once (``rulegen import``, not timed); then, in the
same run, each command is timed ``--repeat`` times as a fresh process (wall time, interpreter
start included, as CI runs it) and the best and median are printed with the ratio
rulegen/promtool (issue 3 aims at <= 2x). ``--profile`` also prints where rulegen's time goes
(cProfile of one in-process ``validate``, top functions by cumulative time).

Run: ``python benchmarks/validate_corpus.py [--repeat N] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "awesome-prometheus-alerts" / "rules"
ATTRIBUTION = '"Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0'


def _time(cmd: list[str], repeat: int, ok_codes=(0, 1)) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        out.append(time.perf_counter() - t)
        if proc.returncode not in ok_codes:
            raise SystemExit(f"{cmd[0]} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command (default 3)")
    ap.add_argument("--profile", action="store_true", help="also profile one in-process rulegen validate")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
    from rulegen.importer import import_paths, write_specs
    from rulegen.run import tools

    promtool = tools.find("promtool", REPO)
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
        rg = _time(rulegen_cmd, args.repeat)
        pt = _time(promtool_cmd, args.repeat, ok_codes=(0,))
        print(f"corpus: {ATTRIBUTION}")
        print(f"  {len(files)} rule files, {len(res.specs)} specs, {alerts} alerts; {args.repeat} run(s) each")
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
