"""Routing label sets through an Alertmanager configuration with Alertmanager's own code.

``rulegen-amroute`` (``tools/rulegen-amroute``, built by ``scripts/install-tools.sh`` from the
pinned Alertmanager module) loads the configuration with Alertmanager's ``config`` package,
builds the route tree with ``dispatch.NewRoute`` and matches every label set against it, in
one process (``amtool config routes test`` routes one label set per run). The configuration
text is passed on stdin: the helper opens no file, so a configuration's ``templates`` or
``password_file`` entries are never read.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..findings import RulegenError
from . import find

TOOL = "rulegen-amroute"
#: Seconds one routing run may take (2,000 label sets through 200 routes take well under one).
TIMEOUT = 120


class InvalidConfig(RulegenError):
    """Alertmanager refuses the configuration; the message is Alertmanager's own error text."""


@dataclass(frozen=True)
class Match:
    """One route a label set reaches: its ``receiver``, the route's id (Alertmanager's
    ``Route.ID()``, its matchers from the root down) and whether it has ``continue: true``."""

    receiver: str
    route: str
    continue_: bool = False


@dataclass(frozen=True)
class Routing:
    """What the helper answered.

    Attributes:
        default: the root route's receiver.
        receivers: receiver name -> number of notifier configurations (0: it notifies nobody).
        results: per label set, in order, the routes it reaches (as Alertmanager's dispatcher
            would notify them: a ``continue`` route followed by the later ones).
    """

    default: str
    receivers: dict
    results: tuple


def route(config_text: str, label_sets: list[dict], root: Path | None = None) -> Routing:
    """Route ``label_sets`` (label name -> value) through the Alertmanager configuration
    ``config_text`` (an ``alertmanager.yml``).

    Raises:
        InvalidConfig: Alertmanager's ``config.Load`` refuses it (message: its error).
        RulegenError: the helper is not installed, failed or timed out.
    """
    tool = find.require(TOOL, root)
    request = json.dumps({"config": config_text, "label_sets": [dict(ls) for ls in label_sets]})
    from . import process  # (subprocess: imported only by the runs that start one)
    try:
        proc = process.run([tool], timeout=TIMEOUT, input=request)
    except process.subprocess.TimeoutExpired:
        raise RulegenError(f"{TOOL} ran longer than {TIMEOUT} s") from None
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        raise RulegenError(f"{TOOL} failed (exit {proc.returncode}): {(proc.stderr or proc.stdout).strip()[:500]}"
                           f"; {find.INSTALL_HINT}") from None
    if out.get("error"):
        raise InvalidConfig(out["error"])
    results = tuple(tuple(Match(m["receiver"], m["route"], bool(m.get("continue"))) for m in r)
                    for r in out.get("results") or ())
    return Routing(default=out.get("default", ""),
                   receivers={r["name"]: int(r.get("integrations", 0)) for r in out.get("receivers") or ()},
                   results=results)
