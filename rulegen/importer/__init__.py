"""``rulegen import``: existing rules in, specs out.

Reads plain Prometheus rule files, PrometheusRule manifests and Helm chart templates holding a
PrometheusRule (:mod:`.sources`, :mod:`.helmtext`), turns their groups into one spec per app
(:mod:`.convert`), carries comments over (:mod:`.comments`) and writes each spec with
ruamel.yaml after checking that it passes the spec schema. :mod:`.compare` checks the
round-trip (import, build, ``helm template``) rule by rule.

App names (:mod:`.naming`): ``--app`` puts every rule into one app; otherwise each
PrometheusRule is an app named after it, and each rule file an app named after the file (a
Helm template whose PrometheusRule name Helm computes: after the file, or after the chart
when the file is ``prometheusrule.yaml`` or the like). Names are made DNS labels
(``Foo_Bar.rules`` -> ``foo-bar-rules``); when two sources would get the same name, folders
are put in front (``caddy-embedded-exporter``), never a number.

Notes (``rulegen.findings.Finding``, always at line 1 or later; errors mean something was not
imported):

* ``RG801`` error: a file cannot be read, is not YAML (or YAML Prometheus rejects: duplicate
  keys, a self-referencing alias), or holds no rule groups; warning: a file rulegen generated
  (nothing to import, its spec is named), or an app left with no rule.
  Bad: a rule file without ``groups:``, or with two ``expr:`` in one rule; good: a file ``promtool
  check rules`` accepts.
* ``RG802`` a Helm action cannot be read statically (error when rule content is lost).
  Bad: ``expr: {{ .Values.expr }}`` in a rule; good: the PromQL written out, or the output of ``helm
  template`` imported instead.
* ``RG803`` warning: Helm ``if``/``with`` conditions assumed true.
  Bad: a rule inside ``{{- if .Values.alerts.enabled }}``; good: check the imported rule is wanted
  (the chart's gates now switch it).
* ``RG804`` warning: a value changed type (a label ``5`` becomes the string ``"5"``).
  Bad: ``labels: {priority: 5}``; good: ``labels: {priority: "5"}``.
* ``RG805`` warning: something with no place in a spec, not imported (PrometheusRule
  metadata labels, unknown keys, a zero ``for`` on a recording rule, other Kubernetes objects).
  Bad: ``metadata.labels`` on the PrometheusRule; good: the same labels as ``prometheusRule.labels``
  in the chart's values.
* ``RG806`` error: a rule, or a group for a group-level field, skipped whole because Prometheus
  would reject it too (no ``expr``, PromQL that does not parse, a bad duration, an invalid
  name, a template that does not parse; see :mod:`.convert`), at the line of what is wrong.
  Bad: ``for: 1.5m`` in the source; good: ``for: 90s``, then import again.
* ``RG807`` warning: a comment with nowhere to go.
  Bad: a comment on a key with no place in a spec (such as ``metadata``); good: the comment on the
  rule or key it describes.
* ``RG808`` warning: a name changed (an app, a duplicate group, or a group name holding the
  release a saved ``helm template`` output was rendered for).
  Bad: a rule file ``Foo_Bar.rules`` imported as app ``foo-bar-rules``; good: ``--app foo-bar`` to
  choose the name.
* ``RG809`` error: the spec exists (use ``--force``) or the written spec would not validate.
  Bad: ``rules/shop.yaml`` exists already; good: ``--force`` to overwrite it, or ``--out`` another
  folder.
* ``RG810`` warning: an app is left with no rule to import (its groups are empty); no spec
  is written for it. Bad: a PrometheusRule with ``groups: []``; good: nothing to do, or import
  the file that holds the rules.
* ``RG816`` warning: a Helm template read statically renders nothing with the chart's
  default values (its gate is off); nothing imported from it. Bad: a template wrapped in
  ``{{- if .Values.extraAlerts.enabled }}`` with ``enabled: false``; good: ``--set
  extraAlerts.enabled=true`` to import it.
* ``RG817`` (warning) a source holds Loki rules (its ``expr`` is LogQL: a stream selector
  with a line filter or a parser stage, ``{app="x"} |= "error"``, ``| json``; see
  :mod:`.logql`): rulegen makes Prometheus rules, so that file (or that PrometheusRule of it)
  is left out, with this one note, and the other sources are imported. Bad: a chart whose
  ``templates/`` also hold the Loki ruler's rule file, imported expecting those alerts too;
  good: import the Prometheus rules with rulegen and keep the Loki file where the Loki ruler
  loads it.
* ``RG813`` error: importing would leave the project with a validation error a baseline
  cannot hold (PromQL, duplicates...; naming and convention findings of the imported rules
  are baselined, see :mod:`rulegen.baseline`): on an imported spec, shown at the source line
  it comes from (the spec is not written, so its lines do not exist), or on a spec the
  project has (an alert name another app uses, RG412, or an app name, RG413, is reported on
  whichever spec comes later in path order). Bad: ``expr: rate(x[5m]`` in the source, or an
  imported ``ShopDown`` next to the project's app ``shop`` that has one; good: the
  expression fixed, or the alert renamed, then import again.

Any error note means nothing is written (:func:`rulegen.commands.import_.run_import`).
"""

from __future__ import annotations

from . import chart
from ..spec import PROJECT_SCHEMA, schema_ref
from .build import import_paths
from .collect import SUFFIXES, expand
from .merge import chart_values_text, merge_spec_text
from .plan import plan_import, project_of, write_specs
from .positions import source_position
from .result import ImportedSpec, ImportResult
from .specyaml import dump_spec, dump_text, reload_text

__all__ = ["PROJECT_SCHEMA", "SUFFIXES", "ImportResult", "ImportedSpec", "chart",
           "chart_values_text", "dump_spec", "dump_text", "expand", "import_paths", "merge_spec_text",
           "plan_import", "project_of", "reload_text", "schema_ref", "source_position",
           "write_specs"]
