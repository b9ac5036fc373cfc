"""Names of alerts, recording rules, labels and groups.

Codes:

* ``RG401`` (warning) alert name not CamelCase (``^[A-Z][A-Za-z0-9]*$``, the convention of
  the Prometheus docs' examples and of monitoring mixins, checked by mixtool). Prometheus
  accepts any alert name, and upstream rules use others (etcd's ``etcdMembersDown``), so this
  is a warning; make it an error in ``.rulegen.yaml`` to enforce the convention. Bad:
  ``alert: llama_swap_down``; good: ``alert: LlamaSwapDown``.
* ``RG402`` (warning) alert name longer than 40 characters (mixtool's limit): it is cut in
  notification titles and dashboards. Bad: ``LlamaSwapDeploymentHasNoAvailableReplicasForAWhile``.
  Good: ``LlamaSwapNoReplicas``.
* ``RG403`` recording rule name is not a valid metric name (``[a-zA-Z_:][a-zA-Z0-9_:]*``);
  Prometheus refuses to load it. Bad: ``record: job:http-requests:rate5m``.
  Good: ``record: job:http_requests:rate5m``.
* ``RG404`` (warning) recording rule name without a colon, or with nothing but colons. The
  Prometheus docs ("Recording rules" best practices) name recorded series
  ``level:metric:operations`` (``job:http_requests:rate5m``) and reserve colons for them, so
  a name without one reads like an exporter's metric. Any other colon-separated shape is
  accepted, as Prometheus accepts it and upstream projects use it: an empty level
  (kube-prometheus' ``:node_memory_MemAvailable_bytes:sum``), an empty last part
  (``node_namespace_pod:kube_pod_info:``), two parts (``count:up1``), more than three
  (``cluster:namespace:pod_cpu:active:kube_pod_container_resource_requests``) and parts
  starting with a digit (Loki's and Mimir's ``cluster_job:loki_request_duration_seconds:99quantile``).
  Bad: ``record: http_requests_rate5m``; good: ``record: job:http_requests:rate5m``.
* ``RG405`` label name starts with ``__``: Prometheus reserves those names for internal use
  (``__name__``, ``__address__``...). Bad: ``labels: {__team: ai}``; good: ``labels: {team: ai}``.
  (Label names that do not match ``[a-zA-Z_][a-zA-Z0-9_]*`` at all are ``RG204`` from the schema.)
* ``RG406`` group name is blank (only spaces). Bad: ``name: " "``.
  Good: ``name: llama-swap``.
"""

from __future__ import annotations

import re

from ...findings import Severity

ID = "names"

ALERT_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")
MAX_ALERT_NAME = 40
METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
_PART = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")


def is_level_metric_operations(name: str) -> bool:
    """True when ``name`` has the form ``level:metric:operations``: exactly three non-empty
    parts separated by colons, each a valid name (letters, digits, underscores)."""
    parts = name.split(":")
    return len(parts) == 3 and all(_PART.fullmatch(p) for p in parts)


def is_recorded_name(name: str) -> bool:
    """True when ``name`` (a valid metric name) has the shape of a recorded series: at least
    one colon and at least one non-empty part, as in every upstream style RG404 accepts
    (``:node_memory_MemAvailable_bytes:sum``, ``count:up1``, ``a:b:c:d``, ``x:99quantile``)."""
    return ":" in name and name.strip(":") != ""


def _camel_hint(name: str) -> str:
    words = re.split(r"[^A-Za-z0-9]+", name)
    return "".join(w[:1].upper() + w[1:] for w in words if w)


def check_spec(spec, ctx):
    """Yield RG401-RG406 findings for ``spec``."""
    lf = spec.source
    for k in spec.labels:
        yield from _label_name(lf, ("labels", k), k, "")
    for g in spec.groups:
        if not g.name.strip():
            yield lf.finding(g.path + ("name",), "RG406",
                             "group name is blank; name the group, e.g. after the app", rule="")
        for k in g.labels:
            yield from _label_name(lf, g.path + ("labels", k), k, g.name)
        for r in g.rules:
            for k in r.labels:
                yield from _label_name(lf, r.path + ("labels", k), k, r.name)
            if r.is_alert:
                p = r.path + ("alert",)
                if not ALERT_NAME.fullmatch(r.name):
                    hint = _camel_hint(r.name)
                    tip = f", e.g. {hint}" if hint and ALERT_NAME.fullmatch(hint) else ""
                    yield lf.finding(p, "RG401", f"alert name {r.name!r} is not CamelCase "
                                     f"([A-Z][A-Za-z0-9]*); rename it{tip}", rule=r.name,
                                     severity=Severity.WARNING)
                elif len(r.name) > MAX_ALERT_NAME:
                    yield lf.finding(p, "RG402", f"alert name is {len(r.name)} characters long, more "
                                     f"than {MAX_ALERT_NAME}; shorten it", rule=r.name,
                                     severity=Severity.WARNING)
            else:
                p = r.path + ("record",)
                if not METRIC_NAME.fullmatch(r.name):
                    yield lf.finding(p, "RG403", f"recording rule name {r.name!r} is not a valid "
                                     "metric name ([a-zA-Z_:][a-zA-Z0-9_:]*); Prometheus will not "
                                     "load it, so use only letters, digits, `_` and `:`", rule=r.name)
                elif not is_recorded_name(r.name):
                    yield lf.finding(p, "RG404", f"recording rule name {r.name!r} has no "
                                     "level:metric:operations parts; name it after the labels it "
                                     "keeps, the metric and the operations, separated by colons "
                                     "(e.g. job:http_requests:rate5m)",
                                     rule=r.name, severity=Severity.WARNING)


def _label_name(lf, path, name, rule):
    if name.startswith("__"):
        yield lf.finding(path, "RG405", f"label name {name!r} starts with __, which Prometheus "
                         f"reserves for internal labels; rename it to {name.lstrip('_') or 'a_name'!r}",
                         rule=rule, key=True)
