"""Runbook content is safe on the site: links lead to web pages, nothing runs in the browser.

Runbook text in a spec is Markdown (see :mod:`rulegen.render.safe`): raw HTML is shown as text
(or cleaned to a small allow-list when ``.rulegen.yaml`` sets ``runbooks: {allow_html:
true}``), and the page never links anywhere but ``http``, ``https``, ``mailto`` or a relative
address. These checks say so at the place in the spec, so the author fixes it rather than
finding a dead link on the page. Every string under ``runbook`` (app and alert level) is
looked at, except shell ``commands``, ``promql`` and related-alert names; RG745, RG746 and
RG749 cannot be switched off or downgraded in ``.rulegen.yaml``.

Codes:

* ``RG745`` a link the spec declares (a value under a key ``url``, ``href``, ``link`` or
  ending in ``_url``, or an item of a ``links`` or ``dashboards`` list) is not an absolute
  ``http://`` or ``https://`` URL with a host. Bad: ``url: javascript:alert(1)``,
  ``url: grafana.example.com/d/x``; good: ``url: https://grafana.example.com/d/x``.
* ``RG746`` a Markdown link or image in runbook text uses a scheme other than ``http``,
  ``https`` or ``mailto`` (``javascript:``, ``data:``, ``vbscript:``, ``file:``..., also
  when written with entities or split by white space); the page shows it as text, not a link.
  Bad: ``causes: ["[restart](javascript:fetch('/x'))"]``; good:
  ``causes: ["[restart guide](https://wiki.example.com/restart)"]``.
* ``RG749`` markup in a name the page writes as HTML: the app's ``title`` holding ``<``,
  ``>`` or ``&`` (it names the app in the site's navigation and in each page's ``<title>``,
  which mkdocs fills as it is, entities decoded); an alert name holding ``-->`` (the page's
  team-notes slot is an HTML comment naming the alert, ``<!-- notes:Name -->``, which ``-->``
  would close; ``X(>85%)`` is fine); a dashboard variable that is not a plain name (the page writes it into
  an HTML attribute). Bad: ``title: "Shop <b>API</b>"``, ``alert: "X--><img src=x>"``,
  ``variables: {pod: 'x" onclick="alert(1)'}``; good: ``title: Shop API``, ``alert: XDown``,
  ``variables: {pod: pod}``.
* ``RG748`` (warning) runbook text could not be made safe as Markdown and is shown as plain
  text on the page (the message says what it would have rendered). Bad: text mixing code
  spans and raw HTML so that they overlap; good: put code in a ``commands`` block.
"""

from __future__ import annotations

import re

from ...findings import Finding, Severity
from .positions import offset_position

ID = "markup"

_RISKY = re.compile(r"[<\[{&]")
_VAR = re.compile(r"[A-Za-z0-9_.-]+")
#: What ends an HTML comment (``>`` alone does not: upstream names such as ``X(>85%)`` are fine).
_COMMENT_END = re.compile(r"--!?>")

#: Keys under ``runbook`` whose strings are not Markdown (shown as code, or alert names).
NOT_MARKDOWN = frozenset({"commands", "promql", "alert"})
#: Keys whose string value is a link the spec declares (RG745).
URL_KEYS = frozenset({"url", "href", "link"})
#: Lists whose string items are declared links (RG745).
URL_LISTS = frozenset({"links", "dashboards"})
#: Keys whose Markdown sits inside a line or list item (no fenced blocks).
INLINE_KEYS = frozenset({"causes", "resolution", "note", "value", "name", "columns", "rows"})


def _strings(node, path: tuple):
    """(path, text, inline, declared) of every string under ``node``: ``inline`` when it sits
    in a line or list item, ``declared`` when it is a link the spec declares (RG745)."""
    out = []
    stack = [(node, path, False, False)]
    while stack:
        node, path, inline, declared = stack.pop()
        if type(node) is str:
            out.append((path, node, inline, declared))
        elif isinstance(node, dict):
            for k, v in node.items():
                if k not in NOT_MARKDOWN:
                    stack.append((v, path + (k,), inline or k in INLINE_KEYS,
                                  type(k) is str and (k in URL_KEYS or k.endswith("_url"))))
        elif isinstance(node, list):
            in_list = bool(path) and path[-1] in URL_LISTS
            for i, v in enumerate(node):
                stack.append((v, path + (i,), inline, in_list and type(v) is str))
    out.reverse()  # spec order (findings are sorted later anyway)
    return out


def _runbooks(spec):
    data = spec.source.data
    if isinstance(data.get("runbook"), dict):
        yield ("runbook",), data["runbook"], ""
    for _, r in spec.rules():
        if r.is_alert and r.runbook:
            yield r.path + ("runbook",), r.runbook, r.name


def check_spec(spec, ctx):
    """Yield RG749 for the app's title, and RG745, RG746 and RG748 for the spec's runbook
    content (app and alert level)."""
    lf = spec.source
    allow_html = getattr(ctx.config, "allow_html", False)
    title = lf.data.get("title")
    if isinstance(title, str) and re.search(r"[<>&]", title):
        yield lf.finding(("title",), "RG749", f"title {title!r} holds <, > or &: it names the app in the "
                         "site's navigation and page titles, where mkdocs writes it as HTML; use plain words")
    for r in spec.alerts():
        if _COMMENT_END.search(r.name):
            yield lf.finding(r.path + ("alert",), "RG749", f"alert name {r.name!r} holds -->: the runbook page "
                             "marks the alert's team-notes slot with an HTML comment naming it, which --> would "
                             "end; rename the alert", rule=r.name)
    for base, runbook, rule in _runbooks(spec):
        for i, d in enumerate(runbook.get("dashboards") or []):
            for label, var in ((d.get("variables") or {}) if isinstance(d, dict) else {}).items():
                if isinstance(var, str) and not _VAR.fullmatch(var):
                    yield lf.finding(base + ("dashboards", i, "variables", label), "RG749",
                                     f"dashboard variable {var!r} is not a plain name (letters, digits, `_`, `.`, "
                                     "`-`): the page writes it into an HTML attribute; use the variable's name as "
                                     "Grafana has it", rule=rule)
        for path, text, inline, declared in _strings(runbook, base):
            if not declared and not _RISKY.search(text):
                continue  # no tag, link, entity or attribute list can come of it
            # imported here, not at the top: most specs hold no such text, and validating them
            # then loads neither the HTML parser nor the Markdown rewriting
            from ...render.safe import declared_url_ok, fallback_reasons, unsafe_links
            if declared:
                if not declared_url_ok(text):
                    yield lf.finding(path, "RG745", f"link {text!r} is not an http:// or https:// URL with a "
                                     "host; the site links only to web pages (write the full https:// address)",
                                     rule=rule)
                continue
            bad = list(unsafe_links(text))
            for offset, scheme in bad:
                line, col = offset_position(lf, path, offset)
                yield Finding(lf.path, line, col, "RG746", Severity.ERROR,
                              f"Markdown link uses the {scheme}: scheme; runbook pages link only to http, "
                              "https, mailto and relative addresses, so it would be shown as text, not a "
                              "link: link to a web page instead", rule)
            reasons = [] if bad else fallback_reasons(text, block=not inline, allow_html=allow_html)
            if reasons:
                yield lf.finding(path, "RG748", f"this Markdown would render {'; '.join(reasons[:3])}, so "
                                 "the page shows it as plain text; put code in a `commands` block or in "
                                 "backticks that pair up", rule=rule, severity=Severity.WARNING)
