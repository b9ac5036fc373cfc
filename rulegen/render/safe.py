"""Spec Markdown made safe for the runbook site: nothing in a spec runs in the reader's browser.

Runbook content in a spec (``intro``, ``markdown`` and ``after`` blocks, block titles, table
cells, facts, ``explanation``, ``causes``, ``resolution``, related-alert notes) is Markdown by
design, and Python-Markdown (what mkdocs renders it with) passes raw HTML through, keeps any
link scheme, and with ``attr_list`` lets ``{ onclick=... }`` set any attribute. Every piece of
spec Markdown therefore enters a page through :func:`spec_markdown` (or :func:`spec_cell` for
a table cell; a page's hand-written team notes through :func:`notes_markdown`), which, outside code (fenced blocks and code spans, shown as written):

* escapes raw HTML (``<`` becomes ``&lt;``, so ``<script>`` is shown as text), except
  ``<https://...>`` and ``<name@example.com>`` autolinks; or, when the project allows HTML
  (``.rulegen.yaml``: ``runbooks: {allow_html: true}``), cleans it with nh3 (the Ammonia
  sanitizer) down to :data:`ALLOWED_TAGS` and :data:`ALLOWED_ATTRIBUTES`, dropping scripts,
  styles, iframes, event handlers and comments;
* shows every link and image whose destination has a scheme other than ``http``, ``https``
  or ``mailto`` (``javascript:``, ``data:``, ``vbscript:``..., entity-encoded or split by
  white space included, as browsers read them) as the text it is, not as a link;
* escapes ``{`` and ``}``, so ``attr_list`` cannot add attributes (``{ onclick=... }``), and
  backticks that open no code span, so one field cannot pair with the next;
* keeps only a language name in a fence's info string, and closes a fence left open.

Then it *checks* the result the way the site will read it: rendered by Python-Markdown with
the site's extensions (:data:`EXTENSIONS`), the HTML may hold only allowed tags and
attributes and http(s)/mailto/relative URLs (:func:`html_problems`). Text that fails the
check (a construct the rewriting above did not foresee) is shown as plain text instead
(:func:`inert`). :func:`rulegen.render.runbook.render_page` checks the whole page again when a
spec holds fences (a fence can change how the next field reads).

To add a new spec field that holds Markdown to a page: route its text through
:func:`spec_markdown` (``block=True`` where it starts a block at column 0 of the page,
``block=False`` inside a list item, heading or line) or :func:`spec_cell` (table cells);
plain text that is not Markdown goes through :func:`rulegen.render.runbook.md_text`; a URL a
spec declares for a link (dashboards, links) must pass :func:`declared_url_ok` in validation
(``RG745``) and be written with :func:`link`.
"""

from __future__ import annotations

import contextlib
import functools
import html
import re
from html.parser import HTMLParser

#: URL schemes a link or image on the site may use; anything else is neutralized.
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})

#: What mkdocs renders the pages with (the ``markdown_extensions`` of the bundled mkdocs.yml).
EXTENSIONS = ("attr_list", "md_in_html", "tables", "admonition", "toc", "pymdownx.highlight",
              "pymdownx.superfences")

#: Tags raw HTML in spec Markdown may keep when the project allows HTML (nh3 allow-list).
ALLOWED_TAGS = frozenset({
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "details", "dl", "dt", "em", "h1", "h2",
    "h3", "h4", "h5", "h6", "hr", "i", "img", "ins", "kbd", "li", "mark", "ol", "p", "pre", "s", "samp",
    "small", "span", "strong", "sub", "summary", "sup", "table", "tbody", "td", "tfoot", "th", "thead",
    "tr", "u", "ul",
})
#: Attributes raw HTML may keep when the project allows HTML (URLs limited to SAFE_SCHEMES).
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "img": {"src", "alt", "title"},
                      "td": {"align"}, "th": {"align"}, "ol": {"start"}}

