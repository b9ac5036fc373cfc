"""Runbook pages of the mkdocs-material site (``runbooks/``).

One page per app (``runbooks/<app>.md``) in the shape of an on-call runbook: where the rule
lives and when it renders, context, facts table, extra sections, then one section per alert
(severity and component, what fires it, likely causes, read-only diagnosis commands, PromQL,
resolution, related alerts). Plus ``index.md`` (home) and ``alerts.md`` (every alert, grouped
by severity).

Anchors: each alert heading carries an explicit id made by :func:`rulegen.render.slug.anchor`,
the site's own slug function, which is also what ``runbook_url`` links to.

Text that is Prometheus template or PromQL (summary, description, expr) is shown literally:
in code blocks, or Markdown-escaped, so ``{{ $labels.pod }}`` or ``<5`` never breaks the page.
Markdown fields (``markdown``, causes, resolution, notes) are Markdown by design.

Team notes: every alert section and the page end with a slot
``<!-- notes:<name> -->`` ... ``<!-- /notes -->``; text written there survives ``rulegen build``.
"""

from __future__ import annotations

import functools
import re

from ..spec import Spec
from ..spec.durations import canonical
from . import jinja
from .slug import anchor, page_path

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|])")
SEVERITY_ORDER = {"critical": 0, "error": 1, "warning": 2, "info": 3}


@functools.lru_cache(maxsize=16384)  # group, severity, component... repeat on every alert
def md_text(s: str) -> str:
    """Plain text shown literally in Markdown (one line; specials and HTML escaped)."""
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_SPECIAL.sub(r"\\\1", s)
    return s.replace("\n", " ")


def md_cell(s) -> str:
    """A Markdown table cell: Markdown allowed, pipes escaped, newlines as <br>."""
    return str(s).replace("|", "\\|").replace("\n", "<br>")


