"""The team's conventions, read from the rules it imports, written into ``.rulegen.yaml``.

When imported rules follow a convention of their own consistently, that is the team's
convention, not one violation per alert. Read (:func:`infer`):

* **severities**, only when the project's ``.rulegen.yaml`` states none (a list it states is
  kept as it is; imported alerts outside it are RG501 findings, baselined): most imported
  alerts have a ``severity`` (those without one, fewer than those with, say nothing about
  the scheme: they are named in the message, and their findings are baselined like any
  other), the values are not all in rulegen's default set (``critical``,
  ``warning``, ``info``) and there are at most :data:`MAX_SEVERITIES` of them. When they
  share a value with the default set, the defaults stay, in their order, and the other
  values are added after them, with a comment naming the alerts that use them
  (kube-prometheus-stack: ``[critical, warning, info, none]``, ``none`` for ``Watchdog`` and
  ``InfoInhibitor``, alerts that page no one). When they share none, they are the team's
  own scheme (``page``, ``ticket``) and are listed alone, most used first. When
  ``require_runbook_for`` then names no severity in use, the message says so (which
  severity pages is the team's call, not rulegen's guess).
* **summary** / **description**: no imported alert has one → ``require_summary: false`` /
  ``require_description: false``.

A setting the project's ``.rulegen.yaml`` already states is never changed: the file is the
team's. :func:`write` adds keys to it with ruamel.yaml's round trip, so its comments and
layout stay. A file import creates (the project had none) also says ``policy_changes: fail``,
as ``rulegen new`` does (:data:`rulegen.starter.POLICY_COMMENT`): ``rulegen check --base``
then fails a pull request that grows the baseline or weakens a check.
"""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..config import CONFIG_FILE, Config, parse_config
from ..starter import POLICY_COMMENT
from ..fs import read as fs_read
from ..fs import yamlbound
from ..fs.write import atomic_write

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
        raw = yamlbound.safe_load(fs_read.read_text(p, CONFIG_FILE), CONFIG_FILE) or {}
    except yaml.YAMLError:
        return {}
    return raw if isinstance(raw, dict) else {}


def infer(alerts: list[dict], config: Config, root: Path) -> tuple[dict, list[str], dict]:
    """``(updates, messages, comments)``: the ``conventions`` keys to add
    (``{"severities": [...]}``...), one sentence per update, and a comment per key saying
    where its value came from, from ``alerts`` (spec alert mappings: ``alert``, ``severity``,
    ``summary``, ``description``, ``labels``) and the project's ``config`` (at ``root``)."""
    stated = _stated(root)
    updates: dict = {}
    msgs: list[str] = []
    comments: dict = {}
    if not alerts:
        return updates, msgs, comments
    sev = [a.get("severity") or (a.get("labels") or {}).get("severity") for a in alerts]
    rated = [(a, s) for a, s in zip(alerts, sev) if isinstance(s, str) and s]
    unrated = [str(a.get("alert")) for a, s in zip(alerts, sev) if not (isinstance(s, str) and s)]
    if "severities" not in stated and len(rated) > len(unrated):
        counts: dict = {}
        users: dict = {}
        for a, s in rated:
            counts[s] = counts.get(s, 0) + 1
            users.setdefault(s, [])
            if str(a.get("alert")) not in users[s]:
                users[s].append(str(a.get("alert")))
        if not set(counts) <= set(config.severities) and len(counts) <= MAX_SEVERITIES:
            extra = sorted((s for s in counts if s not in config.severities), key=lambda s: (-counts[s], s))
            if set(counts) & set(config.severities):
                scheme = list(config.severities) + extra
                msg = (f"the imported alerts use {', '.join(extra)} besides {', '.join(config.severities)}"
                       + (f" ({len(unrated)} have no severity: {_few(unrated)})" if unrated else "")
                       + ": conventions.severities")
                comments["severities"] = [
                    f"read from the imported rules by `rulegen import`: {', '.join(config.severities)} are "
                    "rulegen's defaults" + "".join(f"; {s} is used by the imported {_few(users[s])}" for s in extra)]
            else:
                scheme = sorted(counts, key=lambda s: (-counts[s], s))
                msg = (f"the imported alerts use the severities {', '.join(scheme)} (all {len(rated)} of them"
                       + (f" with one; {len(unrated)} alert(s) have none: {_few(unrated)}" if unrated else "")
                       + "): conventions.severities")
            updates["severities"] = scheme
            if not set(config.require_runbook_for) & set(scheme):
                msg += (f"; conventions.require_runbook_for ({', '.join(config.require_runbook_for) or 'none'}) "
                        "names none of them, so set it to the severities that page someone")
            msgs.append(msg)
    for key, field in (("require_summary", "summary"), ("require_description", "description")):
        if key not in stated and getattr(config, key) and \
                not any(a.get(field) or (a.get("annotations") or {}).get(field) for a in alerts):
            updates[key] = False
            msgs.append(f"none of the {len(alerts)} imported alerts has a {field}: conventions.{key}: false")
    return updates, msgs, comments


def _few(names: list[str]) -> str:
    """``Watchdog, InfoInhibitor`` or ``A, B, C and 4 more``."""
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


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


def text_with(root: Path, updates: dict, top: dict | None = None, comments: dict | None = None) -> str:
    """The ``.rulegen.yaml`` text with ``updates`` added under ``conventions`` and ``top``
    keys at the top level (the file's other content kept as it is); ``comments``: key ->
    comment lines written above that key (default: the first key says it was read from the
    imported rules). Raises RulegenError when the result is not a valid config."""
    p = root / CONFIG_FILE
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    existing = fs_read.read_text(p, CONFIG_FILE) if p.is_file() else ""
    yamlbound.check_text(existing, CONFIG_FILE)
    doc = y.load(existing) if existing.strip() else None
    if not isinstance(doc, CommentedMap):
        doc = CommentedMap()
        doc.yaml_set_start_comment(
            "rulegen project configuration (every key: docs/configuration.md in rulegen's documentation).")
    for k, v in (top or {}).items():
        doc[k] = v
    conv = doc.get("conventions")
    if not isinstance(conv, CommentedMap) and updates:
        conv = CommentedMap()
        doc["conventions"] = conv
    if not existing.strip() and "policy_changes" not in doc:
        doc["policy_changes"] = "fail"
        doc.yaml_set_comment_before_after_key("policy_changes", before=POLICY_COMMENT, indent=0)
    first = True
    for k, v in updates.items():
        conv[k] = CommentedSeq(v) if isinstance(v, list) else v
        if isinstance(conv[k], CommentedSeq):
            conv[k].fa.set_flow_style()
        if (comments or {}).get(k):
            conv.yaml_set_comment_before_after_key(k, before="\n".join(comments[k]), indent=2)
        elif first:
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
    return atomic_write(root / CONFIG_FILE, text, root=root)
