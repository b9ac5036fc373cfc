"""What a runbook page says beyond the spec itself: an alert's own runbook outside the site
(:func:`external_runbook`), and which Prometheus loads the app when the project has
``prometheus_scopes`` (:func:`scope_line`, :func:`scoped_index`; see :mod:`rulegen.config`)."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

_URL_UNSAFE = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\"'`\\]")


def external_runbook(url, site_url: str | None = None) -> str:
    """An alert's own ``runbook_url`` when it points at a runbook outside this site (a team
    wiki page): an absolute ``http``/``https`` URL with a host, without spaces, quotes,
    backslashes, control characters or Go template actions (so, linked, it can neither run
    nor break out of the link), and not under ``site_url`` (then it is this site's page);
    ``""`` otherwise. :func:`rulegen.render.runbook.team_runbook` makes it a link."""
    if not isinstance(url, str) or not url or _URL_UNSAFE.search(url) or "{{" in url:
        return ""
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return ""
    if site_url and url.startswith(site_url.rstrip("/") + "/") or url.rstrip("/") == (site_url or "").rstrip("/"):
        return ""
    return url




def scope_line(app: str, config) -> str:
    """The sentence naming the Prometheus scopes that load ``app`` (``prometheus_scopes``), or
    ``""`` when the project has none."""
    if config is None or not config.prometheus_scopes:
        return ""
    scopes = config.scopes_of(app)
    if scopes is None:
        return ("**Loaded by:** every Prometheus (no scope of `prometheus_scopes` in .rulegen.yaml names this "
                "app).")
    names = ", ".join(f"`{s}`" for s in sorted(scopes))   # scope names: [A-Za-z0-9_.-] only
    return (f"**Loaded by:** the Prometheus of scope{'s' if len(scopes) > 1 else ''} {names} (`prometheus_scopes` "
            "in .rulegen.yaml); apps of other scopes may define alerts of the same names, each on its own page.")


def scoped_index(index: dict, spec, specs: list, config) -> dict:
    """``index`` (alert name -> (spec, rule), first spec wins: :func:`rulegen.render.runbook.alert_index`)
    with each alert that ``spec``'s ``related`` entries name resolved where ``spec``'s
    Prometheus sees it: in ``spec`` itself, else in the first spec that shares a Prometheus
    with it (:meth:`rulegen.config.Config.share_prometheus`), else as in ``index``."""
    if config is None or not config.prometheus_scopes:
        return index
    names = {x["alert"] for _, r in spec.rules() if r.is_alert for x in r.runbook.get("related") or []}
    if not names:
        return index
    out = dict(index)
    rank = {}
    for s in specs:
        level = 0 if s.app == spec.app else 1 if config.share_prometheus(s.app, spec.app) else 2
        for _, r in s.rules():
            if r.is_alert and r.name in names and level < rank.get(r.name, 3):
                out[r.name], rank[r.name] = (s, r), level
    return out
