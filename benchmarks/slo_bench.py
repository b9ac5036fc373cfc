"""Benchmark: ``rulegen build`` of a project of SLOs against the same rules written out by hand.

    python benchmarks/slo_bench.py [--apps 20] [--slos 5] [--repeat 5] [--keep DIR]

What it does, in one run:

1. generates project **A**: ``--apps`` specs of ``--slos`` SLOs each (100 by default; a mix
   of bad/total, good/total and latency SLIs, periods 30d, 28d and 7d, objectives 99-99.95),
   each spec also holding one hand-written alert;
2. expands A in this process (:func:`rulegen.spec.build_spec`) and writes project **B**: the
   same specs with every generated recording rule and alert written out as plain ``groups:``
   (no ``slos:``), so B's charts and test files hold the same rules and tests (the SLO tests
   are in neither: ``rulegen test`` generates them, ``build`` does not);
3. times ``rulegen build`` on a fresh copy of each (rules and ``mkdocs.yml`` only, so every
   run writes all charts, tests and pages), as subprocesses, alternating A and B after one
   untimed run of each, ``--repeat`` times; rulegen with its bytecode cached, as installed;
4. prints the best and median wall time of each and the ratio A/B, and the CPU seconds each
   build used (itself and its forked child; a busy machine inflates wall time, not these).
   The issue's target is a ratio of at most 1.5. Nothing here fails on it; no unit test
   asserts a time.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py, when loaded by path
from check_bench import _MKDOCS  # noqa: E402  (the same site settings)
from timing import python_env, run_once  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


_SLIS = [  # APP: the app's name
    {"events": {"bad": 'http_requests_total{job="APP", code=~"5.."}', "total": 'http_requests_total{job="APP"}'}},
    {"events": {"good": 'grpc_server_handled_total{job="APP", grpc_code="OK"}',
                "total": 'grpc_server_handled_total{job="APP"}'}},
    {"latency": {"histogram": 'http_request_duration_seconds_bucket{job="APP"}', "le": "0.5"}},
]
_PERIODS = ["30d", "28d", "7d", "30d"]
_OBJECTIVES = [99.5, 99.9, 99, 99.95]


def slo_spec(app: str, n: int) -> dict:
    """One app's spec with ``n`` SLOs and a hand-written alert."""
    slos = []
    for i in range(n):
        sli = yaml.safe_load(yaml.safe_dump(_SLIS[i % len(_SLIS)]).replace("APP", app))
        slos.append({"name": f"slo-{i}", "objective": _OBJECTIVES[i % 4], "period": _PERIODS[i % 4],
                     "description": f"Requests of {app} that succeed ({i}).", "sli": sli})
    return {
        "app": app,
        "labels": {"team": "bench"},
        "groups": [{"name": app, "rules": [{
            "alert": f"{app.title().replace('-', '')}Down", "expr": f'up{{job="{app}"}} == 0', "for": "5m",
            "severity": "critical", "summary": "Down.", "description": "Down.",
            "runbook": {"resolution": ["Restart it."]},
            "tests": [{"name": "fires", "interval": "1m",
                       "input_series": [{"series": f'up{{job="{app}"}}', "values": "0x10"}],
                       "alert_rule_test": [{"eval_time": "4m", "exp_alerts": []},
                                           {"eval_time": "5m", "exp_alerts": [{"exp_labels": {"job": app}}]}]}],
        }]}],
        "slos": slos,
    }


