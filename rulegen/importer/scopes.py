"""Which imported apps share a Prometheus, read from the layout of the sources, for
``prometheus_scopes`` in ``.rulegen.yaml`` (see :mod:`rulegen.config`).

A rule repository that renders one chart per cluster or provider holds the same alert and
PrometheusRule names once per cluster, on purpose: each copy is loaded by another Prometheus.
Import says so, so that the duplicate checks across apps (RG412, RG415) compare only the apps
one Prometheus loads, with no hand-written configuration (:func:`infer`):

* ``--variant NAME``: the variant is a scope, ``NAME``, holding the apps of this import (a
  chart imported once per value set: ``-f capa.yaml --variant capa``);
* sibling folders per provider or cluster: when apps imported from two folders side by side
  (``providers/aws/alerts.yml``, ``providers/gcp/alerts.yml``) share an alert name or a
  PrometheusRule name and namespace, and each such pair comes from the same file below its
  folder (the same file rendered per provider), every one of those sibling folders is a
  scope holding the apps imported from it. Apps not below one of them are in no scope (loaded
  by every Prometheus). Names shared by apps of different files, or of one folder, are not
  read as a layout: they stay duplicates (RG412/RG415), as before.

Scopes the project's ``.rulegen.yaml`` states are kept; an inferred scope of the same name
gets the apps it does not name yet.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from ..config import Config

_RENDERED = " (rendered)"
_NOT_SCOPE_CHAR = re.compile(r"[^A-Za-z0-9_.-]+")


def _parts(source: str) -> tuple:
    """The path parts of an import source (as displayed), outermost first."""
    return PurePosixPath(source[:-len(_RENDERED)] if source.endswith(_RENDERED) else source).parts


def _folders(source: str) -> tuple:
    """The folder names of an import source (as displayed), outermost first."""
    return _parts(source)[:-1]


def _common(parts: list[tuple]) -> tuple:
    out: tuple = ()
    for level in zip(*parts):
        if len(set(level)) != 1:
            break
        out += (level[0],)
    return out


def _scope_name(folder: str) -> str | None:
    """``folder`` as a scope name (letters, digits, ``-``, ``_``, ``.``; at most 63), or None."""
    name = _NOT_SCOPE_CHAR.sub("-", folder).strip("-_.")[:63].rstrip("-_.")
    return name or None


def _identity(spec) -> tuple | None:
    chart = spec.data.get("chart") if isinstance(spec.data.get("chart"), dict) else {}
    return (chart.get("name"), chart.get("namespace")) if chart.get("name") else None


def _alerts(spec) -> set:
    return {r.get("alert") for g in spec.data.get("groups", []) for r in g.get("rules", []) if r.get("alert")}


def from_folders(specs: list) -> dict:
    """``{scope: [app, ...]}`` from the sibling folders of ``specs``
    (:class:`rulegen.importer.result.ImportedSpec`, see the module docstring), or ``{}``."""
    where: dict = {}   # app -> (sibling folder, path below it)
    own = [(s, [_folders(src) for src in s.sources]) for s in specs if s.sources]
    if len(own) < 2:
        return {}
    base = _common([f for _, fs in own for f in fs])
    for s, fs in own:
        mine = _common(fs)
        if len(mine) <= len(base):
            continue   # in the common folder itself: loaded everywhere
        below = {"/".join(_parts(src)[len(base) + 1:]) for src in s.sources}
        where[s.app] = (mine[len(base)], tuple(sorted(below)))
    folders = {w[0] for w in where.values()}
    if len(folders) < 2:
        return {}
    collided = False
    names = {s.app: (_alerts(s), _identity(s)) for s in specs}
    for i, a in enumerate(specs):
        for b in specs[i + 1:]:
            (aa, ia), (ab, ib) = names[a.app], names[b.app]
            if not (aa & ab) and (ia is None or ia != ib):
                continue
            wa, wb = where.get(a.app), where.get(b.app)
            if wa is None or wb is None or wa[0] == wb[0] or wa[1] != wb[1]:
                return {}   # not the same file in two sibling folders: duplicates, not a layout
            collided = True
    if not collided:
        return {}
    scope_of = {folder: _scope_name(folder) for folder in folders}
    if None in scope_of.values() or len(set(scope_of.values())) != len(folders):
        return {}   # a folder name that is no scope name, or two that read as one
    out: dict = {}
    for app, (folder, _) in sorted(where.items()):
        out.setdefault(scope_of[folder], []).append(app)
    return out


def infer(specs: list, variant: str | None) -> dict:
    """``{scope: [app, ...]}`` for the imported ``specs``: the ``variant`` as one scope, else
    the sibling folders (:func:`from_folders`)."""
    if variant:
        return {variant: sorted(s.app for s in specs)} if specs else {}
    return from_folders(specs)


def merged(config: Config, inferred: dict) -> dict:
    """The project's ``prometheus_scopes`` with the ``inferred`` ones added (an app a scope's
    patterns already name is not added again); ``{}`` when nothing is added."""
    out = {k: list(v) for k, v in config.prometheus_scopes.items()}
    changed = False
    for name, apps in inferred.items():
        have = Config(prometheus_scopes={name: tuple(out.get(name, ()))}) if out.get(name) else None
        for app in apps:
            if have is not None and have.scopes_of(app):
                continue
            out.setdefault(name, []).append(app)
            changed = True
    return out if changed else {}


def as_yaml(scopes: dict):
    """``scopes`` as ruamel.yaml nodes: one flow list of apps per scope."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    out = CommentedMap()
    for name, apps in scopes.items():
        out[name] = CommentedSeq(apps)
        out[name].fa.set_flow_style()
    return out
