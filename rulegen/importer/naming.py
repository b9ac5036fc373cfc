"""App names for imported rule sets: distinct, valid, and derived from what the sources say.

An app name is a DNS label of at most :data:`APP_MAX` (53) characters, Helm's release-name
limit (Helm docs, "helm install": names are at most 53 characters), because the app name
becomes the chart's name. It comes from the PrometheusRule's ``metadata.name``, else from the
file name (a rule file, or a Helm template whose name Helm computes) — never from a
position in the input, so importing the same files again, alone or with others, gives the
same names.

When two sources map to one name, folders are put in front, nearest first, as many as it
takes to tell all of them apart (``redis/exporter.yml`` -> ``redis-exporter``), or else the
one folder that tells them apart (``capa/management-cluster/x.yaml`` -> ``capa-...``). When even
the full path does not (paths that differ only in characters a DNS label cannot hold), or
when a name is longer than the limit and its cut-off form collides, the name is cut to
leave room for ``-`` and six hex digits of a SHA-256 of the source path and its hint:
stable for the same input, and distinct. Names that were cut never gain a counter suffix
that a later cut could remove again (the loop of issue 15).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

APP_MAX = 53
_HASH = 6


def dns_label(hint: str) -> str:
    """``hint`` lower-cased, runs of characters other than ``a-z0-9`` made ``-``, trimmed of
    ``-``; not cut to length. ``"Foo_Bar.rules"`` -> ``"foo-bar-rules"``; ``""`` when nothing
    is left."""
    return re.sub(r"[^a-z0-9]+", "-", hint.lower()).strip("-")


def app_name(hint: str) -> str:
    """``hint`` as a DNS label of at most :data:`APP_MAX` characters (cut at the limit, with
    a trailing ``-`` removed); ``"app"`` when nothing is left."""
    s = dns_label(hint)[:APP_MAX].rstrip("-")
    return s or "app"


def _hashed(name: str, salt: str) -> str:
    """``name`` cut so that ``-<6 hex digits>`` fits within :data:`APP_MAX`, then suffixed
    with the first six hex digits of SHA-256 of ``salt``."""
    digest = hashlib.sha256(salt.encode("utf-8")).hexdigest()[:_HASH]
    head = name[:APP_MAX - _HASH - 1].rstrip("-")
    return f"{head}-{digest}" if head else f"app-{digest}"


@dataclass(frozen=True)
class Source:
    """What names one app-to-be: ``key`` (the source file as displayed, relative to the
    project where it can be, plus which PrometheusRule in it; never an absolute path, so
    names are the same on every machine), ``hint`` (the PrometheusRule or file name) and ``folders`` (the
    source's folder names, outermost first; for a PrometheusRule the file's stem is the last
    one, so two PrometheusRules of one name in two files of one folder differ by file)."""

    key: str
    hint: str
    folders: tuple = ()


def with_suffix(names: dict[str, str], suffix: str) -> dict[str, str]:
    """``names`` each ending with ``-<suffix>`` (a variant: ``--variant capa``), cut before
    the suffix so that it always survives the limit; names that would then be equal get a
    hash as in :func:`assign_names`. ``suffix`` must be a DNS label shorter than 30."""
    room = APP_MAX - len(suffix) - 1
    out: dict[str, str] = {}
    used: set[str] = set()
    for key, name in sorted(names.items()):
        cand = f"{name[:room].rstrip('-') or 'app'}-{suffix}"
        salt = key
        while cand in used:   # ends: each round draws a new digest, and the digest is never cut
            salt += "\0"
            digest = hashlib.sha256(salt.encode("utf-8")).hexdigest()[:_HASH]
            cand = f"{name[:room - _HASH - 1].rstrip('-') or 'app'}-{digest}-{suffix}"
        out[key] = cand
        used.add(cand)
    return out


def assign_names(sources: list[Source], taken: frozenset = frozenset()) -> dict[str, str]:
    """A name per source ``key``: valid (:func:`app_name`), distinct between keys, not in
    ``taken``. Sources with the same key get the same name. Deterministic: the result does
    not depend on the order of ``sources``.

    Always ends: each step either keeps a name, adds one folder (at most as many steps as the
    deepest path), or makes the name from a hash, which is done once.
    """
    uniq: dict[str, Source] = {}
    for s in sources:
        uniq.setdefault(s.key, s)
    by_base: dict[str, list[Source]] = {}
    for s in sorted(uniq.values(), key=lambda s: s.key):
        by_base.setdefault(dns_label(s.hint) or "app", []).append(s)
    out: dict[str, str] = {}
    used: set[str] = set(taken)
    # names that need no folder first, so that a disambiguated name never takes one of them
    clashing: list[list[Source]] = []
    cut: dict[str, list[Source]] = {}
    for base, group in sorted(by_base.items()):
        if len(group) == 1:
            cut.setdefault(app_name(base), []).append(group[0])
        else:
            clashing.append(group)
    for name, group in sorted(cut.items()):
        if len(group) == 1 and name not in used:
            out[group[0].key] = name
            used.add(name)
        else:  # long names differing only past the limit
            clashing.append(group)
    for group in clashing:
        _spread(group, used, out)
    return out


def _spread(group: list[Source], used: set[str], out: dict[str, str]) -> None:
    """Names for ``group`` (sources whose own names collide): the fewest folders in front
    that make every name distinct, unused and within the limit — the ``d`` nearest folders,
    else the ``d``-th nearest alone (``capa/management-cluster/r.yaml`` and
    ``capz/management-cluster/r.yaml`` become ``capa-...`` and ``capz-...``); else hashed
    names."""
    depth = max(len(s.folders) for s in group)
    for d in range(1, depth + 1):
        for pick in (lambda f: f[-d:], lambda f: f[-d:len(f) - d + 1]):
            cands = {s.key: dns_label("-".join(tuple(pick(s.folders)) + (s.hint,))) or "app" for s in group}
            names = list(cands.values())
            if all(len(n) <= APP_MAX for n in names) and len(set(names)) == len(names) \
                    and not used & set(names):
                out.update(cands)
                used.update(names)
                return
    for s in group:
        base = dns_label(s.hint) or "app"
        salt = s.key
        name = _hashed(base, salt)
        while name in used:  # a hash collision: salt again (a new digest each time)
            salt += "\0"
            name = _hashed(base, salt)
        out[s.key] = name
        used.add(name)
