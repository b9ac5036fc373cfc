"""The series checks stay quiet on a real corpus whose series exist: every selector of the
"Awesome Prometheus alerts" rules (``../shared/corpus``, CC BY 4.0, read in place) gets a
series that it selects, written into the real Prometheus; then RG900-RG903 must report
nothing. Then the same rules against the fixture's history (none of their metrics there):
every checkable selector is RG900 or RG901, and nothing fails."""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest
import yaml

from rulegen.live.client import Client
from rulegen.live.connect import Connection
from rulegen.live.series import LiveRule, check_series, selectors
from rulegen.promql.matchers import matches

from helpers import CORPUS
from helpers.prometheus import start_prometheus

pytestmark = [pytest.mark.slow, pytest.mark.tools("prometheus", "promtool")]


def _rules() -> list[LiveRule]:
    out = []
    for p in sorted(CORPUS.rglob("*.y*ml")):
        doc = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        for g in doc.get("groups") or []:
            for r in g.get("rules") or []:
                if "alert" in r:
                    out.append(LiveRule(file=p.relative_to(CORPUS).as_posix(), name=r["alert"], is_alert=True,
                                        expr=str(r["expr"]), for_s=0.0))
    return out


def _value(op: str, pattern: str) -> str | None:
    """A label value the matcher accepts, or None when none of a few guesses does."""
    guesses = [pattern, *pattern.split("|"), re.sub(r"[\^$\\()]|\.\*|\.\+", "", pattern.split("|")[0]),
               "", "x-rulegen", "1", "a"]
    return next((g for g in guesses if matches(op, pattern, g) is True), None)


def _series(rules) -> tuple[set, list[LiveRule]]:
    """Series (text) that every selector of ``rules`` selects, and the rules all of whose
    selectors got one."""
    out, kept = set(), []
    for rule in rules:
        made = []
        for s in selectors(rule, set()):
            labels = {}
            for label, op, pattern in s.matchers:
                v = _value(op, pattern)
                if v is None or label == "__name__":
                    break
                if v:
                    labels[label] = v
            else:
                inner = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
                made.append(f"{s.metric}{{{inner}}}")
                continue
            break
        else:
            if made:
                out.update(made)
                kept.append(rule)
    return out, kept


def test_quiet_on_the_corpus_when_its_series_exist(prometheus_bin, promtool_bin, tmp_path, shared_dir, capsys):
    rules = _rules()
    series, kept = _series(rules)
    end = (int(time.time()) - 60) // 60 * 60
    start = end - 2 * 3600
    text = "".join(f"{s} 1 {t}\n" for s in sorted(series) for t in range(start, end + 1, 60)) + "# EOF\n"
    server = start_prometheus(prometheus_bin, promtool_bin, tmp_path, text=text, window=(start, end))
    try:
        t0 = time.monotonic()
        found = check_series(Client(Connection(url=server.url, timeout=60)), kept, now=end + 60, lookback=3 * 3600)
        took = time.monotonic() - t0
    finally:
        server.stop()
    with capsys.disabled():
        print(f"\ncorpus: {len(rules)} alerts, {len(kept)} with every selector written as {len(series)} series; "
              f"findings {dict(Counter(f.code for f in found))} in {took:.1f}s")
    assert len(kept) > 0.9 * len(rules)
    assert [f for f in found if f.code in ("RG900", "RG901", "RG902", "RG903")] == []


def test_the_corpus_against_history_without_its_metrics(prometheus_server, shared_dir, capsys):
    rules = _rules()
    found = check_series(Client(Connection(url=prometheus_server.url, timeout=60)), rules,
                         now=prometheus_server.end + 60)
    codes = Counter(f.code for f in found)
    with capsys.disabled():
        print(f"\ncorpus against the fixture: {len(rules)} alerts, findings {dict(codes)}")
    assert set(codes) <= {"RG900", "RG901"} and codes["RG900"] > len(rules) * 0.9
