"""Heading anchors, made by the same function the runbook site's Markdown uses.

mkdocs builds heading ids with Python-Markdown's ``toc`` extension; its default ``slugify``
(``markdown.extensions.toc.slugify``, separator ``-``) is called here. Every alert heading on a
page carries this id explicitly (``## Name { #id }``, attr_list), and the Helm template, the
promtool tests and the link check build ``runbook_url`` fragments from the same function, so
the fragment and the heading id cannot disagree, whatever ``toc`` options a team sets:
``LlamaSwapDown`` -> ``llamaswapdown``, ``KubePod CrashLooping!`` -> ``kubepod-crashlooping``.
"""

from __future__ import annotations

import functools
import hashlib
import re

#: Names made only of printable ASCII (almost every alert name: ``KubePodCrashLooping``,
#: ``Cert-managerAbsent``, ``CassandraFlushWriterBlockedTasks(criteo)``). For them ``slugify``'s
#: steps are plain: Unicode normalisation and dropping non-ASCII change nothing, the only
#: space character is the blank, and word characters are ASCII letters, digits and ``_``; so
#: :func:`_ascii_slug` makes their slug without importing Markdown (about 60 ms of CPU, paid
#: again by a forked child, see :mod:`rulegen.parallel`). Any other name goes through
#: ``slugify`` itself; ``tests/render/test_runbook_pages.py`` holds the two to agreement.
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]*")
_DROPPED = re.compile(r"[^A-Za-z0-9_ -]")
_SEPARATORS = re.compile(r"[ -]+")


def _ascii_slug(name: str) -> str:
    """``slugify(name, "-")`` for a name of printable ASCII: characters other than letters,
    digits, ``_``, ``-`` and blanks dropped, blanks at the ends stripped, lower case, each run of
    blanks and ``-`` made one ``-``."""
    return _SEPARATORS.sub("-", _DROPPED.sub("", name).strip(" ").lower())


@functools.lru_cache(maxsize=65536)
def anchor(name: str) -> str:
    """Heading id for an alert or section name: lower case ASCII word characters and ``-``
    (Python-Markdown's ``slugify(name, "-")``). A name with no ASCII letter or digit at all
    (``"!!!"``, ``"日本"``) slugs to nothing; it gets ``alert-<8 hex of its SHA-1>`` so two
    such names still get different, stable ids. Two alert names of one app with the same id
    (``FooDown``, ``Foodown``) are a validation error, ``RG513``
    (:mod:`rulegen.validate.checks.runbook`), so an alert's id never depends on its
    neighbours."""
    if _PRINTABLE_ASCII.fullmatch(name):
        s = _ascii_slug(name)
    else:
        from markdown.extensions.toc import slugify  # imported on first use: markdown is slow to import
        s = slugify(name, "-")
    if s:
        return s
    return "alert-" + hashlib.sha1(name.encode("utf-8")).hexdigest()[:8]


#: The site's URL when mkdocs.yml names none (``runbook_url`` of generated rules and tests;
#: :mod:`rulegen.render.site` reads it from here, so the checks need not import ruamel).
DEFAULT_SITE_URL = "https://runbooks.example.com/"


def page_path(app: str) -> str:
    """The runbook page of an app, relative to the site's docs folder (``<app>.md``)."""
    return f"{app}.md"


def page_url(app: str) -> str:
    """The page's URL path under the site root with mkdocs' directory URLs (``<app>/``)."""
    return f"{app}/"
