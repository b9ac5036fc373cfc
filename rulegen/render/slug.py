"""Heading anchors, made by the same function the runbook site's Markdown uses.

mkdocs builds heading ids with Python-Markdown's ``toc`` extension; its default ``slugify``
(``markdown.extensions.toc.slugify``, separator ``-``) is called here, so an alert's
``runbook_url`` fragment and its heading id cannot disagree: ``LlamaSwapDown`` ->
``llamaswapdown``, ``KubePod CrashLooping!`` -> ``kubepod-crashlooping``.
"""

from __future__ import annotations

from markdown.extensions.toc import slugify


def anchor(name: str) -> str:
    """Heading id for an alert or section name (lower case, ``-`` separated, ASCII)."""
    s = slugify(name, "-")
    return s or "alert"


def page_path(app: str) -> str:
    """The runbook page of an app, relative to the site's docs folder (``<app>.md``)."""
    return f"{app}.md"


def page_url(app: str) -> str:
    """The page's URL path under the site root with mkdocs' directory URLs (``<app>/``)."""
    return f"{app}/"
