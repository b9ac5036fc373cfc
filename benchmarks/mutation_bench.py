"""Benchmark: ``rulegen test --mutate`` against one plain ``rulegen test`` on the same specs.

    python benchmarks/mutation_bench.py [--repeat 3] [--jobs N] [--old DIR]

On a copy of the bundled project (``rules/``, ``charts/``, ``runbooks/``, ``mkdocs.yml``) in a
temp Git repository, with one alert's runbook text changed since its commit (a pull request
touching one alert), times as subprocesses (the way CI runs them), alternating after an
untimed round (``--warmup``; so a busy machine slows all alike):

* ``rulegen test`` (the plain promtool tests),
* ``rulegen test --mutate`` (the same tests, then every mutant of every rule with tests), and
* ``rulegen test --mutate --base HEAD`` (the pull request: only the touched alert),

and prints the best wall time of each and the CPU time (user + system of the process and its
helm and promtool children, which a machine shared with other work slows far less than the
wall time), the number of mutants, the ratio mutation run / plain run (issue 25's aim: at
most 5 on the bundled specs) and the pull request's time (aim: under 15 s).

``--old DIR``: also time the same commands with the rulegen package of ``DIR`` (a checkout of
an earlier commit, e.g. ``git archive main | tar -x -C DIR``; its pull-request run is
``--alert`` when it has no ``--base``), in the same alternation, for a before/after table;
the two mutation reports must give the same verdict line for line (scores, survivors,
notes) and the same verdict per mutant in their JUnit reports (killed, survived, excluded or
declared equivalent, with the reason; the benchmark stops otherwise). The verdict must stay what it is
(:data:`EXPECTED_SCORE`, no survivor): the benchmark stops otherwise. The figures are only
printed: nothing here fails on them, and no unit test asserts a time.
"""

from __future__ import annotations

import argparse
import re
import xml.etree.ElementTree as ET
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py, when loaded by path
from timing import python_env  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def copy_project(dest: Path) -> Path:
    """The bundled project copied into ``dest``; returns ``dest``."""
    for name in ("rules", "charts", "runbooks"):
        shutil.copytree(REPO / name, dest / name, symlinks=True)
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


def check_report(out: str) -> tuple[int, list[str]]:
    """(mutants, verdict lines) of a mutation run's output; exits when the run's score is not
    :data:`EXPECTED_SCORE` or a mutant survives."""
    m = re.search(r"mutation testing: (\d+) mutant", out)
    if not m:
        sys.exit(f"no mutation report in:\n{out[-2000:]}")
    if EXPECTED_SCORE not in out or "SURVIVED" in out:
        sys.exit("the mutation verdict changed:\n" + "\n".join(verdict(out)))
    return int(m.group(1)), verdict(out)


def mutant_verdicts(junit: Path) -> list[tuple]:
    """Per mutant of a ``--junit`` report's ``<app> mutants`` testsuites: (app, testcase name,
    spec file and line, what it holds: nothing for a killed mutant, ``failure`` for a
    survivor, ``skipped`` with its message for an excluded or declared equivalent one)."""
    out = []
    for suite in ET.parse(junit).getroot().iter("testsuite"):
        if not str(suite.get("name")).endswith(" mutants"):
            continue
        for tc in suite.iter("testcase"):
            kids = [(k.tag, k.get("message"), k.text) for k in tc]
            out.append((suite.get("name"), tc.get("name"), tc.get("file"), tc.get("line"), kids))
    return out


