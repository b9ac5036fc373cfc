"""Label flow and dependencies: what an alert's series carry, and which recording rules exist.

The labels come from :mod:`rulegen.promql.labelflow` (worked out from the PromQL, through
aggregations, ``absent()``, vector matching, ``label_replace`` and the project's recording
rules). Precision first: when the labels cannot be known (a plain selector keeps whatever its
series have), these checks say nothing.

Codes:

* ``RG311`` (warning) a template (an alert's annotation or label, or an app or group label
  it gets) reads ``$labels.X`` (or ``.Labels.X``, ``index $labels "X"``) but the alert's
  series can never carry ``X``: the text renders empty at 3 a.m. The message names the
  operation that drops it. A warning, as the alert still fires and routes (raise it to an
  error in ``.rulegen.yaml``). Bad:
  ``expr: sum by (job) (rate(http_requests_total[5m])) > 1`` with
  ``summary: "{{ $labels.instance }} fails"``; good: ``sum by (job, instance) (...)``, or
  ``{{ $labels.job }}``. ``absent(x{cluster="prod", instance=~"db.*"})`` keeps only
  ``cluster`` (equality matchers); ``label_replace(x, "instance", "", "", "")`` deletes
  ``instance`` (Prometheus deletes a label set to an empty value, so does ``$1`` of a group
  that matched nothing); ``a * on (pod) group_left (team) sum by (pod) (b)`` never has
  ``team`` (it is copied from the right side, which never has it); ``x > 1 and sum by (job)
  (y) > 0`` never has ``instance`` (matching without ``on`` pairs only series of the same
  labels: write ``and on (job)``).
* ``RG312`` (warning) a template reads, through ``$labels``, a label the rule itself sets
  (app, group or alert ``labels``, ``severity``, ``component``) or ``alertname``: Prometheus
  expands templates with the labels of the series, before it adds the rule's labels, so it
  renders empty (unless the series happen to carry the label too, which rulegen cannot rule
  out for a plain selector; a selector pinning the label, ``by (owner)`` or
  ``label_replace`` count as carrying it). Bad: ``labels: {owner: db-team}`` with
  ``summary: "ask {{ $labels.owner }}"``; good: ``summary: "ask db-team"``.
* ``RG313`` a test's ``exp_labels`` holds a label that the alert can never produce (neither
  the rule sets it nor its series can carry it): the test can never pass. Bad: ``exp_labels:
  {instance: a}`` for ``count(up == 0) > 0``; good: ``exp_labels: {}`` (``count`` keeps no
  label).
* ``RG314`` an ``expr`` reads a recording-rule-shaped name (it contains ``:``) that no rule
  of the project records, with "did you mean" when one is close: the selector is always
  empty, so the alert never fires. An error when a project rule has a close name (a typo);
  a warning otherwise (the rule may be recorded outside the project), also when the names
  differ only in numbers or durations (``rate1h`` for ``rate5m``: another window, likely
  recorded elsewhere). Validating some files (``rulegen validate rules/x.yaml``) still reads
  the recording rules of the project's other specs under ``rules/``, and reports only on the
  files asked for. A recording rule is never pointed at its own output (reading what it
  records is no fix). Bad: ``instance:redis_memory_use:ratio`` when the project records
  ``instance:redis_memory_used:ratio``; good: the recorded name, ``instance:redis_memory_used:ratio``.
* ``RG315`` a ``#`` comment in an ``expr`` that YAML made one line (a folded ``>`` block or a
  plain scalar over several lines): PromQL comments run to the end of the line, so the
  comment swallows everything after it and Prometheus evaluates only what comes before.
  Write the expression as a ``|`` block, where each comment ends at its line. Bad: ``expr: >``
  over ``up == 0  # down`` and ``and on(job) x``; good: ``expr: |`` over the same lines.
"""

from __future__ import annotations

import difflib
import functools
import re

from ...findings import Finding, Severity
from ...promql import labelflow
from . import gotemplate
from .positions import offset_position, value_at
from ...promql.syntax import parse

ID = "flow"


def recording_rules(specs) -> dict[str, list[tuple[str, dict]]]:
    """Recording rules of ``specs``: name -> [(expr, labels the rule adds)], in spec order
    (labels: app, group and rule labels, as :meth:`rulegen.spec.Rule.all_labels` gives)."""
    out: dict[str, list] = {}
    for spec in specs:
        for g, r in spec.rules():
            if not r.is_alert:
                out.setdefault(r.name, []).append((r.expr, r.all_labels(spec.labels, g.labels)))
    return out


# ---------------------------------------------------------------------------------------------
# RG315: comments that swallow the rest of a one-line expr

_STRINGS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'|`[^`]*`')


def comment_offset(expr: str) -> int | None:
    """Offset of the first ``#`` outside string literals in ``expr``, or None."""
    masked = _STRINGS.sub(lambda m: " " * len(m.group()), expr)
    i = masked.find("#")
    return i if i >= 0 else None


