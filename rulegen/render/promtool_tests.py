"""promtool unit-test files from the tests declared next to each rule.

Output shape is promtool's own (Prometheus docs, "Unit testing for rules"): ``rule_files``,
``evaluation_interval``, ``tests[]`` with ``name``, ``interval``, ``input_series``,
``external_labels``, ``external_url``, ``alert_rule_test`` and ``promql_expr_test``.

What rulegen adds, so that a test says only what matters and is still an exact promtool check
(promtool compares *all* labels and annotations of every firing alert):

* ``alertname`` defaults to the alert the test sits under; a ``promql_expr_test`` without
  ``expr`` reads the recording rule it sits under;
* ``exp_labels`` is completed with the alert's own labels (app, group, rule labels,
  ``severity``, ``component``) as rendered with the chart's default values, their Prometheus
  templates expanded (``tier: "{{ $labels.job }}-x"`` becomes ``api-x``; one that expands to
  ``""`` is left out, as Prometheus drops it);
* ``exp_annotations`` is completed with the alert's annotations (and the generated
  ``runbook_url``), their templates expanded likewise.

Templates are expanded as Prometheus does for alerts: ``$labels`` are the labels of the series
the expression returned (the test's ``exp_labels`` without ``alertname`` and without the rule's
own label names), not the alert's final labels, so ``{{ $labels.severity }}`` is ``""`` unless
the series has ``severity``. Only the simple forms ``{{ $labels.x }}``, ``{{ .Labels.x }}``,
``{{ index $labels "x" }}``, ``{{ $externalLabels.x }}`` and ``{{ $externalURL }}`` are
expanded; a label or annotation using anything else (``$value``, functions) must be written
out in the test (``exp_labels``/``exp_annotations``), and :func:`expand` raises
:class:`NotExpandable`, reported as RG601 naming it.
"""

from __future__ import annotations

import re

import yaml

from ..spec import Spec
from ..spec.durations import canonical
from .slug import anchor, page_url

RULES_FILE = "rules.yaml"  # name of the extracted rule groups next to the test file
DEFAULT_EXTERNAL_URL = "http://localhost:9090"  # promtool's default external_url... see below

_ACTION = re.compile(r"\{\{(-?)(.*?)(-?)\}\}", re.S)
_LABEL_REF = re.compile(r"^\s*(?:\$labels|\.Labels)\.([a-zA-Z_][a-zA-Z0-9_]*)\s*$")
_INDEX_REF = re.compile(r'^\s*index\s+(?:\$labels|\.Labels)\s+"([^"\\]*)"\s*$')
_EXT_LABEL_REF = re.compile(r"^\s*(?:\$externalLabels|\.ExternalLabels)\.([a-zA-Z_][a-zA-Z0-9_]*)\s*$")
_EXT_URL = re.compile(r"^\s*(?:\$externalURL|\.ExternalURL)\s*$")
_COMMENT = re.compile(r"^\s*/\*.*\*/\s*$", re.S)


class NotExpandable(ValueError):
    """A label or annotation template uses more than rulegen can expand statically."""


def expand(template: str, labels: dict, external_labels: dict | None = None,
           external_url: str = "") -> str:
    """Expand the simple Prometheus alert-template forms (see the module docstring).

    A label missing from ``labels`` (or ``external_labels``) expands to ``""``: Prometheus
    passes them as ``map[string]string`` with ``missingkey=zero`` (checked with promtool), not
    Go's ``<no value>``.

    Raises:
        NotExpandable: the template has any other action.
    """
    external_labels = external_labels or {}
    out = []
    pos = 0
    for m in _ACTION.finditer(template):
        text = template[pos:m.start()]
        if m.group(1):
            text = text.rstrip(" \t\r\n")
        out.append(text)
        body = m.group(2)
        lm = _LABEL_REF.match(body) or _INDEX_REF.match(body)
        em = _EXT_LABEL_REF.match(body)
        if lm:
            out.append(labels.get(lm.group(1), ""))
        elif em:
            out.append(external_labels.get(em.group(1), ""))
        elif _EXT_URL.match(body):
            out.append(external_url)
        elif _COMMENT.match(body):
            pass
        else:
            raise NotExpandable(body.strip())
        pos = m.end()
        if m.group(3):
            rest = template[pos:]
            pos += len(rest) - len(rest.lstrip(" \t\r\n"))
    out.append(template[pos:])
    return "".join(out)


def runbook_url(site_url: str, app: str, rule_name: str) -> str:
    """The generated ``runbook_url`` with the chart's default ``runbookUrl``."""
    return f"{site_url.rstrip('/')}/{page_url(app)}#{anchor(rule_name)}"


def _expand_or_explain(kind: str, key: str, template: str, series: dict, ext_labels: dict,
                       ext_url: str) -> str:
    try:
        return expand(template, series, ext_labels, ext_url)
    except NotExpandable as e:
        field = "exp_labels" if kind == "label" else "exp_annotations"
        raise NotExpandable(
            f"{kind} `{key}` uses `{{{{{e}}}}}`, which rulegen cannot expand; write "
            f"`{field}: {{{key}: ...}}` in the test") from None


