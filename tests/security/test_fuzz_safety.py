"""Fuzz (hypothesis) over spec path fields and runbook Markdown: no escape, no script, no traceback.

Markdown is drawn from pieces that make markup (tags, event handlers, link syntax, schemes in
entities, fences, attribute lists, code spans, comments) mixed with text. Each piece of text
goes through the sanitizer in every mode and is rendered as the site renders it; whole specs
(fuzzed chart path and runbook fields) go through validation and, when they validate, the
whole plan: every output path must resolve inside the project, every runbook page must render
to HTML with nothing that runs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from rulegen.render import plan, safe
from rulegen.spec import load_text
from rulegen.validate import Context, validate

PIECES = [
    "<", ">", "<script>", "</script>", "alert(1)", "<img src=x onerror=alert(1)>", "<svg onload=alert(1)>",
    "<iframe src=x>", "<a href=", "javascript:", "JaVaScRiPt:", "java\nscript:", "&#106;", "&#x6A;avascript:",
    "&colon;", "data:text/html,", "vbscript:", "[", "]", "(", ")", "](", "]: ", "![", "\n", "\n\n", "`", "``",
    "```", "~~~", "```{.x onclick=y}", "{", "}", "{:", "{ onclick=alert(1) }", " #id", "\"", "'", "\\", "!",
    "#", "*", "_", "|", "> ", "    ", "- ", "1. ", "<!--", "-->", "<!-- notes:X -->", "http://x", "<https://x>",
    "<x@y.z>", "a", " ", ":", "=", "&", ";", "&amp;", "<b>", "</b>", "<style>", "!!! note",
]
chars = st.text(st.characters(max_codepoint=0xFFFF, blacklist_categories=("Cs",)), max_size=3)  # JSON-escaped for YAML
markdown = st.lists(st.one_of(st.sampled_from(PIECES), chars), max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(text=markdown, block=st.booleans(), allow_html=st.booleans())
def test_sanitized_markdown_renders_nothing_that_runs(text, block, allow_html):
    with safe.html_policy(allow_html):
        out = safe.spec_markdown(text, block=block)
        cell = safe.spec_cell(text)
    assert safe.html_problems(safe.to_html(out)) == [], (text, out)
    assert safe.html_problems(safe.to_html("| h |\n|---|\n| " + cell + " |")) == [], (text, cell)


SPEC = """\
app: demo
chart:
  path: {path}
runbook:
  intro: {a}
  context:
    - title: {b}
      markdown: {c}
    - table: {{columns: [{d}], rows: [[{e}]]}}
  facts: [{{name: {d}, value: {e}}}]
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        severity: critical
        summary: Down.
        description: Down.
        runbook:
          explanation: {c}
          causes: [{d}]
          resolution: [{e}]
          diagnosis: [{{markdown: {a}, after: {b}}}]
          related: [{{alert: DemoDown, note: {c}}}]
