"""``rulegen diff``: what changed between a Git ref and the working tree, in alert terms.

The base side is read from Git, never checked out: ``git ls-tree -r --name-only REF -- rules``
lists the spec files at ``REF`` and ``git show REF:./<path>`` reads each one (both run in the
project root, so paths are relative to it even in a subfolder of the repository). The texts go
through :func:`rulegen.spec.load_text` and :func:`rulegen.validate.validate`, like the working
tree's specs through :func:`rulegen.pipeline.load_project`. A spec that does not load on one
side contributes no rules there (a note says so).

Rules are matched by app, kind (alert / record) and name. For a rule on both sides the
summary names which of these changed: ``expr`` (whitespace-only edits ignored), ``for``,
``keep_firing_for``, ``severity``, ``labels`` (effective labels: app, group and rule labels
merged, severity excluded), ``annotations``, ``runbook``, ``tests``, and ``group`` when the
rule moved to another group.

Values and gates (:func:`values_effects`): for every chart of a spec on either side whose files
changed (``git diff --name-only REF -- <chart>`` and untracked files; ``tests/`` aside), the
chart at ``REF`` (``git archive``) and the chart in the working tree are each rendered with the
real ``helm template`` three ways: with the chart's own ``values.yaml`` (does the
PrometheusRule render at all: the gates), with every gate on (what the knobs do), and with
every gate on and the knobs removed (``<valuesKey>: null``: the spec's defaults). A difference
between the two sides' knob renderings that the defaults do not share is the values' doing,
reported per alert: ``RedisDown disabled by values``, ``group redis disabled by values``,
``RedisMemoryHigh severity warning -> info (values)``, ``for``, ``keep_firing_for``, ``labels``
and ``annotations`` likewise, and a parameter of the expr by name (``RedisMemoryHigh threshold
0.9 -> 0.95 (values)``); a change of the gates is ``gates on: the PrometheusRule now
renders 3 alerts`` or ``gates off: the PrometheusRule no longer renders (it rendered 3
alerts)``. Rules are matched by name (and occurrence, for a name used twice). Without helm,
or when helm fails on one side, a note says so and the spec summary stands alone. A note also
names each compared chart whose gates are not true in its working-tree ``values.yaml`` (unless
a "gates off" effect says so already): its changes are not what a release with those values
deploys.

The base specs' findings get the base ref's ``.rulegen-baseline.yaml`` (read with ``git
show``), as ``validate`` gives the working tree's its own: a finding only baselined there is
no error, and no note says the base specs have errors.

Policy changes (:mod:`rulegen.gitops.policy`): every entry added to or removed from
``.rulegen-baseline.yaml`` and every change of ``.rulegen.yaml`` that changes what is checked
(codes switched off or on, severities lowered or raised, conventions relaxed or tightened),
each with the findings it hides, come first: a change to what rulegen reports is not an alert
change, and a reviewer reading only the alert table would miss it. With none, nothing is
shown.

Routing (:mod:`rulegen.gitops.routing_diff`): with an Alertmanager configuration named in
``.rulegen.yaml`` on either side, each alert's receivers at the base and now, each side routed
by Alertmanager's own code; an alert that stops paging is the first line of the output.

Output: ``text`` for a terminal, or ``markdown`` for a pull-request comment (the policy
changes, if any, as a table of their own, then a summary line, a table, and the old and new
expressions of changed rules in a collapsed block, then a table of the values' effects).
The output is written by :mod:`rulegen.gitops.diff_report`.
Exit codes: 0, or 2 when the ref or the repository cannot be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..fs.containment import refuse_tree
from ..findings import RulegenError
from ..fs import read as fs_read
from ..fs import yamlbound
from ..spec.durations import DurationError, parse_ms
from ..tools import find, helm, process
from .gitbase import _git, _git_program

FIELDS = ("expr", "for", "keep_firing_for", "severity", "labels", "annotations", "runbook", "tests", "group")


@dataclass(frozen=True)
class RuleView:
    """What ``diff`` compares of one rule (see the module docstring for each field)."""

    app: str
    kind: str
    name: str
    group: str
    expr: str
    for_: str | None
    keep_firing_for: str | None
    severity: str | None
    labels: dict
    annotations: dict
    runbook: dict
    tests: list

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.app, self.kind, self.name)


@dataclass
class Change:
    """One rule present on both sides with at least one differing field.

    ``fields`` lists the changed fields in :data:`FIELDS` order; ``old``/``new`` the two views.
    """

    old: RuleView
    new: RuleView
    fields: list[str]


@dataclass
class Summary:
    """Result of :func:`compare_specs`: rules added, removed and changed, each sorted by key."""

    added: list[RuleView] = field(default_factory=list)
    removed: list[RuleView] = field(default_factory=list)
    changed: list[Change] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: (chart path, effect) of values and gates, in chart order (see :func:`values_effects`).
    values: list[tuple[str, str]] = field(default_factory=list)
    #: changes of the baseline and the check configuration (:class:`rulegen.gitops.policy.PolicyChange`).
    policy: list = field(default_factory=list)
    #: alerts whose receivers changed (:class:`rulegen.gitops.routing_diff.RouteChange`)
    routing: list = field(default_factory=list)

    def count(self, kind: str) -> tuple[int, int, int]:
        """(added, removed, changed) rules of ``kind`` (``alert`` or ``record``)."""
        return (sum(r.kind == kind for r in self.added), sum(r.kind == kind for r in self.removed),
                sum(c.new.kind == kind for c in self.changed))


def views(specs) -> dict[tuple, RuleView]:
    """Every rule of ``specs`` as a :class:`RuleView`, keyed by (app, kind, name). A name that
    repeats within an app (a warning and a critical variant, say) is told apart by its label
    set, severity included: ``DiskFull{severity="critical"}``, so reordering the variants
    changes nothing."""
    out: dict[tuple, RuleView] = {}
    counts: dict[tuple, int] = {}
    for spec in specs:
        for _, r in spec.rules():
            counts[(spec.app, r.kind, r.name)] = counts.get((spec.app, r.kind, r.name), 0) + 1
    for spec in specs:
        for g, r in spec.rules():
            all_labels = r.all_labels(spec.labels, g.labels)
            labels = dict(all_labels)
            labels.pop("severity", None)
            name = r.name
            if counts[(spec.app, r.kind, r.name)] > 1:
                name = r.name + "{" + ", ".join(f'{k}="{v}"' for k, v in sorted(all_labels.items())) + "}"
            base, n = name, 1
            while (spec.app, r.kind, name) in out:  # same name and labels: RG411 reports it
                n += 1
                name = f"{base}#{n}"
            out[(spec.app, r.kind, name)] = RuleView(
                app=spec.app, kind=r.kind, name=name, group=g.name, expr=r.expr, for_=r.for_,
                keep_firing_for=r.keep_firing_for, severity=r.severity, labels=labels,
                annotations=dict(r.annotations), runbook=r.runbook, tests=[t.data for t in r.tests])
    return out


def _duration(text: str | None) -> int | None:
    try:
        return parse_ms(text) if text else None
    except DurationError:
        return None


def _changed_fields(a: RuleView, b: RuleView) -> list[str]:
    pairs = {
        "expr": (" ".join(a.expr.split()), " ".join(b.expr.split())),
        "for": (_duration(a.for_), _duration(b.for_)),  # 2m and 120s are the same
        "keep_firing_for": (_duration(a.keep_firing_for), _duration(b.keep_firing_for)),
        "severity": (a.severity, b.severity),
        "labels": (a.labels, b.labels),
        "annotations": (a.annotations, b.annotations),
        "runbook": (a.runbook, b.runbook),
        "tests": (a.tests, b.tests),
        "group": (a.group, b.group),
    }
    return [f for f in FIELDS if pairs[f][0] != pairs[f][1]]


def compare_specs(old_specs, new_specs) -> Summary:
    """Rules added, removed and changed from ``old_specs`` to ``new_specs`` (lists of Spec)."""
    old, new = views(old_specs), views(new_specs)
    s = Summary()
    s.added = [new[k] for k in sorted(new.keys() - old.keys())]
    s.removed = [old[k] for k in sorted(old.keys() - new.keys())]
    for k in sorted(old.keys() & new.keys()):
        fields = _changed_fields(old[k], new[k])
        if fields:
            s.changed.append(Change(old[k], new[k], fields))
    s.notes.extend(objective_notes(old_specs, new_specs))
    return s


def objective_notes(old_specs, new_specs) -> list[str]:
    """A line per SLO whose objective changed, in alert terms: the objective is written in one
    rule (``slo:error_budget:ratio``, listed as a changed recording rule), which every
    burn-rate alert of the SLO reads, so the alerts' own exprs do not change."""
    from ..spec.slo import percent
    before = {(sp.app, x.name): x for sp in old_specs for x in sp.slos}
    out = []
    for sp in new_specs:
        for x in sp.slos:
            was = before.get((sp.app, x.name))
            if was is not None and was.objective != x.objective:
                alerts = ", ".join(dict.fromkeys(x.alert_name(w.severity) for w in x.windows))
                out.append(f"SLO {x.name} ({sp.app}): objective {percent(was.objective / 100)} -> "
                           f"{percent(x.objective / 100)} (error budget {percent(was.budget)} -> "
                           f"{percent(x.budget)}); its burn-rate alerts {alerts} read the budget, so they "
                           f"fire at other error ratios though their exprs are unchanged")
    return out


