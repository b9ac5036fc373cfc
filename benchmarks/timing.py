"""Timing helpers shared by the benchmarks: wall time of a subprocess, alternating pairs, and
the environment rulegen runs in. Both tools run as subprocesses, so Python start-up counts for
rulegen exactly as Go start-up counts for promtool."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path


def run_once(cmd: list[str], ok_codes=(0,), cwd: Path | None = None, env=None) -> float:
    """Wall time (seconds) of one run of ``cmd``; exits the benchmark when its exit code is
    not in ``ok_codes``."""
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t0
    if proc.returncode not in ok_codes:
        sys.exit(f"{' '.join(map(str, cmd))} exited {proc.returncode}:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return took


def time_pair(a: list[str], b: list[str], repeat: int, cwd: Path | None = None, a_ok=(0,), b_ok=(0,),
              a_env=None, b_env=None) -> tuple[list[float], list[float]]:
    """Wall times of ``repeat`` runs of ``a`` and of ``b``, alternating (so a shift in machine
    load hits both), after one untimed run of each."""
    run_once(a, a_ok, cwd, a_env)
    run_once(b, b_ok, cwd, b_env)
    ta, tb = [], []
    for _ in range(repeat):
        ta.append(run_once(a, a_ok, cwd, a_env))
        tb.append(run_once(b, b_ok, cwd, b_env))
    return ta, tb


def python_env(pycache: str | None) -> dict:
    """The environment rulegen runs in: bytecode cached under ``pycache`` (None: as inherited)."""
    env = dict(os.environ)
    if pycache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = pycache
    return env
