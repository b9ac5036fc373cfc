"""Import a chart as the real Helm renders it: ``rulegen import CHART_DIR``.

The chart is rendered with ``helm template RELEASE CHART --namespace NS [--values FILE]...
[--set k=v]... [--kube-version V] [HELM_ARG]...`` (Helm 3 docs, "helm template") and each
rendered document is read as the PrometheusRule manifest it is
(:func:`rulegen.importer.sources.read_source`), so every construct Helm understands is
understood, with the values given. Documents are split at Helm's ``# Source: <chart>/<path>``
lines, and notes name that template: ``<chart dir>/<path> (rendered)``, at the line of the
rendered document.

Apps are named after the PrometheusRules without the prefix all of them share (the
release's fullname: ``kps-kube-prometheus-stack-alertmanager.rules`` becomes the app
``alertmanager-rules``); names, namespaces and ``metadata.labels`` (a ``release:`` label that a Prometheus
``ruleSelector`` needs) come from what Helm rendered; the release name and namespace are
therefore part of them (``--release``, ``--namespace``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import RulegenError
from ..fs import read as fs_read
from ..tools import helm

_SOURCE = re.compile(r"^# Source: (\S.*?)\s*$")


@dataclass
class RenderOptions:
    """How to render a chart given to ``rulegen import``.

    Attributes:
        values: ``--values`` files, in order (later wins, as in Helm).
        set_values: ``--set k=v`` strings, in order.
        release: release name (default: the chart's name).
        namespace: release namespace (default ``default``, as Helm's).
        kube_version: ``--kube-version`` for charts whose ``kubeVersion`` constraint Helm's
            default does not meet (a release-stamped helm assumes the Kubernetes version of
            the client-go it was built with, v1.37 for helm 3.22.0; an unstamped build from
            source assumes v1.20), e.g. ``1.33.0``.
        helm_args: more ``helm template`` arguments, passed as they are
            (``--api-versions monitoring.coreos.com/v1``).
        static: read the chart's templates statically instead (no helm).
        variant: a name for this value set (``capa``): every app is named ``<app>-<variant>``,
            so one chart imported once per variant (``--values capa.yaml --variant capa``)
            keeps one app per variant, each with its own tests.
    """

    values: list = field(default_factory=list)
    set_values: list = field(default_factory=list)
    release: str | None = None
    namespace: str = helm.DEFAULT_NAMESPACE
    kube_version: str | None = None
    helm_args: list = field(default_factory=list)
    static: bool = False
    variant: str | None = None


def is_chart(path: Path) -> bool:
    """True when ``path`` is a chart folder (it holds ``Chart.yaml``)."""
    return path.is_dir() and (path / "Chart.yaml").is_file()


def chart_name(chart: Path) -> str:
    """``name:`` of the chart's ``Chart.yaml``, else the folder name."""
    m = re.search(r"^name:\s*['\"]?([^'\"\s#]+)", fs_read.read_text(chart / "Chart.yaml"), re.M)
    return m.group(1) if m else chart.name


def render(chart: Path, opts: RenderOptions, root: Path | None) -> str:
    """``helm template`` output of ``chart`` with ``opts``.

    Raises:
        RulegenError: helm is not installed, or fails (its message, with a hint for the
            usual ``kubeVersion`` failure and for ``--static``).
    """
    extra: list[str] = []
    for v in opts.values:
        extra += ["--values", str(v)]
    if opts.kube_version:
        extra += ["--kube-version", opts.kube_version]
    extra += list(opts.helm_args)
    try:
        return helm.template(chart, set_values=list(opts.set_values), release=opts.release or chart_name(chart),
                             namespace=opts.namespace, root=root, extra_args=extra).text
    except helm.HelmError as e:
        hint = ""
        if "kubeVersion" in str(e):
            hint = "; pass the cluster's version, e.g. `--kube-version 1.33.0`"
        raise RulegenError(f"{e}{hint} (or import the templates without helm: --static)") from None


def documents(text: str, chart_display: str) -> list[tuple[str, str]]:
    """``(display, text)`` per template of ``helm template`` output: the documents Helm
    printed from one template file together, each ``# Source:`` line blanked (lines keep
    their numbers), displayed as ``<chart_display>/<path in chart> (rendered)``."""
    out: dict[str, list[str]] = {}
    current = None
    buf: list[str] = []
    for line in text.split("\n"):
        m = _SOURCE.match(line)
        if m:
            if current is not None:
                out.setdefault(current, []).append("\n".join(buf))
            src = m.group(1)
            src = src.split("/", 1)[1] if "/" in src else src    # <chart name>/templates/...
            current = f"{chart_display.rstrip('/')}/{src} (rendered)"
            buf = [""]
            continue
        buf.append(line)
    if current is not None:
        out.setdefault(current, []).append("\n".join(buf))
    return [(k, "\n".join(v)) for k, v in out.items()]


def strip_common_prefix(sets) -> None:
    """Name the apps of one rendered chart after what tells its PrometheusRules apart: the
    ``-``-separated prefix all their names share (the release's fullname,
    ``kps-kube-prometheus-stack-``) is left out of each ``app_hint``. The PrometheusRule keeps
    its full name (``chart.name``). Nothing changes with fewer than two names, or when a name
    would be left empty."""
    names = [rs.app_hint for rs in sets if rs.chart_name]
    if len(set(names)) < 2:
        return
    parts = [n.split("-") for n in names]
    common = 0
    while all(len(p) > common + 1 for p in parts) and len({p[common] for p in parts}) == 1:
        common += 1
    if common:
        for rs in sets:
            if rs.chart_name:
                rs.app_hint = "-".join(rs.app_hint.split("-")[common:])


def helm_rendered(path: Path, sets) -> bool:
    """True when the file at ``path``, read into the rule sets ``sets``, is output of ``helm
    template`` (or ``helm get manifest``) saved to a file: its PrometheusRules carry Helm's
    ``app.kubernetes.io/managed-by: Helm`` or ``heritage: Helm`` label, or the file has Helm's
    ``# Source: <chart>/templates/...`` lines. A file of hand-written PrometheusRules is not."""
    if any(str(rs.meta_labels.get(k, "")) == "Helm" for rs in sets
           for k in ("app.kubernetes.io/managed-by", "heritage")):
        return True
    try:
        lines = fs_read.read_text(path).splitlines()
    except (OSError, UnicodeDecodeError, fs_read.InputRefused):
        return False
    return any(_SOURCE.match(line) and "/templates/" in line for line in lines)


def release_and_chart(path: Path, sets) -> tuple[str | None, str | None]:
    """``(release, chart)`` of a file of ``helm template`` output read into ``sets``: the
    release from the PrometheusRules' ``app.kubernetes.io/instance`` (or ``release``) label,
    the chart from the ``# Source: <chart>/templates/...`` lines (or the ``helm.sh/chart`` /
    ``chart`` label, ``<chart>-<version>``). None where the file does not tell, or tells two."""
    releases = {str(rs.meta_labels.get("app.kubernetes.io/instance") or rs.meta_labels.get("release") or "")
                for rs in sets} - {""}
    charts: set = set()
    try:
        lines = fs_read.read_text(path).splitlines()
    except (OSError, UnicodeDecodeError, fs_read.InputRefused):
        lines = []
    for line in lines:
        m = _SOURCE.match(line)
        if m and "/templates/" in m.group(1):
            charts.add(m.group(1).split("/", 1)[0])
    if not charts:
        for rs in sets:
            label = str(rs.meta_labels.get("helm.sh/chart") or rs.meta_labels.get("chart") or "")
            m = re.fullmatch(r"(.+)-v?\d+\.\d+\.\d+\S*", label)
            if m:
                charts.add(m.group(1))
    return (releases.pop() if len(releases) == 1 else None, charts.pop() if len(charts) == 1 else None)


def as_chart_named(name: str, release: str, chart: str) -> str:
    """``name``, rendered by Helm for release ``release`` of chart ``chart``, as the chart's
    static import names it (release = the chart's name): the usual fullname ``<release>-<chart>``
    becomes ``<chart>``, and any other ``<release>`` prefix ``<chart>``
    (``release-name-shop-rules`` -> ``shop-rules``, ``kps-kube-prometheus-stack-etcd`` ->
    ``kube-prometheus-stack-etcd``). Other names are returned as they are."""
    if release == chart:
        return name
    for prefix in (f"{release}-{chart}", release):
        if name == prefix or name.startswith(prefix + "-"):
            return chart + name[len(prefix):]
    return name
