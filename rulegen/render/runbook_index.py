"""The runbook site's index pages: ``alerts.md`` (every alert by app, likely root causes first),
``index.md`` (home) and the site assets ``rulegen.css``/``rulegen.js``. The per-app pages are
:mod:`rulegen.render.runbook`.
"""

from __future__ import annotations

from ..baseurl import base_url_ok
from ..routing import inhibit
from ..spec import Spec
from . import jinja
from .runbook import _unique, alert_index, md_cell, md_text, readable, severity_badge
from .slug import anchor, page_path, page_url
from .wrap import without_carriage_returns, wrap_markdown


def cause_order(spec: Spec) -> list:
    """The alerts of ``spec`` (first rule of each name), likely root causes first.

    An alert whose ``runbook.related`` entry says ``cause: true``, or that is ``inhibited_by``
    another alert of the spec, comes after that alert (topological order; ties: alerts that
    cause others first, then spec order); a cycle keeps spec order.

    Nothing but the declared causes and the spec's order places an alert: not its severity,
    labels or any other value of the rule (issue 29: "a one-threshold change touches one line
    per generated file"). Severity was a tie-break before: a ``warning -> critical`` edit
    moved the alert's 4-line entry up the list (removed at one place, added at another; 6 to 8
    changed lines of ``alerts.md`` for one changed line of the spec). The triage intent stays:
    causes still come before their symptoms, severity is each entry's badge and the index's
    Severity filter, and the author's order of the alerts (the spec's) decides the rest."""
    alerts: dict[str, object] = {}
    for _, r in spec.rules():
        if r.is_alert:
            alerts.setdefault(r.name, r)
    after: dict[str, set] = {n: set() for n in alerts}  # name -> the causes it waits for
    for n, r in alerts.items():
        for x in r.runbook.get("related") or []:
            if x.get("cause") and x["alert"] in alerts and x["alert"] != n:
                after[n].add(x["alert"])
        after[n].update(i.cause for i in r.inhibited_by if i.cause in alerts and i.cause != n)
    pos = {n: i for i, n in enumerate(alerts)}
    causes = set().union(*after.values()) if after else set()
    # ties: an alert that causes others first, then spec order (never a value an edit changes)
    rank = lambda n: (n not in causes, pos[n])  # noqa: E731
    out, done = [], set()
    while len(out) < len(alerts):
        ready = [n for n in alerts if n not in done and after[n] <= done]
        if not ready:  # a cycle: the rest in spec order
            ready = [n for n in alerts if n not in done]
        n = min(ready, key=rank)
        out.append(alerts[n])
        done.add(n)
    return out


def render_alert_index(specs: list[Spec], header_lines: list[str], owners=None) -> str:
    """``alerts.md``: every alert of every spec, grouped by app (sorted), likely root causes
    first within an app (:func:`cause_order`), one list item per alert: its link, severity
    badge, owning team (``.rg-team``), its summary in readable form (``.rg-summary``) and cause
    -> symptoms as the specs' ``inhibited_by:`` declare them (``.rg-inhibits``, nothing guessed);
    no line over 120 characters. The site's script adds filters by app, severity and team,
    reading those spans. ``owners``: the
    project's default owners (:class:`rulegen.spec.owners.OwnerDefaults`), which fill the Team
    column where the spec names none."""
    from ..spec.owners import resolve
    index = alert_index(specs)
    symptoms, causes = inhibit.causes_and_symptoms(specs)
    apps = []
    total = 0
    for spec in sorted(specs, key=lambda s: s.app):
        rows = []
        group_of = {id(r): g for g, r in spec.rules()}
        for r in cause_order(spec):
            team = (resolve(spec, group_of[id(r)], r, owners).owner or {}).get("team")
            rows.append({
                "alert_md": f"[{md_cell(md_text(r.name))}]({page_path(spec.app)}#{anchor(r.name)})",
                "badge": severity_badge(r.severity or "none"),
                "team": md_cell(md_text(team)) if team else "—",
                "inhibits": " · ".join([f"mutes {_index_link(n, index)}" for n in symptoms.get(r.name, [])]
                                       + [f"symptom of {_index_link(n, index)}" for n in causes.get(r.name, [])]),
                "summary": f'<span class="rg-summary">{md_cell(md_text(readable(r.annotations.get("summary", ""))))}</span>',
            })
        total += len(rows)
        apps.append({"app": spec.app, "app_id": _unique(f"app-{anchor(spec.app)}", set()),
                     "title_md": f"[{md_text(spec.title)}]({page_path(spec.app)})", "rows": rows})
    # a list, one item per alert, its facts on lines of their own, wrapped at 120 characters
    # (issue 29: a table row held them all on one line of any length)
    return wrap_markdown(jinja.render("alerts_index.md.j2", header="\n".join(header_lines), apps=apps, total=total))


