"""Benchmark: ``rulegen check`` against ``promtool check rules`` on the same rules.

    python benchmarks/check_bench.py [--apps 100] [--alerts 2000] [--repeat 3] [--keep DIR]
                                     [--no-helm] [--compare-ref REF]

What it does, in one run (one to two minutes):

1. generates a synthetic project of ``--apps`` apps and ``--alerts`` alerts (plus one recording
   rule per app) in a temp folder: specs with realistic expressions (rates, ratios,
   ``histogram_quantile``, ``absent``, ``predict_linear``), labels, annotations and runbook
   content (no promtool tests: ``check`` does not run them), and a ``mkdocs.yml``;
2. builds it in this process, loading the specs once: the charts (as ``rulegen build``) and plain
   rule files in ``rules-out/`` (as ``rulegen build --format rules``; one per app, the same
   rules), timing on the way the phases a check goes through (load + validate, plan, compare,
   runbook link check);
3. times, best of ``--repeat`` runs each (default 1), as **subprocesses** (the way CI runs them, so Python
   start-up and imports are counted for rulegen as Go start-up is for promtool):

   * ``rulegen check`` on the generated project with nothing changed (must exit 0),
   * ``promtool check rules rules-out/*.rules.yaml`` on the same rules,
   * the same pair on the bundled project: a copy of this repository's project as a user has
     it (:data:`BUNDLED`: specs, charts, runbooks, site, ``.rulegen.yaml`` and what it names,
     such as ``deploy/alertmanager.yml`` for routing; the sum files), so its check routes the
     alerts and reads the owners as ``rulegen check`` in this repository does;

   each pair alternating (rulegen, promtool, rulegen, ...) after one untimed run of each, so a
   busy machine slows both alike; rulegen with Python's bytecode cache on (in a temp folder),
   as an installed tool runs (``--no-bytecode-cache``: recompile rulegen's sources every run,
   as happens when the environment sets ``PYTHONDONTWRITEBYTECODE``);

4. prints the times and the ratio rulegen/promtool for each. Issue 25's targets: a ratio of at
   most 1.5 for the large project, and at most 0.5 s for a check of the bundled project. The
   figures are only figures: nothing here fails on them, and no unit test asserts a time;
   the phases of a check are timed in-process during setup, with the processes the sync check
   starts (``rulegen.gitops.sync``: helm renders, promtool) counted;
5. times ``helm template`` of the generated project's charts (every gate on) in the chart
   layout of this checkout (rules file + generic template) against the previous layout (one
   compiled template per app), made in the same run by rulegen at ``--baseline-ref`` (Git,
   default the last commit with that layout) from the same specs: once as one ``helm
   template`` per chart, summed (as Argo CD renders one application per chart), alternating
   the layouts chart by chart, and once as one umbrella chart holding all of them as
   subcharts (Helm's template engine alone, start-up paid once). Target: at most 1.5x. The
   same run also times ``rulegen check`` of that rulegen on its build against this checkout's,
   so a change in the ratio to promtool can be told from the machine's load;
6. with ``--compare-ref REF``: times ``rulegen check`` of the rulegen at Git ``REF`` (say, the
   commit before a speed-up) against this checkout's on both projects, alternating, after
   checking that both print the same report byte for byte (the before/after of a change,
   measured in one run).

The promtool used is the pinned one found by :func:`rulegen.tools.find.find` (``$RULEGEN_TOOLS_DIR/bin``, else the per-user cache).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks/timing.py, when loaded by path
from timing import python_env, run_once, time_pair  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
#: What the bundled project is (copied from this repository for its check): the paths a
#: ``rulegen check`` there reads; those missing are left out.
BUNDLED = ("rules", "charts", "runbooks", "mkdocs.yml", ".rulegen.yaml", ".rulegen-baseline.yaml",
           ".rulegen-sums", "deploy")

_MKDOCS = """site_name: Alert runbooks
site_url: https://runbooks.example.com/
docs_dir: runbooks
strict: true
theme:
  name: material
