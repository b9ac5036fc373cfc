"""Two differential tests of the link check.

1. Its fast path (rulegen.outputs.anchors._fast_ids, ids and links read from a plain generated
   page's text) against real rendering with Python-Markdown, on real pages and random
   mutations of them: any difference fails, so the fast path cannot silently drift from what
   the site renders. A bounded run of benchmarks/links_differential.py (fixed seed, no corpus;
   the script's default run does 3,000 mutations and the corpus too).
2. `rulegen check` against `mkdocs build --strict` itself (issue 23, class 8): every link or
   image mkdocs aborts on is a finding of check at its page, line and column, and pages mkdocs
   builds pass check, for each kind of broken input and for random pages mixing them."""

from __future__ import annotations

import importlib.util
import random
import re
import subprocess
from pathlib import Path

import pytest

from rulegen.cli import main

from helpers import REPO
from helpers.site import mkdocs_build

SEED = 7
MUTATIONS = 600  # about 10 s on a shared 2-core machine


def _script():
    spec = importlib.util.spec_from_file_location("links_differential", REPO / "benchmarks" / "links_differential.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fast_path_matches_rendering_on_real_and_mutated_pages():
    pytest.importorskip("pymdownx.superfences")
    messages: list[str] = []
    bad, pages, checked = _script().run(seed=SEED, mutations=MUTATIONS, corpus=False, out=messages.append)
    assert bad == 0, "\n".join(messages)
    # the run proves something only if the fast path read real pages and mutations
    assert pages >= 15 and checked >= MUTATIONS // 5, messages


# --- rulegen check against mkdocs build --strict -------------------------------------------------

#: (kind, Markdown in a hand-written guide, the target as mkdocs names it, rulegen's code)
BROKEN = (
    ("image", "![inline](missing.png)", "missing.png", "RG719"),
    ("reference image", "![ref][img]\n\n[img]: img/missing-ref.png", "img/missing-ref.png", "RG719"),
    ("missing page", "[page](nope.md)", "nope.md", "RG715"),
    ("missing anchor", "[anchor](../llama-swap.md#nope)", "../llama-swap.md#nope", "RG715"),
    ("missing anchor here", "[self](#nowhere)", "#nowhere", "RG715"),
    ("unrecognized", "[folder](../guides/)", "../guides/", "RG715"),
    ("absolute", "[abs](/llama-swap/)", "/llama-swap/", "RG715"),
    ("missing file", "[pdf](files/runbook.pdf)", "files/runbook.pdf", "RG715"),
)
VALID = ("[ok](../llama-swap.md#llamaswapdown) [here](#broken) ![css](../assets/rulegen.css) "
         "[ext](https://example.com/x.png) ![pic](pic.png)")


def _mkdocs_broken_links(r: subprocess.CompletedProcess) -> set[str]:
    return set(re.findall(r"contains (?:a|an unrecognized relative|an absolute) link '([^']+)'", r.stderr))


def _check(project, capsys) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(["-C", str(project), "check"])
    return rc, capsys.readouterr().out


def _set_notes(page: Path, slot: str, text: str) -> None:
    s = page.read_text()
    marker = f"<!-- notes:{slot} -->\n"
    i = s.index(marker) + len(marker)
    page.write_text(s[:i] + text + s[s.index("<!-- /notes -->", i):])


def test_every_link_that_fails_mkdocs_strict_fails_check(project, tmp_path, capsys):
    guide = project / "runbooks/guides/zz-broken.md"
    guide.parent.mkdir(parents=True, exist_ok=True)
    (guide.parent / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    guide.write_text("# Broken\n\n" + VALID + "\n")
    assert main(["-C", str(project), "build"]) == 0
    rc, out = _check(project, capsys)
    assert rc == 0, out
    r = mkdocs_build(project, tmp_path / "valid")
    assert r.returncode == 0, r.stderr  # valid input: both pass

    guide.write_text("# Broken\n\n" + "\n\n".join(md for _, md, _, _ in BROKEN) + "\n\n" + VALID + "\n")
    # an image in a generated page's notes too
    _set_notes(project / "runbooks/llama-swap.md", "LlamaSwapDown", "![graph](graph-missing.png)\n")
    r = mkdocs_build(project, tmp_path / "broken")
    assert r.returncode != 0 and "Aborted" in r.stderr + r.stdout
    mk = _mkdocs_broken_links(r)
    rc, out = _check(project, capsys)
    assert rc == 1
    lines = guide.read_text().split("\n")
    for kind, md, target, code in BROKEN:
        assert target in mk, (kind, r.stderr)  # mkdocs --strict fails on it...
        line = next(i for i, x in enumerate(lines, 1) if target in x)
        col = lines[line - 1].index(target) + 1
        # ...and check reports it, at the page line and column
        assert re.search(rf"runbooks/guides/zz-broken\.md:{line}:{col}: error {code} (link|image) {re.escape(target)}",
                         out), (kind, out)
    assert "graph-missing.png" in mk
    assert re.search(r"runbooks/llama-swap\.md:\d+:\d+: error RG719 image graph-missing\.png", out), out
    assert mk == {t for _, _, t, _ in BROKEN} | {"graph-missing.png"}  # nothing else fails mkdocs


def test_link_levels_follow_mkdocs_yml_validation(project, capsys):
    mk = project / "mkdocs.yml"
    text = mk.read_text()
    assert "  absolute_links: warn\n  unrecognized_links: warn\n" in text
    mk.write_text(text.replace("  absolute_links: warn\n  unrecognized_links: warn\n",
                               "  absolute_links: info\n  unrecognized_links: info\n"))
    guide = project / "runbooks/guides/zz-levels.md"
    guide.parent.mkdir(parents=True, exist_ok=True)
    guide.write_text("# Levels\n\n[abs](/llama-swap/) [folder](../guides/) ![img](gone.png)\n")
    assert main(["-C", str(project), "build"]) == 0
    rc, out = _check(project, capsys)
    found = re.findall(r"zz-levels\.md:\d+:\d+: error (RG7\d\d) (?:link|image) (\S+)", out)
    assert found == [("RG719", "gone.png")], out  # absolute and unrecognized links only warn (info) now


def _forms(top: str, here: str, me: str, k: int) -> tuple[list[str], list[str]]:
    """(valid, broken) links and images for a page at ``top`` (the way up to the docs folder)
    whose guides folder is ``here``, named ``me`` (its own ``# Page`` heading id); ``k`` makes
    each broken target unique."""
    valid = [f"[a]({top}llama-swap.md)", f"[a]({top}llama-swap.md#llamaswapdown)", f"[a]({here}argocd.md)",
             f"[a](./{here}argocd.md#what-a-pull-request-shows)", f"![i]({here}pic.png)",
             f"![i]({top}assets/rulegen.css)", "[a](https://example.com/x)", "[a](mailto:a@example.com)",
             "[a](//cdn.example.com/x.png)", "[a](?q=1)", f"[a](#{me})", f"[a]({top}llama-swap.md?x=1#llamaswapdown)",
             f"[a](<{here}argocd.md>)", f'[a]({here}argocd.md "title")', f"[![i]({here}pic.png)]({here}argocd.md)",
             f"[a]({top}index.md)", f"[r{k}][ok{k}]\n\n[ok{k}]: {top}alerts.md",
             # raw HTML: mkdocs does not validate it, nor does check
             f'<a href="/raw-abs-{k}/">raw</a>', f'<img src="raw-gone-{k}.png">', "<a@example.com>",
             f"`[code](gone-{k}.md)`", f"```\n[fenced](gone-{k}.md)\n```"]
    broken = [f"![i](gone-{k}.png)", f"[a](gone-{k}.md)", f"[a]({here}argocd.md#gone-{k})", f"[a](#gone-{k})",
              f"[a]({top}gone-{k}/)", f"[a](argocd-{k})", f"[a](/gone-{k}.md)", f"[a](gone-{k}.pdf)",
              f"[a]({top}../outside-{k}.md)", f"[a](gone%20{k}.md)", f"![r{k}][img{k}]\n\n[img{k}]: gone-ref-{k}.svg",
              f"[a](gone-{k}.md?x=1)", f"| t |\n|---|\n| [a]({top}llama-swap.md#gone-{k}) |",
              f"[![i]({here}pic.png)](gone-{k}.md)", f"[a](.)", f"[a]({top}llama-swap.md#LlamaSwapDown-{k})",
              f"# [heading link](gone-head-{k}.md)"]
    return valid, broken


_MKDOCS_LINK = re.compile(r"Doc file '([^']+)' contains (?:a|an unrecognized relative|an absolute) link '([^']+)'")
_CHECK_LINK = re.compile(r"^runbooks/(\S+?):\d+:\d+: error RG7(?:15|19) (?:link|image) (\S+?):? ", re.M)


def test_random_pages_fail_check_exactly_where_they_fail_mkdocs_strict(project, tmp_path, capsys):
    """Random pages (hand-written guides, and the notes of a generated page) mixing valid and
    broken links of every form: the (page, link) pairs `rulegen check` reports are exactly
    those `mkdocs build --strict` warns about (and so aborts on)."""
    rng = random.Random(23)
    guides = project / "runbooks/guides"
    guides.mkdir(parents=True, exist_ok=True)
    (guides / "pic.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    k = 0
    for n in range(8):
        parts = [f"# Page {n}"]
        for _ in range(10):
            k += 1
            valid, broken = _forms("../", "", f"page-{n}", k)
            parts.append(rng.choice(broken if rng.random() < 0.4 else valid))
        (guides / f"zz-rand-{n}.md").write_text("\n\n".join(parts) + "\n")
    assert main(["-C", str(project), "build"]) == 0
    notes = []
    for _ in range(10):
        k += 1
        valid, broken = _forms("", "guides/", "llamaswapdown", k)
        notes.append(rng.choice(broken if rng.random() < 0.4 else valid))
    _set_notes(project / "runbooks/llama-swap.md", "LlamaSwapDown", "\n\n".join(notes) + "\n")
    assert main(["-C", str(project), "build"]) == 0  # the notes as the site gets them (made safe)
    r = mkdocs_build(project, tmp_path / "site")
    mk = set(_MKDOCS_LINK.findall(r.stderr))
    rc, out = _check(project, capsys)
    ours = set(_CHECK_LINK.findall(out))
    assert len(mk) >= 20 and r.returncode != 0 and rc == 1  # the run proves something
    assert ours == mk, f"check only: {sorted(ours - mk)}\nmkdocs only: {sorted(mk - ours)}"


def test_a_page_that_is_not_utf8_fails_check_as_it_fails_mkdocs(project, tmp_path, capsys):
    guides = project / "runbooks/guides"
    guides.mkdir(parents=True, exist_ok=True)
    (guides / "latin.md").write_bytes("# Café\n\ntext\n".encode("latin-1"))
    assert main(["-C", str(project), "build"]) == 0
    r = mkdocs_build(project, tmp_path / "site")
    assert r.returncode != 0 and "UnicodeDecodeError" in r.stderr
    rc, out = _check(project, capsys)
    assert rc == 1
    assert "runbooks/guides/latin.md:1:1: error RG709 runbooks/guides/latin.md is not UTF-8 text (byte 5)" in out
    (guides / "latin.md").write_text("# Café\n\ntext\n", encoding="utf-8")
    assert main(["-C", str(project), "build"]) == 0  # the nav now has the page's title
    rc, out = _check(project, capsys)
    assert rc == 0, out
    assert mkdocs_build(project, tmp_path / "site2").returncode == 0