def _comments(spec):
    """RG315 for ``spec``."""
    lf = spec.source
    for _, rule in spec.rules():
        expr = rule.expr
        if "#" not in expr:
            continue
        at = comment_offset(expr)
        if at is None:
            continue
        end = expr.find("\n", at)
        rest = expr[at:] if end < 0 else expr[at:end]
        path = rule.path + ("expr",)
        hline, hcol = offset_position(lf, path, at)
        eline, _ = offset_position(lf, path, at + len(rest))
        if eline <= hline or (hline, hcol) == lf.pos(path):
            continue  # the comment ends on its own source line: it swallows nothing of the expr
        shown = rest[1:].strip()
        shown = shown if len(shown) <= 40 else shown[:37] + "..."
        yield Finding(lf.path, hline, hcol, "RG315", Severity.ERROR,
                      "`#` starts a PromQL comment that runs to the end of the line, and YAML made "
                      "this expr one line, so everything after it is ignored (" + repr(shown) +
                      "); write the expr as a `|` block so each comment ends at its line", rule.name)


# ---------------------------------------------------------------------------------------------
# RG311-RG314 across the project


def _templated(spec, group, rule):
    """(path, "label" | "annotation") of the templated values of an alert: its own, and the
    group's and app's labels it does not override (Prometheus expands those for it too)."""
    raw = value_at(spec.source.data, rule.path) or {}
    own = set(raw.get("labels") or {}) | {k for k in ("severity", "component") if k in raw}
    for k in spec.labels:
        if k not in own and k not in group.labels:
            yield ("labels", k), "label"
    for k in group.labels:
        if k not in own:
            yield group.path + ("labels", k), "label"
    for k in (raw.get("labels") or {}):
        yield rule.path + ("labels", k), "label"
    for k in ("severity", "component"):
        if k in raw:
            yield rule.path + (k,), "label"
    for k in ("summary", "description"):
        if k in raw:
            yield rule.path + (k,), "annotation"
    for k in (raw.get("annotations") or {}):
        yield rule.path + ("annotations", k), "annotation"


def _name_offset(expr: str, name: str) -> int:
    m = re.search(rf"(?<![\w:]){re.escape(name)}(?![\w:])", expr)
    return m.start() if m else 0


_COMMENT = re.compile(r"#[^\n]*")
_COLON_NAME = re.compile(r"(?<![\w:.])[a-zA-Z_:][\w:]*:[\w:]*")


@functools.lru_cache(maxsize=8192)
def colon_names(expr: str) -> frozenset:
    """Recording-rule-shaped names (holding a ``:``) that ``expr`` reads, found in its text
    without parsing it (strings and comments skipped; a subquery's ``[5m:1m]`` is not a name)."""
    if ":" not in expr:
        return frozenset()  # most expressions: no name of that shape can be in them
    text = _COMMENT.sub("", _STRINGS.sub('""', expr))
    text = re.sub(r"\[[^\]]*\]", "[]", text)  # ranges, subqueries
    return frozenset(m.group() for m in _COLON_NAME.finditer(text))


def _external(spec, rule, local) -> bool:
    """True when ``rule`` reads a recording-rule-shaped name that its own spec does not record
    (it may be another spec's: the project-wide pass checks such a rule)."""
    return bool(colon_names(rule.expr) - local.keys())


def check_spec(spec, ctx):
    """Yield RG315, and RG311-RG313 for alerts that read only their own spec's recording
    rules (the others are checked by :func:`check_project` against every spec's rules)."""
    yield from _comments(spec)
    local = recording_rules([spec])
    flows = None
    for g, rule in spec.rules():
        if not rule.is_alert or _external(spec, rule, local):
            continue
        ast, err = parse(rule.expr)
        if err is None:
            flows = flows or labelflow.Analyzer(local)
            yield from _label_checks(spec, g, rule, flows.flow(ast))


def check_project(specs, ctx):
    """Yield RG314 for every rule and RG311-RG313 for alerts reading recording rules of other
    specs, against the recording rules of all specs. Reads names from the expression text
    (:func:`colon_names`), so the common case parses nothing here. When only some files are
    validated, the recording rules of the project's other specs (``ctx.reference``) count too.
    The rest of each spec whose schema errors all lie in alerts (``ctx.partial``:
    :mod:`rulegen.validate.partial`, which keeps every recording rule) is checked too and its
    recording rules count: an error in one alert hid RG314 of another (its "did you mean"),
    while RG608 of the same spec named RG314 as the cause."""
    return _across(list(specs) + list(getattr(ctx, "partial", None) or []), specs, ctx)


