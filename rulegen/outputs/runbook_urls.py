"""An alert's ``runbook_url`` as the chart renders it with its default values."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import yaml

from ..render.slug import anchor, page_url

#: yaml.safe_load's loader, with libyaml's parser when PyYAML has it (same constructor and resolver)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _values_text(planned: dict, root: Path, spec) -> str:
    """The text of the spec's chart ``values.yaml``: planned (``planned``: path -> content),
    else on disk, else empty."""
    vpath = f"{spec.chart.path}/values.yaml"
    text = planned.get(vpath)
    if text is None:
        f = root / vpath
        text = f.read_text(encoding="utf-8") if f.is_file() else ""
    return text


def _values(text: str) -> dict:
    """A values.yaml text as the chart's default values ({} when not a YAML mapping)."""
    try:
        data = yaml.load(text, Loader=_SAFE_LOADER) or {}
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


#: id(spec) -> (spec, (values.yaml text, site URL, runbook_url of each alert in spec.rules()
#: order)), worked out ahead by the plan's per-spec step for a chart only that spec renders
#: into; keyed by the spec object itself, so an entry left by a plan no check followed can
#: never be taken for another spec's
_URLS_AHEAD: dict[int, tuple] = {}


def runbook_urls_ahead(spec, values_text: str, site_url: str) -> tuple:
    """What :func:`known_urls` takes: each alert's :func:`default_runbook_url` with the chart
    values ``values_text``, for :func:`check_links` to use instead of parsing them again."""
    values = _values(values_text)
    return values_text, site_url, [default_runbook_url(spec, g, r, site_url, values)
                                   for g, r in spec.rules() if r.is_alert]


def known_urls(spec, ahead: tuple) -> None:
    """Record :func:`runbook_urls_ahead` of ``spec`` (possibly made in a forked process)."""
    _URLS_AHEAD[id(spec)] = (spec, ahead)


def _get(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def default_runbook_url(spec, group, rule, site_url: str, values: dict | None = None) -> str:
    """The ``runbook_url`` that the chart renders for alert ``rule`` of ``group`` with default
    ``values`` (the chart's parsed ``values.yaml``; None or {} = no values): see the module
    docstring for the precedence. ``site_url`` is mkdocs' (trailing ``/`` optional)."""
    static = static_runbook_url(spec, group, rule, values)
    if static is not None:
        return static
    if not spec.chart.runbook_url:
        return ""   # chart.runbook_url: false, no generated link
    cfg = _knobs(spec, values)
    base = cfg.get("runbookUrl") or site_url
    return f"{str(base).rstrip('/')}/{page_url(spec.app)}#{anchor(rule.name)}"


def _knobs(spec, values: dict | None) -> dict:
    cfg = (values or {}).get(spec.chart.values_key) or {}
    return cfg if isinstance(cfg, dict) else {}


def static_runbook_url(spec, group, rule, values: dict | None = None) -> str | None:
    """The ``runbook_url`` annotation that the spec or the chart's default ``values`` set for
    alert ``rule`` (``customRules``, group and global ``additionalRuleAnnotations``, the
    spec's own annotation, in that order), or None when the chart generates it."""
    cfg = _knobs(spec, values)
    for src in (_get(cfg, "customRules", rule.name, "annotations"),
                _get(cfg, "groups", group.name, "additionalRuleAnnotations"),
                cfg.get("additionalRuleAnnotations"),
                rule.annotations):
        if isinstance(src, dict) and src.get("runbook_url"):
            return str(src["runbook_url"])
    return None


def is_absolute_http_url(url: str) -> bool:
    """True when ``url`` is an absolute ``http``/``https`` URL with a host (what a browser
    opens from an Alertmanager notification)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and url == url.strip()