# What the check accepts in rendered HTML: the allow-list above, plus what Python-Markdown and
# its extensions write themselves (div/span/p with classes for admonitions and highlighting,
# heading ids and permalinks, table alignment).
_CHECK_TAGS = ALLOWED_TAGS | {"div"}
_CHECK_ATTRS = {"href", "src", "alt", "title", "align", "start", "class", "id", "style", "rel", "open",
                "data-app", "data-rg-labels"}  # the last two: the page template's, read by rulegen.js
_CHECK_ATTRS |= {"data-rg-silence", "data-rg-pair"}  # issue 28: silence links, burn-rate pairs (rulegen.js)
_ALIGN_STYLE = re.compile(r"\s*text-align:\s*(left|right|center)\s*;?\s*")

_POLICY = {"allow_html": False, "inert": False}


@contextlib.contextmanager
def html_policy(allow_html: bool):
    """Within the block, raw HTML in spec Markdown is cleaned by nh3 (``allow_html``) rather
    than escaped. Set by :func:`rulegen.pipeline.plan_project` from ``.rulegen.yaml``."""
    old = _POLICY["allow_html"]
    _POLICY["allow_html"] = bool(allow_html)
    try:
        yield
    finally:
        _POLICY["allow_html"] = old


@contextlib.contextmanager
def inert_markdown():
    """Within the block, every piece of spec Markdown is shown as plain text (:func:`inert`):
    the fallback when a whole page fails :func:`html_problems`."""
    old = _POLICY["inert"]
    _POLICY["inert"] = True
    try:
        yield
    finally:
        _POLICY["inert"] = old


# -- URLs ------------------------------------------------------------------------------------

_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
_URL_NOISE = re.compile(r"[\x00-\x20\x7f]+")  # browsers drop tabs and newlines anywhere in a URL


def url_scheme(url: str) -> str | None:
    """The scheme a browser would see in ``url`` (lower case), or None for a relative URL.
    HTML entities are decoded (``&#106;avascript:``) and white space and control characters
    removed (``java\\nscript:``) first, as a browser does."""
    u = _URL_NOISE.sub("", html.unescape(url)).lstrip("<")
    m = _SCHEME.match(u)
    return m.group(1).lower() if m else None


def link_ok(url: str) -> bool:
    """True when ``url`` is relative (a page, an anchor) or uses http, https or mailto."""
    scheme = url_scheme(url)
    return scheme is None or scheme in SAFE_SCHEMES


_DECLARED = re.compile(r"https?://[^\s/?#@\\]+(?:[/?#][^\s]*)?")


def declared_url_ok(url) -> bool:
    """True when ``url``, a link a spec declares (a dashboard, a runbook link), is an absolute
    ``http://`` or ``https://`` URL with a host and no white space or control characters."""
    return isinstance(url, str) and _DECLARED.fullmatch(url) is not None and url == url.strip()


def link(text: str, url: str) -> str:
    """A Markdown link to a declared ``url`` (already checked by :func:`declared_url_ok`)
    showing ``text`` as plain text; a URL that is not http(s) becomes plain text."""
    label = inert(text).replace("\n", " ")
    if not declared_url_ok(url):
        return label
    return f"[{label}](<{url.replace('<', '%3C').replace('>', '%3E')}>)"


# -- rewriting -------------------------------------------------------------------------------

_LINK_DEST = re.compile(r"\]\([ \t\n]*<?")
_REF_DEF = re.compile(r"^([ ]{0,3}\[[^\[\]]*\]:[ ]*(?:\n[ ]*)?<?)(?=\S)", re.M)
_AUTOLINK = re.compile(r"<(?:https?://[^<>\s\"'`]*|mailto:[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+|"
                       r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)>")
_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_LANG = re.compile(r"[A-Za-z0-9_+#.-]+")
_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+!|<>&])")


def _neutralize_links(s: str) -> str:
    r"""Every link or image (inline, or a reference definition) whose destination has a
    scheme that is not allowed loses its link syntax (``](`` becomes ``]\(``, a definition's
    ``[`` becomes ``\[``): it is shown as the text it is, and links nowhere."""
    def inline(m: re.Match) -> str:
        return m.group(0) if link_ok(s[m.end(): m.end() + 200]) else "]\\(" + m.group(0)[2:]

    def definition(m: re.Match) -> str:
        return m.group(0) if link_ok(s[m.end(): m.end() + 200]) else m.group(0).replace("[", "\\[", 1)
    s = _LINK_DEST.sub(inline, s)
    return _REF_DEF.sub(definition, s)


