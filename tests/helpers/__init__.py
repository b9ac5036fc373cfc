"""Helpers shared by the tests, imported the same way everywhere (``from helpers.helm import
write_chart``; pytest puts ``tests/`` on ``sys.path``, see ``pythonpath`` in pyproject.toml).
Test modules never import from one another; fixtures live in ``tests/conftest.py``.

* this package: :data:`REPO` (the checkout), :data:`FIXTURES` (``tests/fixtures``),
  :data:`SHARED` (``../shared``: seeds, corpus) and :data:`CORPUS`;
* :mod:`helpers.helm`: specs from plain data, throw-away charts, a strict YAML reader, the
  PrometheusRule CRD validator;
* :mod:`helpers.samples`: odd strings and the specs and rule files made of them;
* :mod:`helpers.site`: ``mkdocs build --strict`` as CI runs it;
* :mod:`helpers.gitops`: the bundled llama-swap project alone, built, and its generated paths;
* :mod:`helpers.chartfixture`: a minimal Helm chart for import tests;
* :mod:`helpers.cdp`: a headless chromium driver for the browser test.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus" / "awesome-prometheus-alerts" / "rules"


def flat(text: str) -> str:
    """``text`` with every run of whitespace as one space: how Markdown reads a paragraph that
    the generated pages wrap at 120 characters (rulegen.render.wrap), for asserting a
    sentence of a page whatever line it is broken on."""
    return " ".join(text.split())


def links(text: str) -> list[tuple[str, str]]:
    """(label, address) of each link of a generated page, in page order: Markdown links
    ``[label](address)`` and rulegen's own long links, which the pages write as HTML with the
    address over several lines (rulegen.render.wrap.split_links); the address as a browser
    reads it (newlines dropped, ``&amp;`` decoded)."""
    import html
    import re
    md = r"\[([^\[\]]*)\]\(([^()\s]*(?:\([^()\s]*\))?[^()\s]*)\)"
    found = [(m.start(), m.group(1), m.group(2)) for m in re.finditer(md, text)]
    for m in re.finditer(r'<a class="rg-[a-z0-9-]+"(?: data-rg-silence="[^"]*")? href="([^"]*)">([^<]*)</a>', text):
        found.append((m.start(), m.group(2), html.unescape(re.sub(r"[\t\n\r]", "", m.group(1)))))
    return [(label, url) for _, label, url in sorted(found)]


def marked_queries(markdown_text: str) -> list[str]:
    """The PromQL queries the site's script links on a generated page, in page order: the text
    of each element the page marks (rulegen.render.code_md), rendered as the site renders it
    (rulegen.render.safe.to_html): a ``code`` element of class ``rg-promql``, the ``code`` of a
    block of that class, each line of a block of class ``rg-promql-lines``; stripped, as
    templates/rulegen.js reads them (its textContent)."""
    from html.parser import HTMLParser

    from rulegen.render.safe import to_html

    class Marks(HTMLParser):
        def __init__(self):
            super().__init__(convert_charrefs=True)
            self.stack: list[tuple[str, str | None]] = []  # (tag, mark of the element or an ancestor)
            self.found: list[tuple[str, list[str]]] = []  # (mark, text pieces)

        def handle_starttag(self, tag, attrs):
            classes = (dict(attrs).get("class") or "").split()
            mark = next((c for c in ("rg-promql", "rg-promql-lines") if c in classes), None)
            inherited = self.stack[-1][1] if self.stack else None
            self.stack.append((tag, mark or inherited))
            if tag == "code" and (mark or inherited):
                self.found.append((mark or inherited, []))

        def handle_endtag(self, tag):
            while self.stack and self.stack.pop()[0] != tag:
                pass

        def handle_data(self, data):
            if self.stack and self.stack[-1][1] and any(t == "code" for t, _ in self.stack) and self.found:
                self.found[-1][1].append(data)

    p = Marks()
    p.feed(to_html(markdown_text))
    out = []
    for mark, pieces in p.found:
        text = "".join(pieces)
        out.extend(q.strip() for q in (text.split("\n") if mark == "rg-promql-lines" else [text]) if q.strip())
    return out


def encode_uri_component(text: str) -> str:
    """JavaScript's ``encodeURIComponent`` (ECMA-262: every character but ``A-Z a-z 0-9 - _ . !
    ~ * ' ( )`` percent-encoded as UTF-8), for the addresses the site's script builds."""
    from urllib.parse import quote
    return quote(text, safe="-_.!~*'()")
