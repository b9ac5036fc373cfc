"""Links, images and heading ids of the site's pages that fail ``mkdocs build --strict`` or
open the wrong section.

Codes:

* ``RG715`` a link on a page (generated, in team notes, or hand-written; ``[x](page.md#id)``,
  ``[x](#id)``, reference-style) fails ``mkdocs build --strict``: it points to a page, file or
  anchor that does not exist, or (as the ``validation:`` levels of ``mkdocs.yml`` make a
  warning) to no file at all (``[x](guides/)``, mkdocs' "unrecognized relative link") or to an
  absolute path (``[x](/llama-swap/)``). The position is the link's target on the page.
  Bad: ``[rollback](guides/deploy.md#rollback)`` with no such page or heading; good: a link to a
  page and heading id that exist.
* ``RG719`` an image on a page (``![alt](src)``, reference-style ``![alt][ref]``) shows a file
  the site's docs folder does not have, so ``mkdocs build --strict`` fails (one team's note
  could stop the whole site's deploy). The position is the source on the page. Links and
  images written as raw HTML (``<img src>``) are not validated, by mkdocs or here. Bad: ``![graph](img/latency.png)`` with no ``runbooks/img/latency.png``;
  good: the file committed next to the page, or an ``https://`` image.
* ``RG716`` two headings of one page share an id, so a link opens the first one only (two
  alert names that slug alike, e.g. ``Foo-Bar`` and ``foo bar``; for alerts of a spec,
  validation reports this first, at the spec line, as ``RG513``).
  Bad: alerts ``Foo-Bar`` and ``foo bar`` on one page; good: ``FooBar`` and ``FooBarSlow``.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..findings import Finding, error
from ..render import site as site_mod
from .anchors import IMAGE
from .pages import _docs_files


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


def check(outputs, root: Path, ctx) -> list[Finding]:
    """``RG715``, ``RG719`` and ``RG716`` for every page of the site ``ctx``
    (:class:`rulegen.outputs.built.LinkContext`): each internal Markdown link and image, and
    duplicate heading ids."""
    findings: list[Finding] = []
    settings, pages = ctx.settings, ctx.pages
    files = _docs_files(root, settings, outputs, pages)
    for rel, pg in sorted(pages.items()):
        _ids, heading_ids, hrefs = pg.parsed()
        seen: set[str] = set()
        for hid in heading_ids:
            if hid in seen:
                findings.append(error(pg.file, pg.line_of(f"#{hid} }}"), 1, "RG716",
                                      f"two headings share the id #{hid}: links open the first one only; "
                                      "rename one of them (alert names must slug differently)"))
            seen.add(hid)
        done: set[str] = set()
        for href in hrefs:
            if href in done:
                continue
            done.add(href)
            image = href.startswith(IMAGE)
            url = href[len(IMAGE):] if image else href
            problem = _target_problem(url, rel, pages, files, settings)
            if problem is None:
                continue
            line, col = _pos_of_target(pg, url)  # only for a finding: it scans the page
            findings.append(error(pg.file, line, col, "RG719" if image else "RG715",
                                  _message(problem, url, image, settings)))
    return findings


def _message(problem: tuple[str, str, str], url: str, image: bool, settings) -> str:
    """The message of a link or image ``url`` with ``problem`` (:func:`_target_problem`)."""
    kind, target, frag = problem
    what = f"image {url}" if image else f"link {url}"
    if kind == "absolute":
        msg = (f"{what} is an absolute path: mkdocs leaves it as it is and warns "
               f"(mkdocs.yml validation: absolute_links: {settings.link_level('absolute_links')}), which "
               "fails `mkdocs build --strict`, and it breaks when the site is not served at the "
               "root; write it relative to the page (../guides/x.md, assets/x.png)")
    elif kind == "page":
        msg = (f"{what} points to a page that does not exist" if not image else
               f"{what} shows a file the site does not have ({site_mod.DOCS_DIR}/{target}): "
               "`mkdocs build --strict` fails on it; add the file or fix the path")
    elif kind == "file":
        msg = (f"{what} {'shows' if image else 'points to'} a file the site does not have "
               f"({site_mod.DOCS_DIR}/{target}): "
               "`mkdocs build --strict` fails on it; add the file or fix the path")
    elif kind == "unrecognized":
        msg = (f"{what} names no file of the site (mkdocs: unrecognized relative link, "
               f"validation: unrecognized_links: {settings.link_level('unrecognized_links')}), so "
               "`mkdocs build --strict` fails on it; link the page itself (x.md, x/index.md)")
    else:
        msg = f"{what}: {site_mod.DOCS_DIR}/{target} has no anchor #{frag} (missing anchor)"
    return msg
