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

Name and namespace (:func:`rule_identity`): ``chart.name``/``chart.namespace`` when the spec
sets them. Otherwise the namespace is the release namespace and the name is the chart's
``<chart>.fullname`` helper when the chart defines one, else the app. Several specs may render
into one chart (each its own ``chart.template``, RG414), and with the fullname helper they
would all be named ``<release>-<chart>``, one PrometheusRule overwriting the other on apply.
So a spec whose template is not the default ``prometheusrule.yaml`` gets the template's base
name appended: ``chart.template: pr2.yaml`` renders ``<fullname>-pr2`` (lowercased, runs of
characters other than ``a-z0-9`` made ``-``, as Kubernetes names require; the app when nothing
is left). The default template keeps the plain fullname, so existing charts keep their
names. Names that would still be equal (two specs setting one ``chart.name``) are RG415.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from ..spec import Spec
from ..spec.durations import canonical
from ..spec.model import DEFAULT_TEMPLATE
from . import jinja
from .slug import anchor, page_url
from .yamltext import double_quoted, go_string, helm_literal, yaml_string

_DEFINE = re.compile(r'\{\{-?\s*define\s+"([^"]+)"')

# Columns at which keys sit in templates/prometheusrule.yaml.j2; a multi-line value written as
# a block literal must be indented deeper than its key (YAML 1.2, 8.1.1.1), so each place
# passes its own key column to _scalar.
META_KEY_COL = 2      # metadata.name, metadata.namespace
GROUP_KEY_COL = 6     # spec.groups[].name, interval, query_offset
RULE_KEY_COL = 10     # alert/record, expr, for
MAP_KEY_COL = 12      # keys inside a rule's labels and annotations


#: Named template (defined in every generated file, same body) that writes a string from values
#: as an exact YAML scalar. Versioned: a changed body gets a new name, so two generated files
#: of different rulegen versions in one chart cannot redefine each other's.
SCALAR_TEMPLATE = "rulegen.yamlScalar.v1"

#: Characters Go's encoding/json (sprig toJson) leaves unescaped that YAML does not accept in a
#: double-quoted scalar or reads as a line break: DEL, the C1 controls (NEL among them),
#: U+FFFE and U+FFFF. U+2028/U+2029 and C0 controls are already escaped by encoding/json.
JSON_RAW_UNSAFE = "\x7f" + "".join(chr(c) for c in range(0x80, 0xA0)) + "\ufffe\uffff"


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


def name_suffix(spec: Spec) -> str | None:
    """What is appended (after ``-``) to the chart's fullname in the default PrometheusRule
    name: the template's base name as a DNS label part, or None for the default template
    (see the module docstring)."""
    if spec.chart.template == DEFAULT_TEMPLATE:
        return None
    base = spec.chart.template.removesuffix(".yaml")
    return re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-") or spec.app


def uses_fullname(spec: Spec, root: Path) -> bool:
    """True when the PrometheusRule's name comes from the chart's ``<chart>.fullname`` helper
    (no ``chart.name``, and the chart defines the helper)."""
    chart_dir = root / spec.chart.path
    return not spec.chart.name and f"{chart_name(chart_dir, spec.app)}.fullname" in chart_helpers(chart_dir)


def rule_identity(spec: Spec, root: Path) -> tuple[str, str]:
    """The PrometheusRule's (name, namespace) as :func:`render_template` renders them, for
    comparing specs: literal values, or for what depends on the Helm release a description
    naming the chart (``<fullname of charts/tt>-pr2``, ``<release namespace of charts/tt>``),
    equal only for specs of one chart, hence one release."""
    if spec.chart.name:
        name = spec.chart.name
    elif uses_fullname(spec, root):
        suffix = name_suffix(spec)
        name = f"<fullname of {spec.chart.path}>" + (f"-{suffix}" if suffix else "")
    else:
        name = spec.app
    namespace = spec.chart.namespace or f"<release namespace of {spec.chart.path}>"
    return name, namespace


def _scalar(s: str, key_col: int) -> str:
    """``s`` as a Helm-escaped YAML scalar for a key at column ``key_col``."""
    return helm_literal(yaml_string(s, key_col + 2))


def _key(name: str) -> str:
    """A mapping key (label or annotation name) that YAML 1.1 and 1.2 both read as this string:
    always double-quoted, since names such as ``on``, ``yes``, ``true`` or ``null`` are valid
    Prometheus label names but YAML words."""
    return helm_literal(double_quoted(name))


@functools.lru_cache(maxsize=16384)
def _entry(name: str, value: str) -> tuple[str, str, str]:
    """(Go string of the name for ``hasKey``, YAML key, YAML value) of one label or annotation."""
    return go_string(name), _key(name), _scalar(value, MAP_KEY_COL)


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
        metadata_name = _scalar(spec.chart.name, META_KEY_COL)
    elif fullname in helpers:
        suffix = name_suffix(spec)  # [a-z0-9-]: plain in YAML, nothing to escape
        metadata_name = "{{ include %s . }}" % go_string(fullname) + (f"-{suffix}" if suffix else "")
    else:
        metadata_name = _scalar(spec.app, META_KEY_COL)
    if spec.chart.namespace:
        metadata_namespace = _scalar(spec.chart.namespace, META_KEY_COL)
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
                "name_yaml": _scalar(r.name, RULE_KEY_COL),
                "is_alert": r.is_alert,
                "expr": _scalar(r.expr, RULE_KEY_COL),
                "for_": go_string(canonical(r.for_)) if r.for_ else None,
                "keep_firing_for": go_string(canonical(r.keep_firing_for)) if r.keep_firing_for else None,
                "labels": [_entry(k, v) for k, v in labels.items()],
                "annotations": [_entry(k, v) for k, v in sorted(r.annotations.items())
                                if k != "runbook_url"] + (
                    [_entry("runbook_url", r.annotations["runbook_url"])]
                    if "runbook_url" in r.annotations else []),
                "has_own_runbook_url": "runbook_url" in r.annotations,
                "runbook_path": page_url(spec.app) + "#" + anchor(r.name),
            })
            n += 1
        groups.append({
            "var": f"g{gi}",
            "cfg_var": f"g{gi}cfg",
            "name_go": go_string(g.name),
            "name_yaml": _scalar(g.name, GROUP_KEY_COL),
            "interval": _scalar(canonical(g.interval), GROUP_KEY_COL) if g.interval else None,
            "query_offset": _scalar(canonical(g.query_offset), GROUP_KEY_COL) if g.query_offset else None,
            "limit": g.limit,
            "rules": rules,
        })
    # A spec that sets its own runbook_url keeps it as a static annotation: drop the generated one.
    for g in groups:
        for r in g["rules"]:
            if r["has_own_runbook_url"] or not spec.chart.runbook_url:
                r["runbook_path"] = None
    text = jinja.render(
        "prometheusrule.yaml.j2",
        header=header,
        checksum=checksum,
        values_key_go=go_string(spec.chart.values_key),
        default_runbook_base=go_string(site_url.rstrip("/") if spec.chart.runbook_url else ""),
        gates=[[go_string(p) for p in gate.split(".")] for gate in spec.chart.gates],
        groups=groups,
        metadata_name=metadata_name,
        metadata_namespace=metadata_namespace,
        labels_helper=go_string(labels_helper) if labels_helper in helpers else None,
        app_go=go_string(spec.app),
        scalar_tpl=go_string(SCALAR_TEMPLATE),
        json_raw_escapes=[(go_string(c), go_string(f"\\u{ord(c):04x}")) for c in JSON_RAW_UNSAFE],
    )
    return text
