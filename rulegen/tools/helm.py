"""The real ``helm``: render a chart and pull the rule groups out of its PrometheusRules.

Commands used (Helm 3 docs): ``helm template RELEASE CHART --namespace NS --set k=v ...``
(with ``--values FILE`` for structured overrides) and ``helm lint CHART``.

:func:`template_many` renders many charts at once through ``rulegen-helmrender``
(``tools/rulegen-helmrender``), which runs ``helm template``'s own code of the pinned Helm
module for each chart in one process, so a project of a hundred charts pays Helm's start-up
once; what it cannot render (and everything, when it is not installed) is rendered by the
real ``helm template``, whose error text the findings quote. Given the PrometheusRule CRD
(``check=``), the helper also judges each rendered chart's PrometheusRules as the Argo CD sync
would (the API server's CRD schema validation and the Prometheus Operator's admission webhook,
their own Go code): a render whose PrometheusRules all pass comes back as :class:`Passed`,
without its text, which then is never parsed (see :mod:`rulegen.gitops.sync`).
"""

from __future__ import annotations

import json
import re
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ..findings import RulegenError
from ..fs import yamlbound
from . import find, process

DEFAULT_RELEASE = "rulegen-test"
DEFAULT_NAMESPACE = "default"
TIMEOUT_S = 300


#: Helm's warning for a symlink it follows while loading a chart (``walk.go``), in Helm 3:
#: ``found symbolic link in path: <link> resolves to <target>. Contents of linked file
#: included and used``.
_LINK_WARNING = re.compile(r"^(?:walk\.go:\d+: )?found symbolic link in path: (?P<link>.+) resolves to "
                           r"(?P<target>.+)\. Contents of linked file included and used$")


#: The chart library's name (:data:`rulegen.render.library.NAME`; this floor does not import render).
NAME = "rulegen-library"


def without_link_warnings(stderr: str) -> str:
    """``stderr`` of helm without its warning for each app chart's link to the chart library
    (``<chart>/charts/rulegen-library`` resolving to a folder ``rulegen-library``,
    :mod:`rulegen.render.library`), which every render of a chart prints; every other line,
    a warning for any other link included, is kept."""
    keep = []
    for line in stderr.splitlines(keepends=True):
        m = _LINK_WARNING.match(line.rstrip("\r\n"))
        if m and m.group("link").endswith(f"/charts/{NAME}") and m.group("target").endswith(f"/{NAME}"):
            continue
        keep.append(line)
    return "".join(keep)


class HelmError(RulegenError):
    """``helm`` exited non-zero; the message holds its stderr."""


@dataclass
class Rendered:
    """Output of ``helm template``: the manifest text and its parsed documents; ``rejected``:
    the reasons ``rulegen-helmrender`` gave for judging its PrometheusRules invalid (``document
    N: CRD schema: ...``, ``document N: webhook: ...``), () when it did not judge them so."""

    text: str
    documents: list
    rejected: tuple = ()
    _rules: list | None = field(default=None, init=False, repr=False, compare=False)

    def prometheus_rules(self) -> list[dict]:
        """The PrometheusRule objects a sync deploys from the manifest, in output order: the
        documents and the items of lists (:func:`applied`). Worked out once (the sync check
        asks for them up to three times per render); do not change the list."""
        if self._rules is None:
            self._rules = [{**o, **named} if named else o for d in self.documents for _path, o, named in applied(d)
                           if (named or o).get("kind") == "PrometheusRule"]
        return self._rules

    def rule_groups(self) -> list[dict]:
        """All ``spec.groups`` of all PrometheusRules, concatenated (a Prometheus rule file's
        ``groups:``)."""
        groups = []
        for pr in self.prometheus_rules():
            groups.extend((pr.get("spec") or {}).get("groups") or [])
        return groups


