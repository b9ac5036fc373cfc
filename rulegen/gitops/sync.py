"""What the Argo CD sync would reject, found at CI (``rulegen check``).

Argo CD renders each chart with ``helm template`` (values schema validation on), then the
Kubernetes API server checks every PrometheusRule against the Prometheus Operator's CRD schema
and the operator's admission webhook parses its rule groups with Prometheus' rule parser.
``check`` does the same before the merge:

1. every chart of the project's specs is rendered as ``helm template`` renders it with its
   own ``values.yaml`` and, once each, with every extra values file the project names for it
   in ``.rulegen.yaml`` (``charts.values_files``: one per environment or cluster); when the
   values leave the chart's gates off, its render with the gates on is checked instead, so
   the PrometheusRule is checked anyway. All renders run in one ``rulegen-helmrender``
   process (Helm's own code of the pinned module, see :class:`rulegen.tools.helm.Batch`),
   started before ``check`` plans the outputs; what it cannot render is rendered by the real
   ``helm template``, whose error the finding quotes;
2. every rendered PrometheusRule, a document or an item of a list (``kind: List``, a
   ``PrometheusRuleList``, lists in lists: whatever the sync deploys,
   :func:`rulegen.tools.helm.applied`), is validated against the ``v1`` schema of the
   ``monitoring.coreos.com_prometheusrules.yaml`` CRD published in the
   ``github.com/prometheus-operator/prometheus-operator`` Go module, pinned in
   ``tools/prometheus-operator/go.mod`` and fetched (source only) by
   ``scripts/install-tools.sh`` into ``<tools dir>/crds/`` (:func:`crd_path`), with the
   ``jsonschema`` library; a list the schema marks ``x-kubernetes-list-type: map`` must have
   unique keys (two rule groups with one name), as the API server requires;
3. the operator's admission webhook (``pkg/admission``) runs ``ValidateRule``: the
   PrometheusRule's ``spec`` serialized as a rule file must be at most half a Kubernetes
   Secret (512 KiB), and must parse with Prometheus' ``rulefmt.Parse``, which is what
   ``promtool check rules`` runs on each rendered ``spec`` here.

Steps 2 and 3 run first in ``rulegen-helmrender``, in the process that renders, while
``check`` plans the outputs: the API server's own validation against the CRD's schema
(``k8s.io/apiextensions-apiserver``: unknown fields, the schema, list-map keys, CEL rules) and
the operator's own ``ValidateRule`` (its ``pkg/operator`` of the pinned release, linked into the
helper). A render whose PrometheusRules all pass comes back without its text (a
:class:`rulegen.tools.helm.Passed`) and rulegen neither parses nor checks it. A render the
helper rejects, or one it does not judge because rulegen's YAML 1.1 reading of it could differ
from Kubernetes' (``2024-01-31``, ``on``, ``1:30``, anchors, tags, nulls, unknown fields, a
spec near the size limit...), rulegen checks itself as described above, and its findings say
why: the helper judges, rulegen explains, and the findings are those of rulegen checking
everything (tests/gitops/test_sync_judge.py holds the two to that). Where the webhook is
stricter than the promtool rulegen runs (legacy label names, functions and template functions
of a later Prometheus), rulegen's own checks find nothing, and the helper's reason is the
finding (``RG737``, quoting the operator's code; :mod:`rulegen.gitops.admission`).

Without helm, promtool or the CRD file the check cannot run: that is an error in CI (``CI``
set) and a warning elsewhere (``RG738``), so a CI without the tools never passes silently.

Codes:

* ``RG734`` (warning) the project sets no rule-selector label (``.rulegen.yaml``
  ``charts.rule_selector_labels: {}``): new charts' PrometheusRules get no ``release`` label,
  and a kube-prometheus-stack install's default ``ruleSelector`` (its Helm release's name)
  ignores their rules. Bad: ``rule_selector_labels: {}``; good: the default
  ``rule_selector_labels: {release: kube-prometheus-stack}``, or your Prometheus' selector.
* ``RG735`` a chart does not render with one of its values files: a value breaks the chart's
  ``values.schema.json`` (reported at the key in the values file that sets it, with a "did you
  mean" for a misspelt key or enum value) or the template fails. Argo CD's sync of that chart
  would fail the same way. Bad: ``customRules: {ShopDown: {params: {treshold: 3}}}`` or
  ``severity: page``; good: ``params: {threshold: 3}``, ``severity: critical``.
* ``RG736`` a rendered PrometheusRule breaks the Prometheus Operator's CRD schema (the API
  server rejects it at sync); the message names the chart, the values file, the rule group and
  the rule. Bad: a hand-written PrometheusRule template in the chart rendering ``for: 5``;
  good: ``for: 5m``.
* ``RG737`` a rendered PrometheusRule fails the rule validation of the Prometheus Operator's
  admission webhook (Prometheus' rule file parser, as ``promtool check rules`` runs it, and the
  size limit of 512 KiB); the message names the chart and the rule. Bad: a rule with both
  ``alert`` and ``record``; good: one of them.
* ``RG738`` (warning) the sync check could not run: helm, promtool or the Prometheus Operator's
  CRD schema is not installed (an error when the ``CI`` environment variable is set), or a
  values file named in ``.rulegen.yaml`` is missing or leads outside the project. Bad: running
  ``rulegen check`` before ``scripts/install-tools.sh``; good: ``make tools`` first.
* ``RG739`` (warning) a chart's values drop the rule-selector label the project sets
  (``charts.rule_selector_labels`` in ``.rulegen.yaml``, default ``release:
  kube-prometheus-stack``): the PrometheusRule the chart renders with them has no such label,
  so a kube-prometheus-stack install's default ``ruleSelector`` ignores its rules. Reported at
  the ``labels`` key under the chart's values key in the values file that sets it last (the
  chart's own ``values.yaml`` or an extra values file of ``charts.values_files``). Any value of
  the label counts (``rulegen new --release NAME`` writes another); a chart's labels helper may
  set it too. (The project setting no label at all is ``RG734``.) Bad: ``prometheusRule:
  {labels: {}}``; good: ``prometheusRule: {labels: {release: kube-prometheus-stack}}``.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import subprocess
from decimal import Decimal, InvalidOperation
from pathlib import Path

import yaml

from ..findings import Finding, RulegenError, Severity
from ..fs import read as fs_read
from ..fs.containment import describe, tree_problems
from ..promql.series import decimal_text
from ..tools import find, helm
from . import admission
# the CRD and its schema check (rulegen.gitops.crd); the names stay importable from here
from .crd import CRD_FILE, _crd_schema, _draft4, _precheck, crd_errors, crd_path  # noqa: F401

_AT = re.compile(r"^\s*- at '([^']*)': (.*)$")
_ADDITIONAL = re.compile(r"additional propert(?:y|ies) (.+) not allowed")



# --- values positions ------------------------------------------------------------------------

def _compose(text: str):
    try:
        return yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:
        return None


def _node_at(root, parts: list[str]):
    """The deepest node along ``parts`` in a composed YAML tree and how many parts matched.
    The node is the key's node for a matched mapping key (so the position is the key's)."""
    node, key_node, depth = root, None, 0
    for p in parts:
        if not isinstance(node, yaml.MappingNode):
            break
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == p:
                node, key_node, depth = v, k, depth + 1
                break
        else:
            break
    return key_node, node, depth


def _schema_at(schema: dict, parts: list[str]):
    """The values.schema.json node describing the value at ``parts`` (``$ref`` inside the file
    followed), or None."""
    def deref(node, seen=0):
        while isinstance(node, dict) and isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/") \
                and seen < 20:
            cur = schema
            for q in node["$ref"][2:].split("/"):
                q = q.replace("~1", "/").replace("~0", "~")
                cur = cur.get(q) if isinstance(cur, dict) else None
            node, seen = cur, seen + 1
        return node
    node = deref(schema)
    for p in parts:
        if not isinstance(node, dict):
            return None
        props = node.get("properties") or {}
        if p in props:
            node = deref(props[p])
        elif isinstance(node.get("additionalProperties"), dict):
            node = deref(node["additionalProperties"])
        else:
            return None
    return node


def _pointer(text: str) -> list[str]:
    if not text or text == "/":
        return []
    return [p.replace("~1", "/").replace("~0", "~") for p in text.lstrip("/").split("/")]


def values_findings(stderr: str, files: list[tuple[str, str]], schema: dict | None, chart: str,
                    shown: str) -> list[Finding]:
    """Findings (``RG735``) for helm's error output ``stderr`` of rendering ``chart`` with the
    values ``files`` ((project path, text), in the order helm applies them: later wins), each
    schema violation at the key of the last file that sets it (else at its deepest ancestor
    found); ``schema``: the chart's values.schema.json for "did you mean"; ``shown``: the file
    a failure that names no key is reported at."""
    trees = [(path, _compose(text)) for path, text in files]
    out: list[Finding] = []
    leaves = [(m.group(1), m.group(2)) for m in map(_AT.match, stderr.splitlines()) if m]
    # "validation failed" lines are parents of the lines after them
    leaves = [(p, msg) for p, msg in leaves if msg.strip() != "validation failed"]
    for ptr, msg in leaves:
        parts = _pointer(ptr)
        targets = [parts]
        add = _ADDITIONAL.search(msg)
        if add:
            names = re.findall(r"'((?:[^']|'')*)'", add.group(1))
            targets = [parts + [n] for n in names] or [parts]
        for t in targets:
            best = (-1, shown, 0, 0)
            for path, tree in reversed(trees):
                if tree is None:
                    continue
                key, _node, depth = _node_at(tree, t)
                if depth > best[0] and key is not None:
                    best = (depth, path, key.start_mark.line + 1, key.start_mark.column + 1)
                if depth == len(t):
                    break
            dotted = ".".join(t) or "(the values)"
            hint = _hint(t, msg, add is not None, schema, trees)
            out.append(Finding(best[1], best[2], best[3], "RG735", Severity.ERROR,
                               f"{dotted}: {'not a key the chart accepts' if add else msg}{hint}; helm "
                               f"template of {chart} fails on it (values.schema.json), so the Argo CD sync would"))
    if not out:
        text = " ".join(line.strip() for line in stderr.strip().splitlines()[:6])
        out.append(Finding(shown, 0, 0, "RG735", Severity.ERROR,
                           f"helm template of {chart} with {shown} fails, so the Argo CD sync would: {text}"))
    return out


def _hint(parts: list[str], msg: str, unknown: bool, schema: dict | None, trees) -> str:
    if not schema:
        return ""
    if unknown:
        parent = _schema_at(schema, parts[:-1])
        names = sorted((parent or {}).get("properties") or {}) if isinstance(parent, dict) else []
        close = difflib.get_close_matches(parts[-1], names, n=1)
        known = f" (known here: {', '.join(names[:12])}{', ...' if len(names) > 12 else ''})" if names else ""
        return f" (did you mean {close[0]}?)" if close else known
    node = _schema_at(schema, parts)
    if isinstance(node, dict) and isinstance(node.get("enum"), list):
        given = _given(parts, trees)
        choices = [str(x) for x in node["enum"]]
        close = difflib.get_close_matches(given or "", choices, n=1, cutoff=0.6) if given else []
        if close:
            return f" (did you mean {close[0]}?)"
        # Helm's message lists the choices itself ("value must be one of 'critical', ..."): once is enough
        return "" if all(f"'{c}'" in msg or f'"{c}"' in msg for c in choices) else f" (one of {', '.join(choices)})"
    if parts[-1:] == ["objective"] and "slos" in parts:
        try:
            ratio = Decimal(_given(parts, trees) or "")
        except InvalidOperation:
            ratio = None
        if ratio is not None and 0 < ratio < 1:  # a ratio where a percentage is meant (RG350 of specs)
            return f" (a ratio where a percentage is meant: write {decimal_text(ratio * 100)})"
        return " (the objective is a percentage above 1 and below 100: 99.9, not the ratio 0.999)"
    return ""


def _given(parts: list[str], trees) -> str | None:
    """The scalar text the last values file that sets key ``parts`` gives it, or None."""
    for _path, tree in reversed(trees):
        if tree is not None:
            _k, n, depth = _node_at(tree, parts)
            if depth == len(parts) and isinstance(n, yaml.ScalarNode):
                return n.value
    return None


# --- the check -----------------------------------------------------------------------------

def selector_findings(config, root: Path) -> list[Finding]:
    """``RG734`` when ``config`` (the project's) sets no rule-selector label, at the
    ``rule_selector_labels`` line of ``.rulegen.yaml``."""
    if config.rule_selector_labels:
        return []
    line = 0
    for i, text in enumerate(_read(Path(root), ".rulegen.yaml").splitlines(), 1):
        if text.lstrip().startswith("rule_selector_labels:"):
            line = i
            break
    return [Finding(".rulegen.yaml", line, 0, "RG734", Severity.WARNING,
                    "charts.rule_selector_labels sets no label: new charts' PrometheusRules get no "
                    "release label, so a kube-prometheus-stack install's default ruleSelector ignores "
                    "them; set the label your Prometheus selects, e.g. {release: kube-prometheus-stack}")]


def _missing(what: str, shown: str = "") -> Finding:
    sev = Severity.ERROR if os.environ.get("CI") else Severity.WARNING
    return Finding(shown or ".rulegen.yaml", 0, 0, "RG738", sev, what)


def sync_findings(loaded, root: Path, charts: list[str] | None = None) -> list[Finding]:
    """The findings of this module's checks (``RG735``-``RG738``) for the charts of
    ``loaded.specs`` (or only ``charts``, project-relative folders), each rendered with its own
    values.yaml and every extra values file of ``loaded.config.values_files``."""
    with start(loaded, root, charts) as check:
        return check.findings()


class SyncCheck:
    """The sync check of a project with its renders started (:func:`start`), so they run
    while rulegen does other work; :meth:`findings` waits for them. A context manager:
    leaving it stops renders still running."""

    def __init__(self, root: Path, findings: list[Finding], jobs: list | None = None, crd: Path | None = None,
                 batch=None, selector: dict | None = None, keys: dict | None = None, selector_set: bool = True):
        self.root, self._findings, self.jobs, self.crd, self.batch = root, findings, jobs or [], crd, batch
        # the project's rule-selector labels (set in .rulegen.yaml, or the default) and each
        # chart's values key (RG739)
        self.selector, self.keys, self.selector_set = selector or {}, keys or {}, selector_set

    def __enter__(self) -> "SyncCheck":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the renders if they still run."""
        if self.batch is not None:
            self.batch.close()

    def findings(self) -> list[Finding]:
        """The findings (see :func:`sync_findings`), in the order a check reports them."""
        if self.batch is None:
            return list(self._findings)
        findings = list(self._findings)
        rendered, labelled, rejected = [], [], []
        for found, docs, metas, why in _render_all(self.root, self.jobs, self.batch):
            findings += found
            rendered += docs
            labelled += metas
            rejected += why
        labels = label_findings(labelled, self.root, self.selector, self.keys, self.selector_set)
        if not rendered:  # none, or every one judged valid by rulegen-helmrender
            return findings + labels
        schema = _crd_schema(str(self.crd), self.crd.stat().st_mtime)
        return findings + admission.findings(rendered, schema, self.root, rejected) + labels


def start(loaded, root: Path, charts: list[str] | None = None) -> SyncCheck:
    """Start the sync check (see :func:`sync_findings`): every render it needs is started at
    once (:class:`rulegen.tools.helm.Batch`), each job (chart, values file) as it is and, when
    the chart has gates, with them on (used when the values leave them off)."""
    root = Path(root)
    chart_gates: dict[str, tuple] = {}
    keys: dict[str, str] = {}  # each chart's values key (RG739)
    for s in loaded.specs:
        chart_gates[s.chart.path] = tuple(dict.fromkeys(chart_gates.get(s.chart.path, ()) + tuple(s.chart.gates)))
        keys.setdefault(s.chart.path, s.chart.values_key)
    if charts is not None:
        chart_gates = {c: g for c, g in chart_gates.items() if c in charts}
    if not chart_gates:
        return SyncCheck(root, [])
    if find.find("helm", root) is None or find.find("promtool", root) is None:
        return SyncCheck(root, [_missing("the Argo CD sync check (values, CRD schema, webhook) did not run: helm "
                                         f"or promtool is not installed; {find.INSTALL_HINT}")])
    crd = crd_path(root)
    if not crd.is_file():
        return SyncCheck(root, [_missing(f"the Argo CD sync check did not run: the Prometheus Operator's CRD schema "
                                         f"is not at {crd}; run scripts/install-tools.sh (it fetches the pinned "
                                         "module's CRD)")])
    findings: list[Finding] = []
    jobs = []
    for chart, gates in sorted(chart_gates.items()):
        if not (root / chart / "Chart.yaml").is_file():
            continue  # a chart `build` has not made yet: the drift check says so
        jobs.append((chart, gates, None))
        for extra in loaded.config.values_files.get(chart, ()):
            p = root / extra
            problem = tree_problems(root, extra, limit=1)  # a link out, into .git, or a FIFO
            if problem:
                findings.append(_missing(f"charts.values_files.{chart}: {describe(*problem[0])}; "
                                         "it was not read"))
            elif not p.is_file():
                findings.append(_missing(f"charts.values_files.{chart}: {extra} does not exist"))
            else:
                jobs.append((chart, gates, extra))
    return SyncCheck(root, findings, jobs, crd, helm.Batch(_batch_jobs(root, jobs), root, check=crd),
                     loaded.config.rule_selector_labels, keys, loaded.config.rule_selector_labels_set)


def _values(root: Path, job) -> tuple:
    """The extra values file of ``job`` (chart, gates, extra or None) as helm is given it."""
    return (str(root / job[2]),) if job[2] else ()


def _batch_jobs(root: Path, jobs: list) -> list:
    """The renders of ``jobs``: each as it is, then each one with gates with its gates on."""
    return [helm.Job(root / j[0], _values(root, j)) for j in jobs] + [
        helm.Job(root / j[0], _values(root, j), tuple(f"{g}=true" for g in j[1])) for j in jobs if j[1]]


def _read(root: Path, path: str) -> str:
    """The text of values file ``path`` (project-relative) through the bounded reader, or ""
    when it cannot be read (helm then reports the file itself)."""
    try:
        return fs_read.read_text(root / path, path)
    except (OSError, UnicodeDecodeError, RulegenError):
        return ""


def _render_all(root: Path, jobs: list, batch) -> list:
    """Per job ``(chart, gates, extra values file or None)`` of :func:`start`: (findings,
    [(chart, values file, PrometheusRule), ...] to check, the same for every PrometheusRule but
    holding only its ``metadata`` name and labels where the helper judged it valid (for
    :func:`label_findings`), [(chart, values file, the helper's reasons)] when it judged the
    render invalid) of the chart rendered with its values.yaml
    (and the extra file), exactly as ``helm template`` of each alone renders it; for the jobs
    whose values leave the gates off and render no PrometheusRule, the render with the gates
    on, so the PrometheusRule is checked anyway."""
    def shown(job) -> str:
        return job[2] or f"{job[0]}/values.yaml"
    n = len(jobs)
    gated = {i: n + k for k, i in enumerate(i for i, j in enumerate(jobs) if j[1])}  # job -> its gates-on render
    first = batch.results(list(range(n)))
    out: list = [None] * n
    again = []
    for i, (job, r) in enumerate(zip(jobs, first)):
        chart, gates, extra = job
        if isinstance(r, subprocess.TimeoutExpired):
            out[i] = [Finding(shown(job), 0, 0, "RG735", Severity.ERROR, f"helm template of {chart} with "
                              f"{shown(job)} did not finish within {helm.TIMEOUT_S} s")], *_NOTHING
        elif isinstance(r, helm.HelmError):
            out[i] = _values_error(root, r, chart, extra), *_NOTHING
        elif isinstance(r, BaseException):
            raise r
        elif not _count(r) and gates:  # the values leave the gates off: turn them on
            again.append(i)
        else:
            out[i] = _outcome(r, chart, shown(job))
    on = batch.results([gated[i] for i in again])
    for i in again:
        chart, gates, _extra = jobs[i]
        r = on[gated[i]]
        if isinstance(r, (helm.HelmError, subprocess.TimeoutExpired)):
            out[i] = [Finding(shown(jobs[i]), 0, 0, "RG735", Severity.ERROR,
                              f"helm template of {chart} with {shown(jobs[i])} and its gates ({', '.join(gates)}) on "
                              f"fails, so turning it on would fail the Argo CD sync: {str(r)[:500]}")], *_NOTHING
        elif isinstance(r, BaseException):
            raise r
        else:
            out[i] = _outcome(r, chart, shown(jobs[i]))
    return out


def _count(r) -> int:
    """How many PrometheusRules render ``r`` (:class:`rulegen.tools.helm.Rendered` or
    :class:`~rulegen.tools.helm.Passed`) holds."""
    return r.count if isinstance(r, helm.Passed) else len(r.prometheus_rules())


#: What a render that failed gives :func:`_render_all` besides its findings: nothing to check.
_NOTHING = ((), (), ())


def _outcome(r, chart: str, shown: str) -> tuple:
    """(no findings, the PrometheusRules to check, those for RG739, the helper's rejection) of
    render ``r`` of ``chart`` with the values file ``shown``, as :func:`_render_all` returns."""
    why = getattr(r, "rejected", ())
    return ([], [(chart, shown, pr) for pr in _unjudged(r)], _labelled(r, chart, shown),
            [(chart, shown, list(why))] if why else [])


def _labelled(r, chart: str, shown: str) -> list[tuple]:
    """(chart, values file, PrometheusRule) for every PrometheusRule of render ``r``: of a
    :class:`~rulegen.tools.helm.Passed`, its ``metadata`` (name and labels) as the helper read
    them, which is all :func:`label_findings` reads."""
    if isinstance(r, helm.Passed):
        return [(chart, shown, {"metadata": m}) for m in r.metadata]
    return [(chart, shown, pr) for pr in r.prometheus_rules()]


def _unjudged(r) -> list[dict]:
    """The PrometheusRules of render ``r`` that rulegen checks itself: none when
    ``rulegen-helmrender`` judged them all valid (:class:`rulegen.tools.helm.Passed`)."""
    return [] if isinstance(r, helm.Passed) else r.prometheus_rules()


def _values_error(root: Path, e: Exception, chart: str, extra: str | None) -> list[Finding]:
    """RG735 findings for helm's error ``e`` rendering ``chart`` with its values.yaml (and
    ``extra``)."""
    own = f"{chart}/values.yaml"
    files = [(own, _read(root, own))] + ([(extra, _read(root, extra))] if extra else [])
    try:
        schema = json.loads(_read(root, f"{chart}/values.schema.json") or "null")
    except ValueError:
        schema = None
    return values_findings(str(e), files, schema if isinstance(schema, dict) else None, chart, extra or own)


def label_findings(rendered: list, root: Path, selector: dict, keys: dict, selector_set: bool = True) -> list[Finding]:
    """``RG739`` for each rendered PrometheusRule (``rendered``: (chart, values file shown,
    object) as :func:`_render_all` makes them) that lacks a label of ``selector`` (the
    project's ``charts.rule_selector_labels``, which ``.rulegen.yaml`` sets when
    ``selector_set``, else the default; an empty value counts as none), at the
    ``<values key>.labels`` key (``keys``: chart -> values key) of the values file that sets it
    last, else at the values key, else at the file; a PrometheusRule whose values do set the
    label (a hand-written template that does not read them) at the file. One finding per
    position."""
    if not selector:
        return []  # RG734 says so once
    out: list[Finding] = []
    seen: set = set()
    for chart, shown, pr in rendered:
        meta = pr.get("metadata") if isinstance(pr.get("metadata"), dict) else {}
        labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
        missing = [k for k in selector if not labels.get(k)]
        if not missing:
            continue
        key = keys.get(chart, "prometheusRule")
        where, best, given = (shown, 0, 0), 0, {}
        for path in dict.fromkeys([shown, f"{chart}/values.yaml"]):  # an extra file applies after the own
            k, node, depth = _node_at(_compose(_read(root, path)), [key, "labels"])
            if k is not None and depth > best:
                where, best = (path, k.start_mark.line + 1, k.start_mark.column + 1), depth
                given = _plain(node) if depth == 2 else {}
        name = meta.get("name") or "(no name)"
        what = f"PrometheusRule {name} of {chart} (rendered with {shown}) has no {', '.join(missing)} label"
        if isinstance(given, dict) and all(given.get(k) for k in missing):
            where = (shown, 0, 0)
            advice = (f"{key}.labels sets it, but the template that renders {name} does not use them: give its "
                      "metadata the label")
        else:
            want = ", ".join(f"{k}: {selector[k]}" for k in missing)
            advice = f"set {key}.labels: {{{want}}} here (or the value your Prometheus selects)"
        if where in seen:
            continue
        seen.add(where)
        source = "charts.rule_selector_labels in .rulegen.yaml" if selector_set else (
            "charts.rule_selector_labels (the default, "
            + ", ".join(f"{k}: {v}" for k, v in selector.items()) + ")")
        out.append(Finding(*where, "RG739", Severity.WARNING,
                           f"{what}, which {source} says your Prometheus selects rules by: a kube-prometheus-stack "
                           f"install's default ruleSelector ignores its rules; {advice}"))
    return out


def _plain(node):
    """A composed YAML node as Python data (None when it cannot be)."""
    try:
        return yaml.load(yaml.serialize(node), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except Exception:  # noqa: BLE001 (a node the safe loader refuses)
        return None



