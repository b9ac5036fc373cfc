"""The chart layout: a plain rules file, its metadata and a one-line template of the chart library.

Each app's chart holds (paths under ``chart.path``):

* ``rules/<app>.rules.yaml`` (:func:`render_rules_file`): a plain Prometheus rule file
  (``groups:``, as in the Prometheus docs "Defining recording rules"), exactly what Prometheus
  loads when every knob is at its default. Written as a person would (block literals for
  multi-line exprs, keys and strings plain unless YAML needs quotes, see
  :func:`rulegen.render.yamltext.readable_string`); Helm never evaluates it as a template, so
  it holds no Helm escaping, and ``promtool check rules`` or pint read it as it is.
* ``rules/<app>.meta.yaml`` (:mod:`rulegen.render.chart_meta`): plain, commented YAML with
  what the template needs besides the rules (:func:`chart_settings`: template, rules file,
  app, values key, gates, runbook base, name and namespace, the chart's fullname/labels
  helpers; alerts with parameters and SLOs, by name).
* ``templates/prometheusrule.yaml`` (or ``chart.template``): the generated-file notice and
  one ``include "rulegen.v3.prometheusrule" .``, the same bytes in every chart.
* ``charts/rulegen-library``: a symlink to the project's library chart
  ``charts/rulegen-library/`` (:mod:`rulegen.render.library`), whose ``templates/_rulegen.tpl``
  is ``templates/helm/_rulegen.tpl`` of rulegen's package (hand-written, commented; read it for
  the details). Its templates find the metadata file that names the chart's template
  (``.Files.Glob``/``.Files.Get``, ``fromYaml``) and the rules file that one names, apply the
  gates, group toggles and per-rule knobs from the values and write the
  ``monitoring.coreos.com/v1`` ``PrometheusRule``.

Gates and knobs (under ``.Values.<values_key>``, default ``prometheusRule``, named as in
kube-prometheus-stack): the resource renders only when every gate in ``chart.gates`` is true in
the values and at least one rule group is left; a group renders only when its toggle is on and
one of its rules is not disabled, so ``rules: null`` cannot happen.

* ``disabled.<Rule>: true`` drops one alert or recording rule;
* ``groups.<group>.enabled``, ``groups.<group>.additionalRuleLabels``,
  ``groups.<group>.additionalRuleAnnotations``;
* ``additionalRuleLabels`` / ``additionalRuleAnnotations`` for every rule (labels apply to
  recording rules too);
* ``customRules.<Rule>.{for, keepFiringFor, severity, labels, annotations}``; an annotation
  given there (summary, description, runbook_url, ...) replaces the generated one;
* ``customRules.<Alert>.params.<name>``: a parameter of the alert's expr (``[[name]]`` in the
  spec, see :class:`rulegen.spec.model.Param`) instead of its default;
* ``slos.<slo>.{enabled, ticket, objective}``: an SLO's rules (its group), its ticket alert,
  and its objective in percent (written into the one rule that holds it, the
  ``slo:error_budget:ratio`` recording rule, as the budget: every other rule of the SLO reads
  that series; computed on decimal digits, see ``rulegen.v3.budget``);
* ``runbookUrl``: base URL of the runbook site; each alert links to
  ``<runbookUrl>/<app>/#<anchor>`` (a ``runbook_url`` the spec sets to another address is kept);
* ``labels`` / ``annotations`` on the PrometheusRule itself (e.g. ``release:
  kube-prometheus-stack`` for a ``ruleSelector``).

Every string reaches Prometheus byte for byte: the rules file's scalars read back exactly
(:mod:`rulegen.render.yamltext`), and the template writes each string with its
``rulegen.v3.scalar`` helper (plain, literal block or double-quoted with Go's ``%q``, whichever is
exact).

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

from ..fs import read as fs_read
from ..spec import Spec
from ..promql.gotmpl import defined_names
from ..spec.model import DEFAULT_TEMPLATE

#: The hand-written chart files, under rulegen's package's ``templates/helm/``: the library's
#: named templates (written once, into the library chart) and each chart's template.
HELPER_FILE = "_rulegen.tpl"
TEMPLATE_SOURCE = "prometheusrule.yaml"
_NOTICE_PLACEHOLDER = "@@NOTICE@@"
def chart_helpers(chart_dir: Path) -> set[str]:
    """Names of the templates the chart defines (``{{ define "x.fullname" }}``) in its
    ``templates/*.tpl`` files; empty when the chart has none."""
    names: set[str] = set()
    tdir = chart_dir / "templates"
    if tdir.is_dir():
        for f in sorted(tdir.glob("*.tpl")):
            try:
                names.update(defined_names(fs_read.read_text(f)))
            except (OSError, UnicodeDecodeError):
                continue
    return names


def chart_name(chart_dir: Path, default: str) -> str:
    """The ``name`` in the chart's Chart.yaml, or ``default``."""
    f = chart_dir / "Chart.yaml"
    if f.is_file():
        m = re.search(r"^name:\s*['\"]?([^'\"\s#]+)", fs_read.read_text(f), re.M)
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


def rules_file_path(spec: Spec) -> str:
    """Where a spec's rules file is written: ``<chart>/rules/<app>.rules.yaml``."""
    return f"{spec.chart.path}/rules/{spec.app}.rules.yaml"


def _source(name: str) -> str:
    from .jinja import templates_dir
    return (templates_dir() / "helm" / name).read_text(encoding="utf-8")


#: A comment block of the package's chart files (``{{- /*`` on a line of its own): the
#: documentation of the template and of each helper, left out of the copies.
_DOC_BLOCK = re.compile(r"\{\{- /\*\n.*?\*/\}\}\n", re.S)