def cpu_run(cmd: list[str], cwd: Path, env) -> tuple[float, float, str]:
    """(wall, CPU) seconds and the output of one run of ``cmd``: CPU is user + system time of
    it and its children (helm, promtool). Exits when it fails."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), proc.stdout


def pull_request(root: Path) -> None:
    """Make ``root`` a Git repository with one commit, then change :data:`ONE_ALERT`'s runbook
    text (a pull request touching one alert, tests untouched)."""
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.com"]
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(git + args, cwd=root, check=True, capture_output=True)
    spec = root / "rules" / "llama-swap.yaml"
    text = spec.read_text(encoding="utf-8")
    spec.write_text(text.replace("the single pod has no redundancy", "its single pod has no redundancy", 1),
                    encoding="utf-8")


def _commands(root: Path, jobs: list[str], env: dict, has_base: bool, junit: Path) -> dict:
    plain = [sys.executable, "-m", "rulegen", "-C", str(root), "test", *jobs]
    pr = ["--mutate", "--base", "HEAD"] if has_base else ["--mutate", "--alert", ONE_ALERT]
    return {"plain": (plain, env), "mutate": (plain + ["--mutate", "--junit", str(junit)], env),
            "pr": (plain + pr, env)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=3, help="runs of each command; the best is kept (default 3)")
    p.add_argument("--jobs", type=int, default=None, help="promtool processes at once (default: CPU count)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    p.add_argument("--old", default=None, help="a checkout of an earlier rulegen to time the same way")
    args = p.parse_args(argv)
    jobs = ["--jobs", str(args.jobs)] if args.jobs else []
    with tempfile.TemporaryDirectory(prefix="rulegen-mutation-bench-") as tmp:
        root = copy_project(Path(tmp) / "project")
        pull_request(root)
        junit = {side: Path(tmp) / f"{side}-junit.xml" for side in ("now", "before")}
        sides = {"now": _commands(root, jobs, python_env(str(Path(tmp) / "pycache")), True, junit["now"])}
        if args.old:
            old_env = python_env(str(Path(tmp) / "pycache-old"))
            old_env["PYTHONPATH"] = str(Path(args.old).resolve())
            has_base = "--changed-since" in subprocess.run(
                [sys.executable, "-m", "rulegen", "test", "--help"], capture_output=True, text=True,
                env=old_env, cwd=root).stdout  # in root: `-m` puts the working folder first on sys.path
            sides["before"] = _commands(root, jobs, old_env, has_base, junit["before"])
        times: dict = {(side, what): [] for side in sides for what in ("plain", "mutate", "pr")}
        reports: dict = {}
        for rnd in range(args.warmup + args.repeat):  # warm-up rounds are not counted
            for side, cmds in sides.items():
                for what, (cmd, env) in cmds.items():
                    wall, cpu, out = cpu_run(cmd, root, env)
                    if what == "mutate" and side not in reports:
                        reports[side] = check_report(out) + (mutant_verdicts(junit[side]),)
                    if rnd >= args.warmup:
                        times[(side, what)].append((wall, cpu))
        if args.old and reports["now"][1] != reports["before"][1]:
            sys.exit("the mutation verdict differs from --old's:\n" + "\n".join(reports["before"][1])
                     + "\n---\n" + "\n".join(reports["now"][1]))
        if args.old and reports["now"][2] != reports["before"][2]:
            differ = [(b, n) for b, n in zip(reports["before"][2], reports["now"][2]) if b != n]
            sys.exit(f"a mutant's verdict differs from --old's (JUnit): {differ[:5] or 'a different number of mutants'}")
    n = reports["now"][0]
    print(f"bundled specs: {n} mutants, best of {args.repeat} (alternating runs); wall s / CPU s")
    for side in sides:
        best = {what: (min(w for w, _ in times[(side, what)]), min(c for _, c in times[(side, what)]))
                for what in ("plain", "mutate", "pr")}
        print(f" {side}:")
        print(f"  rulegen test                      {best['plain'][0]:7.2f} / {best['plain'][1]:6.2f}")
        print(f"  rulegen test --mutate             {best['mutate'][0]:7.2f} / {best['mutate'][1]:6.2f}")
        print(f"  ratio mutate / plain              {best['mutate'][0] / best['plain'][0]:6.1f}x  / "
              f"{best['mutate'][1] / best['plain'][1]:4.1f}x   (aim: at most 5x)")
        pr = "--base HEAD" if side == "now" or "--base" in sides[side]["pr"][0] else f"--alert {ONE_ALERT}"
        print(f"  pull request ({pr}) --mutate {best['pr'][0]:7.2f} / {best['pr'][1]:6.2f}   (aim: under 15 s)")
    print(f"  verdict: {EXPECTED_SCORE}, no survivor (checked)" +
          ("; the same, line for line and per mutant (JUnit), before and now" if args.old else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
