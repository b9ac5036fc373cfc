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
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "awesome-prometheus-alerts" / "rules"
ATTRIBUTION = '"Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0'


def _run(cmd: list[str], ok_codes, env=None) -> float:
    t = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t
    if proc.returncode not in ok_codes:
        raise SystemExit(f"{cmd[0]} exited {proc.returncode}: {proc.stderr[-2000:]}")
    return took


def _time_pair(a: list[str], b: list[str], repeat: int, a_ok=(0, 1), b_ok=(0,), a_env=None):
    """Wall times of ``repeat`` runs of ``a`` and of ``b``, alternating, after one untimed run of each."""
    _run(a, a_ok, a_env)
    _run(b, b_ok)
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(_run(a, a_ok, a_env))
        tb.append(_run(b, b_ok))
    return ta, tb


def python_env(pycache: str | None) -> dict:
    """The environment rulegen runs in: bytecode cached under ``pycache`` (None: as inherited)."""
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command (default 3)")
    ap.add_argument("--profile", action="store_true", help="also profile one in-process rulegen validate")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="keep the inherited PYTHONDONTWRITEBYTECODE (rulegen compiles its sources every run)")
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
        env = python_env(None if args.no_bytecode_cache else str(root / "pycache"))
        rg, pt = _time_pair(rulegen_cmd, promtool_cmd, args.repeat, a_env=env)
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
