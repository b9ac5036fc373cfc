"""Benchmark: ``rulegen test --mutate`` against one plain ``rulegen test`` on the same specs.

    python benchmarks/mutation_bench.py [--repeat 3] [--jobs N]

On a copy of the bundled project (``rules/``, ``charts/``, ``runbooks/``, ``mkdocs.yml``) in a
temp folder, times as subprocesses (the way CI runs them), alternating after one untimed run
of each (so a busy machine slows both alike; see ``benchmarks/timing.py``):

* ``rulegen test`` (the plain promtool tests), and
* ``rulegen test --mutate`` (the same tests, then every mutant of every rule with tests),

and prints the best time of each, the number of mutants (read from the mutation run's output),
mutants per second (of the whole mutation run, and of its mutation part: the difference of
the two times), the ratio mutation run / plain run (issue 25's aim: at most 5 on the bundled
specs) and the time of a PR-scoped run (``--alert``, one alert; aim: under 15 s). The verdict
must stay what it is (:data:`EXPECTED_SCORE`, no survivor): the benchmark stops otherwise. The figures are only printed: nothing here fails on them, and no unit
test asserts a time.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py, when loaded by path
from timing import python_env, time_pair  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def copy_project(dest: Path) -> Path:
    """The bundled project copied into ``dest``; returns ``dest``."""
    for name in ("rules", "charts", "runbooks"):
        shutil.copytree(REPO / name, dest / name)
    shutil.copy(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    return dest


#: The bundled specs' verdict (per-rule scores, survivors, score line): a faster run must
#: print exactly this; the benchmark stops when it does not.
EXPECTED_SCORE = "mutation score: 207/207 mutants killed (100%), 12 declared equivalent"
#: The alert of the PR-scoped run (``--alert``): a change to one alert.
ONE_ALERT = "LlamaSwapDown"


def verdict(out: str) -> list[str]:
    """The lines of a mutation run's output that carry its verdict (scores, survivors, notes)."""
    return [line for line in out.splitlines()
            if re.match(r"\s+\S+ \S+: \d+/\d+ mutants killed|mutation (score|testing)|.*: (SURVIVED|note) ", line)]


def mutant_count(root: Path, cmd: list[str], env) -> int:
    """Mutants in one mutation run, from its ``mutation testing: N mutant(s)`` line; exits
    when the run's score is not :data:`EXPECTED_SCORE` or a mutant survives."""
    out = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env).stdout
    m = re.search(r"mutation testing: (\d+) mutant", out)
    if not m:
        sys.exit(f"no mutation report in:\n{out[-2000:]}")
    if EXPECTED_SCORE not in out or "SURVIVED" in out:
        sys.exit("the mutation verdict changed:\n" + "\n".join(verdict(out)))
    return int(m.group(1))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="runs of each command; the best is kept (default 3)")
    p.add_argument("--jobs", type=int, default=None, help="promtool processes at once (default: CPU count)")
    args = p.parse_args(argv)
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    with tempfile.TemporaryDirectory(prefix="rulegen-mutation-bench-") as tmp:
        root = copy_project(Path(tmp) / "project")
        env = python_env(str(Path(tmp) / "pycache"))
        plain = [sys.executable, "-m", "rulegen", "-C", str(root), "test", *jobs]
        mutate = plain + ["--mutate"]
        n = mutant_count(root, mutate, env)
        tm, tp = time_pair(mutate, plain, args.repeat, cwd=root, a_env=env)
        one = plain + ["--alert", ONE_ALERT, "--mutate"]
        to, _ = time_pair(one, plain, args.repeat, cwd=root, a_env=env)
    best_m, best_p = min(tm), min(tp)
    print(f"bundled specs: {n} mutants, best of {args.repeat} (alternating runs)")
    print(f"  rulegen test            {best_p:6.2f} s   (runs: {', '.join(f'{t:.2f}' for t in tp)})")
    print(f"  rulegen test --mutate   {best_m:6.2f} s   (runs: {', '.join(f'{t:.2f}' for t in tm)})")
    print(f"  mutants per second      {n / best_m:6.1f}     (mutation part only: "
          f"{n / max(best_m - best_p, 1e-9):.1f})")
    print(f"  ratio mutate / plain    {best_m / best_p:6.1f}x   (aim: at most 5x)")
    print(f"  --alert {ONE_ALERT} --mutate {min(to):6.2f} s   (a PR touching one alert; aim: under 15 s)")
    print(f"  verdict: {EXPECTED_SCORE}, no survivor (checked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
