"""The pages of the runbook site as the link check reads them: the planned pages over the docs
folder's, and the files mkdocs builds the site from.

Codes:

* ``RG709`` a Markdown page in the docs folder is not UTF-8 text: ``mkdocs build`` stops on it
  (a UnicodeDecodeError), so one hand-written page stops the whole site's deploy. Bad: a guide
  saved as Latin-1 (``Caf\\xe9``); good: the same page saved as UTF-8. Also two files of one
  docs folder that mkdocs serves at the same place (``README.md`` beside ``index.md``,
  ``x.md`` beside ``x.markdown``): mkdocs drops one with a warning that ``--strict`` makes
  fatal. Bad: a ``runbooks/README.md`` beside ``runbooks/index.md``; good: its text in a guide
  (``runbooks/guides/team.md``).
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ..findings import Finding, error
from ..fs import read as fs_read
from ..gitops import ownership
from ..parallel import split_map
from ..render import site as site_mod
from .anchors import page_ids

@dataclass
class _Page:
    path: str  # relative to the docs folder, POSIX
    file: str  # as shown in findings (relative to the project root)
    text: str | None = None  # Markdown, when known
    _parsed: tuple | None = field(default=None, repr=False)

    def parsed(self):
        if self._parsed is None:
            self._parsed = page_ids(self.text or "")
        return self._parsed

    def line_of(self, needle: str) -> int:
        if self.text:
            i = self.text.find(needle)
            if i >= 0:
                return self.text.count("\n", 0, i) + 1
        return 1



def url_to_page(url_path: str, pages, use_directory_urls: bool = True) -> str | None:
    """The docs page (``x.md``) that mkdocs serves at URL path ``url_path`` (relative to
    ``site_url``, no fragment), or None when none of ``pages`` is served there."""
    p = unquote(url_path).lstrip("/")
    if p.endswith(".html"):
        stem = p[:-5]
        cands = [stem + ".md"] if not use_directory_urls or posixpath.basename(stem) == "index" else []
        if posixpath.basename(stem) == "index":
            d = posixpath.dirname(stem)
            cands = [f"{d}/index.md" if d else "index.md", f"{d}/README.md" if d else "README.md"]
    else:
        stem = p.rstrip("/")
        if not stem:
            cands = ["index.md", "README.md"]
        else:
            cands = [f"{stem}/index.md", f"{stem}/README.md"]
            if use_directory_urls:
                cands.insert(0, stem + ".md")
    for c in cands:
        if c in pages:
            return c
    return None


def _pages(outputs, root: Path, settings, unreadable: list | None = None) -> dict:
    """Docs-relative path -> :class:`_Page` of every Markdown page of the site (planned pages
    over the disk's); ``unreadable`` gets (project-relative path, byte offset) of each page on
    disk that is not UTF-8."""
    pages: dict[str, _Page] = {}
    docs = root / settings.docs_dir
    planned = {o.path for o in outputs}
    replaced = settings.docs_dir == site_mod.DOCS_DIR  # planned pages replace the disk's (below)
    if docs.is_dir():
        for f in sorted(docs.rglob("*.md")):
            rel_root = f.relative_to(root).as_posix()
            if any(p.startswith(".") for p in f.relative_to(docs).parts):
                continue  # mkdocs leaves hidden files out of the site (exclude_docs): not read either
            if replaced and rel_root in planned:
                continue  # the planned text is used, not this one: no need to read it
            try:
                text = fs_read.read_text(f, rel_root)
            except UnicodeDecodeError as e:
                if unreadable is not None:
                    unreadable.append((rel_root, e.start))
                continue
            except OSError:
                continue
            if planned and ownership.is_generated(text) and rel_root not in planned:
                continue  # stale: the next build deletes it
            pages[f.relative_to(docs).as_posix()] = _Page(f.relative_to(docs).as_posix(), rel_root, text)
    prefix = site_mod.DOCS_DIR + "/"
    for o in outputs:
        if replaced and o.path.startswith(prefix) and o.path.endswith(".md"):
            rel = o.path[len(prefix):]
            pages[rel] = _Page(rel, o.path, o.content)
    return pages



def _docs_files(root: Path, settings, outputs, pages) -> set[str]:
    """Docs-relative paths of every file mkdocs builds the site from: the docs folder's files
    (without what its default ``exclude_docs`` leaves out: names starting with ``.``, the
    top-level ``templates/``), the planned outputs under it and the pages."""
    out = set(pages)
    docs = root / settings.docs_dir
    if docs.is_dir():
        for f in docs.rglob("*"):
            rel = f.relative_to(docs).as_posix()
            if any(part.startswith(".") for part in rel.split("/")) or rel.startswith("templates/"):
                continue
            if f.is_file():
                out.add(rel)
    prefix = settings.docs_dir.rstrip("/") + "/"
    out.update(o.path[len(prefix):] for o in outputs if o.path.startswith(prefix))
    return out


#: The file name endings mkdocs reads as Markdown pages.
_PAGE_EXTS = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")


def same_destination_findings(root: Path, settings, outputs, pages) -> list[Finding]:
    """``RG709`` for each file of the site (:func:`_docs_files`) that mkdocs serves at the
    same place as another file of its folder (``README.md`` beside ``index.md``, ``x.md``
    beside ``x.markdown``, a page beside a file of the name it is served as): mkdocs drops it
    with a warning, fatal under ``--strict``. Reported at the file mkdocs drops (the first in
    mkdocs' order: index and README first, then by name)."""
    folders: dict[str, list[str]] = {}
    for rel in _docs_files(root, settings, outputs, pages):
        folder, _, name = rel.rpartition("/")
        folders.setdefault(folder, []).append(name)
    out = []
    for folder, names in sorted(folders.items()):
        seen: dict[str, str] = {}
        for name in sorted(names, key=lambda f: (os.path.splitext(f)[0] not in ("index", "README"), f)):
            stem, ext = os.path.splitext(name)
            dest = name
            if ext.lower() in _PAGE_EXTS:
                stem = "index" if stem == "README" else stem
                dest = ("index.html" if stem == "index"
                        else f"{stem}/index.html" if settings.use_directory_urls else f"{stem}.html")
            shown = posixpath.join(settings.docs_dir, folder, name)
            if dest not in seen:
                seen[dest] = shown
                continue
            dropped = seen[dest]
            out.append(error(dropped, 1, 1, "RG709", f"{dropped} and {shown} are both served as the same page "
                             "(mkdocs reads README.md as index.md, and x.md, x.markdown alike): `mkdocs build` "
                             "drops one with a warning, which --strict makes a failure, so the whole site fails "
                             f"to deploy; rename or remove {dropped}"))
    return out


def unreadable_findings(unreadable: list) -> list[Finding]:
    """``RG709`` for each page of ``unreadable`` (``(project-relative path, byte offset)``, as
    :func:`_pages` lists them) that is not UTF-8."""
    return [error(path, 1, 1, "RG709", f"{path} is not UTF-8 text (byte {at}): `mkdocs build` stops "
                  "on it, so the whole site fails to deploy; save it as UTF-8") for path, at in unreadable]


def parse_all(pages: dict) -> None:
    """Read every page of ``pages`` (:func:`_pages`) not read yet, on two cores when there are
    many (:func:`rulegen.parallel.split_map`; each page's :func:`page_ids` comes back from the
    child pickled), so that the checks that follow find them read."""
    todo = [pg for _, pg in sorted(pages.items()) if pg._parsed is None]
    for pg, parsed in zip(todo, split_map(_parse, todo)):
        pg._parsed = parsed


def _parse(pg: _Page) -> tuple:
    return page_ids(pg.text or "")