def applied(document) -> list[tuple[tuple, dict, dict | None]]:
    """The objects the Argo CD sync (or ``kubectl apply``) deploys from one rendered manifest
    ``document`` (parsed YAML), each as (path, object as written, names given): path is the
    keys and indexes leading to it from the document (``()`` for the document itself,
    ``("items", 0, "items", 2)``), names given the ``kind`` and ``apiVersion`` it is deployed
    with when it has none of its own (else None), in document order.

    Argo CD's repo server replaces a rendered object whose ``items`` is a list (any kind: the
    ``v1`` ``List``, a ``PrometheusRuleList``; apimachinery's ``Unstructured.IsList``) by its
    items, and drops one whose ``items`` is null and that has no ``spec`` nor ``status``
    (``GenerateManifests`` and ``isNullList`` in argo-cd's reposerver/repository/repository.go);
    kubectl also flattens lists inside lists (cli-runtime's ``FlattenListVisitor``), which are
    unpacked here too, and gives an item of a top-level list that has neither a ``kind`` nor an
    ``apiVersion`` (each a non-empty string) the list's kind less its ``List`` suffix and the
    list's ``apiVersion`` (apimachinery's ``unstructuredJSONScheme.decodeToList``): these are
    its names given. An item that is not a mapping is never applied
    (Argo CD refuses the manifest). The walk keeps its own stack: a deep nesting of lists
    costs no recursion. tools/rulegen-helmrender/check.go unpacks the same objects."""
    out: list[tuple[tuple, dict, dict | None]] = []
    if not isinstance(document, dict):
        return out
    stack = [iter([((), document, None)])]
    while stack:
        step = next(stack[-1], None)
        if step is None:
            stack.pop()
            continue
        path, obj, named = step
        if not isinstance(obj, dict):
            continue
        if _text(obj.get("kind")) or _text(obj.get("apiVersion")):
            named = None
        items = obj.get("items")
        if isinstance(items, list):
            kind = _text((named or obj).get("kind"))
            names = {"kind": kind[:-4] if kind.endswith("List") else kind,
                     "apiVersion": _text(obj.get("apiVersion"))} if not path else None
            stack.append(iter([(path + ("items", i), item, names) for i, item in enumerate(items)]))
        elif not path and "items" in obj and items is None and "spec" not in obj and "status" not in obj:
            continue
        else:
            out.append((path, obj, named))
    return out


def _text(value) -> str:
    """``value`` when it is a string, else "" (apimachinery's ``Unstructured.GetKind``)."""
    return value if isinstance(value, str) else ""


@dataclass(frozen=True)
class Passed:
    """A render of :class:`Batch` with ``check``, judged by ``rulegen-helmrender``: it holds
    ``count`` PrometheusRules (``kind: PrometheusRule`` objects, documents or list items, as
    :meth:`Rendered.prometheus_rules` finds them), each accepted by the API server's validation
    against the CRD's schema and by the Prometheus Operator's admission webhook, in a manifest
    rulegen's YAML reading agrees with Kubernetes' on (tools/rulegen-helmrender/check.go). Its
    text is not kept: only each PrometheusRule's ``metadata`` name and labels (``metadata``:
    ``{"name": ..., "labels": {...}}`` dicts, in output order), which the rule-selector label
    check reads (``RG739``, :func:`rulegen.gitops.sync.label_findings`)."""

    count: int
    metadata: tuple = ()


def template(chart: Path, values: list[str] | None = None, set_values: list[str] | None = None,
             release: str = DEFAULT_RELEASE, namespace: str = DEFAULT_NAMESPACE,
             root: Path | None = None, extra_args: list[str] | None = None) -> Rendered:
    """Run ``helm template`` on ``chart`` with values files holding ``values`` (YAML texts,
    applied in order, later wins; :func:`rulegen.render.yamltext.values_yaml` writes one from
    data), ``--set`` strings and ``extra_args`` (e.g. ``["--skip-schema-validation"]``). Helm
    runs with the reduced environment of :func:`rulegen.tools.process.run`; ``root`` is the
    project being checked (no tool is taken from it, :func:`rulegen.tools.find.find`).

    Raises:
        RulegenError: helm is not installed (says how to install it), or would come from the
            project (RG761, RG762).
        HelmError: helm failed (values schema violation, template error, ...).
    """
    helm = find.require("helm", root)
    with tempfile.TemporaryDirectory(prefix="rulegen-helm-") as tmp:
        args = [str(helm), "template", release, str(chart), "--namespace", namespace]
        for i, v in enumerate(values or []):
            f = Path(tmp) / f"values-{i}.yaml"
            f.write_text(v, encoding="utf-8")
            args += ["--values", str(f)]
        for s in set_values or []:
            args += ["--set", s]
        args += list(extra_args or [])
        proc = process.run(args, timeout=TIMEOUT_S)
    if proc.returncode != 0:
        raise HelmError(f"helm template {chart} failed: {without_link_warnings(proc.stderr).strip()}")
    return _rendered(proc.stdout, chart)


