"""Benchmark: ``rulegen validate`` against ``promtool check rules`` on the same real rules.

Corpus: "Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0
(https://creativecommons.org/licenses/by/4.0/), read from ``../shared/corpus/``.

The corpus rule files are imported to specs once (``rulegen import``, not timed); then, in the
same run, each command is timed ``--repeat`` times as a fresh process (wall time, interpreter
start included, as CI runs it; and the CPU time, user + system, that rulegen's process and its
forked child used) and the best and median are printed with the ratios rulegen/promtool of
the medians and of the bests, of wall and of CPU time; issue 25 aims at a median wall ratio
<= 1.5 (on a quiet 2-core machine), and the last line says whether this run met it. The commands run in turn (rulegen, promtool, rulegen, ...), after
one untimed run each, so a busy machine slows all alike. rulegen runs with Python's bytecode
cache on (in a temp folder), as an installed tool runs: with ``PYTHONDONTWRITEBYTECODE`` set in
the environment, every run would otherwise compile rulegen's sources again, which is no more
promtool-vs-rulegen than timing ``go build`` would be (``--no-bytecode-cache`` measures that
way). ``rulegen validate`` of the bundled specs (``rules/`` of this checkout, no promtool
counterpart) is timed in the same turns.

``--baseline-ref REF`` (e.g. ``main``) adds rulegen at Git ``REF`` (``git archive``, run from a
temp folder) to the turns, for a before/after table measured in one run, and first compares
the verdicts: ``validate -o json`` output and exit code of both on every project the tests
read from ``../shared/corpus`` (the awesome corpus as bare specs and as ``rulegen import`` makes
it, with its config and baseline; kube-prometheus-stack imported ``--static`` and, when helm is
installed, rendered) and on the bundled specs, byte for byte. Any difference is printed and
the benchmark exits 1 before timing anything. ``--compare-only`` stops after that comparison.

``--profile`` also prints where rulegen's time goes (cProfile of one in-process ``validate``,
top functions by cumulative time).

Run: ``python benchmarks/validate_corpus.py [--repeat N] [--baseline-ref main] [--profile]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py, when loaded by path
from timing import python_env  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "corpus"
CORPUS = SHARED / "awesome-prometheus-alerts" / "rules"
KPS_CHART = SHARED / "kube-prometheus-stack" / "chart"
ATTRIBUTION = '"Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0'
#: Issue 25's aim for the median ratio rulegen validate / promtool check rules.
AIM = 1.5


def timed(cmd: list[str], ok_codes=(0,), env=None, cwd=None) -> tuple[float, float]:
    """(wall seconds, CPU seconds user + system of the process and the children it waited for)
    of one run of ``cmd``; exits the benchmark when its exit code is not in ``ok_codes``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode not in ok_codes:
        sys.exit(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def take_turns(commands: dict[str, tuple], repeat: int) -> dict[str, list[tuple[float, float]]]:
    """``{name: [(wall, cpu), ...]}``: each command of ``commands`` (``name: (cmd, ok_codes, env,
    cwd)``) run once untimed, then ``repeat`` rounds of one run of each, in turn."""
    for cmd, ok, env, cwd in commands.values():
        timed(cmd, ok, env, cwd)
    out: dict[str, list] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, (cmd, ok, env, cwd) in commands.items():
            out[name].append(timed(cmd, ok, env, cwd))
    return out


def baseline_source(dest: Path, ref: str) -> Path:
    """rulegen at Git ``ref`` unpacked under ``dest`` (its ``templates/`` laid into the package,
    as installed), for ``PYTHONPATH``; exits when Git cannot."""
    proc = subprocess.run(["git", "archive", "--format=tar", ref, "rulegen", "templates"], cwd=REPO,
                          capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"git archive {ref} failed: {proc.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")
    (dest / "templates").rename(dest / "rulegen" / "templates")
    return dest


def projects(tmp: Path) -> dict[str, Path]:
    """The projects whose verdicts are compared, made in ``tmp`` by this checkout's importer:
    ``{name: project root}``."""
    from rulegen.cli import main as rulegen
    from rulegen.importer import import_paths, write_specs
    from rulegen.tools import find
    out = {}
    bare = tmp / "awesome"
    res = import_paths([CORPUS], out_dir=bare / "rules", display_base=CORPUS)
    write_specs(res, bare / "rules")
    out["awesome (bare specs)"] = bare
    quiet = io.StringIO()
    imports = [("awesome (rulegen import)", [str(CORPUS)]),
               ("kube-prometheus-stack (import --static)", ["--static", str(KPS_CHART)])]
    if find.find("helm", REPO) is not None:
        imports.append(("kube-prometheus-stack (import, rendered)", [str(KPS_CHART)]))
    for name, args in imports:
        root = tmp / f"project-{len(out)}"
        root.mkdir()
        streams = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = quiet  # its notes (RG8xx warnings about the sources)
        try:
            code = rulegen(["-C", str(root), "import", *args])
        finally:
            sys.stdout, sys.stderr = streams
        if code != 0:
            sys.exit(f"rulegen import {' '.join(args)} exited {code}")
        out[name] = root
    out["bundled specs (rules/ of this checkout)"] = REPO
    return out


def compare_verdicts(roots: dict[str, Path], new_cmd: list[str], old_cmd: list[str], new_env: dict,
                     old_env: dict, cwd: Path) -> bool:
    """Print, per project, whether ``validate -o json`` of the two rulegens gives the same bytes
    and exit code; True when all do."""
    same = True
    for name, root in roots.items():
        runs = []
        for cmd, env in ((new_cmd, new_env), (old_cmd, old_env)):
            proc = subprocess.run([*cmd, "-C", str(root), "validate", "-o", "json"], capture_output=True,
                                  env=env, cwd=cwd)
            runs.append((proc.returncode, proc.stdout, proc.stderr))
        (code, out, err), (old_code, old_out, old_err) = runs
        count, old_count = out.count(b'"code":'), old_out.count(b'"code":')
        if (code, out) == (old_code, old_out) and code in (0, 1):
            print(f"  same verdict: {name}: exit {code}, {count} finding(s), {len(out)} bytes of JSON")
            continue
        same = False
        print(f"  DIFFERENT: {name}: exit {code} vs {old_code} (baseline); {count} vs "
              f"{old_count} finding(s)")
        for label, text in (("this checkout", out + err), ("baseline", old_out + old_err)):
            print(f"    {label}: {text[:1500].decode(errors='replace')}")
    return same


def summary(name: str, runs: list[tuple[float, float]]) -> str:
    walls = [w for w, _ in runs]
    cpus = [c for _, c in runs]
    return (f"  {name:34s} wall best {min(walls):6.2f}s  median {statistics.median(walls):6.2f}s   "
            f"CPU best {min(cpus):6.2f}s  median {statistics.median(cpus):6.2f}s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5, help="runs of each command (default 5)")
    ap.add_argument("--profile", action="store_true", help="also profile one in-process rulegen validate")
    ap.add_argument("--no-bytecode-cache", action="store_true",
                    help="keep the inherited PYTHONDONTWRITEBYTECODE (rulegen compiles its sources every run)")
    ap.add_argument("--baseline-ref", help="also run rulegen at this Git ref: compare verdicts, then time it")
    ap.add_argument("--compare-only", action="store_true", help="with --baseline-ref: compare verdicts, time nothing")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(REPO))
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
        tmp = Path(tmp)
        roots = projects(tmp / "projects")
        root = roots["awesome (bare specs)"]
        alerts = sum(f.read_text(encoding="utf-8").count("- alert:") for f in (root / "rules").glob("*.yaml"))
        run_dir = tmp / "cwd"  # not the checkout: `python -m` puts the working folder first on sys.path
        run_dir.mkdir()
        rulegen = [sys.executable, "-m", "rulegen"]
        env = python_env(None if args.no_bytecode_cache else str(tmp / "pycache"))
        old_env = None
        if args.baseline_ref:
            src = baseline_source(tmp / "baseline-src", args.baseline_ref)
            old_env = python_env(None if args.no_bytecode_cache else str(tmp / "pycache-baseline"))
            old_env["PYTHONPATH"] = str(src)
            print(f"verdicts of this checkout and of rulegen at {args.baseline_ref}, validate -o json:")
            if not compare_verdicts(roots, rulegen, rulegen, env, old_env, run_dir):
                print("the verdicts differ: not timing")
                return 1
            if args.compare_only:
                return 0
        commands = {"rulegen validate": ([*rulegen, "-C", str(root), "validate", "-o", "json"], (0, 1), env, run_dir),
                    "promtool check rules": ([str(promtool), "check", "rules", *map(str, files)], (0,), None, None)}
        bundled = {"rulegen validate, bundled specs": ([*rulegen, "-C", str(REPO), "validate"], (0,), env, run_dir)}
        if old_env is not None:
            commands[f"rulegen@{args.baseline_ref} validate"] = (commands["rulegen validate"][0], (0, 1), old_env, run_dir)
            bundled[f"rulegen@{args.baseline_ref} validate, bundled"] = (bundled["rulegen validate, bundled specs"][0], (0,),
                                                                     old_env, run_dir)
        times = take_turns({**commands, **bundled}, args.repeat)
        print(f"corpus: {ATTRIBUTION}")
        print(f"  {len(files)} rule files, {alerts} alerts; {args.repeat} run(s) each, in turn; bytecode cache "
              f"{'off' if args.no_bytecode_cache else 'on'}; load average {os.getloadavg()[0]:.2f}")
        for name, runs in times.items():
            print(summary(name, runs))
        prom = [w for w, _ in times["promtool check rules"]]
        prom_cpu = [c for _, c in times["promtool check rules"]]
        medians = {}
        for name in commands:
            if name.startswith("rulegen"):
                walls = [w for w, _ in times[name]]
                cpus = [c for _, c in times[name]]
                medians[name] = statistics.median(walls) / statistics.median(prom)
                print(f"  ratio {name} / promtool: wall (median) {medians[name]:.2f}x  (best) "
                      f"{min(walls) / min(prom):.2f}x; CPU (median) "
                      f"{statistics.median(cpus) / statistics.median(prom_cpu):.2f}x  (best) "
                      f"{min(cpus) / min(prom_cpu):.2f}x")
        met = medians["rulegen validate"] <= AIM
        print(f"  aim (median wall ratio <= {AIM}x): {'met' if met else 'NOT met'} in this run"
              + ("" if os.getloadavg()[0] < 2 else " (the machine was busy: the CPU ratio says more)"))
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