nav:
  - Home: index.md
"""

# (name, expr, for, severity, summary, series, firing values, quiet values)
# {a} is the app name; every expression is real PromQL a team would write.
_KINDS = [
    ("HighErrorRate",
     'sum by (namespace, service) (rate(http_requests_total{{job="{a}", code=~"5.."}}[5m])) '
     '/ sum by (namespace, service) (rate(http_requests_total{{job="{a}"}}[5m])) > 0.05',
     "10m", "critical", "{a} returns too many 5xx responses."),
    ("HighLatencyP99",
     'histogram_quantile(0.99, sum by (le, route) (rate(http_request_duration_seconds_bucket{{job="{a}"}}[5m]))) > 1.5',
     "15m", "warning", "{a} p99 latency is above 1.5s."),
    ("TargetDown", 'absent(up{{job="{a}"}} == 1)', "5m", "critical", "Prometheus cannot scrape {a}."),
    ("PodRestarting",
     'increase(kube_pod_container_status_restarts_total{{namespace="{a}"}}[15m]) > 3',
     "0s", "warning", "A {a} container restarts repeatedly."),
    ("DiskFillingUp",
     'predict_linear(kubelet_volume_stats_available_bytes{{namespace="{a}"}}[6h], 4 * 3600) < 0 '
     'and kubelet_volume_stats_available_bytes{{namespace="{a}"}} / kubelet_volume_stats_capacity_bytes{{namespace="{a}"}} < 0.15',
     "1h", "warning", "A {a} volume fills up within 4 hours."),
    ("QueueBacklog",
     'max_over_time({m}_queue_depth{{job="{a}"}}[10m]) > 1000',
     "30m", "warning", "{a} queue backlog keeps growing."),
    ("MemoryNearLimit",
     'sum by (pod) (container_memory_working_set_bytes{{namespace="{a}", container!=""}}) '
     '/ sum by (pod) (kube_pod_container_resource_limits{{namespace="{a}", resource="memory"}}) > 0.9',
     "15m", "warning", "A {a} pod uses over 90% of its memory limit."),
    ("CertificateExpiring",
     '(probe_ssl_earliest_cert_expiry{{job="{a}"}} - time()) / 86400 < 14',
     "1h", "info", "The {a} certificate expires within 14 days."),
]


def _q(s: str) -> str:
    """A YAML double-quoted scalar."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def spec_text(app: str, n_alerts: int) -> str:
    """A synthetic spec for ``app`` with ``n_alerts`` alerts and one recording rule, as YAML."""
    metric = app.replace("-", "_")
    lines = [f"app: {app}", "labels: {team: " + f"team-{len(app) % 7}" + "}",
             "runbook:", "  context:", f"    - markdown: Synthetic app {app} for the check benchmark.",
             "groups:"]
    per_group = 10
    for gi in range(0, n_alerts, per_group):
        lines += [f"  - name: {app}-{gi // per_group}", "    rules:"]
        if gi == 0:
            lines += [f"      - record: job:{metric}_requests:rate5m",
                      "        expr: " + _q(f'sum by (job) (rate(http_requests_total{{job="{app}"}}[5m]))')]
        for i in range(gi, min(gi + per_group, n_alerts)):
            kind, expr, for_, sev, summary = _KINDS[i % len(_KINDS)]
            name = "".join(p.capitalize() for p in app.split("-")) + kind + str(i)
            lines += [
                f"      - alert: {name}",
                f"        expr: {_q(expr.format(a=app, m=metric))}",
                f"        for: {for_}",
                f"        severity: {sev}",
                f"        labels: {{tier: t{i % 3}}}",
                f"        summary: {_q(summary.format(a=app))}",
                "        description: " + _q("{{ $labels.job }} in {{ $labels.namespace }}: "
                                            + summary.format(a=app) + " Value: {{ $value }}."),
                "        runbook:",
                f"          explanation: {_q(summary.format(a=app) + ' Check the dashboards first.')}",
                "          causes: [\"A bad deploy.\", \"A dependency is down.\"]",
                f"          diagnosis: [{{commands: \"kubectl -n {app} get pods\"}}]",
                "          resolution: [\"Roll back the last deploy.\"]",
            ]
    return "\n".join(lines) + "\n"


