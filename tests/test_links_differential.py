"""The link check's fast path (rulegen.gitops.links._fast_ids, ids and links read from a plain
generated page's text) against real rendering with Python-Markdown, on real pages and random
mutations of them: any difference fails, so the fast path cannot silently drift from what the
site renders. A bounded run of benchmarks/links_differential.py (fixed seed, no corpus; the
script's default run does 3,000 mutations and the corpus too)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
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
