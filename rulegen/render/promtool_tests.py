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
* ``exp_annotations`` holds the annotations the test states, and only those: what an alert's
  annotations are is left to Prometheus' own template engine. ``rulegen test`` runs promtool
  on rule files where each alert keeps only the annotations its tests state (see
  :func:`annotation_filters`), so promtool compares exactly those, rendered by Prometheus
  (``$value``, ``humanize``, ``printf``, string literals, ``query`` alike), and a test that
  states none accepts any annotations. A test with ``exact_annotations: true`` compares every
  annotation, as promtool does: its expected annotations are the ones it states plus the
  generated ``runbook_url`` (unless stated).

Label templates are expanded as Prometheus does for alerts: ``$labels`` are the labels of the
series the expression returned (the test's ``exp_labels`` without ``alertname`` and without
the rule's own label names), not the alert's final labels, so ``{{ $labels.severity }}`` is
``""`` unless the series has ``severity``. Only the simple forms ``{{ $labels.x }}``,
``{{ .Labels.x }}``, ``{{ index $labels "x" }}``, ``{{ $externalLabels.x }}`` and
``{{ $externalURL }}`` are expanded; a label using anything else (``$value``, functions) must
be written out in the test's ``exp_labels`` (labels identify an alert, so they are always
compared whole): :func:`expand` raises :class:`NotExpandable`, the validator warns with RG601
naming it, and the expected label is left out, so promtool's failure shows the value
Prometheus gives.
"""

from __future__ import annotations

import re

import yaml

from ..promql.gotmpl import split
from ..spec import Spec
from ..spec.durations import canonical
from .slug import anchor, page_url

RULES_FILE = "rules.yaml"  # name of the extracted rule groups next to the test file
DEFAULT_EXTERNAL_URL = "http://localhost:9090"  # promtool's default external_url... see below

#: What a committed test file of a spec with SLOs says about the SLO tests it does not hold.
SLO_TESTS_NOTE = ("# The SLOs' tests are not in this file: `rulegen test` generates them from the spec each run",
                  "# (they are derived, like the SLO rules) and writes them to .rulegen/test/<app>/ with these.")
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
    out: list[str] = []
    trim_next = False
    last_text = False  # out[-1] is template text (which a `{{-` trims), not an action's output
    for kind, piece in split(template):
        if kind == "text":
            if "{{" in piece:  # an action that is never closed
                raise NotExpandable(piece[piece.index("{{") + 2:].strip())
            out.append(piece.lstrip(" \t\r\n") if trim_next else piece)
            trim_next, last_text = False, True
            continue
        if piece.trim_left and last_text:
            out[-1] = out[-1].rstrip(" \t\r\n")
        trim_next, last_text = piece.trim_right, False
        body = piece.body
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

    As Prometheus does (``rules/alerting.go``), the rule's labels are expanded with the
    labels of the *series* the expression returned, not with the alert's final labels: those
    series labels are the test's ``exp_labels`` minus ``alertname`` and minus the rule's own
    label names (a rule label replaces a series label of the same name). A label that expands
    to ``""`` is dropped, as Prometheus drops empty labels. A label the test gives itself is
    taken as given, never expanded; one rulegen cannot expand is left out (so promtool's
    failure shows the value Prometheus gives) and, with ``errors`` (a list), appended to it as
    ``("label", key, template, NotExpandable)``.

    ``exp_annotations`` is what the test states; with the test's ``exact_annotations: true``
    the generated ``runbook_url`` is added when the chart generates one, the rule has none and
    the test does not state it.
    """
    given_labels = dict(exp.get("exp_labels") or {})
    rule_labels = dict(rule.all_labels(spec.labels, group.labels))
    ext_labels = test.get("external_labels") or {}
    ext_url = test.get("external_url", DEFAULT_EXTERNAL_URL)
    series = {k: v for k, v in given_labels.items() if k != "alertname" and k not in rule_labels}
    labels = dict(series)
    for k, v in rule_labels.items():
        if k in given_labels:
            continue
        try:
            value = _expand_or_explain("label", k, v, series, ext_labels, ext_url)
        except NotExpandable as e:
            if errors is not None:
                errors.append(("label", k, v, e))
            continue
        if value != "":
            labels[k] = value
    labels.update(given_labels)
    labels = dict(sorted(labels.items()))
    done = dict(exp.get("exp_annotations") or {})
    if test.get("exact_annotations") and "runbook_url" not in rule.annotations and spec.chart.runbook_url:
        done.setdefault("runbook_url", runbook_url(site_url, spec.app, rule.name))
    return {"exp_labels": labels, "exp_annotations": dict(sorted(done.items()))}


def _target(spec: Spec, rule, name: str):
    """(group, rule) an ``alert_rule_test`` of a test under ``rule`` asserts on: the rule
    itself when the names agree, else the first alert of that name."""
    target = rule if rule.name == name else next(
        (r for g, r in spec.rules() if r.name == name and r.is_alert), rule)
    return next((g for g, r in spec.rules() if r is target), None), target


Keep = dict  # alertname -> tuple of (expected labels as sorted pairs, sorted stated keys or None)


