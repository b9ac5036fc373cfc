"""Cross-references between alerts.

Codes:

* ``RG420`` ``runbook.related[].alert`` names no alert of any spec (with "did you mean").
  The runbook page links to it, so the link would be dead. Validating some files still reads
  the alerts of the project's other specs under ``rules/``. Bad:
  ``related: [{alert: LlamaSwapNoMetric}]``; good: ``related: [{alert: LlamaSwapNoMetrics}]``.
* ``RG421`` a test's ``alert_rule_test[].alertname`` names no alert of the same spec (tests
  run against the spec's own rules only), with "did you mean". Bad: ``alertname: LlamaSwapDwn``.
  Good: ``alertname: LlamaSwapDown``.
"""

from __future__ import annotations

import difflib

ID = "xrefs"


def _hint(name: str, names) -> str:
    near = difflib.get_close_matches(name, sorted(names), n=1, cutoff=0.6)
    return f"; did you mean {near[0]}?" if near else "; use the name of a defined alert, or remove the entry"


def check_project(specs, ctx):
    """Yield RG420 (against every spec's alerts, those of the project's specs not validated
    this time, ``ctx.reference``, included) and RG421 (against the spec's own alerts)."""
    every = {r.name for s in list(specs) + list(getattr(ctx, "reference", None) or []) for r in s.alerts()}
    for spec in specs:
        lf = spec.source
        own = {r.name for r in spec.alerts()}
        for r in spec.alerts():
            for i, rel in enumerate(r.runbook.get("related") or []):
                name = rel.get("alert") if isinstance(rel, dict) else None
                if isinstance(name, str) and name not in every:
                    yield lf.finding(r.path + ("runbook", "related", i, "alert"), "RG420",
                                     f"related alert {name!r} is not defined in any spec"
                                     f"{_hint(name, every)}", rule=r.name)
        for _, r in spec.rules():
            for t in r.tests:
                for ai, a in enumerate(t.data.get("alert_rule_test") or []):
                    name = a.get("alertname") if isinstance(a, dict) else None
                    if isinstance(name, str) and name not in own:
                        yield lf.finding(t.path + ("alert_rule_test", ai, "alertname"), "RG421",
                                         f"test {t.name!r} checks alert {name!r}, which this spec "
                                         f"does not define{_hint(name, own)}", rule=r.name)