def _index_link(name: str, index: dict) -> str:
    spec = index.get(name, (None, None))[0]
    if spec is None:
        return md_cell(md_text(name))
    return f"[{md_cell(md_text(name))}]({page_path(spec.app)}#{anchor(name)})"


def render_home(specs: list[Spec], header_lines: list[str]) -> str:
    """``index.md``: the site's home page, listing each app's page."""
    apps = [{"app": s.app, "link_md": f"[{md_text(s.title)}]({page_path(s.app)})",
             "alerts": sum(1 for _, r in s.rules() if r.is_alert),
             "records": sum(1 for _, r in s.rules() if not r.is_alert)} for s in specs]
    return without_carriage_returns(jinja.render("home.md.j2", header="\n".join(header_lines), apps=apps))


def js_string(value: str) -> str:
    """``value`` as a JavaScript string literal (JSON, ASCII only: every quote, backslash, line
    break, U+2028/U+2029 escaped) with ``<``, ``>`` and ``&`` escaped too, so nothing in it can
    end the literal, the statement or a script element."""
    import json
    return (json.dumps(value, ensure_ascii=True).replace("<", "\\u003c").replace(">", "\\u003e")
            .replace("&", "\\u0026"))


def query_link_config(prometheus_url: str | None, grafana_url: str | None) -> str:
    """The lines of the site's script that set the base URLs of its PromQL links
    (``runbooks.prometheus_url``/``grafana_url`` of ``.rulegen.yaml``, which a pull request can
    edit): ``var RG_PROMETHEUS_URL = "https://...";`` and ``var RG_GRAFANA_URL = ...``, one line
    each, so changing one changes one line of one file. A value that is not a base URL
    (:func:`rulegen.baseurl.base_url_ok`; ``javascript:``, user info, quotes, markup) is written as
    ``""`` (no link); config loading refuses those first (:func:`rulegen.config.load_config`)."""
    lines = ["/* the PromQL links' base URLs (.rulegen.yaml runbooks.prometheus_url, grafana_url; \"\": none) */"]
    for name, url in (("RG_PROMETHEUS_URL", prometheus_url), ("RG_GRAFANA_URL", grafana_url)):
        ok = base_url_ok(url)
        lines.append(f"var {name} = {js_string(url.rstrip('/') if ok else '')};")
    return "\n".join(lines)


def render_asset(name: str, header_lines: list[str], specs: list[Spec] | None = None,
                 query_urls: tuple[str | None, str | None] = (None, None)) -> str:
    """The site asset ``name`` (``rulegen.css`` or ``rulegen.js`` from rulegen's templates)
    with the generated-file header. ``rulegen.js`` starts with the base URLs of its PromQL
    links (``query_urls``: Prometheus and Grafana, None for none: :func:`query_link_config`)
    and ends with the site's alerts (name, page and anchor, as JSON, sorted by name; none
    without ``specs``), which its search shortcut puts first among the results for a query
    that is a fragment of an alert name."""
    text = (jinja.templates_dir() / name).read_text(encoding="utf-8")
    if name == "rulegen.js":
        alerts = sorted({(r.name, f"{page_url(spec.app)}#{anchor(r.name)}") for spec in specs or [] for r in spec.alerts()})
        # JSON with "<" escaped: nothing in a name can end a script or open markup
        # one alert a line: a new alert adds a line to the diff, not a wider one
        rows = ",\n".join(f"  [{js_string(n)}, {js_string(url)}]" for n, url in alerts)
        data = f"[\n{rows}\n]" if rows else "[]"
        text = (query_link_config(*query_urls) + "\n" + text
                + f"\n/* the site's alerts, for search: [name, page/#anchor] */\nvar RG_ALERTS = {data};\n")
    return "\n".join(header_lines) + "\n" + text
