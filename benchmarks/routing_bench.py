"""Benchmark: routing every alert of a large project through a large Alertmanager route tree.

    python benchmarks/routing_bench.py [--alerts 2000] [--routes 200] [--amtool 20] [--repeat 3]

What it does, in one run:

1. generates a project of ``--alerts`` alerts (20 specs; each alert with a ``team`` label of
   one of 40 teams, a severity and an expr pinning ``job``) and an ``alertmanager.yml`` of
   ``--routes`` routes (per team: a route with child routes per severity, some regex matchers,
   some ``continue``), with ``alertmanager.config`` in its ``.rulegen.yaml``;
2. times, best of ``--repeat``: the routing alone (``rulegen-amroute``, every label set in one
   process) and the whole routing stage as ``rulegen validate`` runs it
   (:func:`rulegen.routing.project.route_project`: label sets from the label flow, then the
   helper), each on a fresh cache;
3. times ``amtool config routes test`` (one process per label set, Alertmanager's other way)
   on ``--amtool`` label sets and extrapolates to all, for the ratio;
4. prints the figures. The issue's target: 2,000 alerts through a 200-route tree under 10 s on
   2 cores. Nothing here fails on it; no unit test asserts a time.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rulegen.config import load_config  # noqa: E402
from rulegen.pipeline import load_project  # noqa: E402
from rulegen.routing import project as routing_project  # noqa: E402
from rulegen.tools import amroute, find  # noqa: E402

SEVERITIES = ("critical", "warning", "info")


def am_config(teams: int, routes: int) -> dict:
    """A route tree of about ``routes`` routes: per team a parent route and one child per
    severity (paging critical ones first, continuing to the team's chat)."""
    tree, receivers, n = [], [{"name": "default"}, {"name": "blackhole"}], 0
    for t in range(teams):
        if n >= routes:
            break
        team = f"team{t:02d}"
        receivers += [{"name": f"{team}-pager", "webhook_configs": [{"url": f"https://pager.example.com/{team}"}]},
                      {"name": f"{team}-chat", "webhook_configs": [{"url": f"https://chat.example.com/{team}"}]}]
        children = [{"matchers": ['severity="critical"'], "receiver": f"{team}-pager", "continue": True},
                    {"matchers": ['severity=~"warning|critical"'], "receiver": f"{team}-chat"},
                    {"matchers": ['severity="info"', 'job!~"batch.*"'], "receiver": "blackhole"}]
        tree.append({"matchers": [f'team="{team}"'], "routes": children})
        n += 1 + len(children)
    return {"route": {"receiver": "default", "group_by": ["alertname"], "routes": tree}, "receivers": receivers}


def project(root: Path, alerts: int, routes: int) -> None:
    """Write the benchmark project under ``root``."""
    teams = max(1, routes // 4)
    (root / "rules").mkdir(parents=True)
    per = max(1, alerts // 20)
    for s in range(20):
        rules = []
        for i in range(per):
            k = s * per + i
            rules.append({"alert": f"App{s}Alert{i}", "expr": f'up{{job="app{s}-{i % 7}"}} == 0',
                          "severity": SEVERITIES[k % 3], "labels": {"team": f"team{k % teams:02d}"},
                          "summary": "s", "description": "d"})
        spec = {"app": f"app{s}", "groups": [{"name": f"app{s}", "rules": rules}]}
        (root / "rules" / f"app{s}.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")
    (root / "deploy").mkdir()
    (root / "deploy/alertmanager.yml").write_text(yaml.safe_dump(am_config(teams, routes), sort_keys=False),
                                                   encoding="utf-8")
    (root / ".rulegen.yaml").write_text("conventions: {require_runbook_for: []}\n"
                                        "alertmanager: {config: deploy/alertmanager.yml}\n", encoding="utf-8")


def count_routes(node: dict) -> int:
    return 1 + sum(count_routes(r) for r in node.get("routes") or [])


def best(fn, repeat: int) -> float:
    out = []
    for _ in range(repeat):
        routing_project._CACHE.clear()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return min(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--alerts", type=int, default=2000)
    ap.add_argument("--routes", type=int, default=200)
    ap.add_argument("--amtool", type=int, default=20, help="label sets amtool routes (one process each)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="rulegen-routing-bench-") as tmp:
        root = Path(tmp)
        project(root, a.alerts, a.routes)
        am_text = (root / "deploy/alertmanager.yml").read_text(encoding="utf-8")
        n_routes = count_routes(yaml.safe_load(am_text)["route"])
        loaded = load_project(root, use_baseline=False)
        config = load_config(root)
        sets = [s[3] for s in routing_project.label_sets(loaded.specs, root)]
        errors = [f for f in loaded.findings if f.is_error]
        if errors:
            sys.exit(f"benchmark project has errors: {errors[:3]}")
        t_helper = best(lambda: amroute.route(am_text, sets, root), a.repeat)
        t_stage = best(lambda: routing_project.route_project(loaded.specs, root, config), a.repeat)
        amtool = find.require("amtool", root)
        t0 = time.perf_counter()
        for ls in sets[:a.amtool]:
            subprocess.run([str(amtool), "config", "routes", "test", f"--config.file={root / 'deploy/alertmanager.yml'}",
                            *(f"{k}={v}" for k, v in ls.items())], capture_output=True, check=True, timeout=60)
        t_amtool = (time.perf_counter() - t0) / max(1, min(a.amtool, len(sets))) * len(sets)
    print(f"{len(sets)} alerts, a route tree of {n_routes} routes")
    print(f"  rulegen-amroute (one process, all label sets): {t_helper:.2f} s")
    print(f"  routing stage (label flow + helper):          {t_stage:.2f} s   target < 10 s")
    print(f"  amtool, one process per label set (extrapolated from {a.amtool}): {t_amtool:.1f} s "
          f"({t_amtool / t_stage:.0f}x the routing stage)")


if __name__ == "__main__":
    main()