# ---------------------------------------------------------------------------------------------
# Values and gates: what the charts render

#: Rule fields whose change by values is reported, in this order.
VALUE_FIELDS = ("expr", "for", "keep_firing_for", "severity", "labels", "annotations")


def changed_charts(root: Path, base: str, chart_paths) -> list[str]:
    """Those of ``chart_paths`` (relative to ``root``) with a file changed between ``base`` and
    the working tree, or untracked, other than under ``tests/`` (promtool test files); a
    change of the chart library (``charts/rulegen-library/``, which every chart holds through
    its link) counts for every chart."""
    from ..render import library
    paths = sorted(set(chart_paths))
    if not paths:
        return []
    names = _git(root, "diff", "--name-only", "--relative", base, "--", *paths, library.LIBRARY_DIR).splitlines()
    names += _git(root, "ls-files", "--others", "--exclude-standard", "--", *paths,
                  library.LIBRARY_DIR).splitlines()
    if any(n.startswith(library.LIBRARY_DIR + "/") for n in names):
        return paths
    out = []
    for chart in paths:
        prefix = chart.rstrip("/") + "/"
        if any(n.startswith(prefix) and not n[len(prefix):].startswith("tests/") for n in names):
            out.append(chart)
    return out


def export_chart(root: Path, ref: str, chart: str, dest: Path) -> bool:
    """Write the files of folder ``chart`` at Git ``ref`` under ``dest`` (``git archive``);
    False when ``ref`` has no such folder.

    A chart that links to the chart library at ``ref`` (``<chart>/charts/rulegen-library``,
    :mod:`rulegen.render.library`) gets the library folder at ``ref`` beside it, under
    ``dest`` as in the repository, so the link resolves there.

    Raises:
        RulegenError: git failed, or the folder holds a symlink leading outside it or a
            special file (RG742, RG760; tarfile's ``data`` filter refuses them), or a
            ``charts/rulegen-library`` that is not the link rulegen makes (RG770).
    """
    from ..render import library
    if not _git(root, "ls-tree", "--name-only", ref, "--", chart).strip():
        return False
    _extract(root, ref, chart, dest)
    problem = library.link_problem(dest, chart)
    if problem is not None:
        raise RulegenError(f"RG770 at {ref}: {problem}; nothing was read through it")
    if library.link_state(dest, library.link_path(chart))[0] == "link" \
            and _git(root, "ls-tree", "--name-only", ref, "--", library.LIBRARY_DIR).strip():
        _extract(root, ref, library.LIBRARY_DIR, dest)
    return True