def annotation_filters(spec: Spec, site_url: str = "") -> dict[str, Keep]:
    """Which annotations each alert keeps in the rule file a test group runs against.

    Returns ``{test group name: {alertname: ((labels, keys), ...)}}`` for every test group
    with an ``alert_rule_test``: one pair per expected alert of that alert, its completed
    ``exp_labels`` (sorted ``(name, value)`` pairs) and the annotation keys it states (sorted), or
    None when the test sets ``exact_annotations: true``. :func:`filter_annotations` applies
    it. Annotations never change whether or with which labels an alert fires, so dropping
    them changes nothing else promtool checks.
    """
    out: dict = {}
    for group, rule in spec.rules():
        for t in rule.tests:
            d = t.data
            keep: dict = {}
            for a in d.get("alert_rule_test") or []:
                name = a.get("alertname", rule.name)
                tgroup, target = _target(spec, rule, name)
                entries = keep.setdefault(name, [])
                for e in a.get("exp_alerts") or []:
                    labels = expected_alert(spec, tgroup or group, target, e, d, site_url)["exp_labels"]
                    keys = None if d.get("exact_annotations") else \
                        tuple(sorted((e.get("exp_annotations") or {}).keys()))
                    entries.append((tuple(sorted(labels.items())), keys))
            keep = {k: tuple(sorted(set(v), key=repr)) for k, v in keep.items()
                    if any(keys is None or keys for _, keys in v)}
            if keep:
                out[f"{rule.name}: {t.name}"] = keep
    return out


def _kept(rule: dict, entries) -> frozenset | None:
    """Annotation keys a rendered alerting ``rule`` keeps for the expected alerts ``entries``
    of its name: those stated by the entries whose labels hold the rule's own (non-template)
    labels, so two rules of one name are told apart by, say, ``severity``; when none does,
    those stated by all entries. None: keep all."""
    own = {k: v for k, v in (rule.get("labels") or {}).items() if "{{" not in str(v)}
    mine = [keys for labels, keys in entries
            if all(dict(labels).get(k) == v for k, v in own.items())] or [keys for _, keys in entries]
    if any(keys is None for keys in mine):
        return None
    return frozenset(k for keys in mine for k in keys)


def filter_annotations(groups: list[dict], keep: Keep) -> list[dict]:
    """A copy of rendered rule ``groups`` (a rule file's ``groups:``) where each alert keeps
    the annotations the expected alerts in ``keep`` state (see :func:`annotation_filters`);
    an alert not in ``keep`` keeps none."""
    out = []
    for g in groups:
        rules = []
        for r in g.get("rules") or []:
            r = dict(r)
            if "alert" in r:
                ann = r.pop("annotations", None) or {}
                kept = _kept(r, keep[r["alert"]]) if r["alert"] in keep else frozenset()
                ann = {k: v for k, v in ann.items() if kept is None or k in kept}
                if ann:
                    r["annotations"] = ann
            rules.append(r)
        out.append({**g, "rules": rules})
    return out


def test_groups(spec: Spec, site_url: str) -> list[dict]:
    """promtool ``tests[]`` entries for every test of ``spec``, in spec order."""
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
            if "start_timestamp" in d:
                entry["start_timestamp"] = d["start_timestamp"]
            entry["input_series"] = [dict(s) for s in d.get("input_series") or []]
            if rule.is_alert or d.get("alert_rule_test"):
                art = []
                for a in d.get("alert_rule_test") or []:
                    name = a.get("alertname", rule.name)
                    # the rule the test sits under, else the first alert of that name
                    tgroup, target = _target(spec, rule, name)
                    tgroup = tgroup or group
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
    """The promtool test file text for ``spec``, or None when it has no test. The tests are
    the ones ``spec``'s rules carry: as loaded, those the spec declares (the committed file);
    the generated SLO tests only when ``rulegen test`` adds them
    (:func:`rulegen.spec.slo.with_tests`), and then no header is wanted. A committed file of
    a spec with SLOs says where their tests are."""
    tests = test_groups(spec, site_url)
    if not tests:
        return None
    if header_lines and spec.slos and not any(r.tests for g in spec.groups if g.path[:1] == ("slos",)
                                              for r in g.rules):
        header_lines = [*header_lines, *SLO_TESTS_NOTE]
    doc = {"rule_files": [RULES_FILE], "evaluation_interval": evaluation_interval(spec)}
    # the spec's own promtool settings (rulegen import carries them over from a test file)
    for k in ("group_eval_order", "fuzzy_compare"):
        if k in spec.promtool:
            doc[k] = spec.promtool[k]
    doc["tests"] = tests
    # libyaml's emitter writes what PyYAML's writes for plain printable ASCII text (and is
    # about ten times faster); other text (empty keys, CR, non-ASCII) keeps PyYAML's
    dumper = yaml.CSafeDumper if hasattr(yaml, "CSafeDumper") and _plain_ascii(doc) else yaml.SafeDumper
    body = yaml.dump(doc, Dumper=dumper, sort_keys=False, allow_unicode=True, width=100000, default_flow_style=False)
    return "\n".join(header_lines) + "\n" + body


_PLAIN_ASCII = re.compile(r"[\x20-\x7e\n]+")


def _plain_ascii(node) -> bool:
    """Every string in ``node`` (keys included) is non-empty printable ASCII or line breaks."""
    if isinstance(node, str):
        return _PLAIN_ASCII.fullmatch(node) is not None
    if isinstance(node, dict):
        return all(_plain_ascii(k) and _plain_ascii(v) for k, v in node.items())
    if isinstance(node, (list, tuple)):
        return all(_plain_ascii(x) for x in node)
    return True
