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
* ``RG505`` (warning) a ``runbook.diagnosis`` command changes something: the page calls that
  section "Diagnose (all read-only)", and whoever is paged at 3 a.m. runs it as such. Flagged:
  ``kubectl``/``oc`` with delete, apply, create, edit, patch, replace, scale, drain, cordon,
  uncordon, taint, label, annotate, set, autoscale, expose, run, ``rollout`` restart/undo/
  pause/resume; ``helm`` install, upgrade, uninstall, delete, rollback; ``rm``; ``systemctl``
  start/stop/restart/reload/kill; ``curl -X``/``--request`` POST, PUT, PATCH, DELETE. Bad:
  ``kubectl -n ai delete pod llama-swap-0``; good: move it to ``runbook.resolution``.
"""

from __future__ import annotations

import re
import shlex

from ...findings import Finding, Severity
from .positions import offset_position

ID = "conventions"


_KUBECTL_WRITES = {"delete", "apply", "create", "edit", "patch", "replace", "scale", "drain",
                   "cordon", "uncordon", "taint", "label", "annotate", "set", "autoscale",
                   "expose", "run"}
_ROLLOUT_WRITES = {"restart", "undo", "pause", "resume"}
_HELM_WRITES = {"install", "upgrade", "uninstall", "delete", "rollback"}
_SYSTEMCTL_WRITES = {"start", "stop", "restart", "reload", "kill"}
_HTTP_WRITES = {"POST", "PUT", "PATCH", "DELETE"}
#: kubectl/oc/helm global flags that take the next word as their value
_VALUE_FLAGS = {"-n", "--namespace", "--context", "--kubeconfig", "--cluster", "--user", "-s",
                "--server", "--kube-context", "--as", "--token", "-l", "--selector"}
_SEPARATORS = re.compile(r"&&|\|\||[;|\n]")


def mutating(command: str) -> str | None:
    """The first part of a shell ``command`` text (one or more lines, ``&&``, ``;``, pipes)
    that changes something (see RG505 in the module docstring), or None. A part that cannot be
    split like a shell line is judged by its words split on spaces."""
    for part in _SEPARATORS.split(command):
        text = part.strip()
        if not text or text.startswith("#"):
            continue
        try:
            words = shlex.split(text, comments=True)
        except ValueError:
            words = text.split()
        words = [w for w in words if w != "sudo"]
        if not words:
            continue
        tool = words[0].rsplit("/", 1)[-1]
        if tool in ("kubectl", "oc", "helm"):
            rest, i = [], 1
            while i < len(words):
                w = words[i]
                if w in _VALUE_FLAGS:
                    i += 2
                    continue
                if not w.startswith("-"):
                    rest.append(w)
                i += 1
            if not rest:
                continue
            verb = rest[0]
            if tool == "helm":
                if verb in _HELM_WRITES:
                    return text
            elif verb in _KUBECTL_WRITES or (verb == "rollout" and len(rest) > 1 and rest[1] in _ROLLOUT_WRITES):
                return text
        elif tool == "rm":
            return text
        elif tool == "systemctl" and any(w in _SYSTEMCTL_WRITES for w in words[1:]):
            return text
        elif tool == "curl":
            for i, w in enumerate(words):
                method = w[2:] if w.startswith("-X") and len(w) > 2 else (
                    w.split("=", 1)[1] if w.startswith("--request=") else None)
                if method is None and w in ("-X", "--request") and i + 1 < len(words):
                    method = words[i + 1]
                if method and method.upper() in _HTTP_WRITES:
                    return text
    return None


def check_spec(spec, ctx):
    """Yield RG501-RG505 findings for the alerts of ``spec`` per ``ctx.config``."""
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
        for i, block in enumerate(r.runbook.get("diagnosis") or []):
            commands = block.get("commands") if isinstance(block, dict) else None
            found = mutating(commands) if isinstance(commands, str) else None
            if found is not None:
                path = r.path + ("runbook", "diagnosis", i, "commands")
                line, col = offset_position(lf, path, max(commands.find(found), 0))
                yield Finding(lf.path, line, col, "RG505", Severity.WARNING,
                              f"diagnosis command `{found}` changes something, but the page lists "
                              "diagnosis as read-only commands; move it to runbook.resolution", r.name)
