"""Benchmark: the size of a new team's first pull request, and of a one-knob change.

    python benchmarks/pr_size_bench.py [--keep DIR]

What it does (issue 29, "the PR is the product"):

1. makes a git repository holding a project with one app already in it (``rulegen new
   other`` and ``rulegen build``), with ``runbooks.prometheus_url`` and ``grafana_url`` set
   in ``.rulegen.yaml`` (:data:`LINKS`, as the bundled project sets one: the site's script
   then links every PromQL text of the pages; ``--alertmanager``: ``alertmanager_url`` too,
   :data:`SILENCE`, and every alert's triage box links Alertmanager's silence form),
   committed: the base branch;
2. adds the new team's app the way the README tells a team to: ``rulegen new shop``, then
   the spec edited to :data:`SHOP` (one Deployment, three alerts, a recording rule, a 99.5%
   SLO, runbook text, tests), then ``rulegen build``;
3. reports the pull request's added lines per file (``git diff --numstat`` against the
   base), their total, how many of them hold the addresses of rulegen's links on the runbook
   pages (:func:`link_lines`: the "Open in" query links, which the pages no longer hold, and
   the silence form's), the lines over 120 characters, and what ``rulegen test`` would
   generate (the SLO tests are made when the tests run, never committed);
4. from that branch, makes each one-knob edit of :data:`EDITS` (a threshold in an expr, a
   ``for``, a label value, a severity, a summary, the SLO objective, runbook text) in the
   spec, rebuilds, and reports the changed lines per generated file as a reviewer reads
   them (:func:`reviewed_lines`: a changed line counts once, a moved line twice; every line
   counts, the digest line of each sum file in ``.rulegen-sums/`` too).

``tests/gitops/test_pr_size.py`` runs :func:`measure` and asserts the targets; this script
prints the numbers. Nothing here is timed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

#: The new team's spec: what `rulegen new shop` writes, edited to the team's service.
SHOP = """\
# shop: the checkout service of the web shop (one Deployment).
app: shop

runbook:
  context:
    - markdown: |
        shop takes the orders of the web shop. When it is down, nobody can pay.
  facts:
    - {name: Owner, value: "team checkout"}
    - {name: Metrics, value: "`http_requests_total` by `job` and `code`"}

groups:
  - name: shop
    rules:
      - record: job:http_requests_errors:ratio_rate5m
        expr: |
          sum by (job) (rate(http_requests_total{job="shop", code=~"5.."}[5m]))
            /
          sum by (job) (rate(http_requests_total{job="shop"}[5m]))
        tests:
          - name: 3 errors in every 60 requests is a ratio of 0.05
            interval: 1m
            input_series:
              - series: http_requests_total{job="shop", code="200"}
                values: "0+57x10"
              - series: http_requests_total{job="shop", code="500"}
                values: "0x4 3+3x5"
            promql_expr_test:
              - eval_time: 10m
                exp_samples:
                  - labels: job:http_requests_errors:ratio_rate5m{job="shop"}
                    value: 0.05

      - alert: ShopDown
        expr: kube_deployment_status_replicas_available{deployment="shop"} == 0
        for: 5m
        severity: critical
        summary: No replica of shop is available.
        description: The shop Deployment has had no available replica for 5 minutes.
        runbook:
          causes:
            - A release whose pods crash at start.
            - The nodes ran out of memory.
          resolution:
            - Roll the last release back.
        tests:
          - name: no replica fires after 5m, not before
            interval: 1m
            input_series:
              - series: kube_deployment_status_replicas_available{deployment="shop"}
                values: "0x10"
            alert_rule_test:
              - eval_time: 4m
                exp_alerts: []
              - eval_time: 5m
                exp_alerts:
                  - exp_labels: {deployment: shop}
          - name: one replica never fires
            interval: 1m
            input_series:
              - series: kube_deployment_status_replicas_available{deployment="shop"}
                values: "1x10"
            alert_rule_test:
              - eval_time: 10m
                exp_alerts: []

      - alert: ShopHighErrorRate
        expr: job:http_requests_errors:ratio_rate5m{job="shop"} > 0.05
        for: 10m
        severity: warning
        summary: "{{ $labels.job }} answers more than 5% of requests with an error."
        description: More than 5% of the requests to shop have failed for 10 minutes.
        runbook:
          causes:
            - A dependency (database, payment provider) that is down or slow.
          resolution:
            - Follow the failing dependency's runbook.
        tests:
          - name: a ratio just above 0.05 fires after 10m, not before
            interval: 1m
            input_series:
              - series: job:http_requests_errors:ratio_rate5m{job="shop"}
                values: "0.051x20"
            alert_rule_test:
              - eval_time: 9m
                exp_alerts: []
              - eval_time: 10m
                exp_alerts:
                  - exp_labels: {job: shop}
          - name: a ratio of exactly 0.05 never fires
            interval: 1m
            input_series:
              - series: job:http_requests_errors:ratio_rate5m{job="shop"}
                values: "0.05x20"
            alert_rule_test:
              - eval_time: 20m
                exp_alerts: []

      - alert: ShopRestarting
        expr: increase(kube_pod_container_status_restarts_total{container="shop"}[15m]) > 3
        for: 5m
        severity: warning
        labels: {team: checkout}
        summary: A shop container restarts again and again.
        description: A shop container restarted more than 3 times in 15 minutes.
        runbook:
          causes:
            - The liveness probe fails under load.
          resolution:
            - Read the logs of the last run (kubectl logs --previous).
        tests:
          - name: 4 restarts in 15m fire after 5m
            interval: 1m
            input_series:
              - series: kube_pod_container_status_restarts_total{container="shop", pod="shop-1"}
                values: "0+1x30"
            alert_rule_test:
              - eval_time: 4m
                exp_alerts: []
              - eval_time: 10m
                exp_alerts:
                  - exp_labels: {container: shop, pod: shop-1}
          - name: 3 restarts in 15m never fire
            interval: 1m
            input_series:
              - series: kube_pod_container_status_restarts_total{container="shop", pod="shop-1"}
                values: "0+0.2x30"
            alert_rule_test:
              - eval_time: 30m
                exp_alerts: []

