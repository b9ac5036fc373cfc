"""Runbook pages of the mkdocs-material site (``runbooks/``).

One page per app (``runbooks/<app>.md``) in the shape of an on-call runbook: where the rule
lives and when it renders, context, facts table, extra sections, then one section per alert:

1. the triage box, right under the heading (``<div class="rg-triage" markdown>``, md_in_html):
   severity badge and readable summary, impact, owner and escalation, the first check (the
   first diagnosis command with its preamble), the do-not line;
2. the readable description, "Fires when" (the expression shown once), the explanation, the
   app sections the alert depends on (``runbook.context``), "Rule details" collapsed
   (``<details>``: severity, component, group, ``for``, templates as written, the exact
   expression, the values knobs);
3. likely causes, read-only diagnosis (commands with a preamble setting the alert labels they
   use, see :mod:`rulegen.spec.triage`; PromQL marked for the site's "Open in" links), resolution, silencing,
   dashboards and links, related alerts.

Plus ``index.md`` (home) and ``alerts.md`` (every alert by app, root causes first), and the
site's ``rulegen.css``/``rulegen.js``, written by :mod:`rulegen.render.runbook_index`.

Anchors: each alert heading carries an explicit id made by :func:`rulegen.render.slug.anchor`,
the site's own slug function, which is also what ``runbook_url`` links to.

Text that is Prometheus template or PromQL (summary, description, expr) is Markdown-escaped or
in code: summaries and descriptions read ``‹namespace›/‹pod›`` (:func:`readable`) and appear
as written in Rule details, so ``{{ $labels.pod }}`` or ``<5`` never breaks the page. Markdown
fields (``markdown``, causes, resolution, impact, escalation, do_not, silence.when, notes) are
Markdown by design; the new ones go through :func:`blocks_md` as the runbook blocks do.
Every piece of spec Markdown enters the page through :func:`rulegen.render.safe.spec_markdown`
(table cells: ``spec_cell``): raw HTML escaped, unsafe links defused, so nothing in a spec runs
in the reader's browser (issue 18).

Team notes: every alert section and the page end with a slot
``<!-- notes:<name> -->`` ... ``<!-- /notes -->``; text written there survives ``rulegen build``,
made safe as spec Markdown is (:func:`rulegen.render.safe.notes_markdown`, when the page is
written: ``RG721``). The name in the marker is :func:`rulegen.render.ownership.slot_marker` of
the alert name, so no name can end the comment or break its line.
"""

from __future__ import annotations

import functools
import re

from .ownership import slot_marker
from ..promql.gotmpl import split
from ..spec import Spec
from ..spec import triage
from . import jinja, safe
from .safe import spec_cell, spec_markdown
from .page_extras import external_runbook, scope_line, scoped_index
from .slug import anchor, page_path
from .wrap import wrap_markdown
# moved to code_md; also runbook.fence, .inline_code, .fires_when for callers
from .code_md import fence, fires_when, inline_code, promql_block, promql_blocks  # noqa: F401

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


def blocks_md(blocks: list, expr: str = "", variables: dict | None = None) -> str:
    """Runbook content blocks (markdown, commands, promql, table) as Markdown.

    ``commands`` blocks that use alert labels as variables start with the preamble that sets
    them (:func:`rulegen.spec.triage.preamble`; values from ``expr``'s equality matchers,
    ``variables`` the alert's declared ``runbook.variables``). ``promql`` blocks are marked
    for the site's "Open in" links (:func:`rulegen.render.code_md.promql_blocks`)."""
    parts = []
    for b in blocks or []:
        if b.get("title"):
            parts.append(spec_markdown(b["title"]))
        if "markdown" in b:
            parts.append(spec_markdown(b["markdown"]))
        if "commands" in b:
            code = fence(with_preamble(b["commands"], expr, variables), "bash")
            if b.get("examples"):  # hard-coded example values: marked, no copy button (rulegen.css)
                values = ", ".join(inline_code(x) for x in b["examples"])
                code = (f'<div class="rg-example" markdown>\n\n**Example values, not copy-ready:** replace '
                        f"{values} with yours.\n\n{code}\n\n</div>")
            parts.append(code)
        if "promql" in b:
            q = b["promql"]
            parts.append(promql_blocks(q if isinstance(q, list) else [q]))
        if "table" in b:
            t = b["table"]
            cols = t["columns"]
            rows = ["| " + " | ".join(spec_cell(c) for c in cols) + " |",
                    "|" + "|".join("---" for _ in cols) + "|"]
            for r in t["rows"]:
                cells = [spec_cell(c) for c in r] + [""] * (len(cols) - len(r))
                rows.append("| " + " | ".join(cells[: len(cols)]) + " |")
            parts.append("\n".join(rows))
        if b.get("after"):
            parts.append(spec_markdown(b["after"]))
    return "\n\n".join(parts)


