"""Prometheus templates in labels and annotations (Go text/template, parsed by
:mod:`.gotemplate` the way Prometheus parses them when it loads the rules).

Checked: an alert's ``labels``, ``severity``, ``component``, ``summary``, ``description``
and ``annotations``, and the app's and group's ``labels`` (they become labels of every
alert). Recording rules' labels are not templated by Prometheus and are not checked.
Positions point at the character inside the value: exactly for plain scalars (one line or
folded), quoted scalars on one line and block scalars (``|``, ``>``); else at the value's start.

Codes:

* ``RG305`` the template does not parse: unclosed action or comment, ``if``/``range``/``with``
  without ``end`` (or an ``end`` too many), unterminated string, bad escape, misplaced
  ``else``/``break``. Bad: ``summary: "{{ if $value }}high"``; good:
  ``summary: "{{ if gt $value 90.0 }}high{{ end }}"``.
* ``RG306`` undefined variable. Prometheus defines ``$labels``, ``$value``,
  ``$externalLabels``, ``$externalURL`` and ``$``; others must be declared with ``:=`` earlier
  in the same template (and are gone after the ``end`` of their block). Bad:
  ``{{ $label.instance }}``; good: ``{{ $labels.instance }}``.
* ``RG307`` (warning) ``$value`` or ``.Value`` in a label value: labels identify an alert, so
  every new value makes a new alert (and resolves the previous one). Put the value in an
  annotation. Bad: ``labels: {current: "{{ $value }}"}``; good:
  ``description: "now {{ $value | humanize }}"``.
* ``RG308`` unknown function. Prometheus' alert template functions (``humanize``,
  ``humanize1024``, ``humanizeDuration``, ``humanizePercentage``, ``humanizeTimestamp``,
  ``query``, ``first``, ``label``, ``value``, ``strvalue``, ``sortByLabel``, ``title``,
  ``toUpper``, ``toLower``, ``match``, ``reReplaceAll``, ``graphLink``, ``tableLink``,
  ``args``, ``safeHtml``, ``stripPort``, ``stripDomain``, ``pathPrefix``, ``externalURL``,
  ``parseDuration``, ``toTime``, ``toDuration``, ``now``) and Go's builtins (``and``, ``or``,
  ``not``, ``len``, ``index``, ``slice``, ``print``, ``printf``, ``println``, ``html``,
  ``js``, ``urlquery``, ``call``, ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``) exist.
  Bad: ``{{ $value | humanise }}``; good: ``{{ $value | humanize }}``.
"""

from __future__ import annotations

import difflib
import re

from ...findings import Finding, Severity
from . import gotemplate
from .positions import offset_position, value_at

ID = "templates"


def check_spec(spec, ctx):
    """Yield RG305-RG308 findings for every templated value of ``spec``."""
    lf = spec.source
    for path, kind, rule in _templated(spec):
        value = value_at(lf.data, path)
        if not isinstance(value, str) or "{{" not in value:
            continue
        t = gotemplate.parse(value)
        for issue in t.issues:
            line, col = position(lf, path, issue.offset)
            if issue.kind == "syntax":
                yield Finding(lf.path, line, col, "RG305", Severity.ERROR,
                              f"{kind} template does not parse: {issue.message}", rule)
            elif issue.kind == "variable":
                yield Finding(lf.path, line, col, "RG306", Severity.ERROR,
                              f"{kind} template uses undefined variable {issue.name}; "
                              f"{_var_hint(issue.name)}", rule)
            elif "$" + issue.name in gotemplate.ALERT_VARS:
                # `{{ labels.pod }}`: a variable written without its `$`, which Go reads as a call
                chain = re.match(r"[\w.]*", value[issue.offset:]).group(0)
                tip = (f"did you mean the variable ${issue.name}? write {{{{ ${chain} }}}} "
                       "(Prometheus' variables start with $)")
                yield Finding(lf.path, line, col, "RG308", Severity.ERROR,
                              f"{kind} template calls unknown function {issue.name}; {tip}", rule)
            else:
                near = difflib.get_close_matches(issue.name, sorted(gotemplate.FUNCS), n=1, cutoff=0.6)
                tip = f"did you mean {near[0]}?" if near else \
                    "use one of the functions Prometheus defines (`rulegen checks RG308` lists them)"
                yield Finding(lf.path, line, col, "RG308", Severity.ERROR,
                              f"{kind} template calls unknown function {issue.name}; {tip}", rule)
        if kind == "label" and not any(i.kind == "syntax" for i in t.issues):
            for off in t.value_uses[:1]:
                line, col = position(lf, path, off)
                yield Finding(lf.path, line, col, "RG307", Severity.WARNING,
                              "label value uses the alert value ($value/.Value): each new value "
                              "makes a new alert and resolves the old one; move it to an annotation",
                              rule)


def _var_hint(name: str) -> str:
    known = ["$", *gotemplate.ALERT_VARS]
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    lead = f"did you mean {near[0]}? " if near else ""
    return (f"{lead}Prometheus defines {', '.join(gotemplate.ALERT_VARS)} and $; declare others "
            "with := before use")


def _templated(spec):
    """(path, "label" | "annotation", rule name) of every value Prometheus templates."""
    d = spec.source.data
    for k in (d.get("labels") or {}):
        yield ("labels", k), "label", ""
    for g in spec.groups:
        has_alerts = any(r.is_alert for r in g.rules)
        if has_alerts:
            for k in g.labels:
                yield g.path + ("labels", k), "label", g.name
        for r in g.rules:
            if not r.is_alert:
                continue
            raw = value_at(d, r.path) or {}
            for k in (raw.get("labels") or {}):
                yield r.path + ("labels", k), "label", r.name
            for k in ("severity", "component"):
                if k in raw:
                    yield r.path + (k,), "label", r.name
            for k in ("summary", "description"):
                if k in raw:
                    yield r.path + (k,), "annotation", r.name
            for k in (raw.get("annotations") or {}):
                yield r.path + ("annotations", k), "annotation", r.name


def position(lf, path, offset: int) -> tuple[int, int]:
    """File (line, col) of character ``offset`` of the string value at ``path``; see
    :func:`.positions.offset_position`."""
    return offset_position(lf, path, offset)

