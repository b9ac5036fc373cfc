"""Benchmark: ``rulegen import`` of kube-prometheus-stack, both ways (issue 15 aims at <= 3 s
each): the 41 rule templates read statically (``--static``), and the chart rendered by the
real helm. For scale, ``helm template`` of the same chart is timed in the same run
(alternating, after one untimed run of each; see ``timing.py``): the rendered import
includes one such helm run.

Corpus: "kube-prometheus-stack" by the Prometheus community Helm chart maintainers, Apache
License 2.0, read from ``../shared/corpus/kube-prometheus-stack`` (see its README).

Run: ``python benchmarks/import_kps.py [--repeat N]``. Each rulegen run imports into a fresh
temp project (``--force`` is not needed: the folder is emptied between runs).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py, when loaded by path
from timing import python_env, run_once  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
CHART = REPO.parent / "shared" / "corpus" / "kube-prometheus-stack" / "chart"
TARGET_S = 3.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    rulegen = [sys.executable, "-m", "rulegen"]
    from rulegen.tools import find  # the pinned helm, from the tools folders (never the checkout)
    helm = find.require("helm", REPO)
    with tempfile.TemporaryDirectory() as tmp:
        proj = Path(tmp) / "p"
        env = python_env(str(Path(tmp) / "pycache"))
        flags = ["--release", "kps", "--namespace", "monitoring", "--kube-version", "1.33.0"]
        cases = {
            # exit statuses are the tests' business (tests/importer/test_kps.py); a run that
            # reports problems (exit 1) has read, converted and validated everything all the same
            "import --static (41 templates)": ([*rulegen, "-C", str(proj), "import", str(CHART), "--static"], (0, 1)),
            "import (helm-rendered chart)": ([*rulegen, "-C", str(proj), "import", str(CHART), *flags], (0, 1)),
            "helm template (for scale)": ([str(helm), "template", "kps", str(CHART), "-n", "monitoring",
                                           "--kube-version", "1.33.0"], (0,)),
        }
        times: dict = {k: [] for k in cases}
        for i in range(args.repeat + 1):
            for name, (cmd, ok) in cases.items():
                shutil.rmtree(proj, ignore_errors=True)
                proj.mkdir()
                t = run_once(cmd, ok, REPO, env)
                if i:  # the first round warms caches and is not counted
                    times[name].append(t)
    worst = 0.0
    for name, ts in times.items():
        print(f"{name:34s} best {min(ts):.2f} s, median {statistics.median(ts):.2f} s over {len(ts)} runs")
        if name.startswith("import"):
            worst = max(worst, statistics.median(ts))
    print(f"target <= {TARGET_S:.0f} s per import: {'met' if worst <= TARGET_S else 'NOT met'} "
          f"(slowest median {worst:.2f} s)")
    return 0 if worst <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
