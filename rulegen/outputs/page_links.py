"""Links and images of a page that fail ``mkdocs build --strict``."""

from __future__ import annotations

import posixpath
import re
from urllib.parse import unquote, urlsplit


def _target_problem(url: str, here: str, pages, files: set[str], settings) -> tuple[str, str, str] | None:
    """Why ``mkdocs build --strict`` (with the site's ``validation`` levels) fails on a link or
    image ``url`` of docs page ``here``, as (kind, docs-relative target, fragment), or None.

    Kinds, as mkdocs 1.6 reads a link (``_RelativePathTreeprocessor.path_to_url``): ``absolute``
    (``/x``, when ``absolute_links`` is ``warn``); ``page`` (a ``.md`` target that is not a
    page: always a finding, as before); ``file`` (another target that is no file of the site,
    when ``not_found`` is ``warn``); ``unrecognized`` (a target without an extension that is no
    file, ``x/``, when ``unrecognized_links`` is ``warn``); ``anchor`` (a page without the
    fragment's id: always a finding). External links (a scheme or host) are not looked at."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.scheme or parts.netloc:
        return None
    frag = unquote(parts.fragment)
    if url.startswith(("/", "\\")):
        level = settings.link_level("absolute_links")
        if level == "warn":
            return "absolute", "", frag
        if level != "relative_to_docs":
            return None
        base = ""
    elif not parts.path:
        if frag and frag not in pages[here].parsed()[0]:
            return "anchor", here, frag
        return None
    else:
        base = posixpath.dirname(here)
    path = unquote(parts.path)
    target = posixpath.normpath(posixpath.join(base, path).lstrip("/"))
    if target not in files:
        if target.endswith(".md"):
            return "page", target, frag
        if not posixpath.splitext(path)[-1]:
            return ("unrecognized", target, frag) if settings.link_level("unrecognized_links") == "warn" else None
        return ("file", target, frag) if settings.link_level("not_found") == "warn" else None
    if frag and target in pages and frag not in pages[target].parsed()[0]:
        return "anchor", target, frag
    return None


def _pos_of_target(pg, url: str) -> tuple[int, int]:
    """(line, column), 1-based, of link or image target ``url`` where page ``pg`` writes it
    (the first match of the ways Markdown and HTML write it, the target ending there), else
    (1, 1)."""
    text = pg.text or ""
    for lead in ("](", "](<", "]: ", "]: <", "]:", '="', "='", ""):
        for m in re.finditer(re.escape(lead + url) + r"(?=[)>\s\"']|$)", text):
            at = m.start() + len(lead)
            return text.count("\n", 0, at) + 1, at - (text.rfind("\n", 0, at) + 1) + 1
    return 1, 1

