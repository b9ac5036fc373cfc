"""Link integrity of the runbook site: every ``runbook_url`` and every runbook link lands.

rulegen owns both ends of an alert's link: the ``runbook_url`` annotation that the Helm
template renders and the page section it should open. :func:`check_links` proves they agree,
without a network and without helm, from what ``build`` would write
(:func:`rulegen.render.plan`) plus the hand-written pages on disk, or from a built site folder.

What is checked, and the finding codes (all errors; ``file:line`` points at the spec entry
for alert links and at the page line for page links):

* ``RG709`` a Markdown page in the docs folder is not UTF-8 text: ``mkdocs build`` stops on it
  (a UnicodeDecodeError), so one hand-written page stops the whole site's deploy; or two files
  of one docs folder are served at the same place (``README.md`` beside ``index.md``,
  ``x.md`` beside ``x.markdown``), so mkdocs drops one with a warning that ``--strict`` makes
  fatal. Bad: a guide saved as Latin-1 (``Caf\\xe9``), a ``runbooks/README.md``; good: the
  same page saved as UTF-8, the README's text in ``runbooks/guides/``.
* ``RG710`` an alert's ``runbook_url`` opens a page the site does not have (page deleted or
  renamed, app renamed, ``runbookUrl``/``customRules`` pointing at another path).
  Bad: a ``runbook_url`` annotation ``https://runbooks.example.com/llama/#llamaswapdown`` (no page
  ``llama``); good: no ``runbook_url`` in the spec, so rulegen links the app's own page.
* ``RG711`` the page exists but has no element with the URL's fragment as id (the alert was
  renamed, its heading id changed): the message names the alert and the missing anchor.
  Bad: a hand-written ``runbook_url`` ending in ``#llamaswapdwn``; good: none, so rulegen generates
  ``#llamaswapdown``.
* ``RG712`` the generated ``runbook_url`` is not under the site's ``site_url``
  (``mkdocs.yml``) because ``runbookUrl`` in ``values.yaml`` differs from it, so it does not
  open this site; or a ``runbook_url`` written by hand (spec annotation, ``customRules``,
  ``additionalRuleAnnotations``) outside the site is not an absolute ``http(s)`` URL. A
  hand-written absolute URL elsewhere (an imported upstream rule's
  ``https://runbooks.prometheus-operator.dev/...``) is an external link: its form is checked,
  not our anchors. Bad: ``runbookUrl: https://wiki.example.com/`` in ``values.yaml`` with
  ``site_url: https://runbooks.example.com/``; good: the same URL in both.
* ``RG713`` a ``related`` entry names an alert that no spec defines (with "did you mean" the
  closest alert name, the alert itself left out). Bad: ``related: [{alert: LlamaSwapGone}]`` when no spec defines it; good: the name of an alert a
  spec defines.
* ``RG714`` a ``related`` entry's link (page and anchor of the related alert) does not resolve.
  Bad: a related alert whose app page is missing from the site; good: ``rulegen build`` of every
  spec, so each app has its page.
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
* ``RG717`` ``mkdocs.yml``'s ``docs_dir`` is not the folder rulegen writes pages to
  (``runbooks``), so the built site would not contain them.
  Bad: ``docs_dir: docs``; good: ``docs_dir: runbooks``.
* ``RG718`` the built site folder given to check does not exist (a page missing from it is
  ``RG710``).
  Bad: a site folder that ``mkdocs build`` has not made yet; good: run ``mkdocs build --strict``
  first.

How a ``runbook_url`` is derived: exactly as the Helm template renders it with the chart's
default values (the planned ``values.yaml``, else the one on disk): an annotation
``runbook_url`` from ``<values_key>.customRules.<Alert>.annotations``, else from
``groups.<group>.additionalRuleAnnotations``, else from ``additionalRuleAnnotations``, else the
spec's own static annotation, else ``<runbookUrl>/<app>/#<anchor>`` where ``runbookUrl``
defaults to mkdocs' ``site_url`` (see :mod:`rulegen.render.helm`). The ``site_url`` prefix is
then stripped and the rest mapped to a page the way mkdocs serves it (``use_directory_urls``:
``<app>/`` is ``<app>.md`` or ``<app>/index.md``; otherwise ``<app>.html`` is ``<app>.md``).

Anchors of a Markdown page are the element ids that Python-Markdown produces for it with
``attr_list``, ``md_in_html`` and ``toc`` (the site's own extensions), so explicit ``{ #id }`` and automatic
heading slugs are both counted; of a built page, every ``id`` in its HTML. Pages written in the
plain subset of Markdown that rulegen generates are read from their text without rendering
(:func:`page_ids`); any other page is rendered.
"""