def generate_repo(root: Path, apps: int = 100, alerts: int = 2000) -> list[str]:
    """Write a synthetic project (``rules/``, ``mkdocs.yml``) under ``root``; returns app names.
    Alerts are spread evenly (the first apps get one more when it does not divide)."""
    (root / "rules").mkdir(parents=True, exist_ok=True)
    (root / "mkdocs.yml").write_text(_MKDOCS, encoding="utf-8")
    names = [f"svc-{i:03d}" for i in range(apps)]
    for i, app in enumerate(names):
        n = alerts // apps + (1 if i < alerts % apps else 0)
        (root / "rules" / f"{app}.yaml").write_text(spec_text(app, n), encoding="utf-8")
    return names


def _time(cmd: list[str], cwd: Path, repeat: int, env=None) -> float:
    """Best wall time of ``repeat`` runs of ``cmd`` (seconds); checks the exit code."""
    return min(run_once(cmd, cwd=cwd, env=env) for _ in range(repeat))


def _rulegen(*args: str) -> list[str]:
    return [sys.executable, "-m", "rulegen", *args]


def _prepare(root: Path) -> dict:
    """Build charts and plain rule files in ``root``, in this process, loading the specs once;
    returns the seconds each phase of a check took on the way (load+validate, plan, compare
    with the disk, runbook link check), read from this build."""
    from rulegen.gitops import write
    from rulegen.outputs import links
    from rulegen.pipeline import load_project, plan_project
    phases = {}
    t = time.perf_counter()
    loaded = load_project(root)
    phases["load + validate"] = time.perf_counter() - t
    if not loaded.ok:
        sys.exit(f"the specs in {root} do not validate")
    # the plain rule files first, the charts last: both formats record their files in the one
    # sum file per spec (.rulegen-sums/), and `rulegen check` (helm) must find the charts' record
    for fmt in ("rules", "helm"):
        t = time.perf_counter()
        outputs, findings = plan_project(loaded, fmt)
        if fmt == "helm":
            phases["plan (render in memory)"] = time.perf_counter() - t
        if any(f.is_error for f in findings):
            sys.exit(f"rulegen cannot plan {fmt} outputs in {root}")
        t = time.perf_counter()
        status = write.compare(outputs, root, fmt)
        if fmt == "helm":
            phases["compare with disk"] = time.perf_counter() - t
        write.apply(outputs, root, status)
    outputs, _ = plan_project(loaded, "helm")
    t = time.perf_counter()
    links.check_links(outputs, loaded.specs, root)
    phases["runbook link check"] = time.perf_counter() - t
    from rulegen.gitops import sync
    from rulegen.tools import process
    started: list[str] = []
    run, start = process.run, process.start

    def counted(fn):
        def wrapped(args, **kw):
            started.append(Path(str(args[0])).name)
            return fn(args, **kw)
        return wrapped
    process.run, process.start = counted(run), counted(start)
    try:
        t = time.perf_counter()
        sync.sync_findings(loaded, root)
        phases["sync check (helm, CRD, webhook)"] = time.perf_counter() - t
    finally:
        process.run, process.start = run, start
    phases["processes the sync check started"] = ", ".join(
        f"{n} x{started.count(n)}" for n in dict.fromkeys(started)) or "none"
    return phases