slos:
  - name: checkout
    objective: 99.5
    description: At least 99.5% of checkout requests over 30 days are answered without a 5xx code.
    sli:
      events:
        bad: http_requests_total{job="shop", code=~"5.."}
        total: http_requests_total{job="shop"}
    page:
      runbook:
        causes:
          - Anything that fails checkouts for a while; see ShopHighErrorRate.
        resolution:
          - Find the failing dependency and follow its runbook.
"""

#: What the project's ``.rulegen.yaml`` gets after ``rulegen new``: the runbook site's "Open in
#: Prometheus" and Grafana links (the pages mark their PromQL, the site's script builds the
#: links; they held every query's address before, and an edit of the expr changed those too).
LINKS = """
runbooks:
  prometheus_url: https://prometheus.example.com
  grafana_url: https://grafana.example.com
"""

#: With ``--alertmanager``, :data:`LINKS` gets this line too: every alert's triage box links
#: Alertmanager's silence form, pre-filled with the alert's matchers (an address per alert).
SILENCE = "  alertmanager_url: https://alertmanager.example.com\n"

#: One-knob edits of :data:`SHOP`: (what, old text, new text). The label is ShopRestarting's
#: ``team``; the severity edit is ShopRestarting's too (warning -> critical, the edit that
#: moved the alert in a severity-ordered list); the annotation is its summary; the runbook
#: text one of its causes.
EDITS = [
    ("threshold", "[15m]) > 3", "[15m]) > 4"),
    ("for", "        for: 10m\n", "        for: 15m\n"),
    ("label", "        labels: {team: checkout}\n", "        labels: {team: payments}\n"),
    ("severity", "        severity: warning\n        labels: {team",
     "        severity: critical\n        labels: {team"),
    ("annotation", "summary: A shop container restarts again and again.",
     "summary: A shop container restarts over and over."),
    ("SLO objective", "    objective: 99.5\n", "    objective: 99.9\n"),
    ("runbook text", "- The liveness probe fails under load.", "- The liveness probe times out under load."),
]

#: The edits whose every changed generated file changes in one line (issue 29).
ONE_LINE = ("threshold", "for", "label", "severity", "SLO objective")

#: The longest line a reviewer should have to read.
WIDTH = 120


@dataclass
class Report:
    """What :func:`measure` found.

    Attributes:
        added: added lines by path of the new team's pull request.
        link_lines: of those, the lines of the runbook pages that hold the address of one of
            rulegen's links, by the link's class (:func:`link_lines`: ``rg-open``, the "Open
            in" Prometheus/Grafana links; ``rg-silence-link``, the silence form).
        long_lines: (path, line number in the new file, length) of each added line over
            :data:`WIDTH` characters.
        generated_tests: lines of SLO tests `rulegen test` would generate (not committed).
        edits: by edit name, changed lines by generated path as a reviewer reads them
            (:func:`reviewed_lines`; unchanged paths absent).
    """

    added: dict[str, int] = field(default_factory=dict)
    link_lines: dict[str, int] = field(default_factory=dict)
    long_lines: list[tuple[str, int, int]] = field(default_factory=list)
    generated_tests: int = 0
    edits: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        """All added lines."""
        return sum(self.added.values())


def _git(root: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


def _rulegen(root: Path, *args: str) -> None:
    import contextlib
    import io
    from rulegen.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        code = main(["-C", str(root), *args])
    if code != 0:
        raise RuntimeError(f"rulegen {' '.join(args)} exited {code}")


def _numstat(text: str) -> dict[str, tuple[int, int]]:
    out = {}
    for line in text.splitlines():
        a, d, path = line.split("\t", 2)
        out[path] = (int(a) if a != "-" else 0, int(d) if d != "-" else 0)
    return out


def _long_lines(diff: str) -> list[tuple[str, int, int]]:
    out, path, n = [], "", 0
    for line in diff.splitlines():
        if line.startswith("+++ "):
            path = line[6:] if line.startswith("+++ b/") else line[4:]
        elif line.startswith("@@"):
            n = int(line.split("+", 1)[1].split(",")[0].split(" ")[0]) - 1
        elif line.startswith("+"):
            n += 1
            if len(line) - 1 > WIDTH:
                out.append((path, n, len(line) - 1))
        elif not line.startswith("-"):
            n += 1
    return out


_OWN_HTML = re.compile(r'<a class="(rg-[a-z-]+)"[^>]*? href="')
_OWN_MD = re.compile(r"\]\(https?://[^)]*\)\{ \.(rg-[a-z-]+)")


def link_lines(diff: str) -> dict[str, int]:
    """Added lines of the Markdown pages in ``git diff -U0`` output ``diff`` that hold (part of)
    the address of one of rulegen's links, by the link's class: a Markdown link with rulegen's
    class (``[Prometheus](https://...){ .rg-open }``), or each line of an HTML link whose address
    goes on over lines (:func:`rulegen.render.wrap.split_links`: ``<a class="rg-silence-link"
    ... href="https://...`` up to ``">``). ``rg-open``: the "Open in Prometheus · Grafana" links
    the pages held before the site's script made them; ``rg-silence-link``: the silence form."""
    count: dict[str, int] = {}
    page, inside = False, None
    for line in diff.splitlines():
        if line.startswith("+++ "):
            page, inside = line.endswith(".md"), None
        elif page and line.startswith("+"):
            found = [m.group(1) for m in _OWN_HTML.finditer(line)] + [m.group(1) for m in _OWN_MD.finditer(line)]
            cls = inside or (found[0] if found else None)
            if cls:
                count[cls] = count.get(cls, 0) + 1
            opened = _OWN_HTML.search(line)
            if opened or inside:
                rest = line[opened.end():] if opened else line
                inside = None if '">' in rest else (opened.group(1) if opened else inside)
    return count


def reviewed_lines(diff: str) -> dict[str, int]:
    """Changed lines by path of ``git diff -U0`` output ``diff``, as a reviewer reads them.

    Each hunk counts the larger of its removed and added lines: a line changed in place (one
    removed, one added) counts 1, a 4-line entry that moves (a hunk removing it, another
    adding it) counts 8. Paths are the new side's (``b/...``); a deleted file is named by its
    old side."""
    out: dict[str, int] = {}
    path, minus, plus = "", 0, 0

    def close() -> None:
        if minus or plus:
            out[path] = out.get(path, 0) + max(minus, plus)

    for line in diff.splitlines():
        if line.startswith("diff --git "):
            close()
            minus = plus = 0
            path = line.split(" b/", 1)[1] if " b/" in line else line
        elif line.startswith(("--- ", "+++ ", "index ", "new file", "deleted file", "similarity", "rename ",
                              "old mode", "new mode", "Binary files")):
            continue
        elif line.startswith("@@"):
            close()
            minus = plus = 0
        elif line.startswith("-"):
            minus += 1
        elif line.startswith("+"):
            plus += 1
    close()
    return out


def _slo_test_lines(root: Path) -> int:
    """Lines the SLO tests add to the promtool test files ``rulegen test`` writes (in its
    work folder, never committed): the files with them less the files without."""
    from rulegen.pipeline import load_project
    from rulegen.render.promtool_tests import render_test_file
    from rulegen.spec.slo import with_tests
    total = 0
    for spec in load_project(root).specs:
        full = render_test_file(with_tests(spec), "https://x", []) or ""
        total += len(full.splitlines()) - len((render_test_file(spec, "https://x", []) or "").splitlines())
    return total


def measure(root: Path, alertmanager: bool = False) -> Report:
    """Build the base project and the new team's pull request in ``root`` (an empty folder;
    a git repository is made there) and measure them (see the module docstring).
    ``alertmanager``: set ``runbooks.alertmanager_url`` too (:data:`SILENCE`)."""
    report = Report()
    root.mkdir(parents=True, exist_ok=True)
    _git(root, "init", "-q", "-b", "main")
    _rulegen(root, "new", "other")
    config = root / ".rulegen.yaml"
    config.write_text(config.read_text(encoding="utf-8") + LINKS + (SILENCE if alertmanager else ""),
                      encoding="utf-8")
    _rulegen(root, "build")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    _rulegen(root, "new", "shop")
    (root / "rules" / "shop.yaml").write_text(SHOP, encoding="utf-8")
    _rulegen(root, "build")
    _git(root, "add", "-A")
    report.added = {p: a for p, (a, _) in _numstat(_git(root, "diff", "--cached", "--numstat")).items()}
    report.long_lines = _long_lines(_git(root, "diff", "--cached", "-U0"))
    report.link_lines = link_lines(_git(root, "diff", "--cached", "-U0"))
    report.generated_tests = _slo_test_lines(root)
    _git(root, "commit", "-qm", "shop")
    for what, old, new in EDITS:
        spec = root / "rules" / "shop.yaml"
        assert SHOP.count(old) == 1, what
        spec.write_text(SHOP.replace(old, new), encoding="utf-8")
        _rulegen(root, "build")
        _git(root, "add", "-A")
        changed = reviewed_lines(_git(root, "diff", "--cached", "-U0", "--no-renames"))
        report.edits[what] = {p: n for p, n in changed.items() if p != "rules/shop.yaml"}
        report.long_lines += [x for x in _long_lines(_git(root, "diff", "--cached", "-U0"))
                              if x[0] != "rules/shop.yaml"]
        _git(root, "reset", "-q", "--hard")
    return report


def main(argv: list[str] | None = None) -> int:
    """Print the report of :func:`measure` (in ``--keep DIR`` or a temporary folder)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--keep", type=Path, default=None, help="build in this (new, empty) folder and keep it")
    ap.add_argument("--alertmanager", action="store_true",
                    help="set runbooks.alertmanager_url too: every alert links the silence form")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.keep or Path(tmp) / "project"
        r = measure(root, args.alertmanager)
    print("added lines of the new team's pull request:")
    for path, n in sorted(r.added.items(), key=lambda kv: -kv[1]):
        print(f"  {n:6d}  {path}")
    kinds = {"rg-open": "\"Open in\" links", "rg-silence-link": "silence links"}
    addresses = ", ".join(f"{r.link_lines.get(k, 0)} {what}" for k, what in kinds.items())
    print(f"  {r.total:6d}  total; link addresses: {addresses}; "
          f"{len(r.long_lines)} line(s) over {WIDTH} characters")
    for path, n, length in r.long_lines:
        print(f"          {path}:{n}: {length} characters")
    print(f"SLO tests `rulegen test` generates (not committed): {r.generated_tests} lines")
    print("changed lines per generated file (a reviewer's count, every line counted), by one-knob edit:")
    for what, files in r.edits.items():
        print(f"  {what}: " + (", ".join(f"{p} {n}" for p, n in sorted(files.items())) or "nothing"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
