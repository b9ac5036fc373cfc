"""Backtests on a loaded project: ``rulegen backtest`` and the old-vs-new table of ``rulegen
diff --prometheus``.

The rules replayed are the ones a release deploys, rendered like ``rulegen test`` renders them:
each spec's chart with the planned outputs laid over it, through the real ``helm template``
with every gate on and the chart's knobs removed (:func:`rulegen.run.testing.render_rule_groups`).
For ``diff``, the base side is the chart at the base ref (``git archive``) rendered the same
way. The replay itself is :func:`rulegen.live.backtest.replay` (Prometheus' own rule state
machine in ``rulegen-backtest``).
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from ..findings import RulegenError
from ..live.backtest import AlertReplay, Backtest, replay
from ..live.connect import Connection
from ..spec.durations import format_ms
from ..tools import helm

#: Scratch folder of the rendered charts (like ``rulegen test``'s ``.rulegen/test``).
WORK_DIR = ".rulegen/backtest"
#: Episodes shown under each alert in the text report.
FIRST_EPISODES = 3


def human(seconds: float) -> str:
    """``5400`` -> ``1h30m`` (whole seconds)."""
    return format_ms(int(round(seconds)) * 1000)


def when(t: float) -> str:
    """Unix seconds as ``2026-12-02 03:04 UTC`` (seconds shown when not zero)."""
    d = datetime.fromtimestamp(t, tz=timezone.utc)
    return d.strftime("%Y-%m-%d %H:%M:%S UTC" if d.second else "%Y-%m-%d %H:%M UTC")


def _labels(labels: dict) -> str:
    return "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()) if k != "alertname") + "}"


def app_groups(spec, outputs, root: Path, work: Path) -> list[dict]:
    """The rule groups ``spec``'s chart renders (see the module docstring).

    Raises:
        RulegenError: helm failed or rendered no rule group.
    """
    from ..run.testing import render_rule_groups
    return render_rule_groups(spec, outputs, root, work / spec.app)


def backtest_specs(loaded, outputs, root: Path, conn: Connection, start: float, end: float, *,
                   step: float | None = None, alerts=(), apps=()) -> list[tuple[str, Backtest]]:
    """``(app, Backtest)`` for every spec of ``loaded`` (of ``apps``, when given) that has an
    alert (of ``alerts``, when given), in spec order.

    Raises:
        RulegenError: rendering failed; LiveError: the replay failed.
    """
    from ..fs.write import work_dir
    work = work_dir(root, WORK_DIR)
    out = []
    for spec in loaded.specs:
        if apps and spec.app not in apps:
            continue
        names = {r.name for _, r in spec.rules() if r.is_alert}
        if alerts:
            names &= set(alerts)
        if not names:
            continue
        groups = app_groups(spec, outputs, root, work)
        out.append((spec.app, replay(conn, groups, start, end, step=step, alerts=sorted(names), root=root)))
    return out


def report_text(results: list[tuple[str, Backtest]], start: float, end: float, url: str) -> str:
    """The per-alert table ``rulegen backtest`` prints, with the first episodes of each alert."""
    n = sum(len(b.alerts) for _, b in results)
    lines = [f"backtest of {n} alerting rule(s) on {url}, {when(start)} to {when(end)} ({human(end - start)})"]
    rows = [("APP", "ALERT", "EPISODES", "FIRING", "LONGEST", "LABEL SETS")]
    details: list[list[str]] = [[]]
    for app, b in results:
        for a in b.alerts:
            name = a.alert + (f' severity={a.rule_labels["severity"]}' if "severity" in a.rule_labels else "")
            if a.error:
                rows.append((app, name, "error", "", "", ""))
                details.append([f"    the server refused the expr: {a.error}"])
                continue
            rows.append((app, name, str(a.episodes_total), human(a.firing_seconds), human(a.longest_seconds),
                         str(a.label_sets_total)))
            more = [f"    {when(e.start)} for {human(e.seconds)}{' (still firing)' if e.ongoing else ''} "
                    f"{_labels(e.labels)}" for e in a.episodes[:FIRST_EPISODES]]
            if a.episodes_total > FIRST_EPISODES:
                more.append(f"    ... {a.episodes_total - FIRST_EPISODES} more episode(s)")
            if a.eval_errors:
                more.append(f"    {a.eval_errors} evaluation(s) failed as they would on the server; first: "
                            f"{a.first_eval_error}")
            details.append(more)
    widths = [max(len(r[i]) for r in rows) for i in range(6)]
    for row, more in zip(rows, details):
        lines.append("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        lines.extend(more)
    if n == 0:
        lines.append("no alerting rule selected")
    return "\n".join(lines) + "\n"


# ---- rulegen diff --prometheus ----

@dataclass
class DiffRow:
    """One alert a pull request adds or changes, replayed on both sides (``old`` None: added)."""

    app: str
    name: str
    old: AlertReplay | None
    new: AlertReplay | None


def _base_groups(root: Path, base: str, spec, tmp: Path) -> list[dict] | None:
    """The rule groups of ``spec``'s chart at Git ``base`` rendered with every gate on and the
    knobs removed, or None when the chart did not exist there."""
    from ..render.values import gate_values
    from ..render.yamltext import values_yaml
    from .diff import export_chart
    dest = tmp / f"base-{spec.app}"
    if not export_chart(root, base, spec.chart.path, dest):
        return None
    chart = dest / spec.chart.path
    if not (chart / "Chart.yaml").is_file():
        return None
    values = [values_yaml(gate_values(list(spec.chart.gates))), values_yaml({spec.chart.values_key: None})]
    return helm.template(chart, values=values, root=root).rule_groups()


def _names(view_names) -> list[str]:
    return sorted({n.split("{", 1)[0].split("#", 1)[0] for n in view_names})


def diff_backtest(root: Path, base: str, loaded, old_specs, summary, conn: Connection,
                  since: float, now: float | None = None) -> tuple[list[DiffRow], tuple[float, float]]:
    """Replay every alert ``summary`` (a :class:`rulegen.gitops.diff.Summary`) adds or changes,
    as rendered at ``base`` and in the working tree, over the last ``since`` seconds.

    Returns:
        ``(rows, (start, end))``: one row per rendered rule of those names (a name with a
        warning and a critical variant gives two), matched by name and order.

    Raises:
        RulegenError: rendering failed; LiveError: a replay failed.
    """
    from ..live.backtest import window
    from ..pipeline import plan_project
    wanted: dict[str, set[str]] = {}
    for r in summary.added:
        if r.kind == "alert":
            wanted.setdefault(r.app, set()).add(r.name)
    for c in summary.changed:
        if c.new.kind == "alert":
            wanted.setdefault(c.new.app, set()).add(c.new.name)
    start, end = window(since, 60, now)
    if not wanted:
        return [], (start, end)
    outputs, findings = plan_project(loaded)
    if any(f.is_error for f in findings):
        raise RulegenError("the working tree's outputs cannot be planned (run `rulegen validate`)")
    from ..fs.write import work_dir
    work = work_dir(root, WORK_DIR)
    rows: list[DiffRow] = []
    old_by_app = {s.app: s for s in old_specs}
    with tempfile.TemporaryDirectory(prefix="rulegen-diff-backtest-") as tmp:
        for spec in loaded.specs:
            if spec.app not in wanted:
                continue
            names = _names(wanted[spec.app])
            new = replay(conn, app_groups(spec, outputs, root, work), start, end, alerts=names, root=root).alerts
            old: list[AlertReplay] = []
            old_spec = old_by_app.get(spec.app)
            if old_spec is not None:
                groups = _base_groups(root, base, old_spec, Path(tmp))
                if groups:
                    old = replay(conn, groups, start, end, alerts=names, root=root).alerts
            for name in names:
                olds = [a for a in old if a.alert == name]
                news = [a for a in new if a.alert == name]
                for i in range(max(len(olds), len(news))):
                    rows.append(DiffRow(spec.app, name, olds[i] if i < len(olds) else None,
                                        news[i] if i < len(news) else None))
    return rows, (start, end)


def _pair(old, new, fmt) -> str:
    a = "—" if old is None else ("error" if old.error else fmt(old))
    b = "—" if new is None else ("error" if new.error else fmt(new))
    return a if a == b else f"{a} → {b}"


def diff_markdown(rows: list[DiffRow], window_: tuple[float, float], url: str) -> list[str]:
    """Markdown lines of the old-vs-new backtest table for ``rulegen diff -o markdown``."""
    start, end = window_
    out = [f"#### Backtest: the last {human(end - start)} on `{url.replace('`', '')}` (old → new)", ""]
    if not rows:
        return out + ["No alert was added or changed.", ""]
    out += ["| alert | app | episodes | firing | longest | label sets |", "|---|---|---|---|---|---|"]
    for r in rows:
        ref = r.new or r.old
        sev = ref.rule_labels.get("severity") if ref else None
        sev = re.sub(r"[^A-Za-z0-9_.-]", "", sev or "")[:40]
        name = "`" + r.name.replace("`", "'") + "`" + (f" ({sev})" if sev else "")
        out.append("| " + " | ".join([
            name, r.app,
            _pair(r.old, r.new, lambda a: str(a.episodes_total)),
            _pair(r.old, r.new, lambda a: human(a.firing_seconds)),
            _pair(r.old, r.new, lambda a: human(a.longest_seconds)),
            _pair(r.old, r.new, lambda a: str(a.label_sets_total))]) + " |")
    out.append("")
    firsts = [(r, e) for r in rows if r.new is not None for e in r.new.episodes[:FIRST_EPISODES]]
    if firsts:
        out += [f"<details><summary>First episodes of the new rules (up to {FIRST_EPISODES} each)</summary>", ""]
        for r, e in firsts:
            labels = _labels(e.labels).replace("`", "'").replace("\n", " ")
            labels = labels if len(labels) <= 200 else labels[:200] + "..."
            out.append(f"- `{r.name}` ({r.app}): {when(e.start)} for {human(e.seconds)}"
                       f"{' (still firing)' if e.ongoing else ''} `{labels}`")
        out += ["", "</details>", ""]
    return out


def diff_text(rows: list[DiffRow], window_: tuple[float, float], url: str) -> list[str]:
    """Text lines of the same table for ``rulegen diff`` in a terminal."""
    start, end = window_
    out = [f"backtest, the last {human(end - start)} on {url} (old -> new):"]
    if not rows:
        return out + ["  no alert was added or changed"]
    for r in rows:
        out.append(f"  {r.app} {r.name}: episodes "
                   + _pair(r.old, r.new, lambda a: str(a.episodes_total)).replace("→", "->")
                   + ", firing " + _pair(r.old, r.new, lambda a: human(a.firing_seconds)).replace("→", "->")
                   + ", longest " + _pair(r.old, r.new, lambda a: human(a.longest_seconds)).replace("→", "->"))
    return out