def bench(root: Path, label: str, repeat: int, promtool: str, env=None) -> dict:
    """Time check and promtool on the project at ``root`` (already built); returns the figures."""
    files = sorted(str(p.relative_to(root)) for p in (root / "rules-out").glob("*.rules.yaml"))
    n_rules = sum(len(g["rules"]) for p in (root / "rules-out").glob("*.rules.yaml")
                  for g in yaml.safe_load(p.read_text(encoding="utf-8"))["groups"])
    ta, tb = time_pair(_rulegen("check"), [promtool, "check", "rules", *files], repeat, cwd=root, a_env=env)
    check, prom = min(ta), min(tb)
    return {"label": label, "files": len(files), "rules": n_rules, "check_s": check, "promtool_s": prom,
            "ratio": check / prom}


#: The last commit whose charts hold one compiled template per app (the layout before issue 13).
BASELINE_REF = "7f2612f"


def _baseline_rulegen(dest: Path, ref: str) -> Path:
    """rulegen at Git ``ref`` under ``dest`` (``rulegen/`` with its ``templates/`` package laid
    in, as the installed package has it), for ``PYTHONPATH``; exits when Git cannot."""
    import io
    import subprocess
    import tarfile
    proc = subprocess.run(["git", "archive", "--format=tar", ref, "rulegen", "templates"], cwd=REPO,
                          capture_output=True)
    if proc.returncode != 0:
        sys.exit(f"git archive {ref} failed (is this a Git checkout with that commit?): "
                 f"{proc.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")
    shutil.move(str(dest / "templates"), str(dest / "rulegen" / "templates"))
    return dest


def _umbrella(root: Path, dest: Path, apps: list[str], values: dict) -> Path:
    """One chart holding the charts of ``root`` as subcharts, with every gate on."""
    (dest / "charts").mkdir(parents=True)
    (dest / "Chart.yaml").write_text("apiVersion: v2\nname: umbrella\nversion: 0.1.0\n", encoding="utf-8")
    for app in apps:
        shutil.copytree(root / "charts" / app, dest / "charts" / app, ignore=shutil.ignore_patterns("tests"))
    (dest / "values.yaml").write_text(yaml.safe_dump({app: values for app in apps}), encoding="utf-8")
    return dest


def helm_bench(new_root: Path, tmp: Path, apps: list[str], repeat: int, helm: str, ref: str) -> dict:
    """``helm template`` of every chart of ``new_root`` against the same charts built by the
    rulegen at ``ref`` (see the module docstring); returns the figures (seconds)."""
    old_root = tmp / "old-layout"
    if old_root.exists():
        shutil.rmtree(old_root)
    (old_root / "rules").mkdir(parents=True)
    for f in (new_root / "rules").glob("*.yaml"):
        shutil.copy(f, old_root / "rules" / f.name)
    shutil.copy(new_root / "mkdocs.yml", old_root / "mkdocs.yml")
    code = _baseline_rulegen(tmp / "baseline-src", ref)
    env = dict(os.environ, PYTHONPATH=str(code))
    # cwd: not this checkout, whose rulegen/ python -m would import before PYTHONPATH's
    run_once([sys.executable, "-m", "rulegen", "-C", str(old_root), "build"], cwd=tmp, env=env)
    if not list(old_root.glob("charts/*/templates/prometheusrule.yaml")) or list(old_root.glob("charts/*/rules")):
        sys.exit(f"rulegen at {ref} did not build charts of the previous layout")
    on = ["--set", "enabled=true,monitoring.enabled=true"]
    per_chart = {"new": [], "old": []}
    for _ in range(repeat):
        totals = {"new": 0.0, "old": 0.0}
        for app in apps:  # alternating chart by chart: a shift in machine load hits both
            for layout, root in (("new", new_root), ("old", old_root)):
                totals[layout] += run_once([helm, "template", "r", str(root / "charts" / app), *on])
        for k in totals:
            per_chart[k].append(totals[k])
    checks = {"new": [], "old": []}  # rulegen check itself, this checkout against rulegen at ref
    for _ in range(repeat):
        checks["new"].append(run_once(_rulegen("check"), cwd=new_root))
        checks["old"].append(run_once(_rulegen("check"), cwd=old_root, env=env))
    gates = {"enabled": True, "monitoring": {"enabled": True}}
    umbrellas = {k: _umbrella(r, tmp / f"umbrella-{k}", apps, gates) for k, r in (("new", new_root), ("old", old_root))}
    ta, tb = time_pair([helm, "template", "r", str(umbrellas["new"])], [helm, "template", "r", str(umbrellas["old"])],
                       repeat)
    return {"check_new": min(checks["new"]), "check_old": min(checks["old"]),
            "per_chart_new": min(per_chart["new"]), "per_chart_old": min(per_chart["old"]),
            "umbrella_new": min(ta), "umbrella_old": min(tb)}


