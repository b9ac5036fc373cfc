"""Conventions that make alerts routable and actionable. Each is on by default and can be
switched off or tuned in ``.rulegen.yaml`` (see :mod:`rulegen.config`)::

    conventions:
      severities: [critical, warning, info]   # [] switches RG501 off
      require_summary: true                   # RG502
      require_description: true               # RG503
      require_runbook_for: [critical]         # RG504; [] switches it off

Codes:

* ``RG501`` an alert has no ``severity``, or one outside the allowed set (default
  ``critical``, ``warning``, ``info``). Alertmanager routes on it. The severity may also come
  from ``labels`` (app, group or alert). Bad: ``severity: page``; good: ``severity: critical``.
* ``RG502`` an alert has no ``summary`` (or a blank one). Bad: an alert without ``summary:``;
  good: ``summary: llama-swap has no available replica.``
* ``RG503`` an alert has no ``description`` (or a blank one).
* ``RG504`` an alert whose severity is in ``require_runbook_for`` (default ``critical``) has
  no runbook content: none of ``runbook.causes``, ``runbook.diagnosis``,
  ``runbook.resolution``, and no ``runbook_url`` annotation of its own pointing at an
  existing runbook. Whoever is paged needs to know what to do. Good:
  ``runbook: {causes: [...], resolution: [...]}``.
"""

from __future__ import annotations

ID = "conventions"


def check_spec(spec, ctx):
    """Yield RG501-RG504 findings for the alerts of ``spec`` per ``ctx.config``."""
    cfg = ctx.config
    lf = spec.source
    for g, r in spec.rules():
        if not r.is_alert:
            continue
        name_path = r.path + ("alert",)
        labels = r.all_labels(spec.labels, g.labels)
        severity = labels.get("severity")
        if cfg.severities:
            allowed = ", ".join(cfg.severities)
            if severity is None:
                yield lf.finding(name_path, "RG501", f"alert has no severity; add `severity:` "
                                 f"with one of {allowed}", rule=r.name)
            elif severity not in cfg.severities:
                path = r.path + ("severity",) if r.severity is not None else name_path
                yield lf.finding(path, "RG501", f"severity {severity!r} is not one of {allowed} "
                                 "(conventions.severities in .rulegen.yaml)", rule=r.name)
        for key, required, code in (("summary", cfg.require_summary, "RG502"),
                                    ("description", cfg.require_description, "RG503")):
            if required and not str(r.annotations.get(key) or "").strip():
                yield lf.finding(name_path, code, f"alert has no {key}; add `{key}:` saying "
                                 + ("what is wrong in one line" if key == "summary"
                                    else "what fires, where and what it means"), rule=r.name)
        if severity in cfg.require_runbook_for and not r.annotations.get("runbook_url") and not any(
                r.runbook.get(k) for k in ("causes", "diagnosis", "resolution")):
            yield lf.finding(name_path, "RG504", f"{severity} alert has no runbook content; add "
                             "runbook.causes, runbook.diagnosis or runbook.resolution so whoever "
                             "is paged knows what to do", rule=r.name)
