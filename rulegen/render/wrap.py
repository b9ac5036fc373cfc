"""Readable diffs of the generated Markdown pages (issue 29): no line over :data:`WIDTH`
characters outside fenced code.

:func:`wrap_markdown` goes over a page the templates made and changes only what is too wide:

* a paragraph or list item line over the width is broken at spaces into several lines (a
  list item's next lines indented under its text). Markdown joins the lines of a paragraph
  with a space, so the page reads the same: the break only ever replaces one space that
  separates two "atoms", and an atom is never split. Atoms: a code span (a break inside one
  would turn into a space in the code, or a backtick fence) and an HTML ``<code>`` element
  with its text (a break there is a line break in the code), an HTML tag, a whole link
  ``[text](target){ attrs }`` (the link check's fast path reads a link on one line), a
  ``{...}`` group, a backslash escape and a character reference with the text around them.
  A line never starts with what Markdown could read as block syntax (``#``, ``>``, ``-``,
  ``+``, ``=``, ``|``, ``1.``, ``<``, a backtick fence, ...): the break moves before the
  atom ahead, or is left out;
* a table with a row over the width becomes a list, one item per row (``- first cell: the
  others``, the column names before the cells when the table has more than two columns),
  then wrapped as above; a table of narrow rows stays a table.

Left as they are: fenced code blocks (a long PromQL ``expr`` or command line is one token a
reader copies; it may be wider, and only there), headings, HTML block lines and comments. A
single atom wider than the width (a link whose address is longer, a code span longer than a
line) stays whole on a line of its own: it cannot be broken without changing what it says.

The result depends only on the text (deterministic), and lines that fit are never touched,
so a change to one fact changes the line that holds it.
"""

from __future__ import annotations

import re

#: The longest line a reviewer should have to read in a generated page (outside fenced code).
WIDTH = 120

_FENCE = re.compile(r"^[ ]*(`{3,}|~{3,})")
_LIST = re.compile(r"^([ ]*)([-*+]|\d{1,9}[.)])[ ]+")
_TABLE_SEP = re.compile(r"^\|?[ ]*:?-+:?[ ]*(\|[ ]*:?-+:?[ ]*)*\|?[ ]*$")
_TAG = re.compile(r"""<(?:[A-Za-z][A-Za-z0-9-]*(?:\s+[^\s"'<>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*\s*/?"""
                  r"""|/[A-Za-z][A-Za-z0-9-]*\s*|!--(?:(?!-->).)*--|https?://[^\s<>]*)>""")
_ORDERED_MARK = re.compile(r"\d+[.)]$")
_CODE_OPEN = re.compile(r"<code[\s>]", re.I)
_CODE_END = re.compile(r"</code\s*>", re.I)


def without_carriage_returns(text: str) -> str:
    """``text`` with each carriage return as a space. Python-Markdown reads a lone CR as a line
    break, but every check of a spec text on its own line (a code span, a table cell, a list
    item) does not: a CR inside an expr shown as inline code ended the code span and let the
    next line start a raw HTML block (``<script>``). rulegen writes pages with ``\\n`` line
    breaks only, and reads hand-written notes with their line breaks normalised."""
    return text.replace("\r", " ") if "\r" in text else text


def wrap_markdown(text: str, width: int = WIDTH) -> str:
    """``text`` (a Markdown page) with every line outside fenced code made to fit ``width``
    characters where Markdown allows it (see the module docstring); the rendered page is the
    same, apart from over-wide tables shown as lists. A carriage return (which only a spec's
    quoted string can bring) becomes a space first: see :func:`without_carriage_returns`."""
    lines = without_carriage_returns(text).split("\n")
    out: list[str] = []
    fence = None
    in_list = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence is not None:
            out.append(line)
            stripped = line.strip(" ")
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            i += 1
            continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            out.append(line)
            i += 1
            continue
        if line.startswith("|") and i + 1 < len(lines) and _TABLE_SEP.match(lines[i + 1]):
            end = i + 2
            while end < len(lines) and lines[end].startswith("|"):
                end += 1
            table = lines[i:end]
            if max(len(x) for x in table) > width:
                out.extend(split_links(wrap_line(x, width), width) for x in _table_as_list(table))
            else:
                out.extend(table)
            i = end
            continue
        if _LIST.match(line):
            in_list = True
        elif line[:1] not in ("", " "):
            in_list = False
        # an indented line is a list item's text or a paragraph's next line, never indented code
        # (the pages' code is fenced): wrapped only where that is sure
        wrap = len(line) > width and (not line.startswith("    ") or in_list or bool(out and out[-1].strip()))
        out.append(split_links(wrap_line(line, width), width) if wrap else line)
        i += 1
    return "\n".join(out)