def compact(text: str, name: str) -> str:
    """``text`` of package file ``templates/helm/<name>`` as rulegen writes it into a project:
    without its comment blocks (the documentation stays in rulegen's package and
    docs/chart.md, so a pull request adding a chart adds only the code; Helm's output is the
    same, as the blocks trim the whitespace before them and output nothing). A ``.tpl`` file
    (the library) also loses its blank lines, which Helm never outputs there, and gets one
    line saying where the documentation is after the notice; a chart's template is then the
    notice and its one ``include``."""
    lines = _DOC_BLOCK.sub("", text).split("\n")
    if not name.endswith(".tpl"):
        return "\n".join(lines)
    lines = [ln for ln in lines if ln.strip()] + [""]
    pointer = f"{{{{- /* The documented source: rulegen's templates/helm/{name}; see docs/chart.md. */}}}}"
    return "\n".join(lines[:1] + [pointer] + lines[1:])


@functools.cache
def _copied(name: str) -> str:
    """Package file ``templates/helm/<name>`` as written into a project (:func:`compact`; a
    YAML file as it is) with its notice filled in."""
    from . import ownership
    text = _source(name).replace(_NOTICE_PLACEHOLDER, ownership.notice(f"rulegen's templates/helm/{name}"), 1)
    return text if name == "Chart.yaml" else compact(text, name)


def package_file(name: str) -> str:
    """Package file ``templates/helm/<name>`` as rulegen writes it (:func:`_copied`)."""
    return _copied(name)


def render_template(spec: Spec | None = None, root: Path | None = None, site_url: str | None = None,
                    header: str | None = None, checksum: str | None = None) -> str:
    """The chart's ``templates/prometheusrule.yaml`` (or ``chart.template``) text: the same
    for every spec, so the arguments of the older per-spec signature are accepted and none is
    used (``checksum`` neither: generated files carry none since the sum files,
    :mod:`rulegen.render.sums`). The template works only next to the spec's rules file (:func:`render_rules_file`)
    and with the chart library as the chart's subchart (:mod:`rulegen.render.library`)."""
    return _copied(TEMPLATE_SOURCE)


def render_helpers() -> str:
    """The library chart's ``templates/_rulegen.tpl`` text."""
    return package_file(HELPER_FILE)