def _escape_braces(s: str) -> str:
    """``{``, ``}`` and backticks not already backslash-escaped get a backslash: no attribute
    list, and no backtick left unpaired in this text that could pair with one in the next
    field or table cell and turn what lies between into (or out of) code."""
    out = []
    run = 0
    for ch in s:
        if ch in "{}`" and run % 2 == 0:
            out.append("\\")
        out.append(ch)
        run = run + 1 if ch == "\\" else 0
    return "".join(out)


#: A link destination in angle brackets (``[x](<guides/a b.md>)``, ``[r]: <url>``), kept: its
#: ``<`` opens no tag. No white space, quote, backtick or bracket inside, ``)``, a blank or the
#: line's end right after (unsafe schemes lost their link syntax first, :func:`_neutralize_links`).
_ANGLE_DEST = re.compile(r"(?:\]\([ \t]*|^[ ]{0,3}\[[^\[\]\n]*\]:[ \t]*)(<)[^<>\s\"'`]*>(?=[)\s]|$)", re.M)


def _escape_lt(s: str) -> str:
    """``<`` becomes ``&lt;`` except where it opens a safe autolink or a link destination in
    angle brackets."""
    keep = {m.start() for m in _AUTOLINK.finditer(s)} | {m.start(1) for m in _ANGLE_DEST.finditer(s)}
    return "".join("&lt;" if ch == "<" and i not in keep else ch for i, ch in enumerate(s))


_QUOTE = "\ue000"  # stands for a line-start `>` (a blockquote marker) while nh3 runs
_AUTO = "\ue001"


def _clean_html(s: str) -> str:
    """Raw HTML in ``s`` cleaned by nh3 to the allow-list; Markdown's own ``>`` quote markers
    and ``<https://...>`` autolinks are kept out of its way."""
    import nh3
    links = []

    def hide(m: re.Match) -> str:
        links.append(m.group(0))
        return f"{_AUTO}{len(links) - 1}{_AUTO}"
    s = _AUTOLINK.sub(hide, s)
    s = re.sub(r"^([ \t]*)((?:>[ \t]?)+)", lambda m: m.group(1) + m.group(2).replace(">", _QUOTE), s, flags=re.M)
    s = nh3.clean(s, tags=set(ALLOWED_TAGS), attributes={k: set(v) for k, v in ALLOWED_ATTRIBUTES.items()},
                  url_schemes=set(SAFE_SCHEMES), strip_comments=True, link_rel="noopener noreferrer")
    s = s.replace(_QUOTE, ">")
    return re.sub(f"{_AUTO}(\\d+){_AUTO}", lambda m: links[int(m.group(1))], s)


#: ``&#`` or ``&#x`` not followed by a digit: an unfinished character reference. Python's
#: ``html.parser`` (which Python-Markdown's raw-HTML block handling uses) stops at one when no
#: ``;`` follows anywhere later in the page and reads the rest of the page as text, so the
#: page's own ``<div markdown>`` / ``<details markdown>`` blocks after it are never processed.
DANGLING_REF = re.compile(r"&(?=#(?![0-9]|[xX][0-9A-Fa-f]))")


def _text(s: str, allow_html: bool) -> str:
    """Rewrite Markdown text that holds no code (see the module docstring)."""
    s = s.replace(_QUOTE, "").replace(_AUTO, "")
    s = DANGLING_REF.sub("&amp;", s)  # shown the same: a bare & is text to Markdown
    s = _neutralize_links(s)
    s = _clean_html(s) if allow_html else _escape_lt(s)
    return _escape_braces(s)


