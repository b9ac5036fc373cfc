"""Readable diffs of the runbook pages (issue 29): no generated line over 120 characters outside
fenced code, wrapping that never changes what the page renders (escapes, code spans, links
and HTML kept whole), on the bundled pages, the corpus's pages and hostile texts."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from rulegen.outputs.anchors import page_ids
from rulegen.render import safe
from rulegen.render.wrap import WIDTH, atoms, safe_start, wrap_markdown

from helpers import CORPUS, REPO

_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_LEAD = re.compile(r"^\s*(?:[-*+]|\d+[.)])?\s*")


def over_wide(text: str) -> list[tuple[int, str, str]]:
    """(line number, kind, line) of each line over the width outside fenced code; kind
    ``atom`` when the line is one unbreakable atom (a link whose address is longer than a
    line), ``table`` for a table row, else ``text``."""
    out, fence = [], None
    for n, line in enumerate(text.split("\n"), 1):
        if fence:
            s = line.strip()
            if s.startswith(fence) and not s.strip(fence[0]):
                fence = None
            continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            continue
        if len(line) <= WIDTH:
            continue
        body = line[_LEAD.match(line).end():]
        kind = "table" if line.startswith("|") else "atom" if len(atoms(body)) == 1 else "text"
        out.append((n, kind, line))
    return out


def _rendered(text: str) -> str:
    return " ".join(safe.to_html(text).split())


def test_bundled_pages_have_no_wide_line_but_whole_links():
    """The 5 bundled pages: every line over 120 characters outside fenced code is a single
    link whose address is longer (the silence form's), nothing else; the site assets have none."""
    counts = Counter()
    for page in sorted((REPO / "runbooks").glob("*.md")):
        if page.name == "alerts.md":
            continue  # the index table: test_alert_index_rows_fit below
        for n, kind, line in over_wide(page.read_text(encoding="utf-8")):
            assert kind == "atom" and line[_LEAD.match(line).end():].startswith("["), f"{page.name}:{n}: {line}"
            counts[page.name] += 1
    for asset in ("rulegen.css", "rulegen.js"):
        text = (REPO / "runbooks/assets" / asset).read_text(encoding="utf-8")
        assert max(len(x) for x in text.split("\n")) <= WIDTH, asset
    print(f"bundled pages: single-link lines over {WIDTH}: {dict(counts)}")


def test_alert_index_rows_fit():
    """alerts.md is a list, one item per alert, each fact on a line of its own (it was a table
    whose rows held name, summary, team and inhibitions on one line of any length): no line
    over the width, on the bundled index and on one of long, hostile summaries and many
    inhibitions, which the link check's fast path still reads as rendering does."""
    assert over_wide((REPO / "runbooks/alerts.md").read_text(encoding="utf-8")) == []
    from helpers.helm import make_spec
    from rulegen.outputs.anchors import _render_ids
    from rulegen.render.runbook_index import render_alert_index
    hostile = " ".join(["<script>alert(1)</script> `a b` &amp; \\* {{ $labels.pod }} | [x](javascript:alert(1))"] * 4)
    rules = [{"alert": "ShopDown", "expr": "up == 0", "severity": "critical", "summary": hostile,
              "runbook": {"owner": {"team": "payments-and-checkout-platform-team"}}}]
    rules += [{"alert": f"ShopSymptomWithAQuiteLongAlertName{i}", "expr": "up == 1", "severity": "warning",
               "summary": hostile, "inhibited_by": [{"alert": "ShopDown", "equal": ["instance"]}]} for i in range(4)]
    spec = make_spec({"app": "shop", "groups": [{"name": "shop", "rules": rules}]})
    text = render_alert_index([spec], ["<!-- header -->"])
    assert over_wide(text) == []
    html = safe.to_html(text)
    assert "<script>" not in html and 'href="javascript:' not in html and safe.html_problems(html) == []
    assert html.count('<span class="rg-team">') == 5 and html.count('<span class="rg-inhibits">') == 5
    fast, slow = page_ids(text), _render_ids(text)
    assert fast == slow


def test_corpus_pages_have_no_wide_line(tmp_path, shared_dir):
    """The pages of the corpus (Awesome Prometheus alerts imported, 112 pages, no query links
    configured): no line over 120 characters outside fenced code but single unbreakable atoms
    (today one: a chart path in code, 122 characters, of a 47-character app name)."""
    from rulegen.importer import import_paths, write_specs
    from rulegen.pipeline import load_project
    from rulegen.render import plan
    root = tmp_path / "corpus"
    res = import_paths([CORPUS], out_dir=root / "rules", display_base=CORPUS)
    write_specs(res, root / "rules")
    outs, _ = plan(load_project(root).specs, root, "helm")
    pages = {o.path: o.content for o in outs if o.path.endswith(".md") and not o.path.endswith("alerts.md")}
    wide = {p: over_wide(t) for p, t in pages.items()}
    lines = sum(t.count("\n") for t in pages.values())
    print(f"corpus: {len(pages)} pages, {lines} lines, "
          f"{sum(len(w) for w in wide.values())} over {WIDTH} outside fenced code")
    assert len(pages) > 50
    assert {p: [x for x in w if x[1] != "atom"] for p, w in wide.items() if w} == {p: [] for p, w in wide.items() if w}
    assert sum(len(w) for w in wide.values()) <= 1


# --- the wrapping itself -----------------------------------------------------------------------

def test_long_paragraph_and_list_item_wrap_and_render_the_same():
    para = " ".join(f"word{i}" for i in range(60))
    item = "- " + " ".join(f"item{i}" for i in range(60))
    text = f"{para}\n\n{item}\n"
    out = wrap_markdown(text)
    assert max(len(x) for x in out.split("\n")) <= WIDTH
    assert "\n  item" in out  # a list item's next lines are indented under its text
    assert _rendered(out) == _rendered(text)


def test_fenced_code_headings_and_narrow_tables_are_left_alone():
    code = "```promql\n" + "x" * 300 + "\n```"
    table = "| a | b |\n|---|---|\n| 1 | 2 |"
    head = "## " + "H" * 130 + " { #h }"
    text = f"{code}\n\n{table}\n\n{head}\n"
    assert wrap_markdown(text) == text


def test_wide_table_becomes_a_list_with_the_same_cells():
    wide = "y " * 80
    text = f"| Fact | Value |\n|---|---|\n| Owner | team `a|b` x\\|y |\n| Long | {wide}|\n"
    out = wrap_markdown(text)
    assert out.startswith("- Owner: team `a|b` x\\|y\n- Long: y y")
    assert max(len(x) for x in out.split("\n")) <= WIDTH
    three = "| A | B | C |\n|---|---|---|\n| 1 | " + "z " * 70 + "| 3 |\n"
    assert wrap_markdown(three).startswith("- 1 · B: z z")


def test_no_line_starts_with_block_syntax():
    """A break never puts ``#``, ``>``, ``-``, ``1.``, ``<``, ``|`` or a fence at the start of
    a line, where Markdown would read a heading, quote, list, HTML or table."""
    for token in ("#", ">", "-", "+", "1.", "2)", "|", "```x```", "<b>", "===", ":", "***"):
        text = ("a " * 59) + token + " tail"
        out = wrap_markdown(text)
        assert not any(x.startswith(token) for x in out.split("\n")[1:]), (token, out)
        assert _rendered(out) == _rendered(text), token


#: What a spec may write (made safe by spec_markdown, as every spec text on a page is).
_HOSTILE = ["`code span with spaces`", "``a ` b``", "\\*not em\\*", "&amp;", "&lt;script&gt;", "<b>", "<script>",
            "<span class=\"rg-x\" data-a=\"x y\">", "</span>", "[link text](https://e.com/a_(b))",
            "{{ $labels.pod }}", "‹pod›", "**bold**", "_u_", "#5", "> q", "- d", "1.", "|", "\\|", "x" * 30,
            "<!-- c -->", "{ #id }", "{: .x }", "![i](a.png)", "\\", "``", "*", "word", "w.", "(paren)", "'q'",
            "\"dq\"", "[x](javascript:alert(1))", "&", "<", "a<b"]
#: What rulegen itself puts in a paragraph (as the page template writes it).
_OWN = ['<span class="rg-sev rg-sev-warning">warning</span>', "`up == 0`{ .rg-promql }", "is `> 0.05`",
        '[Open a silence in Alertmanager](https://am.example.com/#/silences/new?filter=%7B%7D){ .rg-silence-link }',
        '<span class="rg-pair" data-rg-pair="long=1h short=5m">', "</span>", "`inline code`", "**Owner:**", "<br>"]


@pytest.mark.parametrize("seed", range(40))
def test_hostile_texts_render_the_same_after_wrapping(seed):
    """Random paragraphs and list items of hostile tokens (escapes, code spans, entities, raw
    HTML, links with attribute lists, template braces, block markers): wrapped, they render to
    the same HTML (whitespace aside), and every line that is still over the width is one atom."""
    from rulegen.render.safe import spec_markdown
    rnd = random.Random(seed)
    blocks = []
    for _ in range(6):
        parts = []
        for _ in range(rnd.randint(3, 10)):
            words = [rnd.choice(_HOSTILE) for _ in range(rnd.randint(1, 12))]
            parts.append(spec_markdown(" ".join(words), block=False).replace("\n", " "))
            parts.append(rnd.choice(_OWN))
        lead = rnd.choice(["", "- ", "1. ", "   "]) if blocks else ""
        blocks.append(lead + "word " + " ".join(parts))
    text = "\n\n".join(blocks) + "\n"
    out = wrap_markdown(text)
    assert _rendered(out) == _rendered(text)
    for line in out.split("\n"):
        if len(line) > WIDTH:  # only where no break was allowed: no atom that may start a line fits
            lead = _LEAD.match(line).end()
            col = lead
            for k, a in enumerate(atoms(line[lead:])):
                assert k == 0 or col > WIDTH or not safe_start(a), (line, a)
                col += len(a) + 1
    assert wrap_markdown(out) == out  # wrapping twice changes nothing: deterministic, stable


def test_hostile_spec_page_keeps_escapes_and_links():
    """A spec whose summary, description and causes are long and hostile: the page has no
    line over the width outside code but single atoms, the reader's HTML holds no markup from
    the spec, and the link check's fast path reads the same links as rendering does."""
    from helpers.helm import make_spec
    from rulegen.outputs.anchors import _render_ids
    from rulegen.render.runbook import render_page
    hostile = " ".join(["<script>alert(1)</script> `a b` &amp; \\* {{ $labels.pod }} [x](javascript:alert(1))"] * 6)
    spec = make_spec({"app": "h", "groups": [{"name": "h", "rules": [{
        "alert": "HostileAlert", "expr": "up == 0", "for": "5m", "severity": "warning",
        "summary": hostile, "description": hostile,
        "runbook": {"causes": [hostile, hostile], "resolution": [hostile]}}]}]})
    page = render_page(spec, [spec], ["<!-- header -->"])
    assert [w for w in over_wide(page) if w[1] != "atom"] == []
    html = safe.to_html(page)
    assert "<script>" not in html and 'href="javascript:' not in html
    assert safe.html_problems(html) == []
    fast, slow = page_ids(page), _render_ids(page)
    assert fast[2] == slow[2] and fast[1] == slow[1]


@pytest.mark.parametrize("expr, for_, keep, lines", [
    # a query compared with a number, short: the query (marked for the site's links) in the
    # sentence, the comparison on a line of its own (issue 29: a threshold edit changes it alone)
    ("rate(errors_total[5m]) > 0.05", "10m", None,
     ["Fires when `rate(errors_total[5m])`{ .rg-promql }", "is `> 0.05`", "continuously for **10m**."]),
    # the number first: read with the query first
    ("0.05 < rate(errors_total[5m])", "0s", None,
     ["Fires when `rate(errors_total[5m])`{ .rg-promql }", "is `> 0.05`,",
      "at the first evaluation that sees it (no `for`)."]),
    # long: the sentence ends before the query's block, where the site's script adds the links
    ("sum by (job) (\n  rate(errors_total[5m])\n)\n  >= 3", "5m", "10m",
     ["Fires when the PromQL below", "is `>= 3`", "continuously for **5m**,",
      "and keeps firing for **10m** after it stops holding:", "", "```promql { .rg-promql }",
      "sum by (job) (", "  rate(errors_total[5m])", ")", "```"]),
    ('x{job="' + "a" * 100 + '"} == 0', "1m", None,
     ["Fires when the PromQL below", "is `== 0`", "continuously for **1m**:", "", "```promql { .rg-promql }",
      'x{job="' + "a" * 100 + '"}', "```"]),
    # any other expr: whole, short in the sentence, long as the block after it
    ("absent(up)", "5m", "10m", ["Fires when `absent(up)`{ .rg-promql }", "holds (returns at least one series)",
                                 "continuously for **5m**,", "and keeps firing for **10m** after it stops holding."]),
    ("a > 1 and\nb > 3", "5m", None,
     ["Fires when the PromQL below returns at least one series", "continuously for **5m**.", "",
      "```promql { .rg-promql }", "a > 1 and", "b > 3", "```"]),
])
def test_one_fact_per_line_in_fires_when(expr, for_, keep, lines):
    """What says when an alert fires: the query, the comparison, the ``for`` and
    ``keep_firing_for`` each on a line of their own, so changing one changes that line of the
    page; the query shown is the one the site's script links."""
    from types import SimpleNamespace
    from helpers import marked_queries
    from rulegen.promql.compared import compared_query
    from rulegen.render.runbook import fires_when
    text = fires_when(SimpleNamespace(expr=expr, for_=for_, keep_firing_for=keep))
    assert text.split("\n") == lines
    assert marked_queries(text) == [compared_query(expr) or expr]


# --- rulegen's own long links: the address over lines (issue 29 item 3) ------------------------

def _silence_link(filter_text: str, fill: str = "namespace service") -> str:
    """A silence-form link as rulegen.render.silence.form_link writes it."""
    from urllib.parse import quote
    attrs = f'{{ .rg-silence-link data-rg-silence="{fill}" }}' if fill else "{ .rg-silence-link }"
    return f"[Open a silence in Alertmanager](https://am.example.com/#/silences/new?filter={quote(filter_text, safe='')}){attrs}"


@pytest.mark.parametrize("query", [
    'kube_deployment_status_replicas_available{namespace="ai", deployment="llama-swap"} == 0',
    'sum by (job) (rate(http_requests_total{job=~"a|b", path!~"/x/.*"}[5m])) / ' * 4 + "1",
    'up{job="' + "~" * 300 + '"} == 0',  # a run of characters percent-encoding keeps
    'up{job="' + "-._~" * 80 + '", x="&amp;#&lt;"} == 0',
])
def test_long_silence_links_keep_their_address_over_lines(query):
    """A silence-form link longer than a line is HTML whose address goes on over lines of URL
    characters (in a paragraph, a list item, a table cell, rulegen's wrappers): no line over the
    width, the browser's address (its newlines dropped) is the one the Markdown link had, the
    HTML passes the safety check, and the link check's fast path reads the page as rendering
    does."""
    from urllib.parse import unquote
    from helpers import links
    from rulegen.outputs.anchors import _fast_ids, _render_ids
    link = _silence_link('{alertname="' + query + '"}')
    short = _silence_link('{alertname="X"}', "")
    text = (f"# P {{ #p }}\n\n{link}\n\nOpen {link} · {short}\n\n"
            f"- Budget left now: `x` (1 = untouched) · {link} then [p](#p)\n\n"
            f"| Fact | Value |\n|---|---|\n| Budget | {link} |\n\n"
            f'<div class="rg-triage" markdown>\n\n{link}\n\n</div>\n')
    out = wrap_markdown(text)
    assert over_wide(out) == []
    # the address a browser opens: the same, up to escapes of characters that need none (RFC 3986)
    want = [(label, unquote(url)) for label, url in links(text)]
    assert [(label, unquote(url)) for label, url in links(out)] == want and len(want) == 7
    html = safe.to_html(out)
    assert safe.html_problems(html) == []
    assert html.count('<a class="rg-silence-link" data-rg-silence="namespace service" href="https://am.example.com/') >= 4
    assert _fast_ids(out) is not None and _fast_ids(out) == _render_ids(out)
    assert wrap_markdown(out) == out
    hrefs = re.findall(r'href="([^"]*)"', out)
    assert sum("\n" in h for h in hrefs) >= 5
    for h in hrefs:  # each line of an address: URL characters, starting with no Markdown syntax
        assert all(re.fullmatch(r"[A-Za-z0-9%][A-Za-z0-9%._~:/?#&;=+-]*", x) for x in h.split("\n")[1:]), h


def test_a_split_address_is_what_a_browser_opens():
    """The URL standard drops tabs and newlines from an address (what browsers do): the split
    href, read so, is the Markdown link's address; a short link stays Markdown."""
    short = "[Open a silence in Alertmanager](https://am.example.com/#/silences/new?filter=%7B%7D){ .rg-silence-link }"
    assert wrap_markdown(short) == short
    long = _silence_link('{alertname="X",reason="' + "x" * 90 + '"}')
    out = wrap_markdown(long)
    href = re.search(r'href="([^"]*)"', out, re.S).group(1)
    assert "\n" in href and max(len(x) for x in out.split("\n")) <= WIDTH
    assert href.replace("\n", "").replace("&amp;", "&") == re.search(r"\]\(([^)]*)\)", long).group(1)