def chart_settings(spec: Spec, root: Path, site_url: str) -> dict:
    """What the template needs to know about ``spec`` (the settings of the metadata file,
    :mod:`rulegen.render.chart_meta`): ``template`` (file name under ``templates/``), ``app``, ``valuesKey``, ``gates``
    (values paths), ``runbookBase`` (the site URL the rules file's runbook_urls start with;
    absent with ``chart.runbook_url: false``),
    and when they apply ``name``/``namespace`` (from the spec), ``fullname`` (the chart's
    helper naming the PrometheusRule), ``nameSuffix`` (see :func:`name_suffix`) and
    ``labelsHelper`` (the chart's ``<chart>.labels``)."""
    chart_dir = root / spec.chart.path
    helpers = chart_helpers(chart_dir)
    cname = chart_name(chart_dir, spec.app)
    out: dict = {"template": spec.chart.template, "app": spec.app, "valuesKey": spec.chart.values_key,
                 "gates": list(spec.chart.gates)}
    if spec.chart.runbook_url:  # chart.runbook_url: false generates no link, so has no base
        out["runbookBase"] = site_url.rstrip("/")
    if spec.chart.name:
        out["name"] = spec.chart.name
    elif f"{cname}.fullname" in helpers:
        out["fullname"] = f"{cname}.fullname"
        if name_suffix(spec):
            out["nameSuffix"] = name_suffix(spec)
    if spec.chart.namespace:
        out["namespace"] = spec.chart.namespace
    if f"{cname}.labels" in helpers:
        out["labelsHelper"] = f"{cname}.labels"
    return out


def render_rules_file(spec: Spec, root: Path, site_url: str, header_lines: list[str]) -> str:
    """The text of ``rules/<app>.rules.yaml``: ``header_lines`` (the generated-file notice), a note and the spec's rule groups as Prometheus loads them with default
    values (:func:`rulegen.render.plain.rule_groups`). What else the template needs is in the
    metadata file beside it (:mod:`rulegen.render.chart_meta`)."""
    from .plain import dump, rule_groups
    lines = [*header_lines,
             "# Plain Prometheus rule file: what Prometheus loads with every values knob of the chart at",
             f"# its default. templates/{spec.chart.template} reads it and rules/{spec.app}.meta.yaml "
             "to write the PrometheusRule."]
    return "\n".join(lines) + "\n" + dump({"groups": rule_groups(spec, site_url)}, readable=True) + "\n"


def render_meta_file(spec: Spec, root: Path, site_url: str, header_lines: list[str]) -> str:
    """The text of ``rules/<app>.meta.yaml``: ``header_lines``, then what the template needs
    besides the rules (:func:`chart_settings`, the rules file's name, the alerts with
    parameters and the SLOs; :func:`rulegen.render.chart_meta.meta_text`)."""
    from .chart_meta import meta_text
    settings = chart_settings(spec, root, site_url)
    settings = {"template": settings["template"], "rules": rules_file_path(spec).rsplit("/", 1)[1], **settings}
    return meta_text(spec, settings, header_lines)


def render_chart(spec: Spec, root: Path, site_url: str, header_lines: list[str]) -> list[tuple[str, str]]:
    """(path, text) of the owned chart files of ``spec``: the rules file, its metadata file, the template, and the AlertmanagerConfig of the
    spec's inhibit rules when it declares any (:mod:`.inhibit_chart`). ``header_lines`` heads
    the rules file (the notice naming the spec). The chart renders only with the
    chart library as its subchart: :mod:`rulegen.render.library` (the library's files and the
    chart's link; :func:`rulegen.render.plan` plans them)."""
    from . import inhibit_chart
    from .chart_meta import meta_file_path
    inhibitions = inhibit_chart.render(spec)  # the AlertmanagerConfig of its inhibited_by (issue 28)
    return [(rules_file_path(spec), render_rules_file(spec, root, site_url, header_lines)),
            (meta_file_path(spec), render_meta_file(spec, root, site_url, header_lines)),
            (spec.chart.template_path, render_template())] + (
        [(inhibit_chart.template_path(spec), inhibitions)] if inhibitions else [])
