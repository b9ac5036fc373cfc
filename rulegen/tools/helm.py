"""The real ``helm``: render a chart and pull the rule groups out of its PrometheusRules.

Commands used (Helm 3 docs): ``helm template RELEASE CHART --namespace NS --set k=v ...``
(with ``--values FILE`` for structured overrides) and ``helm lint CHART``.
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass
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
    """Output of ``helm template``: the manifest text and its parsed documents."""

    text: str
    documents: list

    def prometheus_rules(self) -> list[dict]:
        """The PrometheusRule objects, in output order."""
        return [d for d in self.documents
                if isinstance(d, dict) and d.get("kind") == "PrometheusRule"]

    def rule_groups(self) -> list[dict]:
        """All ``spec.groups`` of all PrometheusRules, concatenated (a Prometheus rule file's
        ``groups:``)."""
        groups = []
        for pr in self.prometheus_rules():
            groups.extend((pr.get("spec") or {}).get("groups") or [])
        return groups


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
    # libyaml when available: a chart can render megabytes (same documents as safe_load_all)
    # aliases expanding too far (a "billion laughs" in a template): RG105 before any walk
    docs = [d for d in yamlbound.load_all(proc.stdout, getattr(yaml, "CSafeLoader", yaml.SafeLoader),
                                          f"helm template {chart}") if d is not None]
    return Rendered(text=proc.stdout, documents=docs)


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