def written_out(spec) -> dict:
    """The spec data of :class:`rulegen.spec.Spec` ``spec`` with its SLOs as plain groups."""
    d = dict(spec.source.data)
    d.pop("slos", None)
    groups = []
    for g in spec.groups:
        rules = []
        for r in g.rules:
            out: dict = {r.kind: r.name, "expr": r.expr}
            if r.for_:
                out["for"] = r.for_
            if r.is_alert:
                out["severity"] = r.severity
                out.update({k: v for k, v in r.annotations.items() if k in ("summary", "description")})
                extra = {k: v for k, v in r.annotations.items() if k not in ("summary", "description")}
                if extra:
                    out["annotations"] = extra
                if r.runbook:
                    out["runbook"] = r.runbook
            if r.labels:
                out["labels"] = dict(r.labels)
            if r.tests:
                out["tests"] = [t.data for t in r.tests]
            rules.append(out)
        groups.append({"name": g.name, "rules": rules})
    d["groups"] = groups
    return d


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--apps", type=int, default=20)
    ap.add_argument("--slos", type=int, default=5, help="SLOs per app")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--keep", help="write the projects here and keep them")
    args = ap.parse_args()

    from rulegen.spec import build_spec, load_text

    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rulegen-slo-bench-"))
    src = {"A": work / "A", "B": work / "B"}
    n_rules = 0
    for p in src.values():
        shutil.rmtree(p, ignore_errors=True)
        (p / "rules").mkdir(parents=True)
        (p / "mkdocs.yml").write_text(_MKDOCS, encoding="utf-8")
    for i in range(args.apps):
        app = f"svc-{i:03d}"
        text = yaml.safe_dump(slo_spec(app, args.slos), sort_keys=False, width=100000)
        (src["A"] / "rules" / f"{app}.yaml").write_text(text, encoding="utf-8")
        spec = build_spec(load_text(text, f"rules/{app}.yaml"))
        assert len(spec.slos) == args.slos, f"{app}: an SLO did not expand"
        n_rules += sum(1 for _ in spec.rules())
        (src["B"] / "rules" / f"{app}.yaml").write_text(
            yaml.safe_dump(written_out(spec), sort_keys=False, width=100000, allow_unicode=True), encoding="utf-8")
    print(f"projects in {work}: {args.apps} apps, {args.apps * args.slos} SLOs, {n_rules} rules each")

    env = python_env(str(work / "pycache"))
    rulegen = [sys.executable, "-m", "rulegen.cli"]
    times: dict[str, list[float]] = {"A": [], "B": []}
    cpu: dict[str, list[float]] = {"A": [], "B": []}
    for i in range(args.repeat + 1):
        for k in ("A", "B"):
            fresh = work / f"run-{k}"
            shutil.rmtree(fresh, ignore_errors=True)
            shutil.copytree(src[k], fresh, symlinks=True)
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            took = run_once(rulegen + ["-C", str(fresh), "build"], cwd=REPO, env=env)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if i:  # the first round is untimed (bytecode cache, disk cache)
                times[k].append(took)
                # CPU seconds of the build and its forked child: what a busy machine does not inflate
                cpu[k].append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    # both builds must hold the same rules and tests: compare the charts' rule files
    # (comments aside: A's test files say where the SLO tests are, which neither build writes)
    def body(p: Path) -> list[str]:
        return [line for line in p.read_text().splitlines() if not line.startswith("#")]
    same = all(body(work / "run-A" / "charts" / p.relative_to(work / "run-B" / "charts")) == body(p)
               for p in (work / "run-B" / "charts").rglob("*.yaml") if "tests" in p.parts)
    print(f"generated test files identical in A and B: {same}")
    for k, label in (("A", "SLOs (slos:)"), ("B", "written out")):
        print(f"{label:>14}: best {min(times[k]):.2f} s, median {statistics.median(times[k]):.2f} s "
              f"({', '.join(f'{t:.2f}' for t in times[k])})")
    print(f"ratio A/B: best {min(times['A']) / min(times['B']):.2f}, "
          f"median {statistics.median(times['A']) / statistics.median(times['B']):.2f} (target <= 1.5)")
    print(f"CPU seconds: A median {statistics.median(cpu['A']):.2f}, B median {statistics.median(cpu['B']):.2f}, "
          f"ratio {statistics.median(cpu['A']) / statistics.median(cpu['B']):.2f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
