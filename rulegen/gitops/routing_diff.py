"""``rulegen diff``'s routing part: the receivers each alert reaches at the base ref and in the
working tree, each side routed through its own Alertmanager configuration (``alertmanager.config``
of that side's ``.rulegen.yaml``, read from Git for the base) by Alertmanager's own code
(:mod:`rulegen.routing.project`). An alert that stops reaching anyone (for a paging severity:
anyone but the default receiver) is the review's headline.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from ..config import CONFIG_FILE, Config, parse_config
from ..findings import RulegenError
from ..fs import yamlbound
from ..routing.project import route_project
from .gitbase import base_file


@dataclass(frozen=True)
class RouteChange:
    """Alert ``alert`` of ``app`` reached ``old`` receivers at the base and ``new`` ones now
    (empty tuple: routed nowhere, or not routed on that side); ``old_pages``/``new_pages``:
    whether it reached someone (:meth:`rulegen.routing.project.ProjectRouting.pages`)."""

    app: str
    alert: str
    old: tuple
    new: tuple
    old_pages: bool
    new_pages: bool

    @property
    def stops_paging(self) -> bool:
        return self.old_pages and not self.new_pages


def _base_config(root: Path, base: str) -> Config:
    text = base_file(root, base, CONFIG_FILE)
    if not text:
        return Config()
    try:
        return parse_config(yamlbound.safe_load(text, f"{base}:{CONFIG_FILE}") or {})
    except (yaml.YAMLError, RulegenError):
        return Config()


def _side(specs, root, config, text, read) -> dict:
    routing = route_project(specs, root, config, config_text=text, read=read)
    if routing is None:
        return {}
    out: dict = {}
    for a in routing.alerts:
        rec, pages = out.get((a.app, a.alert), ((), False))
        out[(a.app, a.alert)] = (rec + tuple(r for r in a.receivers if r not in rec),
                                 pages or routing.pages(a, config.paging_severities))
    return out


def routing_changes(root: Path, base: str, old_specs, new_specs, config: Config) -> tuple[list, list]:
    """(:class:`RouteChange` list, notes): alerts on both sides whose receivers differ, those that stop paging first, then by app and name. Nothing when neither side
    names an Alertmanager configuration."""
    old_cfg = _base_config(root, base)
    if not (old_cfg.alertmanager_config or config.alertmanager_config):
        return [], []
    notes = []
    try:
        new = _side(new_specs, root, config, None, None)
    except RulegenError as e:
        return [], [f"routing was not compared: the working tree's {e}"]
    old: dict = {}
    if old_cfg.alertmanager_config:
        try:
            text = base_file(root, base, old_cfg.alertmanager_config)
            if text is None:
                notes.append(f"at {base}, {old_cfg.alertmanager_config} does not exist: routing compared "
                             "with nothing routed there")
            else:
                old = _side(old_specs, root, old_cfg, text, lambda rel: base_file(root, base, rel))
        except RulegenError as e:
            notes.append(f"routing at {base} could not be read ({e}): compared with nothing routed there")
    out = []
    for key in sorted(new.keys() & old.keys()):
        (o, op), (n, np) = old[key], new[key]
        if o != n:
            out.append(RouteChange(key[0], key[1], o, n, op, np))
    out.sort(key=lambda c: (not c.stops_paging, c.app, c.alert))
    return out, notes