def _spans(s: str) -> list[tuple[bool, str]]:
    """``s`` cut into (is code, text) pieces at code spans: a run of backticks not escaped by
    a backslash, closed by the next run of the same length within the paragraph."""
    out: list[tuple[bool, str]] = []
    i = start = 0
    n = len(s)
    while i < n:
        if s[i] == "\\":
            i += 2
            continue
        if s[i] != "`":
            i += 1
            continue
        j = i
        while j < n and s[j] == "`":
            j += 1
        ticks = j - i
        k = j
        close = None
        while k < n:
            if s[k] == "`":
                m = k
                while m < n and s[m] == "`":
                    m += 1
                if m - k == ticks:
                    close = m
                    break
                k = m
            elif s.startswith("\n\n", k) or s.startswith("\n \n", k):
                break  # a code span does not cross a blank line
            else:
                k += 1
        if close is None:
            i = j
            continue
        if i > start:
            out.append((False, s[start:i]))
        out.append((True, s[i:close]))
        i = start = close
    if start < n:
        out.append((False, s[start:]))
    return out


def _inline(s: str, allow_html: bool) -> str:
    return "".join(t if code else _text(t, allow_html) for code, t in _spans(s))


def _block(s: str, allow_html: bool) -> str:
    """Rewrite block Markdown: fences kept as code (info string cut to a language name, an
    open fence closed), the text between them through :func:`_inline`."""
    out: list[str] = []
    text: list[str] = []
    lines = s.split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None or (m.group("fence")[0] == "`" and "`" in m.group("info")):
            text.append(lines[i])
            i += 1
            continue
        if text:
            out.append(_inline("\n".join(text), allow_html))
            text = []
        fence, indent = m.group("fence"), m.group("indent")
        info = m.group("info").strip().lstrip("{").lstrip(".")
        lang = _LANG.match(info)
        out.append(f"{indent}{fence}{lang.group(0) if lang else ''}")
        closer = re.compile(r"^[ \t]*" + re.escape(fence[0]) + "{" + str(len(fence)) + r",}[ \t]*$")
        i += 1
        while i < len(lines) and not closer.match(lines[i]):
            out.append(lines[i])
            i += 1
        out.append(lines[i] if i < len(lines) else f"{indent}{fence}")
        i += 1
    if text:
        out.append(_inline("\n".join(text), allow_html))
    return "\n".join(out)


def inert(text: str) -> str:
    """``text`` shown as plain text in Markdown, line breaks kept: every character Markdown or
    HTML could read as markup is escaped."""
    s = str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = re.sub(r"([\\`*_{}\[\]()#+!])", r"\\\1", s)
    return s


#: Without one of these characters the rewrite changes nothing (most runbook sentences).
_REWRITTEN = re.compile(r"[<\[{&`~]")
#: Without one of these, Markdown cannot make a tag, a link, an entity or an attribute list,
#: whatever it takes for code: the rewrite (backticks, fences) needs no check.
_RISKY = re.compile(r"[<\[{&]")


@functools.lru_cache(maxsize=8192)
def _safe(text: str, block: bool, allow_html: bool) -> tuple[str, bool]:
    """(the rewritten text, True) or (:func:`inert` text, False) when the rewrite still
    renders something :func:`html_problems` refuses."""
    if not _REWRITTEN.search(text):
        return text, True
    out = _block(text, allow_html) if block else _inline(text, allow_html)
    if not _RISKY.search(text):
        return out, True
    # the probe after the text: a page's own HTML block that follows it must still be read as
    # one (an unfinished `&#` left in a code span would swallow it: see DANGLING_REF); rendered
    # only when one is left, not a second time for every text
    if problems(out) or (DANGLING_REF.search(out) and problems(out + _PROBE)):
        return inert(text), False
    return out, True


#: What follows a spec text on a page: one of the page's own Markdown-in-HTML blocks.
_PROBE = '\n\n<div class="rg-probe" markdown>\n\n*probe*\n\n</div>\n'


def fallback_reasons(text: str, *, block: bool = True, allow_html: bool = False) -> list[str]:
    """Why :func:`spec_markdown` would show ``text`` as plain text (what its rewrite would
    still render that :func:`html_problems` refuses); empty when it is shown as Markdown."""
    text = str(text or "").strip()
    if not text or _safe(text, block, allow_html)[1]:
        return []
    return problems(_block(text, allow_html) if block else _inline(text, allow_html))


