"""Ids and links of a runbook page, as the site (mkdocs with Python-Markdown) renders it.

:func:`page_ids` gives a Markdown page's element ids, heading ids in page order and link
targets; pages in the plain subset of Markdown that rulegen generates are read from their text
without rendering (the fast path), any other page is rendered. The link check
(:mod:`rulegen.outputs.links`) reads every page of the site through it.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

_HEADING = re.compile(r"^h[1-6]$")
#: Marks an image's source among a page's link targets (:func:`page_ids`): ``IMAGE + src``.
IMAGE = "\0img:"

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
        from ..render.safe import new_markdown
        exts = ["attr_list", "md_in_html", "tables", "toc"]  # md_in_html: triage box, index, details
        cfg = {}
        try:
            import pymdownx.superfences  # noqa: F401  (the site's fence extension, when installed)
            exts += ["pymdownx.highlight", "pymdownx.superfences"]
            cfg["pymdownx.highlight"] = {"use_pygments": False}
        except ImportError:
            exts.append("fenced_code")
        _MD = new_markdown(exts, cfg)
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
# a heading's id or rulegen's classes, reference links, images, setext headings, indented code,
# headings in lists or quotes, emphasis or markup in a heading without an id, ...) sends the
# whole page to _render_ids. benchmarks/links_differential.py checks both ways agree on real and
# mutated pages.
#: A fence's opening line: the language, and rulegen's class (``promql { .rg-promql }``: the PromQL
#: the site's script links, rulegen.render.code_md), which adds no id and no link.
_FENCE_OPEN = re.compile(r"^(`{3,}|~{3,})[ ]*[\w+.-]*[ ]*(?:\{ \.rg-[a-z0-9-]+ \}[ ]*)?$")
#: A code span's attribute list of rulegen's class (``\x60up\x60{ .rg-promql }``), the span already
#: replaced by its stand-in ``\0`` (:func:`_inline_hrefs`): no id, no link.
_CODE_ATTRS = re.compile(r"\0\{ \.rg-[a-z0-9-]+ \}")
_COMMENT = re.compile(r"^<!--(?:(?!--).)*-->[ ]*$")
#: The block wrappers rulegen's pages use (md_in_html), read by the fast path exactly as written.
_WRAPPER = re.compile(r'<(?P<open>div|details) class="rg-[a-z0-9-]+(?: rg-[a-z0-9-]+)*"'
                      r'(?: data-app="[a-z0-9-]+")? markdown>'
                      r'|</(?P<close>div|details)>'
                      r'|<div id="(?P<empty>rg-[a-z0-9-]+)" class="rg-[a-z0-9-]+"></div>'
                      r'|(?P<summary><summary>[A-Za-z][A-Za-z0-9 ,.:;()/-]*</summary>)')
#: The summary line of a ``<details>`` wrapper: plain words ("Rule details", "Silence it: amtool").
_SUMMARY = re.compile(r"<summary>[A-Za-z][A-Za-z0-9 ,.:;()/-]*</summary>")
#: rulegen's badge/summary/burn-rate-pair spans and <br>: no id, no link.
_OWN_INLINE = re.compile(r'<span class="rg-[a-z0-9-]+(?: rg-[a-z0-9-]+)*"(?: data-rg-pair="[A-Za-z0-9 .:=_-]*")?>'
                         r'|</span>|<br>')
_ATX_ID = re.compile(r"^(#{1,6})[ ]+([^#\n]*?)[ ]+\{[ ]?#([A-Za-z0-9]+(?:[-_][A-Za-z0-9]+)*)[ ]?\}[ ]*$")
_ATX_PLAIN = re.compile(r"^(#{1,6})[ ]+([A-Za-z0-9][A-Za-z0-9 .,:;()/'-]*?)[ ]*$")
_SETEXT = re.compile(r"^[=-]+[ ]*$")
_ESCAPED = re.compile(r"\\[\\`*_{}\[\]()>#+\-.!]")
_LINK = re.compile(r"(?<!!)\[([^\[\]|{}]*)\]\(([^()\s<>\"'\\|\0{}]+)\)")
#: A character reference, which Python-Markdown keeps aside in a link target (and mkdocs does not
#: validate a link holding one); a bare ``&`` (``?a=1&b=2``) is plain text.
_ENTITY = re.compile(r"&(?:#[0-9]+|#x[0-9a-fA-F]+|[a-zA-Z0-9]+);")
#: A link with the attribute list rulegen's pages put right after it (attr_list, inline: a class
#: such as ``.rg-open``, the silence link's ``data-rg-silence``; no id).
_LINK_ATTRS = re.compile(_LINK.pattern + r'(?:\{ \.rg-[a-z0-9-]+(?: \.rg-[a-z0-9-]+)*'
                         r'(?: data-rg-silence="[A-Za-z0-9_ ]*")? \})?')
_LEAD = re.compile(r"^[ >*+-]*(?:\d+\.)?[ >]*")
#: rulegen's own link with a long address, written over lines (rulegen.render.wrap.split_links):
#: the start tag up to the end of a line, lines of the address, the end of the address and the
#: label. Raw HTML: no id, and no link mkdocs validates.
_HREF = r"[A-Za-z0-9%._~:/?#&;=+-]*"
_A_OPEN = re.compile(r'<a class="rg-[a-z0-9-]+"(?: data-rg-silence="[A-Za-z0-9_ ]*")? href="https?://' + _HREF + "$")
_A_CHUNK = re.compile(r"[A-Za-z0-9%]" + _HREF)
_A_CLOSE = re.compile(r"[A-Za-z0-9%]" + _HREF + r'">[A-Za-z][A-Za-z0-9 ]*</a>')


def _inline_hrefs(text: str, hrefs: list[str], attrs: bool = True) -> bool:
    """Append the link targets of one line of inline Markdown; False when the line holds
    anything the fast path does not read exactly. ``attrs``: a link may carry rulegen's own
    attribute list (:data:`_LINK_ATTRS`; not in headings, whose attribute list is their id)."""
    # code spans, then escapes, as Python-Markdown does first; a stand-in keeps their place
    if "`" in text:
        if "``" in text or "\\`" in text:
            return False
        parts = text.split("`")
        if len(parts) % 2 == 0:
            return False  # an odd backtick: Markdown pairs it across lines, or leaves it
        text = "\0".join(parts[::2])
        if attrs and "{" in text:
            text = _CODE_ATTRS.sub("\0", text)
    if "\\" in text:
        text = _ESCAPED.sub("\0", text)
    if "<" in text:
        text = _OWN_INLINE.sub("\0", text)
    if "<" in text:
        return False
    if "[" in text or "]" in text:
        link = _LINK_ATTRS if attrs else _LINK
        for m in link.finditer(text):
            if "&" in m.group(2) and _ENTITY.search(m.group(2)):
                return False
            hrefs.append(m.group(2))
        text = link.sub("", text)
        if "[" in text or "]" in text:
            return False
    return "{" not in text and "}" not in text


# Over 80 lines on purpose: one state machine over the page's lines (fence, wrappers, what the
# previous line was); split up, that state would have to pass between the parts on every line.
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
    in_href = False  # inside the address of a split own link (_A_OPEN ... _A_CLOSE)
    for line in text.split("\n"):
        if in_href:
            if _A_CHUNK.fullmatch(line):
                continue
            m = _A_CLOSE.match(line)
            if m is None:
                return None
            in_href = False
            line = "\0" + line[m.end():]  # the link's place; the rest of the line read as text
            m = _A_OPEN.search(line)
            if m:
                in_href, line = True, line[:m.start()]
            if any(x in line for x in ("|", "```", "~~~")) or not _inline_hrefs(line, hrefs):
                return None
            prev = "text"
            continue
        if fence is None and expect is None and prev != "other" and "<a " in line:
            m = _A_OPEN.search(line)
            before = line[:m.start()] if m else ""
            if m and (m.start() == 0 and prev == "blank" or m.start() <= 3 and not before.strip(" ")
                      and prev == "text" or before.strip(" ")):
                # the tag opens a paragraph, goes on with a list item or paragraph (indented up
                # to 3), or follows text on its line; the text before it is read as any line is
                in_href = True
                if before.strip(" "):
                    if (before[0] in "#<`~|=" or before.startswith("    ") or any(x in before for x in ("|", "```", "~~~"))
                            or not _inline_hrefs(before, hrefs)):
                        return None
                    lead = 0 if before[0].isalpha() else _LEAD.match(before).end()
                    if before[lead:lead + 1] in ("#", "<"):
                        return None
                prev = "text"
                continue
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
        if expect is not None and not (expect == "summary" and _SUMMARY.fullmatch(line)):
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
                if "*" in line or "_" in m.group(2) or not _inline_hrefs(m.group(2), hrefs, attrs=False):
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
    if fence is not None or wrappers or expect == "summary" or in_href:
        return None
    from markdown.extensions.toc import slugify, unique
    ids = {h for h, _ in headings if h is not None} | own_ids
    used = set(ids)
    counters: dict[str, int] = {}
    heading_ids = [h if h is not None else unique(slugify(t, "-"), used, counters) for h, t in headings]
    return ids | set(heading_ids), heading_ids, hrefs


def page_ids(markdown_text: str) -> tuple[set[str], list[str], list[str]]:
    """``(ids, heading_ids, hrefs)`` of a Markdown page as the site renders it: every element
    id (headings' explicit ``{ #id }`` or toc slug), heading ids in page order (duplicates
    kept), and every link target (``href``) and image source (``src``, as :data:`IMAGE` +
    ``src``) of the Markdown in page order (raw HTML's are not validated by mkdocs either)."""
    fast = _fast_ids(markdown_text)
    return fast if fast is not None else _render_ids(markdown_text)