def with_preamble(commands: str, expr: str, variables: dict | None) -> str:
    """``commands`` with the one-line preamble setting the alert labels it uses, if any."""
    pairs = triage.label_variables(commands, variables)
    text = commands.rstrip()
    return f"{triage.preamble(pairs, expr)}\n{text}" if pairs else text


#: A line that only assigns variables (``A='x y' B=2  # comment``).
_ASSIGNMENTS = re.compile(r"""(?:[A-Za-z_]\w*=(?:'[^']*'|"[^"]*"|[^\s'"]*)\s*)+(?:#.*)?""")


def first_check(blocks: list, expr: str, variables: dict | None) -> str | None:
    """The first command of the first ``commands`` block, with the preamble and the block's
    own assignments it needs (shell text), or None when there is no command."""
    for b in blocks or []:
        text = b.get("commands") if isinstance(b, dict) else None
        if not isinstance(text, str):
            continue
        lines = []
        for line in text.splitlines():
            lines.append(line)
            stripped = line.strip()
            if stripped and not stripped.startswith("#") and not _ASSIGNMENTS.fullmatch(stripped):
                return with_preamble("\n".join(l for l in lines if l.strip()), expr, variables)
    return None


_LABEL_REF = re.compile(r'\$labels\.([A-Za-z_][A-Za-z0-9_]*)|index\s+\$labels\s+"([^"]+)"|\$labels\s*\|\s*index\s+"([^"]+)"')


def readable(text: str) -> str:
    """Prometheus template text for a person: each ``{{ ... }}`` action becomes ``‹label›``
    for a label reference (``{{ $labels.namespace }}`` -> ``‹namespace›``), ``‹value›`` for
    ``$value``, and ``‹…›`` for anything else; the rest is unchanged."""
    def one(body: str) -> str:
        ref = _LABEL_REF.search(body)
        if ref:
            return "‹" + next(g for g in ref.groups() if g) + "›"
        if "$value" in body:
            return "‹value›"
        return "‹…›"
    if "{{" not in text:
        return text
    return "".join(piece if kind == "text" else one(piece.body) for kind, piece in split(text))


def rule_line(rule, group) -> str:
    """The alert's component and rule group on one line (the severity is the triage box's
    badge, the ``for`` is in "Fires when"; the values knobs are explained once, at the top)."""
    parts = [f"**Component:** {md_text(rule.component)}"] if rule.component else []  # `component: false`: none
    return " · ".join(parts + [f"**Group:** {md_text(group.name)}"])


def templates_as_written(rule) -> list[str]:
    """The summary and description templates as written (inline code, or a fenced ``text``
    block when longer than a line), for those
    that hold template actions (``{{ ... }}``): the page shows them readable (:func:`readable`),
    so a template without actions would only repeat its text."""
    out = []
    for key in ("summary", "description"):
        text = rule.annotations.get(key) or ""
        if "{{" not in text:
            continue
        lead = f"**{key.capitalize()} template:**"
        code = inline_code(text)
        # a code span is never broken (wrap.py): a long template is a block of its own
        out.append(f"{lead} {code}" if "\n" not in text and len(lead) + 1 + len(code) <= 120
                   else f"{lead}\n\n{fence(text, 'text')}")
    return out