def _cells(row: str) -> list[str]:
    """The cells of a table row (escaped pipes kept in the cell)."""
    s = row.strip()
    if s.startswith("|"):
        s = s[1:]
    if s.endswith("|") and not s.endswith("\\|"):
        s = s[:-1]
    out, cur, k = [], "", 0
    while k < len(s):
        c = s[k]
        if c == "\\" and k + 1 < len(s):
            cur += s[k:k + 2]
            k += 2
            continue
        if c == "`":  # a code span: its pipes are the cell's (as the tables extension reads it)
            run = len(s[k:]) - len(s[k:].lstrip("`"))
            close = s.find("`" * run, k + run)
            if close > 0:
                cur += s[k:close + run]
                k = close + run
                continue
        if c == "|":
            out.append(cur.strip())
            cur = ""
        else:
            cur += c
        k += 1
    out.append(cur.strip())
    return out


def _table_as_list(table: list[str]) -> list[str]:
    """A Markdown table (header, separator, rows) as list items: ``- first: second`` for two
    columns, ``- first · name: cell · ...`` for more."""
    head = _cells(table[0])
    items = []
    for row in table[2:]:
        cells = _cells(row) + [""] * len(head)
        cells = [c if c else "—" for c in cells[:len(head)]]
        if len(head) == 2:
            items.append(f"- {cells[0]}: {cells[1]}")
        else:
            rest = " · ".join(f"{h}: {c}" for h, c in zip(head[1:], cells[1:]))
            items.append(f"- {cells[0]} · {rest}")
    return items


def atoms(text: str) -> list[str]:
    """``text`` (one line of inline Markdown) split at the spaces where a line may break:
    code spans, HTML tags, links with their attribute lists and ``{...}`` groups are never
    split (see the module docstring)."""
    out: list[str] = []
    cur: list[str] = []
    k, n = 0, len(text)
    while k < n:
        c = text[k]
        if c == " ":
            if cur:
                out.append("".join(cur))
                cur = []
            k += 1
            continue
        if c == "\\" and k + 1 < n:
            cur.append(text[k:k + 2])
            k += 2
            continue
        if c == "`":
            run = len(text[k:]) - len(text[k:].lstrip("`"))
            close = _closing_ticks(text, k + run, run)
            if close >= 0:
                cur.append(text[k:close + run])
                k = close + run
                continue
            cur.append("`" * run)
            k += run
            continue
        if c == "<":
            m = _TAG.match(text, k)
            if m:
                # a code span written as HTML (rulegen.render.code_md.inline_code): its text is
                # code a reader copies and the site's script links, a line break in it is not a space
                end = _CODE_END.search(text, m.end()) if _CODE_OPEN.match(m.group(0)) else None
                cur.append(text[k:end.end()] if end else m.group(0))
                k = end.end() if end else m.end()
                continue
        if c == "[":
            end = _link_end(text, k)
            if end > k:
                cur.append(text[k:end])
                k = end
                continue
        if c == "{":
            close = text.find("}", k)
            if close > 0:
                cur.append(text[k:close + 1])
                k = close + 1
                continue
        cur.append(c)
        k += 1
    if cur:
        out.append("".join(cur))
    return out


