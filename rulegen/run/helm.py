"""The real ``helm``: render a chart and pull the rule groups out of its PrometheusRules.

Commands used (Helm 3 docs): ``helm template RELEASE CHART --namespace NS --set k=v ...``
(with ``--values FILE`` for structured overrides) and ``helm lint CHART``.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..findings import RulegenError
from ..fs import yamlbound
from ..render.yamltext import double_quoted
from . import tools

DEFAULT_RELEASE = "rulegen-test"
DEFAULT_NAMESPACE = "default"
TIMEOUT_S = 300


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


def values_yaml(value) -> str:
    """``value`` (dicts, lists, str, bool, int, float, None) as one line of flow-style YAML
    that Helm reads back exactly: every string and key double-quoted with
    :func:`rulegen.render.yamltext.double_quoted`. (PyYAML's ``safe_dump`` writes ``n``, ``y``
    or ``Y`` plain, which Helm's YAML 1.1 reader turns into booleans.)

    Raises:
        TypeError: a value of another type.
    """
    if isinstance(value, dict):
        return "{" + ", ".join(f"{double_quoted(str(k))}: {values_yaml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(values_yaml(v) for v in value) + "]"
    if isinstance(value, str):
        return double_quoted(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} as a Helm value")


def gate_values(gates) -> dict:
    """Nested values with every gate path set true: ``["a", "b.c"]`` -> ``{a: true, b: {c: true}}``."""
    out: dict = {}
    for gate in gates:
        node = out
        parts = gate.split(".")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = True
    return out


def template(chart: Path, values: list[dict] | None = None, set_values: list[str] | None = None,
             release: str = DEFAULT_RELEASE, namespace: str = DEFAULT_NAMESPACE,
             root: Path | None = None, extra_args: list[str] | None = None) -> Rendered:
    """Run ``helm template`` on ``chart`` with values files made from ``values`` (applied in
    order, later wins), ``--set`` strings and ``extra_args`` (e.g.
    ``["--skip-schema-validation"]``). A ``None`` in ``values`` is written as YAML ``null``,
    which Helm reads as "delete this key from the chart's defaults".

    Raises:
        RulegenError: helm is not installed (says how to install it).
        HelmError: helm failed (values schema violation, template error, ...).
    """
    helm = tools.require("helm", root)
    with tempfile.TemporaryDirectory(prefix="rulegen-helm-") as tmp:
        args = [str(helm), "template", release, str(chart), "--namespace", namespace]
        for i, v in enumerate(values or []):
            f = Path(tmp) / f"values-{i}.yaml"
            f.write_text(values_yaml(v), encoding="utf-8")
            args += ["--values", str(f)]
        for s in set_values or []:
            args += ["--set", s]
        args += list(extra_args or [])
        proc = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S,
                              env=_env(tmp))
    if proc.returncode != 0:
        raise HelmError(f"helm template {chart} failed: {proc.stderr.strip()}")
    # libyaml when available: a chart can render megabytes (same documents as safe_load_all)
    # aliases expanding too far (a "billion laughs" in a template): RG105 before any walk
    docs = [d for d in yamlbound.load_all(proc.stdout, getattr(yaml, "CSafeLoader", yaml.SafeLoader),
                                          f"helm template {chart}") if d is not None]
    return Rendered(text=proc.stdout, documents=docs)


def lint(chart: Path, values: list[dict] | None = None, root: Path | None = None) -> tuple[bool, str]:
    """Run ``helm lint`` on ``chart`` with values files made from ``values``; returns (passed,
    combined output). Lint fails on template errors, unparsable YAML and values that break
    ``values.schema.json``.

    Raises:
        RulegenError: helm is not installed.
    """
    helm = tools.require("helm", root)
    with tempfile.TemporaryDirectory(prefix="rulegen-helm-") as tmp:
        args = [str(helm), "lint", str(chart)]
        for i, v in enumerate(values or []):
            f = Path(tmp) / f"values-{i}.yaml"
            f.write_text(values_yaml(v), encoding="utf-8")
            args += ["--values", str(f)]
        proc = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S, env=_env(tmp))
    return proc.returncode == 0, proc.stdout + proc.stderr


def _env(tmp: str) -> dict:
    """An environment that keeps helm away from the user's config, cache and repositories."""
    import os
    env = dict(os.environ)
    for k in ("HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME"):
        env[k] = str(Path(tmp) / k.lower())
    return env