def owner_md(owner: dict | None, source: str = "") -> str:
    """The owner line: team, chat and paging handles; what neither the spec nor the project's
    defaults record is said. ``source`` (:attr:`rulegen.spec.owners.Resolved.source`): a
    default of ``.rulegen.yaml`` is marked as such."""
    if not owner:
        return "*not recorded: neither the spec nor the project's owners: defaults name a team*"
    parts = [md_text(owner["team"])]
    for key, what in (("chat", "chat"), ("paging", "paging")):
        if owner.get(key):
            parts.append(f"{what} {inline_code(owner[key])}")
    missing = [w for w in ("chat", "paging") if not owner.get(w)]
    if missing:
        parts.append(f"*no {' or '.join(missing)} handle recorded*")
    return " · ".join(parts)


_SAFE_VAR = re.compile(r"[A-Za-z0-9_.-]+")


def dashboard_md(d: dict, expr: str) -> str:
    """A dashboard link: variables mapped from labels are filled with the values ``expr`` fixes
    (the page's script fills the others from the URL's query string)."""
    from urllib.parse import urlencode
    url = d["url"]
    params = []
    # label -> dashboard variable; a name that is not a plain word (validation: RG749) would
    # break out of the data-rg-labels attribute below, so it is left out
    mapping = {k: v for k, v in (d.get("variables") or {}).items() if _SAFE_VAR.fullmatch(v)}
    for label, var in mapping.items():
        value = triage.fixed_value(expr, label)
        if value is not None:
            params.append((f"var-{var}", value))
    if params:
        url += ("&" if "?" in url else "?") + urlencode(params)
    attrs = ""
    if mapping:
        attrs = '{ data-rg-labels="' + " ".join(f"{label}=var-{var}" for label, var in mapping.items()) + '" }'
    return f"[{md_text(d['title'])}]({link_url(url)}){attrs}"


def link_url(url: str) -> str:
    """``url`` safe inside a Markdown link's parentheses (``(``, ``)``, ``<``, ``>`` and spaces
    percent-encoded, which leaves the address the same)."""
    return url.replace("(", "%28").replace(")", "%29").replace("<", "%3C").replace(">", "%3E").replace(" ", "%20")


def team_runbook(url, site_url: str | None = None) -> str:
    """Markdown link to an alert's own ``runbook_url`` that opens a runbook outside this site
    (:func:`rulegen.render.page_extras.external_runbook`), the address as its text; ``""``."""
    url = external_runbook(url, site_url)
    return f"[{md_text(url)}]({link_url(url)})" if url else ""


_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _plain_key(name: str) -> bool:
    return _PLAIN_KEY.fullmatch(name) is not None


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
        return md_text(name)
    if spec.app == here.app:
        return f"[{md_text(name)}](#{anchor(name)})"
    return f"[{md_text(name)}]({page_path(spec.app)}#{anchor(name)})"


def _unique(id_: str, used: set[str]) -> str:
    """``id_``, or ``id_`` with ``_1``, ``_2``... (toc's own rule) when the page already uses it."""
    out, n = id_, 0
    while out in used:
        n += 1
        out = f"{id_}_{n}"
    used.add(out)
    return out


def _merge_variant(first: dict, r, spec: Spec, index: dict, key: str) -> None:
    """Add rule ``r`` to ``first``, the section of an alert of the same name made earlier."""
    # same-name rules (e.g. a warning and a critical threshold, an SLO alert's window pairs)
    # share one section, the one their runbook_url opens; the first rule's runbook content is
    # the section's. Each rule's summary and description are shown once: one a rule before
    # it already shows (the same text) is not repeated
    summary = md_text(readable(r.annotations.get("summary", "")))
    description = md_text(readable(r.annotations.get("description", "")))
    said = {first["summary"], first["description"]} | {x for v in first["variants"] for x in (v["summary"], v["description"])}
    first["variants"].append({
        "severity": md_text(r.severity or "none"),
        "fires_when": fires_when(r) + params_note(r, key),
        "summary": "" if summary in said else summary,
        "description": "" if description in said | {summary} else description,
        "explanation": spec_markdown(r.runbook.get("explanation")),
    })
    # its runbook content joins the section's (nothing a variant says is dropped)
    rr = r.runbook
    for field, items in (("causes", rr.get("causes")), ("resolution", rr.get("resolution"))):
        for x in items or []:
            if spec_markdown(x, block=False) not in first[field]:
                first[field].append(spec_markdown(x, block=False))
    more = blocks_md(rr.get("diagnosis") or [], r.expr, rr.get("variables"))
    if more and more not in first["diagnosis"]:
        first["diagnosis"] = (first["diagnosis"] + "\n\n" + more).strip()
    for x in rr.get("related") or []:
        link = {"link": related_link(x["alert"], spec, index),
                "note": spec_markdown(x.get("note"), block=False)}
        if link not in first["related"]:
            first["related"].append(link)
    team = team_runbook(r.annotations.get("runbook_url"), first["site_url"])
    if team and team not in first["team_runbooks"]:
        first["team_runbooks"].append(team)


