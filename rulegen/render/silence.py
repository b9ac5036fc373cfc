"""The silence of every alert on its runbook page: a copy-ready ``amtool silence add`` line and,
with ``runbooks.alertmanager_url`` set, a link to Alertmanager's silence form pre-filled with
the same matchers.

The matchers are ``alertname`` plus the labels the alert's series carry (label flow,
:mod:`rulegen.promql.labelflow`): when the expr bounds its labels (``max by (namespace, name)``)
those, else the labels its selectors pin (``job="api"``), the labels an operation sets and the
labels its summary or description read (``{{ $labels.pod }}``) that it can carry. The rule's
own static labels (``severity``, ``component``, ``long``...) are left out: they are the same on
every series of the alert, which ``alertname`` already selects. An ``absent()`` alert
silences by ``alertname`` alone (its one series stands for "nothing there"). A spec's
hand-written ``silence.matchers`` replace the generated ones (RG509 checks that the alert can
carry them); ``silence.when`` and ``silence.duration`` (default ``1h``) are kept.

A matcher's value is the one the expr fixes by an equality matcher (``namespace="ai"``), else a
shell variable the command's preamble sets (:func:`rulegen.spec.triage.preamble`), which the
page's script fills from the URL's query string like every other command; the form link
carries ``data-rg-silence="<label> ..."`` and the script fills the same labels into its
``filter`` (``rulegen.js``). A label whose upper-case name is not a plain shell variable
(:func:`rulegen.spec.triage.unplain_reason`) gets a quoted ``‹label›`` placeholder instead,
which the reader replaces.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from ..promql.labelflow import flow
from ..spec import triage
from ..spec.durations import canonical

_ABSENT = re.compile(r"(?<![A-Za-z0-9_:])absent(?:_over_time)?\s*\(")
_TEMPLATE_LABEL = re.compile(r'\$labels\.([A-Za-z_][A-Za-z0-9_]*)|index\s+\$labels\s+"([A-Za-z_][A-Za-z0-9_]*)"')
_PLAIN_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_RECORDS: tuple = ((), {}, [])


def recording_rules(specs) -> dict:
    """Recording rules of ``specs`` for the label flow: name -> [(expr, labels)].

    Every page of a build asks for those of the same specs: the last answer is reused when
    called again with the very same spec objects in the same order (as
    :func:`rulegen.render.runbook.alert_index` does). Callers must not change the dict."""
    global _RECORDS
    specs = list(specs)
    key = tuple(map(id, specs))
    if _RECORDS[0] == key and all(a is b for a, b in zip(_RECORDS[2], specs)):
        return _RECORDS[1]
    out: dict = {}
    for spec in specs:
        for g, r in spec.rules():
            if not r.is_alert:
                out.setdefault(r.name, []).append((r.expr, r.all_labels(spec.labels, g.labels)))
    _RECORDS = (key, out, specs)
    return out


def matcher_labels(spec, group, rule, records: dict) -> list[str]:
    """The labels (besides ``alertname``) a silence of ``rule`` matches on, sorted; see the
    module docstring."""
    if _ABSENT.search(rule.expr):
        return []
    static = rule.all_labels(spec.labels, group.labels)
    f = flow(rule.expr, records)
    if not f.known or f.scalar:
        return []
    if f.may is not None:
        labels = set(f.may)
    else:
        labels = {k for k, ms in f.pinned.items() if any(op == "=" and v for op, v in ms)} | set(f.added)
        for text in (rule.annotations.get("summary", ""), rule.annotations.get("description", "")):
            for m in _TEMPLATE_LABEL.finditer(text or ""):
                name = m.group(1) or m.group(2)
                if f.carries(name) is not False:
                    labels.add(name)
    return sorted(x for x in labels if x not in static and x != "alertname" and _PLAIN_LABEL.fullmatch(x))


def _value_word(label: str, expr: str) -> tuple[str, str | None]:
    """(shell word for the matcher's value, variable the preamble must set or None)."""
    fixed = triage.fixed_value(expr, label)
    if fixed is not None:
        return triage.shell_quote(fixed), None
    var = label.upper()
    if triage.unplain_reason(var) is not None:
        return triage.shell_quote(f"‹{label}›"), None
    return f'"${var}"', var


def command(spec, group, rule, silence: dict | None, records: dict, alertmanager_url: str | None) -> str:
    """The ``amtool silence add`` text (shell, preamble line first when it uses label
    variables) for alert ``rule``; ``silence`` is the spec's ``runbook.silence`` or None."""
    name = rule.name
    words = ["amtool", "silence", "add"]
    if alertmanager_url:
        words.append(f"--alertmanager.url={triage.shell_quote(alertmanager_url)}")
    words.append(f"alertname={name if _PLAIN_LABEL.fullmatch(name) else triage.shell_quote(name)}")
    pairs: list[tuple[str, str]] = []
    given = (silence or {}).get("matchers")
    if given:
        for label, value in given.items():
            var = value.strip("${}")
            if re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", value) and triage.unplain_reason(var) is not None:
                words.append(f"{label}={triage.shell_quote(f'‹{label}›')}")  # RG514: never set such a name
            elif re.fullmatch(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", value):
                words.append(f'{label}="{value}"')
                pairs.append((var, triage.label_of(var, rule.runbook.get("variables")) or label))
            else:
                words.append(f"{label}={triage.shell_quote(value)}")
    else:
        for label in matcher_labels(spec, group, rule, records):
            word, var = _value_word(label, rule.expr)
            words.append(f"{label}={word}")
            if var:
                pairs.append((var, label))
    words.append(f"--duration={canonical((silence or {}).get('duration') or '1h')}")
    words.append("--comment=" + triage.shell_quote(f"{name}: see the runbook"))
    line = continued(words)
    return f"{triage.preamble(pairs, rule.expr)}\n{line}" if pairs else line


def continued(words: list[str], width: int = 120) -> str:
    """Shell words as one command line, continued (`` \\`` and a newline, the next lines
    indented) wherever it would grow over ``width`` characters; a word is never split."""
    lines = [words[0]]
    for w in words[1:]:
        if len(lines[-1]) + 1 + len(w) + 2 > width:
            lines[-1] += " \\"
            lines.append("  " + w)
        else:
            lines[-1] += " " + w
    return "\n".join(lines)


def form_link(spec, group, rule, silence: dict | None, records: dict, alertmanager_url: str) -> str:
    """Markdown link to Alertmanager's new-silence form (``<url>/#/silences/new?filter=...``)
    with the same matchers as :func:`command`; values not fixed by the expr are ``‹label›``
    placeholders, which the page's script fills from the URL's query string
    (``data-rg-silence`` lists those labels)."""
    matchers = [("alertname", rule.name)]
    fill = []
    given = (silence or {}).get("matchers")
    if given:
        for label, value in given.items():
            if value.startswith("$"):
                label_of = triage.label_of(value.strip("${}"), rule.runbook.get("variables")) or label
                matchers.append((label, f"‹{label_of}›"))
                fill.append(label_of if label_of == label else label)
            else:
                matchers.append((label, value))
    else:
        for label in matcher_labels(spec, group, rule, records):
            fixed = triage.fixed_value(rule.expr, label)
            matchers.append((label, fixed if fixed is not None else f"‹{label}›"))
            if fixed is None:
                fill.append(label)
    text = "{" + ",".join(f'{k}="{_escape(v)}"' for k, v in matchers) + "}"
    url = f"{alertmanager_url}/#/silences/new?filter={quote(text, safe='')}"
    attrs = f'{{ .rg-silence-link data-rg-silence="{" ".join(fill)}" }}' if fill else "{ .rg-silence-link }"
    return f"[Open a silence in Alertmanager]({url}){attrs}"


def _escape(value: str) -> str:
    """A matcher value inside double quotes (Alertmanager's matcher syntax: ``\\`` and ``"``
    escaped)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")