def expected_alert(spec: Spec, group, rule, exp: dict, test: dict, site_url: str,
                   errors: list | None = None) -> dict:
    """One completed ``exp_alerts`` entry for ``rule`` (see the module docstring).

    As Prometheus does (``rules/alerting.go``), the rule's labels and annotations are
    expanded with the labels of the *series* the expression returned, not with the alert's
    final labels: those series labels are the test's ``exp_labels`` minus ``alertname`` and
    minus the rule's own label names (a rule label replaces a series label of the same name).
    A label that expands to ``""`` is dropped, as Prometheus drops empty labels. A label or
    annotation the test gives itself is taken as given, never expanded.

    With ``errors`` (a list), every label or annotation that needs writing out is appended to
    it as ``(kind, key, template, NotExpandable)`` (kind ``label`` or ``annotation``) and left
    out of the result, instead of raising on the first.

    Raises:
        NotExpandable: a label or annotation needs writing out in the test (names it); only
            without ``errors``.
    """
    def expand_or_note(kind, key, template):
        try:
            return _expand_or_explain(kind, key, template, series, ext_labels, ext_url)
        except NotExpandable as e:
            if errors is None:
                raise
            errors.append((kind, key, template, e))
            return ""

    given_labels = dict(exp.get("exp_labels") or {})
    rule_labels = dict(rule.all_labels(spec.labels, group.labels))
    ext_labels = test.get("external_labels") or {}
    ext_url = test.get("external_url", DEFAULT_EXTERNAL_URL)
    series = {k: v for k, v in given_labels.items() if k != "alertname" and k not in rule_labels}
    labels = dict(series)
    for k, v in rule_labels.items():
        if k in given_labels:
            continue
        value = expand_or_note("label", k, v)
        if value != "":
            labels[k] = value
    labels.update(given_labels)
    labels = dict(sorted(labels.items()))
    annotations = dict(rule.annotations)
    if "runbook_url" not in annotations and spec.chart.runbook_url:
        annotations["runbook_url"] = runbook_url(site_url, spec.app, rule.name)
    given = exp.get("exp_annotations") or {}
    done = {}
    for k, v in annotations.items():
        if k in given:
            done[k] = given[k]
        else:
            done[k] = expand_or_note("annotation", k, v)
    for k, v in given.items():
        done.setdefault(k, v)
    return {"exp_labels": labels, "exp_annotations": dict(sorted(done.items()))}


def test_groups(spec: Spec, site_url: str) -> list[dict]:
    """promtool ``tests[]`` entries for every test of ``spec``, in spec order.

    Raises:
        NotExpandable: an annotation needs to be written out (message names it).
    """
    out = []
    for group, rule in spec.rules():
        for t in rule.tests:
            d = t.data
            entry: dict = {"name": f"{rule.name}: {t.name}"}
            if "interval" in d:
                entry["interval"] = canonical(d["interval"])
            if "external_labels" in d:
                entry["external_labels"] = dict(d["external_labels"])
            if "external_url" in d:
                entry["external_url"] = d["external_url"]
            entry["input_series"] = [dict(s) for s in d.get("input_series") or []]
            if rule.is_alert or d.get("alert_rule_test"):
                art = []
                for a in d.get("alert_rule_test") or []:
                    name = a.get("alertname", rule.name)
                    # the rule the test sits under, else the first alert of that name
                    target = rule if rule.name == name else next(
                        (r for g, r in spec.rules() if r.name == name and r.is_alert), rule)
                    tgroup = next((g for g, r in spec.rules() if r is target), group)
                    art.append({
                        "eval_time": a["eval_time"],
                        "alertname": name,
                        "exp_alerts": [expected_alert(spec, tgroup, target, e, d, site_url)
                                       for e in a.get("exp_alerts") or []],
                    })
                if art:
                    entry["alert_rule_test"] = art
            pet = []
            for p in d.get("promql_expr_test") or []:
                item = {"expr": p.get("expr", rule.name), "eval_time": p["eval_time"]}
                item["exp_samples"] = [dict(s) for s in p.get("exp_samples") or []]
                pet.append(item)
            if pet:
                entry["promql_expr_test"] = pet
            out.append(entry)
    return out


def evaluation_interval(spec: Spec) -> str:
    """promtool's ``evaluation_interval``: the spec's ``promtool.evaluation_interval``, else
    the smallest group interval, else 1m (Prometheus' default ``evaluation_interval``)."""
    from ..spec.durations import format_ms, parse_ms
    if spec.promtool.get("evaluation_interval"):
        return canonical(spec.promtool["evaluation_interval"])
    ivs = [parse_ms(g.interval) for g in spec.groups if g.interval]
    return format_ms(min(ivs)) if ivs else "1m"


def render_test_file(spec: Spec, site_url: str, header_lines: list[str]) -> str | None:
    """The promtool test file text for ``spec``, or None when it declares no test."""
    tests = test_groups(spec, site_url)
    if not tests:
        return None
    doc = {"rule_files": [RULES_FILE], "evaluation_interval": evaluation_interval(spec)}
    # the spec's own promtool settings (rulegen import carries them over from a test file)
    for k in ("group_eval_order", "fuzzy_compare"):
        if k in spec.promtool:
            doc[k] = spec.promtool[k]
    doc["tests"] = tests
    body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100000, default_flow_style=False)
    return "\n".join(header_lines) + "\n" + body