def fence(text: str, lang: str) -> str:
    """A fenced code block that no backtick run inside ``text`` can close early."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


def params_note(rule, values_key: str) -> str:
    """For an alert with parameters (``[[name]]`` in its expr), a paragraph after the PromQL
    block naming each values knob that overrides one, with its default and description;
    "" for an alert without."""
    if not rule.params:
        return ""
    items = []
    for p in rule.params.values():
        knob = f"{values_key}.customRules.{rule.name}.params.{p.name}"
        items.append(f"- {inline_code(knob)} (default {inline_code(p.default)})"
                     + (f": {md_text(p.description)}" if p.description else ""))
    return "\n\n**Knobs** (the chart's values; the expr above shows the defaults):\n\n" + "\n".join(items)


def inline_code(s: str) -> str:
    """``s`` as inline code, whatever backticks it holds."""
    s = s.replace("\n", " ")
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return f"{ticks}{pad}{s}{pad}{ticks}"


def blocks_md(blocks: list) -> str:
    """Runbook content blocks (markdown, commands, promql, table) as Markdown."""
    parts = []
    for b in blocks or []:
        if b.get("title"):
            parts.append(b["title"])
        if "markdown" in b:
            parts.append(b["markdown"].strip())
        if "commands" in b:
            parts.append(fence(b["commands"], "bash"))
        if "promql" in b:
            q = b["promql"]
            text = "\n".join(q) if isinstance(q, list) else q
            parts.append(fence(text, "promql"))
        if "table" in b:
            t = b["table"]
            cols = t["columns"]
            rows = ["| " + " | ".join(md_cell(c) for c in cols) + " |",
                    "|" + "|".join("---" for _ in cols) + "|"]
            for r in t["rows"]:
                cells = [md_cell(c) for c in r] + [""] * (len(cols) - len(r))
                rows.append("| " + " | ".join(cells[: len(cols)]) + " |")
            parts.append("\n".join(rows))
        if b.get("after"):
            parts.append(b["after"].strip())
    return "\n\n".join(parts)


#: An expression this short and on one line is also quoted inside the "fires when" sentence.
INLINE_EXPR_MAX = 100


def fires_when(rule, values_key: str = "prometheusRule") -> str:
    """The sentence saying when an alert fires, for a person (Markdown, one paragraph).

    Short one-line expressions are quoted in the sentence itself (the PromQL block follows it
    anyway); the ``for`` and ``keep_firing_for`` durations are given in Prometheus syntax with
    the values key that overrides them per install, e.g. "Fires when
    `up == 0` holds continuously for **5m** (`for`; ...)."
    """
    expr = rule.expr.strip()
    if "\n" not in expr and len(expr) <= INLINE_EXPR_MAX:
        what = f"{inline_code(expr)} holds (returns at least one series)"
    else:
        what = "the PromQL below returns at least one series"
    knob = f"`{values_key}.customRules.{rule.name}.for`" if _plain_key(rule.name) else f"`{values_key}.customRules`"
    if rule.for_ and canonical(rule.for_) != "0s":
        s = (f"Fires when {what} continuously for **{canonical(rule.for_)}** "
             f"(the rule's `for`; {knob} overrides it)")
    else:
        s = f"Fires when {what}, at the first evaluation that sees it (no `for`)"
    if rule.keep_firing_for and canonical(rule.keep_firing_for) != "0s":
        s += f", and keeps firing for **{canonical(rule.keep_firing_for)}** after it stops holding"
    return s + "."


def _plain_key(name: str) -> bool:
    return re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) is not None


_INDEX: tuple = ((), {}, [])  # (the specs, by identity, and their alert_index) of the last call


def alert_index(specs: list[Spec]) -> dict[str, tuple[Spec, object]]:
    """Alert name -> (spec, rule) over every spec (first one wins; duplicates are a finding).

    Every page of a build asks for the index of the same specs: the last index is reused when
    called again with the very same spec objects in the same order (a quadratic walk over all
    rules per page otherwise). Callers must not change the returned dict."""
    global _INDEX
    key = tuple(map(id, specs))
    if _INDEX[0] == key and all(a is b for a, b in zip(_INDEX[2], specs)):
        return _INDEX[1]
    out = {}
    for spec in specs:
        for _, r in spec.rules():
            if r.is_alert:
                out.setdefault(r.name, (spec, r))
    _INDEX = (key, out, list(specs))
    return out


def related_link(name: str, here: Spec, index: dict) -> str:
    """Markdown link to alert ``name`` on its page (same page: fragment only)."""
    spec = index.get(name, (None, None))[0]
    if spec is None:
        return f"{name}"
    if spec.app == here.app:
        return f"[{name}](#{anchor(name)})"
    return f"[{name}]({page_path(spec.app)}#{anchor(name)})"


def _unique(id_: str, used: set[str]) -> str:
    """``id_``, or ``id_`` with ``_1``, ``_2``... (toc's own rule) when the page already uses it."""
    out, n = id_, 0
    while out in used:
        n += 1
        out = f"{id_}_{n}"
    used.add(out)
    return out


def page_context(spec: Spec, specs: list[Spec], fullname_helper: bool = False,
                 name_suffix: str | None = None) -> dict:
    """Everything the page template shows, prepared as Markdown strings.

    Heading ids: alert headings get exactly :func:`anchor` of the alert name (what
    ``runbook_url`` links to); every other heading of the page (context, sections, an alert's
    sub-headings, recording rules) gets its natural slug, made unique against the alert ids
    first, so a section titled like an alert can never take the alert's id.
    """
    index = alert_index(specs)
    rb = spec.runbook
    key = spec.chart.values_key
    used: set[str] = set()
    for _, r in spec.rules():
        if r.is_alert:
            used.add(anchor(r.name))
    alerts = []
    context_id = _unique("context", used)
    sections = [{"title": md_text(s["title"]), "anchor": _unique(anchor(s["title"]), used),
                 "body": blocks_md(s["blocks"])} for s in rb.get("sections") or []]
    by_name: dict = {}
    for group, r in spec.rules():
        if not r.is_alert:
            continue
        if r.name in by_name:
            # same-name rules (e.g. a warning and a critical threshold) share one section, the
            # one their runbook_url opens; the first rule's runbook content is the section's
            first = by_name[r.name]
            first["variants"].append({
                "severity": md_text(r.severity or "none"),
                "for": canonical(r.for_) if r.for_ else "",
                "fires_when": fires_when(r, key),
                "expr": fence(r.expr, "promql") + params_note(r, key),
                "summary": md_text(r.annotations.get("summary", "")),
                "explanation": (r.runbook.get("explanation") or "").strip(),
            })
            # its runbook content joins the section's (nothing a variant says is dropped)
            rr = r.runbook
            for field, items in (("causes", rr.get("causes")), ("resolution", rr.get("resolution"))):
                for x in items or []:
                    if x.strip() not in first[field]:
                        first[field].append(x.strip())
            more = blocks_md(rr.get("diagnosis") or [])
            if more and more not in first["diagnosis"]:
                first["diagnosis"] = (first["diagnosis"] + "\n\n" + more).strip()
            for x in rr.get("related") or []:
                link = {"link": related_link(x["alert"], spec, index), "note": (x.get("note") or "").strip()}
                if link not in first["related"]:
                    first["related"].append(link)
            continue
        rr = r.runbook
        a = anchor(r.name)
        alerts.append({
            "variants": [],
            "name": r.name,
            "heading": md_text(r.name),
            "anchor": a,
            "ids": {k: _unique(f"{a}-{k}", used) for k in ("fires-when", "likely-causes", "diagnose",
                                                            "resolution", "related")},
            "group": md_text(group.name),
            "severity": md_text(r.severity or "none"),
            "component": md_text(r.component) if r.component else "",  # `component: false`: none
            "for": canonical(r.for_) if r.for_ else "",
            "fires_when": fires_when(r, key),
            "expr": fence(r.expr, "promql") + params_note(r, key),
            "summary": md_text(r.annotations.get("summary", "")),
            "description": md_text(r.annotations.get("description", "")),
            "explanation": (rr.get("explanation") or "").strip(),
            "causes": [c.strip() for c in rr.get("causes") or []],
            "diagnosis": blocks_md(rr.get("diagnosis") or []),
            "resolution": [x.strip() for x in rr.get("resolution") or []],
            "related": [{"link": related_link(x["alert"], spec, index), "note": (x.get("note") or "").strip()}
                        for x in rr.get("related") or []],
        })
        by_name[r.name] = alerts[-1]
    records = [{"name": inline_code(r.name), "expr": fence(r.expr, "promql"), "group": md_text(g.name)}
               for g, r in spec.rules() if not r.is_alert]
    gates = list(spec.chart.gates)
    return {
        "title": md_text(rb.get("title", f"{spec.title} alert runbook")),
        "intro": (rb.get("intro") or "").strip(),
        "chart_path": spec.chart.path,
        "chart_template": f"{spec.chart.path}/rules/{spec.app}.rules.yaml",  # the rules file (rulegen.render.helm)
        "values_file": f"{spec.chart.path}/values.yaml",
        "rule_name": inline_code(spec.chart.name) if spec.chart.name else
        ("named after the Helm release (the chart's fullname"
         + (f" plus `-{name_suffix}`" if name_suffix else "") + ")") if fullname_helper else
        inline_code(spec.app),
        "has_namespace": bool(spec.chart.namespace),
        "namespace": inline_code(spec.chart.namespace) if spec.chart.namespace else "the release namespace",
        "groups": [inline_code(g.name) for g in spec.groups],
        "gates": [inline_code(g) for g in gates],
        "values_key": key,
        "context_id": context_id,
        "records_id": _unique("recording-rules", used) if records else "",
        "context": blocks_md(rb.get("context") or []),
        "facts": [(md_cell(f["name"]), md_cell(f["value"])) for f in rb.get("facts") or []],
        "sections": sections,
        "alerts": alerts,
        "records": records,
    }


def render_page(spec: Spec, specs: list[Spec], header_lines: list[str], fullname_helper: bool = False,
                name_suffix: str | None = None) -> str:
    """The page text for ``spec`` (notes slots empty; see :mod:`rulegen.gitops.ownership`).
    ``fullname_helper``: the chart defines ``<chart>.fullname``, which then names the
    PrometheusRule (as :mod:`rulegen.render.helm` decides), with ``-<name_suffix>`` for a
    template other than the default."""
    return jinja.render("runbook_page.md.j2", header="\n".join(header_lines),
                        **page_context(spec, specs, fullname_helper, name_suffix))


def render_alert_index(specs: list[Spec], header_lines: list[str]) -> str:
    """``alerts.md``: every alert of every spec, grouped by severity, linked to its section."""
    rows = []
    for spec in specs:
        for g, r in spec.rules():
            if r.is_alert:
                rows.append({
                    "severity": r.severity or "none",
                    "name": r.name,
                    "alert_md": f"[{r.name}]({page_path(spec.app)}#{anchor(r.name)})",
                    "app": spec.app,
                    "app_md": f"[{md_cell(md_text(spec.title))}]({page_path(spec.app)})",
                    "component": md_cell(md_text(r.component)) if r.component else "",
                    "summary": md_cell(md_text(r.annotations.get("summary", ""))),
                })
    rows.sort(key=lambda x: (SEVERITY_ORDER.get(x["severity"], 9), x["severity"], x["app"], x["name"]))
    by_sev = []
    for row in rows:
        if not by_sev or by_sev[-1][0] != row["severity"]:
            by_sev.append((row["severity"], []))
        by_sev[-1][1].append(row)
    return jinja.render("alerts_index.md.j2", header="\n".join(header_lines), groups=by_sev, total=len(rows))


def render_home(specs: list[Spec], header_lines: list[str]) -> str:
    """``index.md``: the site's home page, listing each app's page."""
    apps = [{"app": s.app, "link_md": f"[{md_text(s.title)}]({page_path(s.app)})",
             "alerts": sum(1 for _, r in s.rules() if r.is_alert),
             "records": sum(1 for _, r in s.rules() if not r.is_alert)} for s in specs]
    return jinja.render("home.md.j2", header="\n".join(header_lines), apps=apps)
