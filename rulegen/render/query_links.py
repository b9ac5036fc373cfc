"""The runbook pages' "Open in Prometheus" / Grafana links for a PromQL query (moved out of
:mod:`rulegen.render.runbook`, which re-exports :class:`QueryLinks`). A link longer than a
page line is written over lines by :func:`rulegen.render.wrap.split_links`.

An alert's own link (:meth:`QueryLinks.alert_markdown`) opens the value its expr compares with
a number (:func:`rulegen.promql.compared.compared_query`) when there is one, labelled so
(:data:`COMPARED_LEAD`), else the whole expr."""

from __future__ import annotations

from ..promql.compared import compared_query

#: The words before an alert's links when they open the value its expr compares with a number
#: (``rate(errors[5m])`` of ``rate(errors[5m]) > 0.05``): every series with its value now,
#: firing or not; the threshold is in the "Fires when" sentence above them, and only there, so
#: a threshold edit changes one line of the page (issue 29).
COMPARED_LEAD = "Open the compared value (the expr without its comparison: every series, firing or not) in"


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

    def markdown(self, queries: list[str], lead: str = "Open in") -> str:
        """One line of links per query ("Open in Prometheus · Grafana", numbered when several;
        ``lead``: the words before the links of a single query)."""
        lines = []
        for i, q in enumerate(queries, 1):
            links = " · ".join(f"[{name}]({url}){{ .rg-open }}" for name, url in self.urls(q))
            lines.append(f"{f'Open query {i} in' if len(queries) > 1 else lead} {links}")
        return "<br>\n".join(lines) if len(lines) > 1 else lines[0]

    def alert_markdown(self, expr: str) -> str:
        """The links of an alert's ``expr`` (the defaults of its ``[[params]]`` in, as the page
        shows it): of the value it compares with a number, as written, after
        :data:`COMPARED_LEAD` (``A > 0.05``, ``0.05 < A``, in parentheses too, without
        ``bool``: :func:`rulegen.promql.compared.compared_query`); of the whole expr, "Open
        in", for any other expr (``absent(...)``, ``A > B``, ``A > 1 and B > 3``)."""
        query = compared_query(expr)
        return self.markdown([query], COMPARED_LEAD) if query else self.markdown([expr])