"""


@pytest.fixture(scope="module")
def root(linked_root):
    """A project whose folders hold links of every kind (see tests/validate/test_paths.py)."""
    return linked_root


paths = st.lists(st.one_of(st.sampled_from(["charts", "demo", "in", "out", "up", "upup", "loop", "..", ".", "", "/", "~", "x y",
                                            ".git", "-x"]), chars), min_size=1, max_size=4) \
    .map("/".join)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(path=st.one_of(st.sampled_from(["charts/demo", "charts/in", "charts/new", "charts/in/x"]), paths),
       a=markdown, b=markdown, c=markdown, d=markdown, e=markdown)
def test_fuzzed_specs_stay_inside_and_render_nothing_that_runs(root, path, a, b, c, d, e):
    text = SPEC.format(path=json.dumps(path), **{k: json.dumps(v) for k, v in dict(a=a, b=b, c=c, d=d, e=e).items()})
    res = validate([load_text(text, "rules/demo.yaml")], Context(root=root))
    event("validates" if res.ok else "refused: " + ",".join(sorted({f.code for f in res.findings if f.is_error})))
    if not res.ok:
        return
    top = Path(os.path.realpath(root))
    outputs, _ = plan(res.specs, root)
    for o in outputs:
        assert Path(os.path.realpath(root / o.path)).is_relative_to(top), (path, o.path)
        if o.path.startswith("runbooks/") and o.path.endswith(".md"):
            assert safe.html_problems(safe.to_html(o.content)) == [], o.path


@pytest.mark.parametrize("ref", ["&#", "&#x", "a &# b", "`&#`", "&#\n\nmore"])
def test_an_unfinished_character_reference_leaves_the_pages_html_blocks_working(root, ref):
    """Hypothesis found `&#` in a runbook field: Python's HTML parser, under Python-Markdown's
    raw-HTML handling, stops at an unfinished character reference when no `;` follows and reads
    the rest of the page as text, so every later `<div markdown>` / `<details markdown>` of the
    page stayed unprocessed (its `markdown` attribute reached the HTML). The same in every
    field a page shows: runbook Markdown, table cells, and the expr, summary, description and
    labels the page shows as code."""
    fields = dict(a="", b="", c=ref, d="", e=ref)
    one_line = ref.replace("\n", " ")  # a PromQL string holds no line break
    text = SPEC.format(path=json.dumps("charts/demo"), **{k: json.dumps(v) for k, v in fields.items()})
    text = (text.replace("expr: up == 0", "expr: " + json.dumps(f'up{{job="x{one_line}"}} == 0'))
            .replace("summary: Down.", "summary: " + json.dumps(f"Down {ref} {{{{ $labels.job }}}}"))
            .replace("description: Down.", "description: " + json.dumps(f"Down {ref}"))
            + "        labels: {team: " + json.dumps(f"t{ref}") + "}\n")
    res = validate([load_text(text, "rules/demo.yaml")], Context(root=root))
    assert res.ok, [(f.code, f.message) for f in res.findings if f.is_error]
    pages = [o for o in plan(res.specs, root)[0] if o.path.endswith(".md")]
    assert [o.path for o in pages] == ["runbooks/alerts.md", "runbooks/demo.md", "runbooks/index.md"]
    for o in pages:
        html_text = safe.to_html(o.content)
        assert safe.html_problems(html_text) == [], (o.path, ref)
        assert " markdown>" not in html_text and 'markdown=""' not in html_text, o.path


@pytest.mark.parametrize("field", ["expr", "summary", "description", "label", "cause", "cell"])
def test_a_carriage_return_in_a_spec_field_starts_no_html_block(root, field):
    """Adversarial review: a raw CR inside an expr's string literal passed validation; the page
    showed the expr as inline code, Python-Markdown read the CR as a line break, the code span
    ended and the next line, `<script>...`, was kept as a raw HTML block. Pages now hold no CR,
    whichever field brings it."""
    evil = "x\r<script>alert(1)</script>"
    fields = dict(a="", b="", c="", d="", e=evil if field == "cell" else "")
    text = SPEC.format(path=json.dumps("charts/demo"), **{k: json.dumps(v) for k, v in fields.items()})
    swaps = {"expr": ("expr: up == 0", "expr: " + json.dumps(f'up{{job!="{evil}"}} == 0')),
             "summary": ("summary: Down.", "summary: " + json.dumps(f"`{evil}`")),
             "description": ("description: Down.", "description: " + json.dumps(f"`{evil}`")),
             "cause": ('causes: [""]', "causes: [" + json.dumps(f"`{evil}`") + "]")}
    if field in swaps:
        old, new = swaps[field]
        assert old in text
        text = text.replace(old, new)
    if field == "label":
        text += "        labels: {team: " + json.dumps(evil) + "}\n"
    res = validate([load_text(text, "rules/demo.yaml")], Context(root=root))
    assert res.ok, [(f.code, f.message) for f in res.findings if f.is_error]
    for o in plan(res.specs, root)[0]:
        if o.path.endswith(".md"):
            assert "\r" not in o.content, o.path
            assert safe.html_problems(safe.to_html(o.content)) == [], (o.path, field)