def _alert_entry(spec: Spec, group, r, key: str, used: set[str], index: dict,
                 slos: dict, slo_of: dict, by_title: dict, site_url: str | None = None,
                 opts: dict | None = None) -> dict:
    """The page template's data for alert ``r``'s section (its heading ids taken from ``used``;
    ``opts``: ``owners``, the project's default owners, ``alertmanager_url``, ``records``, the
    project's recording rules for the label flow, ``pairs``, the SLOs' burn-rate pairs)."""
    from ..spec.owners import resolve
    from . import silence as silences, slo_page
    opts = opts or {"records": {}, "pairs": {}}
    rr = r.runbook
    res = resolve(spec, group, r, opts.get("owners"))
    am = opts.get("alertmanager_url")
    a = anchor(r.name)
    variables = rr.get("variables")
    tf = triage.effective(spec, r)
    check = first_check(rr.get("diagnosis") or [], r.expr, variables)
    silence = tf.get("silence")
    sev = r.severity or "none"
    summary = md_text(readable(r.annotations.get("summary", "")))
    description = md_text(readable(r.annotations.get("description", "")))
    return {
        "slo": slos.get(r.name),
        "slo_link": slo_of.get(r.name, ""),
        "pairs": slo_page.burn_pairs(r, opts["pairs"]),
        "variants": [],
        "site_url": site_url,
        # the alert's own runbook_url, when it opens a runbook outside this site (a team wiki)
        "team_runbooks": [t for t in [team_runbook(r.annotations.get("runbook_url"), site_url)] if t],
        "name": r.name,
        "heading": md_text(r.name),
        "slot": slot_marker(r.name),  # the notes marker's name, safe in an HTML comment
        "anchor": a,
        "ids": {k: _unique(f"{a}-{k}", used) for k in ("fires-when", "likely-causes", "diagnose",
                                                        "resolution", "silencing", "dashboards",
                                                        "related")},
        "group": md_text(group.name),
        "severity": md_text(sev),
        "badge": severity_badge(sev),
        "sev_class": severity_class(sev),
        "component": md_text(r.component) if r.component else "",  # `component: false`: none
        # the sentence, the query once (marked for the site's links), the knobs of its params
        "fires_when": fires_when(r) + params_note(r, key),
        "summary": summary,
        "description": description if description != summary else "",
        "rule_line": rule_line(r, group),
        "templates": templates_as_written(r),
        "impact": blocks_md([{"markdown": tf["impact"]}]) if tf.get("impact") else "",
        # not recorded: said once, at the top of the page (page_context)
        "owner": owner_md(res.owner, res.source) if res.owner else "",
        "escalation": blocks_md([{"markdown": res.escalation}]) if res.escalation else "",
        "do_not": blocks_md([{"markdown": tf["do_not"]}]) if tf.get("do_not") else "",
        "first_check": fence(check, "bash") if check else "",
        "silence_when": blocks_md([{"markdown": silence["when"]}]) if silence else "",
        "silence_cmd": fence(silences.command(spec, group, r, silence, opts["records"], am), "bash"),
        "silence_link": silences.form_link(spec, group, r, silence, opts["records"], am) if am else "",
        "dashboards": [dashboard_md(d, r.expr) for d in tf.get("dashboards") or []],
        "links": [f"[{md_text(x['title'])}]({link_url(x['url'])})" for x in tf.get("links") or []],
        "explanation": spec_markdown(rr.get("explanation")),
        # the app sections it depends on, shown here too (unknown titles are RG511)
        "context": [{"link": f"[{by_title[t]['title']}](#{by_title[t]['anchor']})", "body": by_title[t]["body"]}
                    for t in rr.get("context") or [] if t in by_title],
        "causes": [spec_markdown(c, block=False) for c in rr.get("causes") or []],
        "diagnosis": blocks_md(rr.get("diagnosis") or [], r.expr, variables),
        "resolution": [spec_markdown(x, block=False) for x in rr.get("resolution") or []],
        "related": [{"link": related_link(x["alert"], spec, index), "note": spec_markdown(x.get("note"), block=False)}
                    for x in rr.get("related") or []],
    }


