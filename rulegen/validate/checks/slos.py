"""SLOs (``slos:`` in a spec; see :mod:`rulegen.spec.slo` for what they expand into). The
schema checks the shape (RG2xx); these check the meaning, at the field's position.

Codes:

* ``RG350`` the objective is not a percentage strictly between 0 and 100, or is at or below
  1: a ratio written where a percentage is meant (read as a percentage, 0.995 leaves a budget
  of 99.005% and the SLO never pages; the message gives the value times 100). Bad:
  ``objective: 100`` (no budget), ``objective: 0.995``; good: ``objective: 99.5``.
* ``RG351`` the period is not a Prometheus duration. Bad: ``period: 30 days``; good:
  ``period: 30d``.
* ``RG352`` the period is outside 1d..400d. Bad: ``period: 1h``; good: ``period: 28d``.
* ``RG353`` a counter selector (``sli.events.bad``/``good``/``total``,
  ``sli.latency.histogram``) is not a plain vector selector with its metric name first:
  rulegen adds ``rate()`` and the windows. Bad: ``bad: rate(http_requests_total[5m])``;
  good: ``bad: http_requests_total{code=~"5.."}``.
* ``RG354`` a ratio selector names a gauge, not a counter, and SLIs count events with
  ``rate()``. Flagged: names ending in a unit or kind that is not a counter's
  (``_seconds``, ``_bytes``, ``_ratio``, ``_info``, ``_sum``, ``_created``,
  ``_timestamp``...) and ``up``, unless they end in ``_total``, ``_count`` or ``_bucket``;
  names without such a suffix pass, as some exporters name counters that way (nginx-ingress's
  ``nginx_ingress_controller_requests``). Bad: ``total: node_memory_MemFree_bytes``; good:
  ``total: http_requests_total``.
* ``RG355`` ``le`` is not a bucket bound: not a number, not above 0, ``+Inf``, or not
  written as Prometheus 3 writes the label (``1`` is stored as ``1.0``, so a selector on
  ``le="1"`` matches nothing). Bad: ``le: "1"``; good: ``le: "1.0"``.
* ``RG356`` the SLI names neither or both of ``events`` and ``latency``, or an ``events``
  SLI neither or both of ``bad`` and ``good``. Bad: ``sli`` holding both ``events`` and
  ``latency``; good: ``sli`` holding ``events`` only.
* ``RG357`` the histogram selector matches on ``le``, which rulegen adds from
  ``sli.latency.le``. Bad: ``histogram: x_bucket{le="0.5"}``; good: ``histogram: x_bucket``
  with ``le: "0.5"``.
* ``RG358`` (warning) the objective is so loose that a burn-rate pair can never fire
  (``factor x budget >= 1`` asks for an error ratio above 100%). Bad: ``objective: 90`` (14.4
  x 10%); good: ``objective: 99``.
* ``RG359`` no test series can be made for the SLI: rulegen generates the SLO's promtool
  tests from series that the selectors tell apart (a bad event that the total also counts,
  a good one it does not), and found none for these matchers. Bad:
  ``bad: x_total{code=~"a^b"}`` (matches nothing); good: ``bad: x_total{code=~"5.."}``.
* ``RG361`` an SLO's ``labels`` (or ``page.labels``/``ticket.labels``) set a label rulegen
  sets on the SLO's rules: ``slo`` and ``slo_service`` (the alerts select their recording
  rules by them), ``long`` and ``short`` (each burn-rate rule's windows). Bad:
  ``labels: {slo: checkout-v2}``; good: ``labels: {slo_version: v2}``.
* ``RG362`` an SLO's page or ticket alert has the name of another alert of the spec: the
  other SLO alert (``page.alert`` equal to ``ticket.alert``, or two SLOs whose default names
  meet, ``api-2`` and ``api2`` both giving ``ShopApi2FastBurn``) or a hand-written alert.
  The rules would share a name, so knobs, tests and the runbook section of one act on the
  other, and promtool rejects equal rules. Bad: ``ticket: {alert: ShopDown}`` beside an
  alert ``ShopDown``; good: ``ticket: {alert: ShopCheckoutSlowBurn}``.
* ``RG360`` a latency SLI's ``histogram`` is not the ``_bucket`` series of a classic
  histogram (rulegen reads it with ``le`` and the ``_count`` series beside it). Bad:
  ``histogram: http_request_duration_seconds``; good:
  ``histogram: http_request_duration_seconds_bucket``.
"""