def _rendered(text: str, chart: Path, rejected: tuple = ()) -> Rendered:
    """``helm template`` output ``text`` of ``chart`` with its documents parsed (``rejected``:
    the helper's reasons, see :class:`Rendered`)."""
    # libyaml when available: a chart can render megabytes (same documents as safe_load_all)
    # aliases expanding too far (a "billion laughs" in a template): RG105 before any walk
    docs = [d for d in yamlbound.load_all(text, getattr(yaml, "CSafeLoader", yaml.SafeLoader),
                                          f"helm template {chart}") if d is not None]
    return Rendered(text=text, documents=docs, rejected=rejected)


#: rulegen's batch renderer (``tools/rulegen-helmrender``), built beside helm.
HELPER = "rulegen-helmrender"
#: Renders of the real ``helm template`` run at once when the helper cannot do them.
WORKERS = 2


@dataclass(frozen=True)
class Job:
    """One render for :func:`template_many`: ``helm template RELEASE chart --namespace NS
    --values F... --set S...`` with ``values_files`` (paths, applied in order after the
    chart's values.yaml, later wins) and ``set_values`` (``--set`` strings)."""

    chart: Path
    values_files: tuple[str, ...] = ()
    set_values: tuple[str, ...] = ()


def template_many(jobs: list[Job], root: Path | None = None, release: str = DEFAULT_RELEASE,
                  namespace: str = DEFAULT_NAMESPACE) -> list:
    """Each of ``jobs`` rendered as :func:`template` renders it alone, in order: a
    :class:`Rendered` (the same text and documents) or the exception :func:`template` raises
    for it (:class:`HelmError` with helm's own message, ``subprocess.TimeoutExpired``, or a
    :class:`rulegen.findings.RulegenError` of the document check), returned, not raised.
    The same as ``Batch(jobs, ...).results()`` (see :class:`Batch`).

    Raises:
        RulegenError: helm is not installed, or would come from the project (RG761, RG762).
    """
    with Batch(jobs, root, release, namespace) as batch:
        return batch.results()