def page_context(spec: Spec, specs: list[Spec], fullname_helper: bool = False,
                 name_suffix: str | None = None, routing: dict | None = None,
                 site_url: str | None = None, config=None) -> dict:
    """Everything the page template shows, prepared as Markdown strings (``routing``: alert
    name -> its routing line, :func:`rulegen.render.routing_md.page_lines`; ``site_url`` and
    ``config``: see :func:`render_page`).

    Heading ids: alert headings get exactly :func:`anchor` of the alert name (what
    ``runbook_url`` links to); every other heading of the page (context, sections, an alert's
    sub-headings, recording rules) gets its natural slug, made unique against the alert ids
    first, so a section titled like an alert can never take the alert's id.

    ``config``: its ``owners`` (:class:`rulegen.spec.owners.OwnerDefaults`) and
    ``alertmanager_url`` (the silence form the page links to) are used too; None: neither.
    """
    from .silence import recording_rules
    opts = {"owners": getattr(config, "owners", None), "alertmanager_url": getattr(config, "alertmanager_url", None),
            "records": recording_rules(specs), "pairs": {}}
    # related alerts resolved within the Prometheus that loads this app (prometheus_scopes)
    index = scoped_index(alert_index(specs), spec, specs, config)
    rb = spec.runbook
    key = spec.chart.values_key
    used: set[str] = set()
    for _, r in spec.rules():
        if r.is_alert:
            used.add(anchor(r.name))
    alerts = []
    # SLO sections (rulegen.render.slo_page): their ids are taken before any other heading's
    from . import slo_page
    slos = {}
    slo_of: dict = {}  # alert name -> Markdown link to its SLO's section
    for s in spec.slos:
        for w in s.windows:  # which burn-rate pair an alert's long/short labels name
            opts["pairs"][(s.alert_name(w.severity), w.long, w.short)] = (s, w)
        data = slo_page.section(s, key, md_text)
        data["id"] = _unique(data["id"], used)
        slos[data["first_alert"]] = data
        for sev in ("page", "ticket"):
            slo_of.setdefault(s.alert_name(sev), f"[{md_text(s.name)}](#{data['id']})")
    context_id = _unique("context", used)
    sections = [{"title": md_text(s["title"]), "anchor": _unique(anchor(s["title"]), used),
                 "body": blocks_md(s["blocks"])} for s in rb.get("sections") or []]
    by_title = {s["title"]: sec for s, sec in zip(rb.get("sections") or [], sections)}
    by_name: dict = {}
    for group, r in spec.rules():
        if not r.is_alert:
            continue
        if r.name in by_name:
            _merge_variant(by_name[r.name], r, spec, index, key)
            by_name[r.name]["pairs"] += slo_page.burn_pairs(r, opts["pairs"])
            continue
        alerts.append(_alert_entry(spec, group, r, key, used, index, slos, slo_of, by_title, site_url, opts))
        alerts[-1]["routing"] = (routing or {}).get(r.name, "")
        by_name[r.name] = alerts[-1]
    # an SLO's recording rules are described in its section (rulegen.render.slo_page), which
    # states the objective once: listing them here would repeat the budget rule's literal
    records = [{"name": inline_code(r.name), "expr": promql_block(r.expr), "group": md_text(g.name)}
               for g, r in spec.rules() if not r.is_alert and g.slo is None]
    gates = list(spec.chart.gates)
    no_owner = [a["heading"] for a in alerts if not a["owner"]]
    return {
        # said once here rather than under every alert (issue 29)
        "owner_missing": ("" if not no_owner else "*not recorded* for " +
                          ("any alert of this page" if len(no_owner) == len(alerts) else ", ".join(no_owner)) +
                          ": neither the spec nor the project's owners: defaults name a team"),
        "impact_missing": any(not a["impact"] for a in alerts),
        "title": md_text(rb.get("title", f"{spec.title} alert runbook")),
        "intro": spec_markdown(rb.get("intro")),
        "chart_path": spec.chart.path,
        "chart_template": f"{spec.chart.path}/rules/{spec.app}.rules.yaml",  # the rules file (rulegen.render.helm)
        "values_file": f"{spec.chart.path}/values.yaml",
        "rule_name": inline_code(spec.chart.name) if spec.chart.name else
        ("named after the Helm release (the chart's fullname"
         + (f" plus `-{name_suffix}`" if name_suffix else "") + ")") if fullname_helper else
        inline_code(spec.app),
        "has_namespace": bool(spec.chart.namespace),
        "scope": scope_line(spec.app, config),
        "namespace": inline_code(spec.chart.namespace) if spec.chart.namespace else "the release namespace",
        "groups": [inline_code(g.name) for g in spec.groups],
        "gates": [inline_code(g) for g in gates],
        "values_key": key,
        "context_id": context_id,
        "records_id": _unique("recording-rules", used) if records else "",
        "context": blocks_md(rb.get("context") or []),
        "facts": [(spec_cell(f["name"]), spec_cell(f["value"])) for f in rb.get("facts") or []],
        "sections": sections,
        "alerts": alerts,
        "records": records,
    }


