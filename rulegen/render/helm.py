"""The Helm-gated PrometheusRule template of one app (``charts/<app>/templates/prometheusrule.yaml``).

Shape of the output (``monitoring.coreos.com/v1`` ``PrometheusRule``, Prometheus Operator API):
the whole resource renders only when every gate in ``chart.gates`` is true in the values and at
least one rule group is left; a group renders only when its toggle is on and one of its rules
is not disabled, so ``rules: null`` cannot happen. Knobs, under ``.Values.<values_key>``
(default ``prometheusRule``), named as in kube-prometheus-stack:

* ``disabled.<Rule>: true`` drops one alert or recording rule;
* ``groups.<group>.enabled``, ``groups.<group>.additionalRuleLabels``,
  ``groups.<group>.additionalRuleAnnotations``;
* ``additionalRuleLabels`` / ``additionalRuleAnnotations`` for every rule (labels apply to
  recording rules too);
* ``customRules.<Rule>.{for, keepFiringFor, severity, labels, annotations}``; an annotation
  given there (summary, description, runbook_url, ...) replaces the generated one;
* ``runbookUrl``: base URL of the runbook site; each alert links to
  ``<runbookUrl>/<app>/#<anchor>``;
* ``labels`` / ``annotations`` on the PrometheusRule itself (e.g. ``release:
  kube-prometheus-stack`` for a ``ruleSelector``).

Every user string reaches Prometheus byte for byte (see :mod:`rulegen.render.yamltext`).
"""

from __future__ import annotations

import re
from pathlib import Path

from ..spec import Spec
from ..spec.durations import canonical
from . import jinja
from .slug import anchor, page_url
from .yamltext import go_string, helm_literal, yaml_string

_DEFINE = re.compile(r'\{\{-?\s*define\s+"([^"]+)"')

RULE_INDENT = 12  # column of an expr block literal's lines inside the template


def chart_helpers(chart_dir: Path) -> set[str]:
    """Names of the templates the chart defines (``{{ define "x.fullname" }}``) in its
    ``templates/*.tpl`` files; empty when the chart has none."""
    names: set[str] = set()
    tdir = chart_dir / "templates"
    if tdir.is_dir():
        for f in sorted(tdir.glob("*.tpl")):
            try:
                names.update(_DEFINE.findall(f.read_text(encoding="utf-8")))
            except (OSError, UnicodeDecodeError):
                continue
    return names


def chart_name(chart_dir: Path, default: str) -> str:
    """The ``name`` in the chart's Chart.yaml, or ``default``."""
    f = chart_dir / "Chart.yaml"
    if f.is_file():
        m = re.search(r"^name:\s*['\"]?([^'\"\s#]+)", f.read_text(encoding="utf-8"), re.M)
        if m:
            return m.group(1)
    return default


def _scalar(s: str, indent: int = RULE_INDENT) -> str:
    return helm_literal(yaml_string(s, indent))


def render_template(spec: Spec, root: Path, site_url: str, header: str, checksum: str) -> str:
    """The template text for ``spec``. ``header`` is the generated-file notice, ``checksum``
    the ownership stamp (see :mod:`rulegen.gitops.ownership`); ``site_url`` is the runbook
    site's base URL, used when the values give no ``runbookUrl``."""
    chart_dir = root / spec.chart.path
    helpers = chart_helpers(chart_dir)
    cname = chart_name(chart_dir, spec.app)
    fullname = f"{cname}.fullname"
    labels_helper = f"{cname}.labels"
    if spec.chart.name:
        metadata_name = _scalar(spec.chart.name)
    elif fullname in helpers:
        metadata_name = "{{ include %s . }}" % go_string(fullname)
    else:
        metadata_name = _scalar(spec.app)
    if spec.chart.namespace:
        metadata_namespace = _scalar(spec.chart.namespace)
    else:
        metadata_namespace = "{{ .Release.Namespace | quote }}"

    groups = []
    n = 0
    for gi, g in enumerate(spec.groups):
        rules = []
        for r in g.rules:
            labels = r.all_labels(spec.labels, g.labels)
            rules.append({
                "var": f"r{n}",
                "name_go": go_string(r.name),
                "name_yaml": _scalar(r.name),
                "is_alert": r.is_alert,
                "expr": _scalar(r.expr),
                "for_": go_string(canonical(r.for_)) if r.for_ else None,
                "keep_firing_for": go_string(canonical(r.keep_firing_for)) if r.keep_firing_for else None,
                "labels": [(k, _scalar(v)) for k, v in labels.items()],
                "annotations": [(k, _scalar(v)) for k, v in sorted(r.annotations.items())
                                if k != "runbook_url"] + (
                    [("runbook_url", _scalar(r.annotations["runbook_url"]))]
                    if "runbook_url" in r.annotations else []),
                "has_own_runbook_url": "runbook_url" in r.annotations,
                "runbook_path": page_url(spec.app) + "#" + anchor(r.name),
            })
            n += 1
        groups.append({
            "var": f"g{gi}",
            "name_go": go_string(g.name),
            "name_yaml": _scalar(g.name),
            "interval": _scalar(canonical(g.interval)) if g.interval else None,
            "query_offset": _scalar(canonical(g.query_offset)) if g.query_offset else None,
            "limit": g.limit,
            "rules": rules,
        })
    # A spec that sets its own runbook_url keeps it as a static annotation: drop the generated one.
    for g in groups:
        for r in g["rules"]:
            if r["has_own_runbook_url"]:
                r["runbook_path"] = None
    text = jinja.render(
        "prometheusrule.yaml.j2",
        header=header,
        checksum=checksum,
        values_key=spec.chart.values_key,
        default_runbook_base=go_string(site_url.rstrip("/")),
        gates=[[go_string(p) for p in gate.split(".")] for gate in spec.chart.gates],
        groups=groups,
        metadata_name=metadata_name,
        metadata_namespace=metadata_namespace,
        labels_helper=go_string(labels_helper) if labels_helper in helpers else None,
        app_quoted=_scalar(spec.app),
    )
    return text