from __future__ import annotations

import os
import posixpath
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import yaml

from ..findings import Finding, Severity
from ..fs import read as fs_read
from ..fs import yamlbound
from ..render import site as site_mod
from ..render.slug import anchor, page_url
from . import ownership

__all__ = ["check_links", "default_runbook_url", "url_to_page", "page_ids", "LinkContext"]

_HEADING = re.compile(r"^h[1-6]$")
#: Marks an image's source among a page's link targets (:func:`page_ids`): ``IMAGE + src``.
IMAGE = "\0img:"
#: yaml.safe_load's loader, with libyaml's parser when PyYAML has it (same constructor and resolver)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


# ---------------------------------------------------------------------------------------------
# Reading pages


class _Ids(HTMLParser):
    """Collects ids (and ``<a name>``), heading ids in order, and hrefs of an HTML text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.heading_ids: list[str] = []
        self.hrefs: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
            if _HEADING.match(tag):
                self.heading_ids.append(a["id"])
        if tag == "a" and a.get("name"):
            self.ids.add(a["name"])
        if tag == "a" and a.get("href") is not None:
            self.hrefs.append(a["href"])
        if tag == "img" and a.get("src") is not None:
            self.hrefs.append(IMAGE + a["src"])


_MD = None


def _markdown():
    """One Python-Markdown instance with the site's extensions, made once and reset per page.
    Fenced code is not highlighted (``use_pygments: false``): highlighting adds no id and no
    link, and it was most of the time the check spent on a page."""
    global _MD
    if _MD is None:
        import markdown
        exts = ["attr_list", "md_in_html", "tables", "toc"]  # md_in_html: triage box, index, details
        cfg = {}
        try:
            import pymdownx.superfences  # noqa: F401  (the site's fence extension, when installed)
            exts += ["pymdownx.highlight", "pymdownx.superfences"]
            cfg["pymdownx.highlight"] = {"use_pygments": False}
        except ImportError:
            exts.append("fenced_code")
        _MD = markdown.Markdown(extensions=exts, extension_configs=cfg)
        tree_links(_MD)
    return _MD.reset()


def tree_links(md) -> list[str]:
    """Register on Python-Markdown instance ``md`` a tree processor that records, at each
    conversion, the ``href`` of every ``<a>`` and the ``src`` of every ``<img>`` (as
    :data:`IMAGE` + ``src``) of the Markdown in page order, as mkdocs' link validation reads
    them (after every other tree processor; raw HTML, which mkdocs does not validate, and
    e-mail autolinks left out). Returns the list it fills (emptied at each conversion)."""
    import markdown
    from markdown.util import AMP_SUBSTITUTE
    found: list[str] = []

    class _Links(markdown.treeprocessors.Treeprocessor):
        def run(self, root):
            found.clear()
            for el in root.iter():
                key = "href" if el.tag == "a" else "src" if el.tag == "img" else None
                url = el.get(key) if key else None
                if url is not None and AMP_SUBSTITUTE not in url:
                    found.append(url if key == "href" else IMAGE + url)
            return None

    md.treeprocessors.register(_Links(md), "rulegen_links", 0)
    md.rulegen_links = found
    return found


def _parse_html(html: str) -> _Ids:
    p = _Ids()
    p.feed(html)
    p.close()
    return p


def _render_ids(markdown_text: str) -> tuple[set[str], list[str], list[str]]:
    """:func:`page_ids` the slow, general way: render with Python-Markdown and read the HTML
    (ids, raw HTML's included, as mkdocs counts them) and the tree (links and images, as
    mkdocs validates them: :func:`tree_links`)."""
    md = _markdown()
    p = _parse_html(md.convert(markdown_text))
    return p.ids, p.heading_ids, list(md.rulegen_links)


# The fast path of page_ids: the pages rulegen generates use a small part of Markdown (headings
# with an explicit ``{ #id }``, paragraphs, lists, tables, fenced code, ``[text](target)`` links,
# one-line HTML comments). For a page that uses nothing else, ids, heading ids and hrefs are read
# from the text line by line; anything outside that subset (raw HTML, attribute lists other than
# a heading's id, reference links, images, setext headings, indented code, headings in lists or
# quotes, emphasis or markup in a heading without an id, ...) sends the whole page to
# _render_ids. benchmarks/links_differential.py checks both ways agree on real and mutated pages.
_FENCE_OPEN = re.compile(r"^(`{3,}|~{3,})[ ]*[\w+.-]*[ ]*$")
_COMMENT = re.compile(r"^<!--(?:(?!--).)*-->[ ]*$")
#: The block wrappers rulegen's pages use (md_in_html), read by the fast path exactly as written.
_WRAPPER = re.compile(r'<(?P<open>div|details) class="rg-[a-z0-9-]+(?: rg-[a-z0-9-]+)*"'
                      r'(?: data-app="[a-z0-9-]+")? markdown>'
                      r'|</(?P<close>div|details)>'
                      r'|<div id="(?P<empty>rg-[a-z0-9-]+)" class="rg-[a-z0-9-]+"></div>'
                      r'|(?P<summary><summary>Rule details</summary>)')
_SUMMARY = "<summary>Rule details</summary>"
_OWN_INLINE = re.compile(r'<span class="rg-[a-z0-9-]+(?: rg-[a-z0-9-]+)*">|</span>|<br>')
_ATX_ID = re.compile(r"^(#{1,6})[ ]+([^#\n]*?)[ ]+\{[ ]?#([A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*)[ ]?\}[ ]*$")
_ATX_PLAIN = re.compile(r"^(#{1,6})[ ]+([A-Za-z0-9][A-Za-z0-9 .,:;()/'-]*?)[ ]*$")
_SETEXT = re.compile(r"^[=-]+[ ]*$")
_ESCAPED = re.compile(r"\\[\\`*_{}\[\]()>#+\-.!]")
_LINK = re.compile(r"(?<!!)\[([^\[\]|]*)\]\(([^()\s<>\"'\\&|\0]+)\)")
_LEAD = re.compile(r"^[ >*+-]*(?:\d+\.)?[ >]*")


def _inline_hrefs(text: str, hrefs: list[str]) -> bool:
    """Append the link targets of one line of inline Markdown; False when the line holds
    anything the fast path does not read exactly."""
    # code spans, then escapes, as Python-Markdown does first; a stand-in keeps their place
    if "`" in text:
        if "``" in text or "\\`" in text:
            return False
        parts = text.split("`")
        if len(parts) % 2 == 0:
            return False  # an odd backtick: Markdown pairs it across lines, or leaves it
        text = "\0".join(parts[::2])
    if "\\" in text:
        text = _ESCAPED.sub("\0", text)
    if "<" in text:
        text = _OWN_INLINE.sub("\0", text)  # rulegen's badge/summary spans and <br>: no id, no link
    if "<" in text or "{" in text or "}" in text:
        return False
    if "[" in text or "]" in text:
        for m in _LINK.finditer(text):
            hrefs.append(m.group(2))
        rest = _LINK.sub("", text)
        if "[" in rest or "]" in rest:
            return False
    return True


def _fast_ids(text: str) -> tuple[set[str], list[str], list[str]] | None:
    """:func:`page_ids` read from the text, or None when the page needs a real render."""
    if "\t" in text or "\r" in text:
        return None
    headings: list[tuple[str, str | None]] = []  # (explicit id or None, plain text)
    hrefs: list[str] = []
    fence = None
    prev = "blank"  # what the previous line was: blank, text (paragraph or list), other
    wrappers: list[str] = []  # open <div markdown>/<details markdown> of rulegen's pages
    expect = None  # after a wrapper line: "blank" (or "summary" after <details>)
    own_ids: set[str] = set()
    for line in text.split("\n"):
        if fence is not None:
            if line.startswith(fence[0] * 3):
                if line.rstrip(" ") != fence:
                    return None
                fence = None
            prev = "other"
            continue
        if not line.strip(" "):
            prev = "blank"
            expect = None
            continue
        if expect is not None and not (expect == "summary" and line == _SUMMARY):
            return None
        if line[0] == "<" and not _COMMENT.match(line) and not _OWN_INLINE.match(line):
            # rulegen's own md_in_html wrappers, written exactly so: each on its own line,
            # after a blank line, followed by one (the summary line after <details>)
            m = _WRAPPER.fullmatch(line)
            if m is None:
                return None
            if m.group("open"):
                if prev != "blank":
                    return None
                wrappers.append(m.group("open"))
                expect = "summary" if m.group("open") == "details" else "blank"
            elif m.group("close"):
                if prev != "blank" or not wrappers or wrappers.pop() != m.group("close"):
                    return None
                expect = "blank"
            elif m.group("empty"):
                if prev != "blank":
                    return None
                own_ids.add(m.group("empty"))
                expect = "blank"
            else:  # the summary line
                if expect != "summary":
                    return None
                expect = "blank"
            prev = "other"
            continue
        if line[0] in "`~":
            m = _FENCE_OPEN.match(line)
            if m:
                if prev != "blank":
                    return None
                fence = m.group(1)
                prev = "other"
                continue
        if line[0] == "<" and not _OWN_INLINE.match(line):
            if not _COMMENT.match(line):
                return None
            prev = "other"
            continue
        if line[0] == "#":
            if prev != "blank":
                return None  # a heading right under a table row or a paragraph
            m = _ATX_ID.match(line)
            if m:
                if "*" in line or "_" in m.group(2) or not _inline_hrefs(m.group(2), hrefs):
                    return None
                headings.append((m.group(3), None))
            else:
                m = _ATX_PLAIN.match(line)
                if not m:
                    return None
                headings.append((None, m.group(2)))
            prev = "other"
            continue
        if line.startswith("    ") and prev != "text":
            return None  # indented code, or a table row
        first = line[0]
        # a line that starts with a letter has no list or quote marker (lead 0) and is no
        # setext underline: the two regexes only run for the other lines
        lead = 0 if first.isalpha() else _LEAD.match(line).end()
        if line[lead:lead + 1] == "#" or "~~~" in line or "```" in line:
            return None
        if first in "=-" and _SETEXT.match(line):
            return None
        if not _inline_hrefs(line, hrefs):
            return None
        prev = "other" if "|" in line else "text"
    if fence is not None or wrappers or expect == "summary":
        return None
    from markdown.extensions.toc import slugify, unique
    ids = {h for h, _ in headings if h is not None} | own_ids
    used = set(ids)
    counters: dict[str, int] = {}
    heading_ids = [h if h is not None else unique(slugify(t, "-"), used, counters) for h, t in headings]
    return ids | set(heading_ids), heading_ids, hrefs


#: page text -> its page_ids, worked out ahead by the plan's per-spec step (on two cores) for
#: the pages check is about to read; each used once, the rest dropped by check_links
_AHEAD: dict[str, tuple] = {}


def page_ids_ahead(markdown_text: str) -> tuple[set[str], list[str], list[str]]:
    """:func:`page_ids` of a page that :func:`check_links` will read soon; see :func:`known`."""
    return page_ids(markdown_text)


def known(markdown_text: str, ids: tuple) -> None:
    """Record ``ids`` (:func:`page_ids_ahead` of ``markdown_text``, possibly made in a forked
    process) for :func:`page_ids` to return instead of reading the page again."""
    _AHEAD[markdown_text] = ids


def page_ids(markdown_text: str) -> tuple[set[str], list[str], list[str]]:
    """``(ids, heading_ids, hrefs)`` of a Markdown page as the site renders it: every element
    id (headings' explicit ``{ #id }`` or toc slug), heading ids in page order (duplicates
    kept), and every link target (``href``) and image source (``src``, as :data:`IMAGE` +
    ``src``) of the Markdown in page order (raw HTML's are not validated by mkdocs either)."""
    ahead = _AHEAD.pop(markdown_text, None)
    if ahead is not None:
        return ahead
    fast = _fast_ids(markdown_text)
    return fast if fast is not None else _render_ids(markdown_text)


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


#: The file name endings mkdocs reads as Markdown pages.
_PAGE_EXTS = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")


def _same_destination(root: Path, settings, outputs) -> list[tuple[str, str]]:
    """(dropped, kept) project-relative paths of files of one docs folder that mkdocs serves
    at the same place (``README.md`` beside ``index.md``; ``x.md`` beside ``x.markdown``; a
    page beside a file of the name it is served as): mkdocs excludes ``dropped`` with a
    warning, fatal under ``--strict``. Files on disk and the pages ``outputs`` plan; hidden
    files and folders are left out, as mkdocs leaves them out."""
    docs = root / settings.docs_dir
    names: dict[str, set] = {}
    if docs.is_dir():
        for here, dirs, files in os.walk(docs):
            dirs[:] = [d for d in dirs if not d.startswith(".")]
            rel = Path(here).relative_to(docs).as_posix()
            names.setdefault(rel, set()).update(f for f in files if not f.startswith("."))
    prefix = settings.docs_dir.rstrip("/") + "/"
    for o in outputs:
        if o.path.startswith(prefix):
            folder, _, name = o.path[len(prefix):].rpartition("/")
            names.setdefault(folder or ".", set()).add(name)
    out = []
    for folder, files in sorted(names.items()):
        seen: dict[str, str] = {}
        # mkdocs' order: index and README first, then by name; the first of a pair is dropped
        for name in sorted(files, key=lambda f: (os.path.splitext(f)[0] not in ("index", "README"), f)):
            stem, ext = os.path.splitext(name)
            if ext.lower() in _PAGE_EXTS:
                stem = "index" if stem == "README" else stem
                if stem == "index":
                    dest = "index.html"
                else:
                    dest = f"{stem}/index.html" if settings.use_directory_urls else f"{stem}.html"
            else:
                dest = name
            shown = (settings.docs_dir + "/" + (name if folder == "." else f"{folder}/{name}"))
            if dest in seen:
                out.append((seen[dest], shown))
            else:
                seen[dest] = shown
    return out


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
            if replaced and rel_root in planned:
                continue  # the planned text is used, not this one: no need to read it
            try:
                text = fs_read.read_text(f, rel_root)
            except UnicodeDecodeError as e:
                if unreadable is not None and not any(p.startswith(".") for p in f.relative_to(docs).parts):
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


# ---------------------------------------------------------------------------------------------
# runbook_url as the chart renders it


def _values_text(planned: dict, root: Path, spec) -> str:
    """The text of the spec's chart ``values.yaml``: planned (``planned``: path -> content),
    else on disk, else empty."""
    vpath = f"{spec.chart.path}/values.yaml"
    text = planned.get(vpath)
    if text is None:
        f = root / vpath
        text = fs_read.read_text(f, vpath) if f.is_file() else ""
    return text


def _values(text: str) -> dict:
    """A values.yaml text as the chart's default values ({} when not a YAML mapping)."""
    try:
        data = yamlbound.load(text, _SAFE_LOADER, "values.yaml") or {}
    except (yaml.YAMLError, fs_read.InputRefused):  # too large: RG701 reports it (rulegen.render)
        return {}
    return data if isinstance(data, dict) else {}


#: id(spec) -> (spec, (values.yaml text, site URL, runbook_url of each alert in spec.rules()
#: order)), worked out ahead by the plan's per-spec step for a chart only that spec renders
#: into; keyed by the spec object itself, so an entry left by a plan no check followed can
#: never be taken for another spec's
_URLS_AHEAD: dict[int, tuple] = {}


def runbook_urls_ahead(spec, values_text: str, site_url: str) -> tuple:
    """What :func:`known_urls` takes: each alert's :func:`default_runbook_url` with the chart
    values ``values_text``, for :func:`check_links` to use instead of parsing them again."""
    values = _values(values_text)
    return values_text, site_url, [default_runbook_url(spec, g, r, site_url, values)
                                   for g, r in spec.rules() if r.is_alert]


def known_urls(spec, ahead: tuple) -> None:
    """Record :func:`runbook_urls_ahead` of ``spec`` (possibly made in a forked process)."""
    _URLS_AHEAD[id(spec)] = (spec, ahead)


def _get(d, *keys):
    for k in keys:
        if not isinstance(d, dict):
            return None
        d = d.get(k)
    return d


def default_runbook_url(spec, group, rule, site_url: str, values: dict | None = None) -> str:
    """The ``runbook_url`` that the chart renders for alert ``rule`` of ``group`` with default
    ``values`` (the chart's parsed ``values.yaml``; None or {} = no values): see the module
    docstring for the precedence. ``site_url`` is mkdocs' (trailing ``/`` optional)."""
    static = static_runbook_url(spec, group, rule, values)
    if static is not None:
        return static
    if not spec.chart.runbook_url:
        return ""   # chart.runbook_url: false, no generated link
    cfg = _knobs(spec, values)
    base = cfg.get("runbookUrl") or site_url
    return f"{str(base).rstrip('/')}/{page_url(spec.app)}#{anchor(rule.name)}"


def _knobs(spec, values: dict | None) -> dict:
    cfg = (values or {}).get(spec.chart.values_key) or {}
    return cfg if isinstance(cfg, dict) else {}


def static_runbook_url(spec, group, rule, values: dict | None = None) -> str | None:
    """The ``runbook_url`` annotation that the spec or the chart's default ``values`` set for
    alert ``rule`` (``customRules``, group and global ``additionalRuleAnnotations``, the
    spec's own annotation, in that order), or None when the chart generates it."""
    cfg = _knobs(spec, values)
    for src in (_get(cfg, "customRules", rule.name, "annotations"),
                _get(cfg, "groups", group.name, "additionalRuleAnnotations"),
                cfg.get("additionalRuleAnnotations"),
                rule.annotations):
        if isinstance(src, dict) and src.get("runbook_url"):
            return str(src["runbook_url"])
    return None


def is_absolute_http_url(url: str) -> bool:
    """True when ``url`` is an absolute ``http``/``https`` URL with a host (what a browser
    opens from an Alertmanager notification)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return False
    return parts.scheme.lower() in ("http", "https") and bool(parts.hostname) and url == url.strip()


# ---------------------------------------------------------------------------------------------
# The check


def _err(file, line, col, code, msg, rule=""):
    return Finding(file, line, col, code, Severity.ERROR, msg, rule)


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


def check_links(outputs, specs, root, site_dir=None) -> list[Finding]:
    """Link findings (``RG710``-``RG718``, see the module docstring) for a project.

    Args:
        outputs: the planned outputs, ``rulegen.render.plan(specs, root)[0]`` (a sequence of
            :class:`rulegen.render.Output`); pages and ``values.yaml`` are taken from here first,
            then from the disk (hand-written pages under the docs folder; generated pages the plan
            no longer produces are ignored as stale). Pass ``[]`` to check the pages on disk as
            they are.
        specs: the validated specs (:class:`rulegen.spec.Spec`), whose alerts must be reachable.
        root: project root (``Path`` or ``str``) holding ``mkdocs.yml``.
        site_dir: optional built site folder (``mkdocs build -d DIR``); when given, page
            anchors of ``runbook_url`` and related links are read from its HTML instead of the
            Markdown.

    Returns:
        Findings sorted by file, line and code; empty when every link lands.

    Raises:
        RulegenError: ``mkdocs.yml`` is not valid YAML.
    """
    try:
        return _check_links(outputs, specs, root, site_dir)
    finally:
        _AHEAD.clear()
        _URLS_AHEAD.clear()


def _check_links(outputs, specs, root, site_dir) -> list[Finding]:
    root = Path(root)
    settings = site_mod.settings(root)
    findings: list[Finding] = []
    if (root / "mkdocs.yml").is_file() and settings.docs_dir != site_mod.DOCS_DIR:
        findings.append(_err("mkdocs.yml", 1, 1, "RG717",
                             f"docs_dir is {settings.docs_dir!r} but rulegen writes the runbook pages to "
                             f"{site_mod.DOCS_DIR}/: every runbook_url would 404; set docs_dir: {site_mod.DOCS_DIR}"))
    unreadable: list = []
    pages = _pages(outputs, root, settings, unreadable)
    for path, at in unreadable:
        findings.append(_err(path, 1, 1, "RG709", f"{path} is not UTF-8 text (byte {at}): `mkdocs build` stops "
                             "on it, so the whole site fails to deploy; save it as UTF-8"))
    for dropped, kept in _same_destination(root, settings, outputs):
        findings.append(_err(dropped, 1, 1, "RG709", f"{dropped} and {kept} are both served as the same page "
                             "(mkdocs reads README.md as index.md, and x.md, x.markdown alike): `mkdocs build` "
                             "drops one with a warning, which --strict makes a failure, so the whole site fails "
                             f"to deploy; rename or remove {dropped}"))
    sdir = Path(site_dir) if site_dir is not None else None
    if sdir is not None and not sdir.is_dir():
        findings.append(_err(str(sdir), 0, 0, "RG718", f"built site folder {sdir} does not exist; run mkdocs build first"))
        return sorted(findings)
    ctx = LinkContext(settings, pages, sdir)
    base = settings.site_url

    where: dict[str, tuple] = {}  # alert -> (spec, rule)
    for spec in specs:
        for _, r in spec.rules():
            if r.is_alert:
                where.setdefault(r.name, (spec, r))
    values_of: dict[str, dict] = {}

    def target_check(page, frag, fail):
        """Run ``fail(code_kind, detail)`` when page/fragment do not resolve."""
        if page is None or page == "" or page not in pages:
            return fail("page", "")
        if frag:
            ids = ctx.ids_of(page)
            if ids is None:
                return fail("html", "")
            if frag not in ids:
                return fail("anchor", frag)
        return None

    planned = {o.path: o.content for o in outputs}
    for spec in specs:
        vkey = spec.chart.path  # specs sharing a chart share its values.yaml: parse it once
        text = _values_text(planned, root, spec)
        kept = _URLS_AHEAD.get(id(spec))
        ahead = kept[1] if kept is not None and kept[0] is spec else None
        urls = iter(ahead[2]) if ahead is not None and ahead[:2] == (text, base) else None
        if urls is None and vkey not in values_of:
            values_of[vkey] = _values(text)
        for group, rule in spec.rules():
            if not rule.is_alert:
                continue
            # positions only for a finding: a spec loaded by a forked child remakes them on use
            url = next(urls) if urls is not None else default_runbook_url(spec, group, rule, base, values_of[vkey])
            if not url:
                continue
            outside = not url.startswith(base) and url.rstrip("/") != base.rstrip("/")
            if outside and static_runbook_url(spec, group, rule, values_of.get(vkey) or _values(text)) is not None:
                # a runbook_url written by hand (an imported upstream rule's, a wiki page): an
                # external link, whose form is all there is to check here
                if not is_absolute_http_url(url):
                    line, col = spec.source.pos(rule.path)
                    findings.append(_err(spec.file, line, col, "RG712",
                                         f"{rule.name}: runbook_url {url!r} is neither under the runbook site "
                                         f"{base} nor an absolute http(s) URL, so a notification cannot open "
                                         "it; write the full address (https://host/path)", rule.name))
            elif outside:
                line, col = spec.source.pos(rule.path)
                findings.append(_err(spec.file, line, col, "RG712",
                                     f"{rule.name}: runbook_url {url} is not under the runbook site {base} "
                                     "(mkdocs.yml site_url); set runbookUrl in values.yaml or site_url to the same base",
                                     rule.name))
            rest = url[len(base):] if url.startswith(base) else ""
            path, _, frag = rest.partition("#")
            path = path.split("?", 1)[0]
            page = url_to_page(path, pages, settings.use_directory_urls)
            frag = unquote(frag)

            def fail(kind, detail, rule=rule, url=url, page=page, path=path, spec=spec):
                line, col = spec.source.pos(rule.path)
                if kind == "page":
                    findings.append(_err(spec.file, line, col, "RG710",
                                         f"{rule.name}: runbook_url {url} opens page '{path or '/'}' but the site has "
                                         f"no such page (expected {site_mod.DOCS_DIR}/{spec.app}.md); run rulegen build",
                                         rule.name))
                elif kind == "html":
                    findings.append(_err(spec.file, line, col, "RG710",
                                         f"{rule.name}: runbook_url {url} opens a page the built site does not have "
                                         f"(no {html_path(page, settings.use_directory_urls)}); rebuild the site",
                                         rule.name))
                else:
                    findings.append(_err(spec.file, line, col, "RG711",
                                         f"{rule.name}: runbook_url {url} opens {site_mod.DOCS_DIR}/{page} but it has "
                                         f"no anchor #{detail} (missing anchor); the alert's heading must carry "
                                         f"{{ #{anchor(rule.name)} }}: run rulegen build",
                                         rule.name))
            if not outside:
                target_check(page, frag, fail)

            for i, rel in enumerate(rule.runbook.get("related") or []):
                rpath = rule.path + ("runbook", "related", i, "alert")
                name = rel.get("alert", "")
                if name not in where:
                    rline, rcol = spec.source.pos(rpath)
                    from ..hints import closest
                    near = closest(str(name), [n for n in where if n != rule.name])
                    fix = f"did you mean {near}? Fix the name" if near else "fix the name"
                    findings.append(_err(spec.file, rline, rcol, "RG713",
                                         f"{rule.name}: related alert {name!r} is not defined by any spec; "
                                         f"{fix} or remove the entry", rule.name))
                    continue
                tspec = where[name][0]
                tpage = f"{tspec.app}.md"

                def rfail(kind, detail, rule=rule, name=name, tpage=tpage, rpath=rpath, spec=spec):
                    rline, rcol = spec.source.pos(rpath)
                    what = (f"page {site_mod.DOCS_DIR}/{tpage} does not exist" if kind == "page" else
                            f"the built site lacks {tpage}'s HTML" if kind == "html" else
                            f"{site_mod.DOCS_DIR}/{tpage} has no anchor #{detail} (missing anchor)")
                    findings.append(_err(spec.file, rline, rcol, "RG714",
                                         f"{rule.name}: related alert link to {name} does not resolve: {what}",
                                         rule.name))
                target_check(tpage if tpage in pages else "", anchor(name), rfail)

    # Every internal Markdown link and image of every page, and duplicate heading ids.
    files = _docs_files(root, settings, outputs, pages)
    for rel, pg in sorted(pages.items()):
        _ids, heading_ids, hrefs = pg.parsed()
        seen: set[str] = set()
        for hid in heading_ids:
            if hid in seen:
                findings.append(_err(pg.file, pg.line_of(f"#{hid} }}"), 1, "RG716",
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
            kind, target, frag = problem
            line, col = _pos_of_target(pg, url)  # only for a finding: it scans the page
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
            findings.append(_err(pg.file, line, col, "RG719" if image else "RG715", msg))
    return sorted(findings)