@functools.lru_cache(maxsize=64)
def severity_class(severity: str) -> str:
    """The CSS class suffix of ``severity`` (``critical``; ``none`` when nothing is left)."""
    return _NOT_CLASS.sub("", severity.lower()) or "none"


_NOT_CLASS = re.compile(r"[^a-z0-9-]")


@functools.lru_cache(maxsize=64)
def severity_badge(severity: str) -> str:
    """Inline HTML badge for ``severity`` (styled by the site's ``rulegen.css``)."""
    return f'<span class="rg-sev rg-sev-{severity_class(severity)}">{md_text(severity)}</span>'


def render_page(spec: Spec, specs: list[Spec], header_lines: list[str], fullname_helper: bool = False,
                name_suffix: str | None = None, routing: dict | None = None,
                site_url: str | None = None, config=None) -> str:
    """The page text for ``spec`` (notes slots empty; see :mod:`rulegen.render.ownership`).
    ``fullname_helper``: the chart defines ``<chart>.fullname``, which then names the
    PrometheusRule (as :mod:`rulegen.render.helm` decides), with ``-<name_suffix>`` for a
    template other than the default.
    ``routing``: alert name -> its routing line. ``site_url``: mkdocs' ``site_url``; an alert whose own ``runbook_url`` opens a page outside
    it shows that link as the team's runbook (:func:`team_runbook`). ``config``: the project's
    :class:`rulegen.config.Config`, whose ``prometheus_scopes`` the page names, and whose
    ``owners`` and ``runbooks.alertmanager_url`` fill the owner and the silence (None: none)."""
    text = wrap_markdown(jinja.render("runbook_page.md.j2", header="\n".join(header_lines),
                                      **page_context(spec, specs, fullname_helper, name_suffix, routing,
                                                     site_url, config)))
    if ("```" in spec.source.text or "~~~" in spec.source.text) and safe.problems(text):
        # a fence in one field changed how another reads (each field alone was safe): show the
        # spec's Markdown as plain text on this page rather than anything unsafe
        with safe.inert_markdown():
            text = wrap_markdown(jinja.render("runbook_page.md.j2", header="\n".join(header_lines),
                                              **page_context(spec, specs, fullname_helper, name_suffix,
                                                             routing, site_url, config)))
    return text
