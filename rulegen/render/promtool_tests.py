"""promtool unit-test files from the tests declared next to each rule.

Output shape is promtool's own (Prometheus docs, "Unit testing for rules"): ``rule_files``,
``evaluation_interval``, ``tests[]`` with ``name``, ``interval``, ``input_series``,
``external_labels``, ``external_url``, ``alert_rule_test`` and ``promql_expr_test``.

What rulegen adds, so that a test says only what matters and is still an exact promtool check
(promtool compares *all* labels and annotations of every firing alert):

* ``alertname`` defaults to the alert the test sits under; a ``promql_expr_test`` without
  ``expr`` reads the recording rule it sits under;
* ``exp_labels`` is completed with the alert's own labels (app, group, rule labels,
  ``severity``, ``component``) as rendered with the chart's default values;
* ``exp_annotations`` is completed with the alert's annotations (and the generated
  ``runbook_url``), their Prometheus templates expanded for the expected labels. Only the
  simple forms ``{{ $labels.x }}``, ``{{ .Labels.x }}``, ``{{ index $labels "x" }}``,
  ``{{ $externalLabels.x }}`` and ``{{ $externalURL }}`` are expanded; an annotation using
  anything else (``$value``, functions) must be written out in the test, and
  :func:`expand` raises :class:`NotExpandable` naming it.
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
    """An annotation template uses more than rulegen can expand statically."""


def expand(template: str, labels: dict, external_labels: dict | None = None,
           external_url: str = "") -> str:
    """Expand the simple Prometheus alert-template forms (see the module docstring).

    A label missing from ``labels`` expands to ``<no value>``, as Go's text/template does.

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
            out.append(labels.get(lm.group(1), "<no value>"))
        elif em:
            out.append(external_labels.get(em.group(1), "<no value>"))
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


def expected_alert(spec: Spec, group, rule, exp: dict, test: dict, site_url: str) -> dict:
    """One completed ``exp_alerts`` entry for ``rule`` (see the module docstring)."""
    labels = dict(rule.all_labels(spec.labels, group.labels))
    labels.update(exp.get("exp_labels") or {})
    labels = dict(sorted(labels.items()))
    annotations = dict(rule.annotations)
    if "runbook_url" not in annotations:
        annotations["runbook_url"] = runbook_url(site_url, spec.app, rule.name)
    given = exp.get("exp_annotations") or {}
    ext_labels = test.get("external_labels") or {}
    ext_url = test.get("external_url", DEFAULT_EXTERNAL_URL)
    tmpl_labels = dict(labels)
    tmpl_labels.pop("alertname", None)
    done = {}
    for k, v in annotations.items():
        if k in given:
            done[k] = given[k]
        else:
            try:
                done[k] = expand(v, tmpl_labels, ext_labels, ext_url)
            except NotExpandable as e:
                raise NotExpandable(
                    f"annotation `{k}` uses `{{{{{e}}}}}`, which rulegen cannot expand; write "
                    f"`exp_annotations: {{{k}: ...}}` in the test") from None
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
    """promtool's ``evaluation_interval``: the smallest group interval, else 1m (Prometheus'
    default ``evaluation_interval``)."""
    from ..spec.durations import format_ms, parse_ms
    ivs = [parse_ms(g.interval) for g in spec.groups if g.interval]
    return format_ms(min(ivs)) if ivs else "1m"


def render_test_file(spec: Spec, site_url: str, header_lines: list[str]) -> str | None:
    """The promtool test file text for ``spec``, or None when it declares no test."""
    tests = test_groups(spec, site_url)
    if not tests:
        return None
    doc = {"rule_files": [RULES_FILE], "evaluation_interval": evaluation_interval(spec), "tests": tests}
    body = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100000, default_flow_style=False)
    return "\n".join(header_lines) + "\n" + body
