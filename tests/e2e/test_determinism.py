"""Deterministic output: the same specs give the same bytes whatever the machine.

Two builds run as separate processes, in different temp folders, with a different
``PYTHONHASHSEED``, locale, time zone and working folder, from spec files created in opposite
orders (so directory listings differ), and a second apart (so a timestamp would show). Every
file of the two trees must be identical, byte for byte.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO


def _bench_module():
    spec = importlib.util.spec_from_file_location("check_bench", REPO / "benchmarks" / "check_bench.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _make_project(dest: Path, reverse: bool) -> None:
    """The bundled project plus three synthetic apps, spec files written in ``reverse`` order."""
    # the sums record what rulegen wrote into charts/ and runbooks/: copied with them
    for name in ("rules", "charts", "runbooks", ".rulegen-sums"):
        shutil.copytree(REPO / name, dest / name, symlinks=True)
    shutil.copy(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    bench = _bench_module()
    apps = ["svc-000", "svc-001", "svc-002"]
    for app in (reversed(apps) if reverse else apps):
        (dest / "rules" / f"{app}.yaml").write_text(bench.spec_text(app, 9), encoding="utf-8")


def _build(root: Path, seed: str, locale: str, tz: str, cwd: Path, *extra: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=seed, LC_ALL=locale, LANG=locale, TZ=tz)
    proc = subprocess.run([sys.executable, "-m", "rulegen", "-C", str(root), "build", *extra],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("fmt", ["helm", "rules"])
def test_two_builds_on_different_machines_give_identical_trees(tmp_path, fmt):
    a, b = tmp_path / "first" / "project", tmp_path / "second-one" / "x" / "project"
    _make_project(a, reverse=False)
    _make_project(b, reverse=True)
    _build(a, "0", "C", "UTC", tmp_path, "--format", fmt)
    _build(b, "4242", "C.UTF-8", "Pacific/Chatham", b, "--format", fmt)
    ta, tb = _tree(a), _tree(b)
    assert sorted(ta) == sorted(tb)
    differing = [p for p in ta if ta[p] != tb[p]]
    assert differing == []
    # real outputs were compared, not just the copied inputs
    assert "runbooks/svc-002.md" in ta
    assert ("rules-out/svc-001.rules.yaml" if fmt == "rules" else "charts/svc-001/templates/prometheusrule.yaml") in ta
    # no absolute path of either machine leaks into the output
    assert not [p for p, data in ta.items() if str(tmp_path).encode() in data]


def test_rebuild_is_a_no_op(tmp_path):
    root = tmp_path / "p"
    _make_project(root, reverse=False)
    _build(root, "1", "C", "UTC", tmp_path)
    before = {p: (root / p).stat().st_mtime_ns for p in _tree(root)}
    out = _build(root, "2", "C.UTF-8", "Asia/Kolkata", tmp_path)
    n_specs = len(list((root / "rules").glob("*.yaml")))
    assert out.splitlines()[-2] == f"{n_specs} spec(s): 0 file(s) written, {len(_planned(root))} unchanged"
    assert {p: (root / p).stat().st_mtime_ns for p in _tree(root)} == before


def _planned(root: Path) -> list[str]:
    from rulegen.pipeline import load_project, plan_project
    outputs, _ = plan_project(load_project(root))
    return [o.path for o in outputs]
