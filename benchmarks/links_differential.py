"""Differential check of the link check's fast path: :func:`rulegen.outputs.anchors.page_ids`
reads the ids and links of a plain generated page from its text instead of rendering it with
Python-Markdown. This script renders every page it can find both ways and fails on any
difference: the bundled runbook pages, the pages of a generated project (as in
``check_bench.py``), the corpus pages when ``../shared/corpus`` exists, and thousands of
random line-level mutations of them with Markdown constructs the fast path must either read
exactly or hand over to the renderer (raw HTML, attribute lists, reference links, setext and
unplaced headings, indented code, fences, code spans, escapes, ...). It also checks that the
renderer configured once (no Pygments) gives the same result as a fresh default one.

Run: ``python benchmarks/links_differential.py [--seed N] [--mutations N]`` (about a minute).
``tests/gitops/test_links_differential.py`` runs a bounded version (fixed seed, fewer mutations, no
corpus) with the test suite.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus" / "awesome-prometheus-alerts" / "rules"

SNIPPETS = [
    "[a](b.md#c)", "`x [a](b)`", "\\[a](b)", "![i](x.png)", "[TOC]", "<a id='z'></a>", "{ #q }",
    "## Plain heading", "## Dup { #context }", "# x", "- # y", "> ## quote", "    [ind](x)", "```", "~~~",
    "---", "===", "*em* [l](#m)", "<!-- c -->", "<!-- c -->text [a](#b)", "\t[t](x)", "[a]: http://x",
    "[a][b]", "a `b` c `d [e](f)` g", "`odd [x](y)", "[a\\](b)", "[a](b\\(c)", "#hash",
    "## Heading with id { #hid }", "## Title (v2): notes", "1. [x](#y)", "| [a](#b) | c |",
    "## x_y { #x_y }", "## a { #b } ##", "text\n---", "```promql\nfoo\n```", "```\n[a](b)\n```",
    "&amp; [a](#b&c)", "## Context", "<div markdown>", "  ## two", "   - [x](#y)", "[x](#y){ .c }",
    "## **B** { #bb }", "<http://x>", "    more text [i](#j)", "- item [k](#l)", "  continuation [m](#n)",
    "| a | b |\n|---|---|\n| [c](#d) | e |", "## x { #y }\n    [z](#w)", "## Same { #same }", "## Same",
    "## same-1", "## Same { #same_1 }", "1. `a` [b](#c) `d`", "x `[e](f)`", "``a`b``", "[a](#b) [c](d.md)",
    # the triage box's constructs (issue 28): link attribute lists, summaries, pairs, bare &
    "Open in [P](https://p.example.com/graph?g0.expr=up&g0.tab=1){ .rg-open }", "[o](#p){ .rg-open } · [g](h.md){ .rg-open }",
    '[s](https://am.example.com/#/silences/new?filter=%7B%7D){ .rg-silence-link data-rg-silence="name namespace" }',
    "[a](#b){ #c }", "[a](#b) { .rg-open }", "[a](#b){ .rg-open }{ #c }", "[a](#b){: .rg-open }", "{ .rg-open }",
    "## [h](#i){ .rg-open } { #hh }", "- [l](#m){ .rg-open }", "| [t](#u){ .rg-open } | v |", "[q](?a=1&amp;b=2)",
    "[q](?a=1&b=2) &copy; [r](#s&#35;t)", "<summary>Silence it: amtool or Alertmanager</summary>",
    '<details class="rg-silence rg-wrap" markdown>\n<summary>Silence it: amtool</summary>\n\n[x](#y)\n\n</details>',
    '- <span class="rg-pair" data-rg-pair="long=1h short=5m">**14.4x** over 1h [p](#q)</span>',
    '<span class="rg-pair" data-rg-pair="long=1h short=5m">x</span>', "**Owner:** a · **Escalate:** `b`; [c](#d)",
    # issue 29: rulegen's long links, the address over lines (rulegen.render.wrap.split_links)
    'Open in\n<a class="rg-open" href="https://p.example.com/graph?g0.expr=up%7Bjob\n%3D%22a%22%7D&amp;g0.tab=1">P</a>',
    '<a class="rg-open" href="https://p.example.com/graph?g0.expr=up', "%7Bjob%3D%22a%22%7D", "#x%7D", "-x%7D",
    '%7D">P</a> · [g](#h)', '%7D">P</a>', '%7D">P</a> <a class="rg-open" href="https://q.example.com/?a=',
    '- x <a class="rg-silence-link" data-rg-silence="namespace" href="https://am.example.com/#/silences/new?filter=%7B',
    '    <a class="rg-open" href="https://p.example.com/graph?g0.expr=', '<a class="rg-open" href="https://p.example.com/x">P</a>',
    # PromQL marked for the site's script (rulegen.render.code_md): a code span's or a fence's class
    "Fires when `up == 0`{ .rg-promql }", "`x`{ .rg-promql } [a](#b)", "`x` { .rg-promql }", "`x`{ #cid }",
    "`x`{ .rg-promql #cid }", "`x`{: .rg-promql }", "`x`{ .rg-promql }{ #d }", "``a`b``{ .rg-promql }",
    "## `h`{ .rg-promql } { #hh }", "- Budget: `q{a=\"b\"}`{ .rg-promql } (1 = untouched)", "| `a`{ .rg-promql } | b |",
    "```promql { .rg-promql }\nup\n```", "```promql { .rg-promql-lines }\na\nb\n```", "```promql { #fid }\nup\n```",
    "```promql { .rg-promql #fid }\nup\n```", "```{ .promql .rg-promql }\nx\n```", "~~~promql { .rg-promql }\nx\n~~~",
    "```promql {.rg-promql}\nx\n```", "```promql { .rg-promql }", "is `> 0.05`\ncontinuously for **10m**:",
]


def _pages(tmp: Path, corpus: bool = True) -> dict[str, str]:
    from rulegen.pipeline import load_project
    from rulegen.render import plan
    sys.path.insert(0, str(REPO / "benchmarks"))
    import check_bench

    pages = {str(f.relative_to(REPO)): f.read_text(encoding="utf-8")
             for d in ("runbooks", "examples") for f in (REPO / d).rglob("*.md")}
    gen = tmp / "gen"
    check_bench.generate_repo(gen, 10, 200)
    outs, _ = plan(load_project(gen).specs, gen, "helm")
    pages.update({"generated:" + o.path: o.content for o in outs if o.path.endswith(".md")})
    if corpus and CORPUS.is_dir():
        from rulegen.importer import import_paths, write_specs
        root = tmp / "corpus"
        res = import_paths([CORPUS], out_dir=root / "rules", display_base=CORPUS)
        write_specs(res, root / "rules")
        outs, _ = plan(load_project(root).specs, root, "helm")
        pages.update({"corpus:" + o.path: o.content for o in outs if o.path.endswith(".md")})
    return pages


def run(seed: int = 1, mutations: int = 3000, corpus: bool = True, out=print) -> tuple[int, int, int]:
    """Compare the fast path with rendering on every page and on ``mutations`` random mutations
    of them (``random.Random(seed)``); ``out`` gets one message per difference and the totals.
    ``corpus``: also the corpus pages, when the corpus is there. Returns (differences, pages,
    mutations read by the fast path)."""
    sys.path.insert(0, str(REPO))
    import markdown

    from rulegen.outputs import anchors as links

    def fresh_render(text):
        exts = ["attr_list", "md_in_html", "tables", "toc", "pymdownx.superfences"]
        md = markdown.Markdown(extensions=exts)
        hrefs = links.tree_links(md)
        p = links._parse_html(md.convert(text))
        return p.ids, p.heading_ids, list(hrefs)

    bad = 0
    with tempfile.TemporaryDirectory(prefix="rulegen-links-") as tmp:
        pages = _pages(Path(tmp), corpus)
    fast = 0
    for name, text in sorted(pages.items()):
        r = links._render_ids(text)
        if r != fresh_render(text):
            bad += 1
            out(f"render differs from a fresh Pygments render: {name}")
        f = links._fast_ids(text)
        if f is None:
            continue
        fast += 1
        if f != r:
            bad += 1
            out(f"fast path differs: {name}")
    out(f"{len(pages)} pages, {fast} read by the fast path, {len(pages) - fast} rendered")
    rng = random.Random(seed)
    base = [pages[k] for k in sorted(pages)]
    checked = 0
    for i in range(mutations):
        lines = rng.choice(base).split("\n")
        for _ in range(rng.randint(1, 4)):
            k = rng.randrange(len(lines) + 1)
            op = rng.random()
            if op < 0.6:
                lines.insert(k, rng.choice(SNIPPETS))
            elif op < 0.8 and lines:
                lines.pop(min(k, len(lines) - 1))
            else:
                lines.insert(k, "")
        text = "\n".join(lines)
        f = links._fast_ids(text)
        if f is None:
            continue
        checked += 1
        if f != links._render_ids(text):
            bad += 1
            out(f"fast path differs on mutation {i} (seed {seed}):\n{text}\n---")
    out(f"{mutations} mutations, {checked} read by the fast path; {bad} difference(s)")
    return bad, len(pages), checked


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mutations", type=int, default=3000)
    args = ap.parse_args(argv)
    bad, _, _ = run(args.seed, args.mutations)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