from __future__ import annotations

from ...findings import Severity

ID = "slos"


def check_file(lf, ctx):
    """Yield RG350-RG360 findings for the ``slos`` entries of ``lf`` (raw data, so each is
    reported even when the schema rejects another part of the spec)."""
    data = lf.data
    entries = data.get("slos") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return
    from ...spec import slo  # (a spec without SLOs never imports the SLO package)
    app = data.get("app") if isinstance(data.get("app"), str) else "app"
    # alert names taken so far: hand-written alerts of the spec, then each SLO's (RG362)
    taken: dict[str, str] = {}
    for g in data.get("groups") if isinstance(data.get("groups"), list) else []:
        for r in (g.get("rules") if isinstance(g, dict) and isinstance(g.get("rules"), list) else []):
            if isinstance(r, dict) and isinstance(r.get("alert"), str):
                taken.setdefault(r["alert"], f"the alert {r['alert']} written in `groups`")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            continue
        name = entry.get("name") if isinstance(entry.get("name"), str) else ""
        found = slo.problems(entry)
        for suffix, code, message, warning in found:
            yield lf.finding(("slos", i) + suffix, code, f"SLO {name}: {message}" if name else message,
                             rule=name, severity=Severity.WARNING if warning else Severity.ERROR)
        if any(not w for *_, w in found) or not _shaped(entry):
            continue
        s = slo.read(app, i, entry)
        if s is None:
            continue
        clashes: dict[tuple, list[str]] = {}  # where -> what; default names are reported at the SLO's name
        for sev in ("page", "ticket"):
            alert = s.alert_name(sev)
            given = isinstance(entry.get(sev), dict) and "alert" in entry[sev]
            if alert in taken and not (sev == "ticket" and alert == s.alert_name("page")):  # that one: RG362 above
                where = ("slos", i, sev, "alert") if given else ("slos", i, "name")
                clashes.setdefault(where, []).append(f"its {sev} alert {alert} has the name of {taken[alert]}")
            taken.setdefault(alert, f"SLO {name}'s {sev} alert")
        for where, what in clashes.items():
            sevs = " and ".join(f"`{x.split()[1]}.alert`" for x in what)
            yield lf.finding(where, "RG362", f"SLO {name}: {'; '.join(what)}: the rules would share one name, "
                             f"their knobs, tests and runbook section; set {sevs} to another name",
                             rule=name, key=where[-1] == "name")
        try:
            slo.tests(s)
        except ValueError as e:
            if "too close to the threshold" in str(e) or "does not fire" in str(e) or "stay quiet" in str(e):
                # the series exist; the objective puts a threshold where float64 cannot tell the sides apart
                yield lf.finding(("slos", i, "objective"), "RG359", f"SLO {name}: cannot generate test series: "
                                 f"{e}; the objective puts a burn-rate threshold too close to an error ratio "
                                 "of 1 or beyond float64's precision: use fewer digits or a tighter "
                                 "objective", rule=name)
            else:
                yield lf.finding(("slos", i, "sli"), "RG359", f"SLO {name}: cannot generate test series: {e}; "
                                 "use equality or simple alternation matchers", rule=name, key=True)


def _shaped(entry: dict) -> bool:
    """Whether ``entry`` has the shape :func:`rulegen.spec.slo.read` needs (the schema may
    have reported it otherwise)."""
    from ...spec import slo
    sli = entry.get("sli")
    if not isinstance(entry.get("name"), str) or slo.objective_decimal(entry.get("objective")) is None:
        return False
    if "period" in entry and not isinstance(entry["period"], str):
        return False
    if not isinstance(sli, dict):
        return False
    if "events" in sli:
        ev = sli["events"]
        return isinstance(ev, dict) and all(isinstance(ev.get(k), str) for k in ev if k in ("bad", "good", "total")) \
            and isinstance(ev.get("total"), str)
    lat = sli.get("latency")
    return isinstance(lat, dict) and isinstance(lat.get("histogram"), str) and "le" in lat
