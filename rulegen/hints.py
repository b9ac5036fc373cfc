""""Did you mean" suggestions for a name that is not one of the known ones (a misspelt app,
alert, gate, key or severity), made with :func:`difflib.get_close_matches` as everywhere in
rulegen (ratio cutoff 0.6, the closest one)."""

from __future__ import annotations

import difflib


def closest(name: str, names, cutoff: float = 0.6) -> str | None:
    """The one of ``names`` closest to ``name`` (difflib's ratio at least ``cutoff``), or None."""
    near = difflib.get_close_matches(name, sorted(set(names)), n=1, cutoff=cutoff)
    return near[0] if near else None


def did_you_mean(name: str, names, cutoff: float = 0.6) -> str:
    """``" (did you mean X?)"`` for the closest of ``names`` to ``name``, or ``""``."""
    near = closest(name, names, cutoff)
    return f" (did you mean {near}?)" if near else ""


def unknown_names(names, known, what: str) -> str:
    """One sentence naming the ``names`` that are not in ``known``, each with its suggestion:
    ``no alert or recording rule named LlamaSwapDwn (did you mean LlamaSwapDown?)``; ``what``
    is the singular noun phrase (``alert or recording rule``). Names are sorted."""
    return f"no {what} named " + ", ".join(n + did_you_mean(n, known) for n in sorted(set(names)))


#: at most this many names are listed when a name has no close match
LISTED = 12


def unknown_apps(unknown, apps) -> str:
    """The error for ``--app`` names that no spec has: each with its "did you mean"; when one
    has no close match, the project's apps are listed too (the first :data:`LISTED`, sorted),
    so a newcomer sees what to type: ``no spec for app(s) nope; the project's apps:
    inferencecache, llama-swap, noctaya``."""
    known = sorted(set(apps))
    hints = [(a, did_you_mean(a, known)) for a in sorted(set(unknown))]
    out = "no spec for app(s) " + ", ".join(a + h for a, h in hints)
    if any(not h for _a, h in hints):
        shown = ", ".join(known[:LISTED]) + (f" and {len(known) - LISTED} more" if len(known) > LISTED else "")
        out += f"; the project's apps: {shown}" if known else "; the project has no spec yet (`rulegen new APP`)"
    return out
