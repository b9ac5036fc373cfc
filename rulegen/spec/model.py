"""The spec model: what a spec says, once it has passed the schema.

Shapes mirror Prometheus' rule files (a rule group holds alerts and recording rules; see the
Prometheus docs "Alerting rules" and "Recording rules") plus what rulegen adds: the chart and
its gates, runbook content and promtool tests. Durations stay strings in Prometheus syntax
(``"5m"``); :mod:`rulegen.spec.durations` converts them to seconds.

Only the types live here (no module of the spec package is imported but the loader's
:class:`~rulegen.spec.loader.LoadedFile`); :func:`rulegen.spec.build.build_spec` builds them
from schema-valid data, SLOs included (:mod:`rulegen.spec.slo` expands into these types).

Every object keeps ``path``, its position in the spec data (for example
``("groups", 0, "rules", 1)``), so checks can report ``file:line:col`` through
:meth:`rulegen.spec.loader.LoadedFile.pos`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .loader import LoadedFile

DEFAULT_GATES = ("enabled", "monitoring.enabled")
DEFAULT_VALUES_KEY = "prometheusRule"
DEFAULT_TEMPLATE = "prometheusrule.yaml"


@dataclass
class Chart:
    """Where the PrometheusRule is rendered and when.

    Attributes:
        path: chart folder relative to the project root (``charts/<app>``).
        template: file name under ``templates/``.
        name: PrometheusRule ``metadata.name``; None means the chart's fullname helper, or the app.
        namespace: PrometheusRule namespace; None means the release namespace.
        gates: values paths that must all be true for the resource to render.
        values_key: top-level values key holding the per-rule knobs.
        runbook_url: False when the chart adds no generated ``runbook_url`` annotation.
    """

    path: str
    template: str = DEFAULT_TEMPLATE
    name: str | None = None
    namespace: str | None = None
    gates: tuple[str, ...] = DEFAULT_GATES
    values_key: str = DEFAULT_VALUES_KEY
    runbook_url: bool = True   # False: no generated runbook_url annotation (chart.runbook_url)

    @property
    def template_path(self) -> str:
        return f"{self.path}/templates/{self.template}"


@dataclass
class Test:
    """One promtool test group, in promtool's vocabulary (``interval``, ``input_series``,
    ``alert_rule_test``, ``promql_expr_test``, ``external_labels``, ``external_url``).

    ``data`` is the test as written in the spec; ``path`` locates it.
    """

    name: str
    data: dict
    path: tuple


#: A parameter of an alert's expr as written in the spec: ``[[name]]``. ``[[`` never occurs in
#: valid PromQL outside a string (a range selector needs a duration after ``[``), and neither
#: Prometheus templates nor Helm use it (both use ``{{ }}``).
PARAM_RE = re.compile(r"\[\[([A-Za-z_][A-Za-z0-9_]*)\]\]")


@dataclass(frozen=True)
class Param:
    """A parameter of an alert's expr (``params:`` in the spec).

    Attributes:
        name: as written between ``[[`` and ``]]``.
        default: the default as PromQL text (``0.9``, ``5m``).
        kind: ``number`` or ``duration`` (what the chart's values may set).
        description: what it means, for the runbook page and values.schema.json; may be "".
    """

    name: str
    default: str
    kind: str
    description: str = ""


def param_text(value) -> str:
    """A parameter value (int, float or duration string) as PromQL text: ``0.9``, ``100``,
    ``5m`` (floats in Python's shortest round-trip form)."""
    return repr(value) if isinstance(value, float) else str(value)


def substitute(expr: str, values: dict) -> str:
    """``expr`` with each ``[[name]]`` whose name is in ``values`` replaced by its text; other
    placeholders are left as written (validation reports them, RG731)."""
    return PARAM_RE.sub(lambda m: values.get(m.group(1), m.group(0)), expr)


@dataclass(frozen=True)
class Inhibition:
    """One ``inhibited_by:`` entry of an alert (the symptom): Alertmanager mutes the symptom
    while the alert ``cause`` fires with the same values of the ``equal`` labels.

    Attributes:
        cause: the cause's alert name.
        equal: label names both alerts must carry with equal values (may be empty).
        path: position of the entry in the spec data.
    """

    cause: str
    equal: tuple
    path: tuple


@dataclass
class Rule:
    """An alerting rule (``kind == "alert"``) or a recording rule (``kind == "record"``).

    Attributes:
        name: the ``alert`` or ``record`` name.
        expr: PromQL expression text, unchanged.
        for_: ``for`` duration string or None; ``keep_firing_for`` likewise.
        labels: the rule's own labels (severity and component included for alerts).
        component: the ``component`` label; None when the spec says ``component: false``.
        annotations: summary, description and other annotations (runbook_url is added at render).
        runbook: the alert's runbook content, as written.
        tests: promtool tests declared next to the rule.
        params: parameters of the expr by name (alerts only); ``expr`` then holds their
            defaults and ``expr_template`` the expr as written, with ``[[name]]`` placeholders.
        equivalent_mutants: mutant text (as ``rulegen test --mutate`` prints it) -> the reason
            no test can tell that mutant apart from the rule.
        routes_to: the Alertmanager receivers the spec says the alert reaches (``routes_to:``).
        inhibited_by: the alert's causes (``inhibited_by:``), each an :class:`Inhibition`.
    """

    kind: str
    name: str
    expr: str
    path: tuple
    for_: str | None = None
    keep_firing_for: str | None = None
    severity: str | None = None
    component: str | None = None
    labels: dict = field(default_factory=dict)
    annotations: dict = field(default_factory=dict)
    runbook: dict = field(default_factory=dict)
    tests: list[Test] = field(default_factory=list)
    params: dict = field(default_factory=dict)
    expr_template: str | None = None
    equivalent_mutants: dict = field(default_factory=dict)
    routes_to: tuple = ()
    inhibited_by: tuple = ()

    @property
    def is_alert(self) -> bool:
        return self.kind == "alert"

    def all_labels(self, app_labels: dict, group_labels: dict) -> dict:
        """Labels as Prometheus sees them, before values overrides: app, then group, then the
        rule's own labels, then ``severity`` and ``component``. Keys sorted."""
        merged = dict(app_labels)
        merged.update(group_labels)
        merged.update(self.labels)
        if self.severity is not None:
            merged["severity"] = self.severity
        if self.component is not None:
            merged["component"] = self.component
        return dict(sorted(merged.items()))


@dataclass
class Group:
    """A rule group: ``name``, optional ``interval``/``query_offset``/``limit``/``labels``, rules.

    ``slo`` is the name of the SLO (``slos:``) the group was generated from, or None for a group
    written under ``groups:``: a generated group's rules and tests are made by
    :mod:`rulegen.spec.slo`, not written in the spec, so nothing may be inserted at their paths
    (their ``path`` points at the SLO entry)."""

    name: str
    path: tuple
    rules: list[Rule]
    interval: str | None = None
    query_offset: str | None = None
    limit: int | None = None
    labels: dict = field(default_factory=dict)
    slo: str | None = None


@dataclass
class Spec:
    """One app's spec: the chart it renders into, its rule groups and runbook content."""

    app: str
    title: str
    chart: Chart
    groups: list[Group]
    labels: dict
    runbook: dict
    source: LoadedFile
    promtool: dict = field(default_factory=dict)   # promtool test-file settings (evaluation_interval...)
    #: the SLOs (:class:`rulegen.spec.slo.SLO`) that expanded into groups, in spec order
    slos: list = field(default_factory=list)

    @property
    def file(self) -> str:
        return self.source.path

    def rules(self):
        """All rules in spec order, as (group, rule) pairs."""
        for g in self.groups:
            for r in g.rules:
                yield g, r

    def written_rules(self):
        """The rules written under ``groups:`` (not generated from ``slos:``), as (group, rule)
        pairs in spec order: the ones whose spec text a person edits."""
        for g in self.groups:
            if g.slo is None:
                for r in g.rules:
                    yield g, r

    def alerts(self):
        """All alerting rules in spec order."""
        return [r for _, r in self.rules() if r.is_alert]