def unsafe_links(text: str):
    """(offset, scheme) of each Markdown link or image destination in ``text`` (as written)
    whose scheme is not in :data:`SAFE_SCHEMES`; the page would show those pointing nowhere."""
    for rx in (_LINK_DEST, _REF_DEF):
        for m in rx.finditer(text):
            scheme = url_scheme(text[m.end(): m.end() + 200])
            if scheme is not None and scheme not in SAFE_SCHEMES:
                yield m.end(), scheme


def spec_markdown(text, *, block: bool = True) -> str:
    """Markdown written in a spec, made safe to put on a page (see the module docstring).

    Args:
        text: the Markdown as written (surrounding white space is stripped).
        block: True for text placed at the start of a line at column 0 of the page (fences
            are recognised); False inside a list item, a heading or after other text.

    Returns:
        Markdown that renders to the same text and formatting, with raw HTML escaped (or
        cleaned, when the project allows HTML), unsafe links defused and attribute lists
        disabled; or, when the result would still render something unsafe, ``text`` as plain
        text (:func:`inert`).
    """
    text = text.strip() if type(text) is str else str(text or "").strip()
    if _POLICY["inert"]:
        return inert(text)
    if not _REWRITTEN.search(text):
        return text  # most sentences: nothing to rewrite, no cache lookup
    return _safe(text, block, _POLICY["allow_html"])[0]


def notes_markdown(text: str) -> str:
    """A runbook page's team notes (the text between ``<!-- notes:... -->`` and ``<!-- /notes
    -->``, written by hand in the page) made safe exactly as spec Markdown is
    (:func:`spec_markdown`, block Markdown): raw HTML escaped (or cleaned, when the project
    allows HTML), unsafe links defused, attribute lists disabled, or the notes shown as plain
    text when the rewrite would still render something unsafe. The white space around the
    notes (the slot's line breaks) is kept. Idempotent: notes made safe once are left as they
    are, so the next ``build`` writes them unchanged."""
    core = text.strip()
    if not core:
        return text
    lead = text[:len(text) - len(text.lstrip())]
    trail = text[len(text.rstrip()):]
    return lead + spec_markdown(core, block=True) + trail


def notes_problems(text: str) -> list[str]:
    """What :func:`notes_markdown` defuses in ``text``, for a person: the elements, attributes
    and URLs its Markdown would have rendered (:func:`html_problems`), and each link with an
    unsafe scheme; empty when it only escaped harmless characters (``{``, an unpaired backtick)."""
    out = problems(text) if _RISKY.search(text) else []
    out += [f"a {scheme}: link" for _, scheme in unsafe_links(text)]
    return list(dict.fromkeys(out))


_BR = "\ue002"


def spec_cell(value) -> str:
    """A spec value (Markdown) as a table cell: :func:`spec_markdown` on one line, pipes
    escaped, line breaks as ``<br>``."""
    s = str(value).replace(_BR, "").replace("\r\n", "\n").replace("\n", _BR)
    if _POLICY["inert"]:
        s = inert(s)
    elif s.strip():
        s = _safe(s, False, _POLICY["allow_html"])[0]
    return s.replace("|", "\\|").replace(_BR, "<br>")


# -- the check -------------------------------------------------------------------------------

_MD = None


def new_markdown(extensions, configs: dict | None = None):
    """A ``markdown.Markdown`` with ``extensions`` (names as mkdocs.yml writes them: ``toc``,
    ``pymdownx.superfences``) and ``configs`` (name -> options): the instance Python-Markdown
    makes from those names, made without its look-up of every installed package's entry
    points (``importlib.metadata``: about a tenth of a ``rulegen validate``). A bare name is
    Python-Markdown's own ``markdown.extensions.<name>`` (what its entry points name); a dotted
    one is imported and its ``makeExtension`` called, as Python-Markdown does; the same holds
    for the extensions an extension loads itself (superfences loads ``pymdownx.highlight``).

    Raises:
        ImportError: an extension is not installed.
    """
    import importlib

    import markdown

    class _Markdown(markdown.Markdown):
        def build_extension(self, ext_name, configs):
            module = ext_name if "." in ext_name else f"markdown.extensions.{ext_name}"
            return importlib.import_module(module).makeExtension(**dict(configs))

    return _Markdown(extensions=list(extensions), extension_configs=configs or {})