def _refuse_wrong_link(root: Path, chart: str) -> None:
    """Raise RG770 when ``chart``'s ``charts/rulegen-library`` is not the link rulegen makes."""
    from ..render import library
    problem = library.link_problem(root, chart)
    if problem is not None:
        raise RulegenError(f"RG770 {problem}; nothing was read through it")


def _extract(root: Path, ref: str, folder: str, dest: Path) -> None:
    """``git archive`` of ``folder`` at ``ref`` extracted under ``dest`` (see :func:`export_chart`)."""
    import io
    import tarfile
    proc = process.run([_git_program(root), "archive", "--format=tar", ref, "--", folder], cwd=root, timeout=60,
                       text=False)
    if proc.returncode != 0:
        raise RulegenError(f"git archive {ref} -- {folder} failed: {proc.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        try:
            tar.extractall(dest, filter="data")
        except tarfile.FilterError as e:
            code = "RG760" if isinstance(e, tarfile.SpecialFileError) else "RG742"
            raise RulegenError(f"{code} {e.tarinfo.name} at {ref} {e}; nothing was read through it") from None


def _rendered_rules(chart: Path, values: list, root: Path) -> tuple[bool, dict[tuple, dict]]:
    """(a PrometheusRule rendered, {(name, n): rule with its group}) of ``helm template`` of
    ``chart`` with ``values``; n counts earlier rules of the same name."""
    from ..render.yamltext import values_yaml
    out = helm.template(chart, values=[values_yaml(v) for v in values], root=root)
    rules: dict[tuple, dict] = {}
    for g in out.rule_groups():
        for r in g.get("rules") or []:
            name = r.get("alert") or r.get("record")
            n = sum(1 for k in rules if k[0] == name)
            rules[(name, n)] = {**r, "_group": g.get("name")}
    return bool(out.prometheus_rules()), rules


def _fields(r: dict) -> dict:
    labels = dict(r.get("labels") or {})
    sev = labels.pop("severity", None)
    return {"expr": r.get("expr"), "for": r.get("for"), "keep_firing_for": r.get("keep_firing_for"),
            "severity": sev, "labels": labels, "annotations": dict(r.get("annotations") or {})}


def _count(rules: dict) -> str:
    alerts = sum(1 for r in rules.values() if "alert" in r)
    records = len(rules) - alerts
    parts = [f"{alerts} alert{'s' if alerts != 1 else ''}"]
    if records:
        parts.append(f"{records} recording rule{'s' if records != 1 else ''}")
    return " and ".join(parts)


def _gates_on(chart: Path, gates) -> bool:
    """True when every gate is the boolean true in the chart's own ``values.yaml``."""
    return not gates_off(chart, gates)


def gates_off(chart: Path, gates) -> list[str]:
    """Those of ``gates`` (dotted values paths) that are not the boolean true in the chart's own
    ``values.yaml`` (all of them when it cannot be read or is not YAML), in order, once each."""
    import yaml
    try:
        values = yamlbound.safe_load(fs_read.read_text(chart / "values.yaml"), str(chart / "values.yaml"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        values = None
    off = []
    for gate in gates:
        v = values
        for part in gate.split("."):
            v = v.get(part) if isinstance(v, dict) else None
        if v is not True and gate not in off:
            off.append(gate)
    return off


def _side(chart: Path, keys_gates, root: Path):
    """(gates on in its own values?, rules rendered with its own values, with every gate on,
    with every gate on and no knob) of one chart."""
    from ..render.values import gate_values
    gate_paths = [g for _, gs in keys_gates for g in gs]
    gates = gate_values(gate_paths)
    _, own = _rendered_rules(chart, [], root)
    own_on = _gates_on(chart, gate_paths)
    _, knobs = _rendered_rules(chart, [gates], root)
    _, default = _rendered_rules(chart, [gates, {k: None for k, _ in keys_gates}], root)
    return own_on, own, knobs, default


def _param_values(template: str, expr: str) -> dict | None:
    """The parameter values that make ``template`` (an expr with ``[[name]]`` placeholders)
    read ``expr``, or None when it does not match."""
    import re

    import re2

    from ..spec.model import PARAM_RE
    # RE2 (linear time): with Python's backtracking engine, a template of a few adjacent
    # placeholders against an expr it does not explain took polynomial time of high degree (a
    # pull request sets the template). RE2 has no back-references: a repeated placeholder is a
    # group of its own, and its values must agree.
    pattern, names, pos = "", [], 0
    for m in PARAM_RE.finditer(template):
        pattern += re.escape(template[pos:m.start()])
        pattern += "(.+?)"
        names.append(m.group(1))
        pos = m.end()
    pattern += re.escape(template[pos:])
    try:
        m = re2.compile(f"(?s:{pattern})").fullmatch(expr)
    except re2.error:
        return None
    if not m:
        return None
    out: dict = {}
    for name, value in zip(names, m.groups()):
        if out.setdefault(name, value) != value:
            return None
    return out


def _expr_phrase(template: str | None, old: str, new: str) -> str:
    """``threshold 0.9 -> 0.95`` when ``template`` (the alert's expr as the spec writes it)
    explains both exprs by its parameters, else ``expr``."""
    if template:
        a, b = _param_values(template, old), _param_values(template, new)
        if a is not None and b is not None:
            return ", ".join(f"{k} {a[k]} -> {b[k]}" for k in a if a[k] != b[k]) or "expr"
    return "expr"


def _effects(old, new, templates: dict | None = None) -> list[str]:
    """What the values changed between two sides (see the module docstring); ``old`` is None
    for a chart new in the working tree. ``templates``: alert name -> its expr with
    ``[[name]]`` placeholders, for alerts with parameters (their change is named by
    parameter)."""
    new_on, new_own, new_knobs, new_default = new
    if old is None:
        old_on, old_own, old_knobs, old_default = False, {}, new_default, new_default
    else:
        old_on, old_own, old_knobs, old_default = old
    out: list[str] = []
    if new_on and not old_on:
        out.append(f"gates on: the PrometheusRule now renders {_count(new_own)}")
    elif old_on and not new_on:
        out.append(f"gates off: the PrometheusRule no longer renders (it rendered {_count(old_own)})")
    elif old_on and new_on and bool(old_own) != bool(new_own):
        out.append("every rule disabled by values: the PrometheusRule no longer renders" if old_own
                   else f"the PrometheusRule renders again: {_count(new_own)}")
    groups_off = {}
    for side, knobs, default in (("old", old_knobs, old_default), ("new", new_knobs, new_default)):
        present = {r["_group"] for r in knobs.values()}
        groups_off[side] = {r["_group"] for r in default.values()} - present
    for g in sorted(groups_off["new"] - groups_off["old"]):
        if any(r["_group"] == g for r in old_default.values()):
            out.append(f"group {g} disabled by values")
    for g in sorted(groups_off["old"] - groups_off["new"]):
        if any(r["_group"] == g for r in new_default.values()):
            out.append(f"group {g} no longer disabled by values")
    keys = list(new_default) + [k for k in old_default if k not in new_default]
    for key in keys:
        name = key[0] if key[1] == 0 else f"{key[0]}#{key[1] + 1}"
        in_group_off = (key in new_default and new_default[key]["_group"] in groups_off["new"] - groups_off["old"]) \
            or (key in old_default and old_default[key]["_group"] in groups_off["old"] - groups_off["new"])
        if in_group_off:
            continue
        was_off = key in old_default and key not in old_knobs
        now_off = key in new_default and key not in new_knobs
        if now_off and not was_off:
            out.append(f"{name} disabled by values")
            continue
        if was_off and not now_off and key in new_knobs:
            out.append(f"{name} no longer disabled by values")
            continue
        if key not in old_knobs or key not in new_knobs or key not in old_default or key not in new_default:
            continue
        a, b = _fields(old_knobs[key]), _fields(new_knobs[key])
        da, db = _fields(old_default[key]), _fields(new_default[key])
        phrases = []
        for f in VALUE_FIELDS:
            if a[f] == b[f] or da[f] != db[f]:
                continue  # unchanged, or changed by the spec (the summary above says so)
            if isinstance(a[f], dict):
                phrases.append(f"{f} ({_dict_delta(a[f], b[f])})")
            elif f == "expr":
                phrases.append(_expr_phrase((templates or {}).get(key[0]), a[f], b[f]))
            else:
                phrases.append(f"{f} {a[f] or '(none)'} -> {b[f] or '(none)'}")
        if phrases:
            out.append(f"{name} {', '.join(phrases)} (values)")
    return out


def values_effects(root: Path, base: str, old_specs, new_specs) -> tuple[list[tuple[str, str]], list[str]]:
    """(chart, effect) pairs of values and gates between ``base`` and the working tree, and
    notes (see the module docstring). Charts are those of ``old_specs`` and ``new_specs``
    whose files changed.

    Raises:
        RulegenError: git failed.
    """
    import tempfile

    by_chart: dict[str, list] = {}
    for s in list(new_specs) + list(old_specs):
        pair = (s.chart.values_key, tuple(s.chart.gates))
        if pair not in by_chart.setdefault(s.chart.path, []):
            by_chart[s.chart.path].append(pair)
    charts = changed_charts(root, base, by_chart)
    if not charts:
        return [], []
    if find.find("helm", root) is None:
        return [], [f"helm is not installed: the values of {', '.join(charts)} were not compared "
                    "(scripts/install-tools.sh installs it)"]
    effects: list[tuple[str, str]] = []
    notes: list[str] = []
    def one(i_chart):
        """(effects, notes) of one chart; charts run two at a time (helm processes)."""
        i, chart = i_chart
        keys_gates = by_chart[chart]
        sides = []
        for label, where in ((base, None), ("the working tree", root / chart)):
            try:
                if where is None:
                    dest = Path(tmp) / str(i)
                    where = dest / chart if export_chart(root, base, chart, dest) else None
                else:
                    refuse_tree(root, chart, "chart folder")
                    _refuse_wrong_link(root, chart)
                sides.append(None if where is None or not (where / "Chart.yaml").is_file()
                             else _side(where, keys_gates, root))
            except RulegenError as e:
                return [], [f"{chart} at {label}: values not compared: {str(e).splitlines()[-1]}"]
        if sides[1] is None:
            return [], []
        templates = {r.name: r.expr_template for s in new_specs if s.chart.path == chart
                     for _, r in s.rules() if r.expr_template}
        chart_effects = [(chart, e) for e in _effects(sides[0], sides[1], templates)]
        off = gates_off(root / chart, [g for _, gs in keys_gates for g in gs])
        if off and not any(e.startswith("gates off:") for _, e in chart_effects):
            return chart_effects, [_gates_off_note(chart, off)]
        return chart_effects, []

    from concurrent.futures import ThreadPoolExecutor
    with tempfile.TemporaryDirectory(prefix="rulegen-diff-") as tmp, ThreadPoolExecutor(2) as pool:
        for chart_effects, chart_notes in pool.map(one, enumerate(charts)):
            effects += chart_effects
            notes += chart_notes
    return effects, notes


def _gates_off_note(chart: str, off: list[str]) -> str:
    """The note for a chart whose own values.yaml leaves ``off`` (gates) not true."""
    word = "gate" if len(off) == 1 else "gates"
    return (f"{chart}: {word} {', '.join(off)} {'is' if len(off) == 1 else 'are'} not true in its "
            "values.yaml, so with its own values the chart renders no PrometheusRule; the rules listed "
            "are what it renders once the gates are on (there, with helm --set, or where the chart is "
            "deployed; `rulegen validate` warns when a gate looks misspelt, RG733)")


def _dict_delta(old: dict, new: dict) -> str:
    """``+k=v, -k, k: a -> b`` for two flat mappings; nested values are named only."""
    out = []
    for k in sorted(old.keys() | new.keys()):
        if k not in old:
            out.append(f"+{k}" + (f"={new[k]}" if isinstance(new[k], str) and len(new[k]) <= 40 else ""))
        elif k not in new:
            out.append(f"-{k}")
        elif old[k] != new[k]:
            short = all(isinstance(v, str) and len(v) <= 40 for v in (old[k], new[k]))
            out.append(f"{k}: {old[k]} -> {new[k]}" if short else f"~{k}")
    return ", ".join(out)