def _closing_ticks(text: str, start: int, run: int) -> int:
    """Where the backtick run of exactly ``run`` closing a code span opened before ``start``
    begins, or -1 (then the backticks are literal)."""
    k = start
    while True:
        k = text.find("`" * run, k)
        if k < 0:
            return -1
        end = k + run
        if text[end:end + 1] != "`":
            return k
        while end < len(text) and text[end] == "`":
            end += 1
        k = end


def _link_end(text: str, k: int) -> int:
    """The end of the link ``[text](target)`` (with a ``{...}`` attribute list right after it)
    starting at ``k``, or -1."""
    depth, j = 0, k
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "`":
            run = len(text[j:]) - len(text[j:].lstrip("`"))
            close = _closing_ticks(text, j + run, run)
            j = close + run if close >= 0 else j + run
            continue
        if c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
            if depth == 0:
                break
        j += 1
    if depth != 0 or j + 1 >= len(text) or text[j + 1] != "(":
        return -1
    depth, j = 0, j + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                break
        j += 1
    if depth != 0:
        return -1
    j += 1
    if text.startswith("{", j):
        close = text.find("}", j)
        if close > 0:
            j = close + 1
    return j


def safe_start(atom: str) -> bool:
    """Whether a line may start with ``atom`` inside a paragraph without Markdown reading it
    as the start of another block (a heading, quote, list, rule, fence, table, HTML)."""
    first = atom[0]
    if first.isalnum():
        return not _ORDERED_MARK.match(atom)
    if first in "*_":
        rest = atom.lstrip("*_")
        return bool(rest) and (rest[0].isalnum() or rest[0] in "‹`[")
    if first == "`":
        return not atom.startswith("```")
    if first == "!":
        return atom.startswith("![")
    if first == "<":  # an inline span (the badge, a burn-rate pair): never an HTML block
        return atom.startswith(("<span ", "</span>"))
    return first in "‹«·—–\"'(\\&[$/%@"


def wrap_line(line: str, width: int = WIDTH) -> str:
    """One over-wide line of a paragraph or list item as several lines (joined by newlines)
    that Markdown reads as the same text; headings, table rows and HTML block lines are
    returned as they are (the caller leaves indented code alone)."""
    stripped = line.lstrip(" ")
    if not stripped or stripped[0] in "#|" or stripped.startswith("<") and not stripped.startswith("<span"):
        return line
    m = _LIST.match(line)
    lead = m.group(0) if m else line[:len(line) - len(stripped)]
    indent = " " * len(lead)
    body = line[len(lead):]
    hard = "  " if body.endswith("  ") else ""
    words = atoms(body)
    if not words:
        return line
    rows: list[list[str]] = [[words[0]]]
    size = len(lead) + len(words[0])
    for w in words[1:]:
        if size + 1 + len(w) <= width:
            rows[-1].append(w)
            size += 1 + len(w)
            continue
        back = next((j for j in range(len(rows[-1]) - 1, 0, -1) if safe_start(rows[-1][j])), 0)
        if safe_start(w):
            rows.append([w])
        elif back:
            moved = rows[-1][back:]  # break before the last atom that may start a line instead
            del rows[-1][back:]
            rows.append(moved + [w])
        else:
            rows[-1].append(w)  # no place to break: the line stays wider
            size += 1 + len(w)
            continue
        size = len(indent) + sum(len(x) for x in rows[-1]) + len(rows[-1]) - 1
    text = "\n".join((lead if j == 0 else indent) + " ".join(r) for j, r in enumerate(rows))
    return text + hard


#: rulegen's own links with a long address (the Alertmanager silence form,
#: rulegen.render.silence.form_link): a label of words, an absolute address of URL characters
#: only, rulegen's attribute list.
_OWN_LINK = re.compile(r'\[([A-Za-z][A-Za-z0-9 ]*)\]\((https?://[A-Za-z0-9%._~:/?#&=+-]+)\)'
                       r'\{ \.(rg-[a-z0-9-]+)(?: (data-rg-silence="[A-Za-z0-9_ ]*"))? \}')


