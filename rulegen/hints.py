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