class Batch:
    """Renders of ``jobs`` (:class:`Job`) started at once, so they run while rulegen does other
    work: all of them go to one ``rulegen-helmrender`` process (see the module docstring),
    started here; :meth:`results` waits for it. Each job it does not render, or all of them
    when it is missing, fails or runs longer than :data:`TIMEOUT_S` seconds, is rendered by
    the real ``helm template`` when asked for, :data:`WORKERS` at a time. Use it as a context
    manager (or call :meth:`close`): leaving stops the helper if it still runs.

    ``check``: the PrometheusRule CRD file (the trusted tools folder's,
    :func:`rulegen.gitops.crd.crd_path`): the helper then judges each render's PrometheusRules,
    and a render it finds valid is a :class:`Passed` in :meth:`results`; every other one is a
    :class:`Rendered` as without ``check``.

    Raises:
        RulegenError: helm is not installed, or would come from the project (RG761, RG762).
    """

    def __init__(self, jobs: list[Job], root: Path | None = None, release: str = DEFAULT_RELEASE,
                 namespace: str = DEFAULT_NAMESPACE, check: Path | None = None):
        find.require("helm", root)
        self.jobs, self.root, self.release, self.namespace = list(jobs), root, release, namespace
        self._started = None
        self._texts: list | None = None
        self._out: list = [None] * len(self.jobs)
        tool = find.find(HELPER, root) if self.jobs else None
        if tool is not None:
            request = {"jobs": [{"release": release, "namespace": namespace, "chart": str(j.chart),
                                 "values": [str(f) for f in j.values_files], "set": list(j.set_values)}
                                for j in self.jobs]}
            if check is not None:
                request["check"] = {"crd": str(check)}
            request = json.dumps(request)
            try:
                self._started = process.start([tool], timeout=TIMEOUT_S, input=request)
            except OSError:
                self._started = None

    def __enter__(self) -> "Batch":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop the helper if it still runs and remove its files."""
        if self._started is not None:
            self._started.close()
            self._started = None

    def results(self, wanted: list[int] | None = None) -> list:
        """The outcome of each job (as :func:`template_many` says; with ``check``, a
        :class:`Passed` for each render the helper judged valid), or of the jobs at indexes
        ``wanted`` only (the others: None unless asked for before); each job is rendered (or
        its text parsed) once however often it is asked for."""
        texts = self._helper_texts()
        out = self._out
        indexes = range(len(self.jobs)) if wanted is None else wanted
        for i in indexes:
            if out[i] is None and isinstance(texts[i], Passed):
                out[i] = texts[i]
            elif out[i] is None and isinstance(texts[i], Rejected):
                out[i] = _try(lambda t=texts[i], j=self.jobs[i]: _rendered(t.text, j.chart, t.why))
            elif out[i] is None and texts[i] is not None:
                out[i] = _try(lambda t=texts[i], j=self.jobs[i]: _rendered(t, j.chart))
        rest = [i for i in indexes if out[i] is None]

        def one(i: int):
            j = self.jobs[i]
            args = [a for f in j.values_files for a in ("--values", str(f))]
            return _try(lambda: template(j.chart, set_values=list(j.set_values), release=self.release,
                                         namespace=self.namespace, root=self.root, extra_args=args))
        if len(rest) > 1:
            with ThreadPoolExecutor(max_workers=WORKERS) as pool:
                done = list(pool.map(one, rest))
        else:
            done = [one(i) for i in rest]
        for i, r in zip(rest, done):
            out[i] = r
        return list(out)

    def _helper_texts(self) -> list:
        """The manifest text the helper rendered for each job (a :class:`Passed` where it judged
        the render valid), None where it did not render it (all None when it is not installed
        or fails as a whole); waits for it the first time."""
        if self._texts is None:
            self._texts = [None] * len(self.jobs)
            if self._started is not None:
                try:
                    proc = self._started.wait()
                    results = json.loads(proc.stdout)["results"] if proc.returncode == 0 else None
                except (OSError, process.TimeoutExpired, ValueError, KeyError, TypeError):
                    results = None
                finally:
                    self.close()
                if isinstance(results, list) and len(results) == len(self.jobs):
                    self._texts = [_helper_text(r) for r in results]
        return self._texts


@dataclass(frozen=True)
class Rejected:
    """A manifest text of the helper with its reasons for judging it invalid."""

    text: str
    why: tuple


def _helper_text(r) -> str | Passed | Rejected | None:
    """One result of the helper: its manifest text, a :class:`Passed` for a render it judged
    valid, a :class:`Rejected` for one it judged invalid, None for a failed or malformed one."""
    if not isinstance(r, dict) or r.get("ok") is not True:
        return None
    if r.get("verdict") == "invalid" and isinstance(r.get("manifest"), str) and isinstance(r.get("why"), list):
        return Rejected(r["manifest"], tuple(str(w) for w in r["why"]))
    if r.get("verdict") == "valid" and type(r.get("prometheusrules")) is int and r["prometheusrules"] >= 0:
        meta = r.get("metadata")
        if not isinstance(meta, list) or len(meta) != r["prometheusrules"] or \
                not all(isinstance(m, dict) for m in meta):
            return None  # a helper older than the labels (no text either): rendered again by helm
        return Passed(r["prometheusrules"], tuple(meta))
    return r["manifest"] if isinstance(r.get("manifest"), str) else None


def _try(fn):
    """``fn()``, or the :class:`HelmError`, timeout or RulegenError it raised."""
    try:
        return fn()
    except (RulegenError, process.TimeoutExpired) as e:
        return e


def lint(chart: Path, values: list[str] | None = None, root: Path | None = None) -> tuple[bool, str]:
    """Run ``helm lint`` on ``chart`` with values files holding ``values`` (YAML texts, as for
    :func:`template`); returns (passed,
    combined output). Lint fails on template errors, unparsable YAML and values that break
    ``values.schema.json``.

    Raises:
        RulegenError: helm is not installed, or would come from the project.
    """
    helm = find.require("helm", root)
    with tempfile.TemporaryDirectory(prefix="rulegen-helm-") as tmp:
        args = [str(helm), "lint", str(chart)]
        for i, v in enumerate(values or []):
            f = Path(tmp) / f"values-{i}.yaml"
            f.write_text(v, encoding="utf-8")
            args += ["--values", str(f)]
        proc = process.run(args, timeout=TIMEOUT_S)
    return proc.returncode == 0, proc.stdout + without_link_warnings(proc.stderr)

