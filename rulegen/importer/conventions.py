"""The team's conventions, read from the rules it imports, written into ``.rulegen.yaml``.

When imported rules follow a convention of their own consistently, that is the team's
convention, not one violation per alert. Read (:func:`infer`):

* **severities**: every imported alert has a ``severity`` and the values are not all in the
  project's set (default ``critical``, ``warning``, ``info``), with at most
  :data:`MAX_SEVERITIES` distinct values → ``conventions.severities`` lists them (most used
  first). When ``require_runbook_for`` then names no severity in use, the message says so
  (which severity pages is the team's call, not rulegen's guess).
* **summary** / **description**: no imported alert has one → ``require_summary: false`` /
  ``require_description: false``.

A setting the project's ``.rulegen.yaml`` already states is never changed: the file is the
team's. :func:`write` adds keys to it with ruamel.yaml's round trip, so its comments and
layout stay.
"""

from __future__ import annotations

import os
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..config import CONFIG_FILE, Config, parse_config

MAX_SEVERITIES = 6


def _stated(root: Path) -> dict:
    """The ``conventions`` mapping the project's config states (empty when none)."""
    conv = stated_top(root).get("conventions")
    return conv if isinstance(conv, dict) else {}


def stated_top(root: Path) -> dict:
    """The top-level mapping the project's config states (empty when none)."""
    p = root / CONFIG_FILE
    if not p.is_file():
        return {}
    import yaml
    try:
        raw = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError:
        return {}
    return raw if isinstance(raw, dict) else {}


def infer(alerts: list[dict], config: Config, root: Path) -> tuple[dict, list[str]]:
    """``(updates, messages)``: the ``conventions`` keys to add (``{"severities": [...]}``...)
    and one sentence per update, from ``alerts`` (spec alert mappings: ``severity``,
    ``summary``, ``description``, ``labels``) and the project's ``config``."""
    stated = _stated(root)
    updates: dict = {}
    msgs: list[str] = []
    if not alerts:
        return updates, msgs
    sev = [a.get("severity") or (a.get("labels") or {}).get("severity") for a in alerts]
    if "severities" not in stated and all(isinstance(s, str) and s for s in sev):
        counts: dict = {}
        for s in sev:
            counts[s] = counts.get(s, 0) + 1
        if not set(counts) <= set(config.severities) and len(counts) <= MAX_SEVERITIES:
            scheme = sorted(counts, key=lambda s: (-counts[s], s))
            updates["severities"] = scheme
            msg = (f"the imported alerts use the severities {', '.join(scheme)} (all {len(alerts)} of them): "
                   "conventions.severities")
            if not set(config.require_runbook_for) & set(scheme):
                msg += (f"; conventions.require_runbook_for ({', '.join(config.require_runbook_for) or 'none'}) "
                        "names none of them, so set it to the severities that page someone")
            msgs.append(msg)
    for key, field in (("require_summary", "summary"), ("require_description", "description")):
        if key not in stated and getattr(config, key) and \
                not any(a.get(field) or (a.get("annotations") or {}).get(field) for a in alerts):
            updates[key] = False
            msgs.append(f"none of the {len(alerts)} imported alerts has a {field}: conventions.{key}: false")
    return updates, msgs


def apply(config: Config, updates: dict) -> Config:
    """``config`` with the convention ``updates`` made (for validating before writing)."""
    from dataclasses import replace
    kw = {}
    if "severities" in updates:
        kw["severities"] = tuple(updates["severities"])
    for k in ("require_summary", "require_description"):
        if k in updates:
            kw[k] = updates[k]
    return replace(config, **kw)


def text_with(root: Path, updates: dict, top: dict | None = None) -> str:
    """The ``.rulegen.yaml`` text with ``updates`` added under ``conventions`` and ``top``
    keys at the top level (the file's other content kept as it is). Raises RulegenError when
    the result is not a valid config."""
    p = root / CONFIG_FILE
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    existing = p.read_text(encoding="utf-8") if p.is_file() else ""
    doc = y.load(existing) if existing.strip() else None
    if not isinstance(doc, CommentedMap):
        doc = CommentedMap()
        doc.yaml_set_start_comment("rulegen project configuration (see the README, \"Project configuration\").")
    for k, v in (top or {}).items():
        doc[k] = v
    conv = doc.get("conventions")
    if not isinstance(conv, CommentedMap) and updates:
        conv = CommentedMap()
        doc["conventions"] = conv
    first = True
    for k, v in updates.items():
        conv[k] = CommentedSeq(v) if isinstance(v, list) else v
        if isinstance(conv[k], CommentedSeq):
            conv[k].fa.set_flow_style()
        if first:
            conv.yaml_set_comment_before_after_key(k, before="read from the imported rules by `rulegen import`",
                                                   indent=2)
            first = False
    from io import StringIO
    buf = StringIO()
    y.dump(doc, buf)
    import yaml
    parse_config(yaml.safe_load(buf.getvalue()))  # raises RulegenError when not valid
    return buf.getvalue()


def write(root: Path, text: str) -> Path:
    """Write the config ``text`` atomically."""
    p = root / CONFIG_FILE
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, p)
    return p
