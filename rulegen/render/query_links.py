"""The runbook pages' "Open in Prometheus" / Grafana links for a PromQL query (moved out of
:mod:`rulegen.render.runbook`, which re-exports :class:`QueryLinks`). A link longer than a
page line is written over lines by :func:`rulegen.render.wrap.split_links`."""

from __future__ import annotations


class QueryLinks:
    """Links that open a PromQL query in Prometheus' expression browser and in Grafana Explore,
    from the base URLs of ``.rulegen.yaml`` (``runbooks.prometheus_url``/``grafana_url``).

    Prometheus: ``<base>/graph?g0.expr=<query>&g0.tab=1``, the form Prometheus itself uses
    in an alert's ``generatorURL``. Grafana: ``<base>/explore?schemaVersion=1&panes=...``
    with the query on the default data source (Grafana's Explore URL format)."""

    def __init__(self, prometheus: str | None, grafana: str | None):
        self.prometheus = prometheus
        self.grafana = grafana

    def __bool__(self) -> bool:
        return bool(self.prometheus or self.grafana)

    def urls(self, query: str) -> list[tuple[str, str]]:
        """(label, URL) pairs for ``query``."""
        from urllib.parse import quote
        out = []
        q = query.strip()
        if self.prometheus:
            out.append(("Prometheus", f"{self.prometheus}/graph?g0.expr={quote(q, safe='')}&g0.tab=1"))
        if self.grafana:
            import json
            panes = json.dumps({"a": {"queries": [{"refId": "A", "expr": q}],
                                      "range": {"from": "now-1h", "to": "now"}}}, separators=(",", ":"))
            out.append(("Grafana", f"{self.grafana}/explore?schemaVersion=1&panes={quote(panes, safe='')}"))
        return out

    def markdown(self, queries: list[str]) -> str:
        """One line of links per query ("Open in Prometheus · Grafana", numbered when several)."""
        lines = []
        for i, q in enumerate(queries, 1):
            links = " · ".join(f"[{name}]({url}){{ .rg-open }}" for name, url in self.urls(q))
            lead = f"Open query {i} in" if len(queries) > 1 else "Open in"
            lines.append(f"{lead} {links}")
        return "<br>\n".join(lines) if len(lines) > 1 else lines[0]