def _across(checked, specs, ctx):
    """RG314 and RG311-RG313 (see :func:`check_project`) for the rules of ``checked``, against
    the recording rules of ``specs``, ``ctx.reference`` and ``ctx.partial``."""
    rr = recording_rules(list(specs) + list(getattr(ctx, "reference", None) or [])
                         + list(getattr(ctx, "partial", None) or []))
    flows = None
    for spec in checked:
        local = None
        for g, rule in spec.rules():
            names = colon_names(rule.expr)
            if not names:
                continue
            missing = names - rr.keys()
            if missing:
                yield from _dependencies(spec, rule, missing, rr)
            local = local if local is not None else recording_rules([spec])
            if rule.is_alert and _external(spec, rule, local):
                ast, err = parse(rule.expr)
                if err is None:
                    flows = flows or labelflow.Analyzer(rr)
                    yield from _label_checks(spec, g, rule, flows.flow(ast))


def _label_checks(spec, g, rule, fl):
    """RG311-RG313 for alert ``rule`` of group ``g`` whose series flow as ``fl``."""
    if not fl.known:
        return
    lf = spec.source
    all_labels = rule.all_labels(spec.labels, g.labels)
    rule_labels = set(all_labels) | {"alertname"}
    for path, kind in _templated(spec, g, rule):
        value = value_at(lf.data, path)
        if not isinstance(value, str) or "{{" not in value:
            continue
        t = gotemplate.parse(value)
        if any(i.kind == "syntax" for i in t.issues):
            continue
        seen: set[str] = set()
        for label, off in t.label_uses:
            if label in seen:
                continue
            seen.add(label)
            carries = fl.carries(label)
            if carries is True or (carries is None and label not in rule_labels):
                continue
            line, col = offset_position(lf, path, off)
            if label in rule_labels:
                own = rule.name if label == "alertname" else all_labels.get(label)
                value_note = f" ({own!r})" if isinstance(own, str) and "{{" not in own else ""
                what = "which Prometheus sets with the rule's labels" if label == "alertname" \
                    else "a label the rule sets"
                yield Finding(lf.path, line, col, "RG312", Severity.WARNING,
                              f"{kind} template reads $labels.{label}, {what}: Prometheus expands "
                              "templates with the series' labels, before it adds the rule's, so it "
                              f"renders empty; write the value itself{value_note}", rule.name)
            else:
                yield Finding(lf.path, line, col, "RG311", Severity.WARNING,
                              f"{kind} template reads $labels.{label}, which this alert's series never "
                              f"carry ({fl.why_not(label)}), so it renders empty; keep `{label}` in "
                              "the result (a `by` list, an equality matcher) or stop reading it",
                              rule.name)
    yield from _exp_labels(spec, g, rule, fl, rule_labels)


def _exp_labels(spec, group, rule, fl, rule_labels):
    lf = spec.source
    for t in rule.tests:
        for ai, a in enumerate(t.data.get("alert_rule_test") or []):
            if not isinstance(a, dict) or a.get("alertname", rule.name) != rule.name:
                continue
            for ei, e in enumerate(a.get("exp_alerts") or []):
                labels = e.get("exp_labels") if isinstance(e, dict) else None
                for key in (labels or {}):
                    if key in rule_labels or fl.carries(key) is not False:
                        continue
                    yield lf.finding(t.path + ("alert_rule_test", ai, "exp_alerts", ei, "exp_labels", key),
                                     "RG313", f"test {t.name!r} expects label {key!r}, which this alert can "
                                     f"never produce ({fl.why_not(key)}): the test can never pass; remove it "
                                     "from exp_labels or keep the label in the expr", rule.name, key=True)


_DIGITS = re.compile(r"\d+(?:ms|[smhdwy])?")  # numbers and durations


def _dependencies(spec, rule, missing, rr):
    """RG314 for the recording-rule-shaped names ``missing`` that ``rule`` reads."""
    lf = spec.source
    # never the rule's own output: a recording rule reading what it records is no fix
    candidates = sorted(n for n in rr if rule.is_alert or n != rule.name)
    for name in sorted(missing, key=lambda n: _name_offset(rule.expr, n)):
        near = difflib.get_close_matches(name, candidates, n=1, cutoff=0.8)
        path = rule.path + ("expr",)
        line, col = offset_position(lf, path, _name_offset(rule.expr, name))
        if near and _DIGITS.sub("0", near[0]) == _DIGITS.sub("0", name):
            # another window of the same series (rate1m, rate5m): likely recorded elsewhere
            yield Finding(lf.path, line, col, "RG314", Severity.WARNING,
                          f"expr reads {name}, which no recording rule of the project records: unless "
                          f"another rule file records it, the selector is always empty; the project "
                          f"records {near[0]}", rule.name)
        elif near:
            yield Finding(lf.path, line, col, "RG314", Severity.ERROR,
                          f"expr reads {name}, which no recording rule of the project records, so the "
                          f"selector is always empty; did you mean {near[0]}?", rule.name)
        else:
            yield Finding(lf.path, line, col, "RG314", Severity.WARNING,
                          f"expr reads {name}, which no recording rule of the project records: unless "
                          "another rule file records it, the selector is always empty; add the "
                          "recording rule or fix the name", rule.name)
