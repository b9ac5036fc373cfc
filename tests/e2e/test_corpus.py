"""rulegen on real rules: the "Awesome Prometheus alerts" corpus.

Corpus: "Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0
(https://creativecommons.org/licenses/by/4.0/), read from ``../shared/corpus/`` (see
``tests/conftest.py``: CORPUS); nothing of it is copied into the project.

The test imports every rule file into a temporary project, renders every chart (rulegen's
planner, without the validation gate, so convention findings do not stop the render), runs
the real ``helm template`` on each chart, compares every rendered rule with its original
(:mod:`rulegen.importer.compare`), runs ``promtool check rules`` on the rendered groups, and
prints a summary with the findings of ``rulegen validate`` by code.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from rulegen.importer import import_paths, write_specs
from rulegen.importer.compare import compare_groups
from rulegen.pipeline import load_project
from rulegen.render import plan
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm, promtool

from helpers import CORPUS, REPO
from helpers.helm import write_outputs

pytestmark = [pytest.mark.slow, pytest.mark.tools]

ATTRIBUTION = '"Awesome Prometheus alerts" by Samuel Berthe and contributors, CC BY 4.0'
EXPECTED_FILES = 112
EXPECTED_ALERTS = 954
#: Files that import to no spec, and why.
NO_SPEC = {"zookeeper/cloudflare-kafka-zookeeper-exporter.yml": "its only group has no rules"}
#: Alerts whose round trip is not equal, and why (none known).
KNOWN_DIFFERENCES: dict[str, str] = {}


def test_corpus_round_trip(tmp_path, helm_bin, promtool_bin, capsys, shared_dir):
    # shared_dir skips where ../shared is missing, and fails in CI
    t0 = time.monotonic()
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yml", ".yaml"))
    originals = {p.relative_to(CORPUS).as_posix(): yaml.safe_load(p.read_text(encoding="utf-8")) for p in files}
    n_alerts = sum(1 for d in originals.values() for g in d["groups"] for r in (g.get("rules") or []) if "alert" in r)
    assert (len(files), n_alerts) == (EXPECTED_FILES, EXPECTED_ALERTS)

    res = import_paths([CORPUS], out_dir=tmp_path / "rules", display_base=CORPUS)
    errors = [n for n in res.notes if n.is_error]
    assert errors == []
    notes = Counter(n.code for n in res.notes)
    assert sum(s.alerts for s in res.specs) == EXPECTED_ALERTS
    sourced = {src for s in res.specs for src in s.sources}
    assert set(originals) - sourced == set(NO_SPEC)
    write_specs(res, tmp_path / "rules")
    t_import = time.monotonic()

    loaded = load_project(tmp_path)
    assert len(loaded.specs) == len(res.specs)  # every imported spec passes the schema
    findings = Counter(f.code for f in loaded.findings)
    outputs, plan_findings = plan(loaded.specs, tmp_path)
    assert [f for f in plan_findings if f.is_error] == []
    write_outputs(tmp_path, outputs)
    t_build = time.monotonic()

    def render(spec):
        return spec, helm.template(tmp_path / spec.chart.path, values=[values_yaml(gate_values(spec.chart.gates))], root=REPO)

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        rendered = list(pool.map(render, loaded.specs))
    t_helm = time.monotonic()

    source_of = {s.app: s.sources[0] for s in res.specs}
    equal = 0
    diffs = []
    out_dir = tmp_path / "rendered"
    out_dir.mkdir()
    rule_files = []
    for spec, r in rendered:
        groups = r.rule_groups()
        e, d = compare_groups(originals[source_of[spec.app]]["groups"], groups)
        equal += e
        diffs.extend((source_of[spec.app], x) for x in d)
        f = out_dir / f"{spec.app}.rules.yaml"
        f.write_text(yaml.safe_dump({"groups": groups}, sort_keys=False, allow_unicode=True), encoding="utf-8")
        rule_files.append(f)
    unexplained = [f"{src}: {d}" for src, d in diffs if f"{src}/{d.rule}" not in KNOWN_DIFFERENCES]
    rc, out = promtool.check_rules(rule_files, root=REPO)
    t_end = time.monotonic()

    with capsys.disabled():
        print(f"\ncorpus: {ATTRIBUTION}")
        print(f"  files {len(files)}, alerts {n_alerts}, specs {len(res.specs)}, round-trip equal "
              f"{equal}/{EXPECTED_ALERTS}, promtool check rules exit {rc}")
        print("  import notes by code: " + ", ".join(f"{k} {v}" for k, v in sorted(notes.items())))
        print("  rulegen validate findings by code: "
              + (", ".join(f"{k} {v}" for k, v in sorted(findings.items())) or "none"))
        print(f"  time: import {t_import - t0:.1f}s, validate+build {t_build - t_import:.1f}s, "
              f"helm {t_helm - t_build:.1f}s, compare+promtool {t_end - t_helm:.1f}s")
        for src, d in diffs:
            print(f"  known difference {src}: {d} ({KNOWN_DIFFERENCES.get(f'{src}/{d.rule}', 'UNEXPLAINED')})")
    assert unexplained == []
    assert equal == EXPECTED_ALERTS - len(KNOWN_DIFFERENCES)
    assert rc == 0, out


def _cli(root: Path, *args: str) -> int:
    from rulegen.cli import main
    return main(["-C", str(root), *args])


def test_corpus_adopted_with_default_config(tmp_path, helm_bin, promtool_bin, capsys, shared_dir):
    """What a new user does, with the default configuration: `rulegen import` (exit 0, the
    policy findings of the imported rules baselined), then `validate`, `build`, `check`, each
    exit 0; the rules helm renders from the built charts equal the originals, 954/954."""
    files = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".yml", ".yaml"))
    originals = {p.relative_to(CORPUS).as_posix(): yaml.safe_load(p.read_text(encoding="utf-8")) for p in files}
    assert _cli(tmp_path, "import", str(CORPUS)) == 0
    out = capsys.readouterr()
    assert ".rulegen-baseline.yaml: " in out.out
    baseline = yaml.safe_load((tmp_path / ".rulegen-baseline.yaml").read_text(encoding="utf-8"))
    by_code = Counter(e["code"] for e in baseline["findings"])
    assert set(by_code) <= {"RG401", "RG402", "RG404", "RG501", "RG502", "RG503", "RG504", "RG505"}
    assert by_code["RG504"] == 370      # the critical alerts without runbook content
    for cmd in ("validate", "build", "check"):
        assert _cli(tmp_path, cmd) == 0, (cmd, capsys.readouterr())
    loaded = load_project(tmp_path)
    assert [f for f in loaded.findings if f.is_error] == []
    assert sum(1 for f in loaded.findings if "(baselined" in f.message) == sum(by_code.values())

    def render(spec):
        return spec, helm.template(tmp_path / spec.chart.path, values=[values_yaml(gate_values(spec.chart.gates))], root=REPO)

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        rendered = list(pool.map(render, loaded.specs))
    equal = 0
    diffs = []
    for spec, r in rendered:
        src = _source_of(tmp_path / spec.file)
        # strict: no runbook_url invented (the project has no runbook site)
        e, d = compare_groups(originals[src]["groups"], r.rule_groups(), generated_runbook_url=False)
        equal += e
        diffs.extend(d)
    assert diffs == []
    assert equal == EXPECTED_ALERTS
    assert not any("example.com" in p.read_text(encoding="utf-8") for p in (tmp_path / "charts").rglob("*")
                   if p.is_file())


def _source_of(spec_file: Path) -> str:
    """The corpus file a spec was imported from (its `Imported by rulegen import from` line)."""
    import re
    m = re.search(r"Imported by `rulegen import` from (\S+?)\.?$", spec_file.read_text(encoding="utf-8"), re.M)
    return Path(m.group(1)).resolve().relative_to(CORPUS.resolve()).as_posix()