def compare_bench(roots: list[tuple[str, Path]], tmp: Path, ref: str, repeat: int, env: dict) -> list[dict]:
    """``rulegen check`` of this checkout against the rulegen at Git ``ref`` on each project of
    ``roots`` ((label, root), built), alternating; each project's check output (findings,
    drift summary) must be the same byte for byte, else the benchmark stops."""
    code = _baseline_rulegen(tmp / f"ref-{ref.replace('/', '_')}-src", ref)
    ref_env = dict(env, PYTHONPATH=str(code))
    out = []
    for label, root in roots:
        import subprocess
        mine = subprocess.run(_rulegen("check"), cwd=root, capture_output=True, text=True, env=env)
        theirs = subprocess.run(_rulegen("check"), cwd=root, capture_output=True, text=True, env=ref_env)
        if (mine.returncode, mine.stdout) != (theirs.returncode, theirs.stdout):
            sys.exit(f"rulegen check on {label}: this checkout and {ref} disagree (exit {mine.returncode} vs "
                     f"{theirs.returncode}):\n{mine.stdout[-2000:]}\n---\n{theirs.stdout[-2000:]}")
        ta, tb = time_pair(_rulegen("check"), _rulegen("check"), repeat, cwd=root, a_env=env, b_env=ref_env)
        out.append({"label": label, "now": min(ta), "ref": min(tb), "lines": len(mine.stdout.splitlines())})
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--apps", type=int, default=100)
    p.add_argument("--alerts", type=int, default=2000)
    p.add_argument("--repeat", type=int, default=1, help="runs of each command; the best is kept (default 1)")
    p.add_argument("--keep", default=None, help="generate into this folder and keep it")
    p.add_argument("--no-bytecode-cache", action="store_true",
                   help="keep the inherited PYTHONDONTWRITEBYTECODE (rulegen compiles its sources every run)")
    p.add_argument("--baseline-ref", default=BASELINE_REF,
                   help=f"Git ref of the rulegen whose chart layout helm template is compared with (default {BASELINE_REF})")
    p.add_argument("--no-helm", action="store_true", help="skip the helm template comparison")
    p.add_argument("--compare-ref", default=None, metavar="REF",
                   help="also time `rulegen check` of the rulegen at Git REF (e.g. the commit before a speed-up) "
                        "on both projects, alternating with this checkout's, and require the same output")
    args = p.parse_args(argv)

    sys.path.insert(0, str(REPO))
    from rulegen.tools import find
    promtool = find.find("promtool", REPO)
    if promtool is None:
        sys.exit("promtool is not installed; run scripts/install-tools.sh")
    helm = None if args.no_helm else find.find("helm", REPO)
    if helm is None and not args.no_helm:
        sys.exit("helm is not installed; run scripts/install-tools.sh (or pass --no-helm)")

    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="rulegen-bench-"))
    try:
        t0 = time.perf_counter()
        big = tmp / "generated"
        if big.exists():
            shutil.rmtree(big)
        apps = generate_repo(big, args.apps, args.alerts)
        phases = _prepare(big)
        bundled = tmp / "bundled"
        if bundled.exists():
            shutil.rmtree(bundled)
        bundled.mkdir()
        for name in BUNDLED:
            if (REPO / name).is_dir():
                shutil.copytree(REPO / name, bundled / name, symlinks=True)
            elif (REPO / name).exists():
                shutil.copy(REPO / name, bundled / name)
        _prepare(bundled)
        setup = time.perf_counter() - t0

        # baseline in the same run: interpreter start-up alone, to read the figures against
        env = python_env(None if args.no_bytecode_cache else str(tmp / "pycache"))
        base = _time([sys.executable, "-c", "pass"], REPO, args.repeat, env=env)
        imp_cmd = [sys.executable, "-c", "import rulegen.cli, rulegen.pipeline, rulegen.render"]
        run_once(imp_cmd, cwd=REPO, env=env)
        imp = _time(imp_cmd, REPO, args.repeat, env=env)
        rows = [bench(big, f"generated ({args.apps} apps, {args.alerts} alerts)", args.repeat, str(promtool), env),
                bench(bundled, "bundled project", args.repeat, str(promtool), env)]
        compared = None if args.compare_ref is None else compare_bench(
            [(rows[0]["label"], big), (rows[1]["label"], bundled)], tmp, args.compare_ref, args.repeat, env)
        helm_figures = None if helm is None else helm_bench(big, tmp, apps, args.repeat, str(helm),
                                                             args.baseline_ref)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    print(f"setup (generate, build helm + rules of each project): {setup:.1f}s; best of {args.repeat} "
          f"run(s) below, each a subprocess, rulegen and promtool alternating; bytecode cache "
          f"{'off' if args.no_bytecode_cache else 'on'}; load average {os.getloadavg()[0]:.2f}")
    print(f"baseline: python start-up {base * 1000:.0f} ms, importing rulegen {imp * 1000:.0f} ms")
    print("where a check's time goes on the generated project (in-process, during setup): "
          + ", ".join(f"{k} {v:.2f}s" if isinstance(v, float) else f"{k}: {v}" for k, v in phases.items()))
    print(f"{'project':42} {'files':>5} {'rules':>6} {'rulegen check':>14} {'promtool check':>15} {'ratio':>6}")
    for r in rows:
        print(f"{r['label']:42} {r['files']:5d} {r['rules']:6d} {r['check_s']:13.3f}s {r['promtool_s']:14.3f}s "
              f"{r['ratio']:6.2f}")
    target = rows[0]["ratio"]
    print(f"target (issue 25): ratio at most 1.50 on the generated project: {'met' if target <= 1.5 else 'NOT met'} "
          f"({target:.2f}); check of the bundled project at most 0.50s: "
          f"{'met' if rows[1]['check_s'] <= 0.5 else 'NOT met'} ({rows[1]['check_s']:.2f}s)")
    for c in compared or []:
        print(f"rulegen check, this checkout vs rulegen {args.compare_ref}, {c['label']}: {c['now']:.2f}s vs "
              f"{c['ref']:.2f}s ({c['now'] / c['ref']:.2f}); output the same ({c['lines']} lines)")
    if helm_figures is not None:
        h = helm_figures
        per, umb = h["per_chart_new"] / h["per_chart_old"], h["umbrella_new"] / h["umbrella_old"]
        print(f"helm template of the {args.apps} generated charts, every gate on, this layout vs rulegen "
              f"{args.baseline_ref}'s (ratio):")
        print(f"  one helm per chart, summed: {h['per_chart_new']:.2f}s vs {h['per_chart_old']:.2f}s ({per:.2f})")
        print(f"  one umbrella chart:         {h['umbrella_new']:.2f}s vs {h['umbrella_old']:.2f}s ({umb:.2f})")
        print(f"target: at most 1.50: {'met' if max(per, umb) <= 1.5 else 'NOT met'} ({max(per, umb):.2f})")
        print(f"rulegen check of the generated project, this checkout vs rulegen {args.baseline_ref} "
              f"(same specs, each in its own layout): {h['check_new']:.2f}s vs {h['check_old']:.2f}s "
              f"({h['check_new'] / h['check_old']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
