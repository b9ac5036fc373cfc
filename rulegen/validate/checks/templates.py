"""Prometheus templates in labels and annotations (Go text/template, parsed by
:mod:`.gotemplate` the way Prometheus parses them when it loads the rules).

Checked: an alert's ``labels``, ``severity``, ``component``, ``summary``, ``description``
and ``annotations``, and the app's and group's ``labels`` (they become labels of every
alert). Recording rules' labels are not templated by Prometheus and are not checked.
Positions point inside the value when it is written on one line (plain or quoted), else at
the value's start.

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

from ...findings import Finding, Severity
from . import gotemplate

ID = "templates"


def check_spec(spec, ctx):
    """Yield RG305-RG308 findings for every templated value of ``spec``."""
    lf = spec.source
    for path, kind, rule in _templated(spec):
        value = _get(lf.data, path)
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
            else:
                near = difflib.get_close_matches(issue.name, sorted(gotemplate.FUNCS), n=1, cutoff=0.6)
                tip = f"did you mean {near[0]}?" if near else \
                    "see `rulegen checks` (templates) for the functions Prometheus defines"
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
            raw = _get(d, r.path) or {}
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
    """File (line, col) of character ``offset`` of the string value at ``path``.

    Exact when the value is written on one line: plain, ``"double"`` (escapes decoded) or
    ``'single'`` (``''`` decoded) quoted. Otherwise (block scalars, folded multi-line
    values) the value's own (line, col)."""
    line, col = lf.pos(path)
    value = _get(lf.data, path)
    lines = lf.text.splitlines()
    if not isinstance(value, str) or not 0 < line <= len(lines):
        return line, col
    src = lines[line - 1][col - 1:]
    if not src:
        return line, col
    q = src[0]
    if q not in "\"'":
        if src.startswith(value) and "\n" not in value:
            return line, col + offset
        return line, col
    cols = _decode_columns(src, q)
    if cols is None or len(cols) != len(value) + 1:
        return line, col
    return line, col + cols[min(offset, len(value))]


def _decode_columns(src: str, q: str) -> list[int] | None:
    """For a quoted scalar starting at ``src[0]``: the source index of each decoded character
    (plus one past the end), or None when the closing quote is not on this line."""
    out = []
    i = 1
    n = len(src)
    while i < n:
        c = src[i]
        if c == q:
            if q == "'" and src.startswith("''", i):
                out.append(i)
                i += 2
                continue
            out.append(i)
            return out
        if q == '"' and c == "\\":
            if i + 1 >= n:
                return None
            e = src[i + 1]
            width = {"x": 4, "u": 6, "U": 10}.get(e, 2)
            out.append(i)
            i += width
            continue
        out.append(i)
        i += 1
    return None


def _get(data, path):
    cur = data
    for p in path:
        try:
            cur = cur[p]
        except (KeyError, IndexError, TypeError):
            return None
    return cur