def split_links(text: str, width: int = WIDTH) -> str:
    """``text`` (lines :func:`wrap_line` made) with each of rulegen's own links that still
    makes a line wider than ``width`` (:data:`_OWN_LINK`: the Alertmanager silence form with
    the alert's matchers; the "Open in Prometheus" links are the site's script's, see
    :mod:`rulegen.render.code_md`) written as an HTML link whose address goes on over lines of
    their own: ``<a class="rg-silence-link" href="https://...`` / ``%7Balertname%3D...`` /
    ``...">Open a silence in Alertmanager</a>``. A browser drops the newlines of an address
    (the URL standard removes tabs and newlines), so the link opens the same page, with or
    without script.

    A continuation line holds only URL characters and starts with a letter, digit or ``%``
    (never Markdown block syntax; not indented, where spaces would enter the address); a
    break never falls inside a ``%XX`` escape or a character reference (``&amp;``). The link
    check's fast path reads exactly this form (:mod:`rulegen.outputs.anchors`); it adds no id
    and no link that mkdocs validates (raw HTML). A long run of ``-._~`` in the address (which
    percent-encoding keeps) is written as ``%XX`` escapes, equivalent, so it can break too."""
    if not any(len(line) > width for line in text.split("\n")):
        return text
    out = []
    for line in text.split("\n"):
        out.extend(_split_line(line, width) if len(line) > width else [line])
    return "\n".join(out)


def _split_line(line: str, width: int) -> list[str]:
    lines: list[str] = []
    cur, at = "", 0
    for m in _OWN_LINK.finditer(line):
        cur += line[at:m.start()]
        at = m.end()
        if len(cur) + len(m.group(0)) <= width:
            cur += m.group(0)
            continue
        label, url, cls, data = m.groups()
        head = f'<a class="{cls}"' + (f" {data}" if data else "") + ' href="'
        href = _encode_runs(url).replace("&", "&amp;")
        if cur.strip(" ") and len(cur) + len(head) + 20 > width:  # the tag starts a line of its own
            lines.append(cur.rstrip(" "))
            cur = ""
        cur += head
        tail = f'">{label}</a>'
        p = 0
        while True:
            limit = p + max(width - len(cur), 1)
            if limit >= len(href) and len(cur) + len(href) - p + len(tail) > width:
                limit = max(len(href) - 1 - (len(cur) + len(href) - p + len(tail) - width), p + 1)
            q = _break(href, p, limit)
            cur += href[p:q]
            if q >= len(href):
                break
            lines.append(cur)
            cur, p = "", q
        cur += tail
    return lines + [cur + line[at:]]


def _encode_runs(url: str) -> str:
    """``url`` with each run of 40 or more of ``-._~`` after its first ``=`` (in a query value,
    where percent-encoding kept them) written as ``%XX`` escapes, which read the same
    (RFC 3986: equivalent), so that the address can break inside the run."""
    at = url.find("=") + 1
    if at <= 0:
        return url
    return url[:at] + re.sub(r"[-._~]{40,}", lambda m: "".join(f"%{ord(c):02X}" for c in m.group(0)), url[at:])


def _break(href: str, start: int, limit: int) -> int:
    """Where the part of ``href`` on a line that begins at ``start`` ends: the last place up to
    ``limit`` before a letter, digit or ``%`` that is inside no ``%XX`` and no ``&...;``; the
    end of ``href`` when it fits; the first such place after ``limit`` when none is before."""
    if limit >= len(href):
        return len(href)

    def ok(q: int) -> bool:
        c = href[q]
        if not (c.isascii() and c.isalnum() or c == "%") or "%" in href[max(q - 2, 0):q]:
            return False
        amp = href.rfind("&", 0, q)
        return amp < 0 or href.find(";", amp) < 0 or href.find(";", amp) < q

    for q in range(limit, start, -1):
        if ok(q):
            return q
    return next((q for q in range(limit + 1, len(href)) if ok(q)), len(href))