def to_html(markdown_text: str) -> str:
    """``markdown_text`` rendered as the site renders it (Python-Markdown, :data:`EXTENSIONS`)."""
    global _MD
    if _MD is None:
        _MD = new_markdown(EXTENSIONS)
    _MD.reset()
    return _MD.convert(markdown_text)


_MD_PLAIN = None
#: A run of three or more backticks or tildes (a fence, or what could be read as one).
_FENCE_RUN = re.compile(r"(?<!`)`{3,}(?!`)|(?<!~)~{3,}(?!~)")
#: What may follow such a run on its line for :func:`problems` to leave code uncoloured: at
#: most a bare language name (what :func:`spec_markdown` leaves of an info string) and class
#: names in braces (``{ .rg-promql }``, rulegen's own marks: a ``class`` either way).
_BARE_INFO = re.compile(r"[A-Za-z0-9_#.+-]*[ \t]*(?:\{[ \t]*(?:\.[A-Za-z0-9_-]+[ \t]*)+\}[ \t]*)?(?:\n|$)")


def problems(markdown_text: str) -> list[str]:
    """``html_problems(to_html(markdown_text))``, with less work where that gives the same list:
    when every fence of the text opens with at most a bare language name and class names
    (``promql { .rg-promql }``; no other ``{...}`` attributes, no ``title=`` or other options),
    code is rendered without Pygments' colouring
    (``use_pygments: false``, as the link check renders). Code is escaped text in a ``pre``,
    ``code``, ``div`` or ``span`` with a ``class`` either way, which :func:`html_problems`
    never refuses, and the HTML around it is the same; what an info string adds (attributes,
    a title) differs between the two, so such a text is rendered with colouring, as the site
    renders it. The page check rendered every command and PromQL block of a page through
    Pygments' lexers: about a tenth of a ``check``."""
    global _MD_PLAIN
    for m in _FENCE_RUN.finditer(markdown_text):
        if not _BARE_INFO.match(markdown_text, m.end()):
            return html_problems(to_html(markdown_text))
    if _MD_PLAIN is None:
        _MD_PLAIN = new_markdown(EXTENSIONS, {"pymdownx.highlight": {"use_pygments": False}})
    _MD_PLAIN.reset()
    return html_problems(_MD_PLAIN.convert(markdown_text))


class _Checker(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag not in _CHECK_TAGS:
            self.problems.append(f"<{tag}> element")
        for name, value in attrs:
            value = value or ""
            if name not in _CHECK_ATTRS:
                self.problems.append(f"{name} attribute on <{tag}>")
            elif name in ("href", "src") and not link_ok(value):
                self.problems.append(f"{name}={value!r} on <{tag}>")
            elif name == "style" and not _ALIGN_STYLE.fullmatch(value):
                self.problems.append(f"style={value!r} on <{tag}>")

    handle_startendtag = handle_starttag

    def unknown_decl(self, data):
        self.problems.append(f"<![{data}]> declaration")

    def handle_pi(self, data):
        self.problems.append(f"<?{data}> processing instruction")

    def handle_decl(self, decl):
        self.problems.append(f"<!{decl}> declaration")


def html_problems(html_text: str) -> list[str]:
    """What in ``html_text`` could run in or lead a browser astray: elements outside the
    allow-list (``script``, ``iframe``, ``svg``...), attributes outside it (every ``on*``
    event handler), ``href``/``src`` with a scheme other than http, https, mailto, and styles
    other than table alignment. Empty when the HTML is safe."""
    c = _Checker()
    c.feed(html_text)
    c.close()
    return c.problems
