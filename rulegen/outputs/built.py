"""A built site folder (``mkdocs build -d DIR``): where each page's HTML is and its ids.

Codes:

* ``RG718`` the built site folder given to check does not exist (a page missing from it is
  ``RG710``).
  Bad: a site folder that ``mkdocs build`` has not made yet; good: run ``mkdocs build --strict``
  first.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from ..findings import Finding, error
from ..fs import read as fs_read
from ..render import site as site_mod
from .anchors import _parse_html

@dataclass
class LinkContext:
    """The site as the link check sees it (built by :func:`check_links`; public for tests).

    Attributes:
        settings: the mkdocs settings (:class:`rulegen.render.site.SiteSettings`).
        pages: docs-relative ``.md`` path -> page (planned generated pages, hand-written pages).
        site_dir: built site folder when checking HTML, else None.
    """

    settings: site_mod.SiteSettings
    pages: dict
    site_dir: Path | None = None
    _html: dict = field(default_factory=dict, repr=False)

    def ids_of(self, page: str) -> set[str] | None:
        """Ids of docs page ``page``: from the built HTML when a site folder is given (None
        when its HTML is missing), else from the Markdown."""
        if self.site_dir is None:
            return self.pages[page].parsed()[0]
        if page not in self._html:
            f = self.site_dir / html_path(page, self.settings.use_directory_urls)
            try:
                self._html[page] = _parse_html(fs_read.read_text(f)).ids
            except (OSError, UnicodeDecodeError):
                self._html[page] = None
        return self._html[page]


def html_path(page: str, use_directory_urls: bool = True) -> str:
    """Where mkdocs writes docs page ``page`` (``x.md``) in the site folder: ``x/index.html``
    (``index.md`` and ``x/index.md``: ``index.html``/``x/index.html``), or ``x.html`` without
    directory URLs."""
    stem = page[:-3] if page.endswith(".md") else page
    base = posixpath.basename(stem)
    if base in ("index", "README"):
        d = posixpath.dirname(stem)
        return f"{d}/index.html" if d else "index.html"
    return f"{stem}/index.html" if use_directory_urls else f"{stem}.html"


def missing_site(site_dir: Path) -> list[Finding]:
    """``RG718``: the built site folder ``site_dir`` does not exist."""
    return [error(str(site_dir), 0, 0, "RG718", f"built site folder {site_dir} does not exist; run mkdocs build first")]
