"""Atomic writes: a build killed with SIGKILL at any point leaves every file old or new.

A build runs in a forked child process that kills itself (SIGKILL: no cleanup, no ``finally``)
at one kill point, and the test loops over all of them:

* ``before-replace N``: just before the N-th rename of a temp file over its target
  (N = 0 .. number of changed outputs; the last one never fires, so the build completes);
* ``mid-write N``: in the middle of writing the N-th temp file, half its text flushed to disk.

A build writes every temp file before it renames any (so a write that fails changes nothing).

After each kill, every output is byte-identical to either the old or the new version, no other
file appeared except rulegen's temp files (never under an output's name), ``rulegen check``
fails, and the next ``rulegen build`` removes the temp files and completes the tree.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import traceback
from pathlib import Path

import pytest

from rulegen.cli import main

from helpers import REPO

def _arm(mode: str, n: int) -> None:
    """In the forked child only: make this process SIGKILL itself at kill point (mode, n)."""
    count = 0

    def die():
        os.kill(os.getpid(), signal.SIGKILL)

    if mode == "before-replace":
        real_replace = os.replace

        def replace(src, dst):
            nonlocal count
            if count == n:
                die()
            count += 1
            real_replace(src, dst)
        os.replace = replace
    elif mode == "mid-write":
        from rulegen.fs import write
        real_fdopen = os.fdopen

        class Half:
            def __init__(self, f, k):
                self.f, self.k = f, k

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return self.f.__exit__(*exc)

            def write(self, s):
                if self.k == n:
                    self.f.write(s[: len(s) // 2])
                    self.f.flush()
                    os.fsync(self.f.fileno())
                    die()
                return self.f.write(s)

            def __getattr__(self, name):
                return getattr(self.f, name)

        def fdopen(*a, **kw):
            nonlocal count
            count += 1
            return Half(real_fdopen(*a, **kw), count - 1)
        write.os = type(sys)("os_shim")
        write.os.__dict__.update(os.__dict__)
        write.os.fdopen = fdopen


def _killed_build(mode: str, n: int, root: Path, log: Path) -> int:
    """``rulegen build`` of ``root`` in a forked child of this process that SIGKILLs itself at
    kill point (mode, n) (no cleanup, no ``finally``, as in a separate process: it is one).
    The fork starts with rulegen already imported, which a fresh interpreter per kill point
    spent most of its time on. Returns the child's status as :mod:`subprocess` gives it (-9:
    killed); its output goes to ``log``."""
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    pid = os.fork()
    if pid == 0:  # the child never returns into pytest
        code = 70
        try:
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            _arm(mode, n)
            code = main(["-C", str(root), "build"])
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    return -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)


TMP_RE = re.compile(r"^\.(.+)\.(\d+)\.[^.]+\.rulegen-tmp$")


def _copy_project(dest: Path) -> Path:
    """The bundled project with only its smallest spec (llama-swap): each kill point runs
    three rulegen commands, so the other specs would only make each of them slower."""
    (dest / "rules").mkdir(parents=True)
    shutil.copy(REPO / "rules/llama-swap.yaml", dest / "rules/llama-swap.yaml")
    shutil.copytree(REPO / "charts/llama-swap", dest / "charts/llama-swap", symlinks=True)
    shutil.copytree(REPO / "runbooks", dest / "runbooks")
    shutil.copy(REPO / "mkdocs.yml", dest / "mkdocs.yml")
    return dest


def _rulegen(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rulegen", "-C", str(root), *args],
                          capture_output=True, text=True, timeout=300)


def _change_spec(root: Path) -> None:
    """A spec edit that changes the template, the test file, the page and the alert index."""
    spec = root / "rules/llama-swap.yaml"
    text = spec.read_text(encoding="utf-8")
    old = "summary: llama-swap has no available replica."
    assert text.count(old) == 1
    text = text.replace(old, "summary: llama-swap has no ready replica at all.")
    # test files hold only the annotations tests state (issue 14): rename a test to change it
    old = "- name: fires after 5m of zero available replicas, not before"
    assert text.count(old) == 1
    spec.write_text(text.replace(old, "- name: fires after five minutes of zero available replicas"),
                    encoding="utf-8")


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def versions(tmp_path_factory):
    """(old tree, new tree, changed paths): the bundled project built, then built after the edit."""
    old_root = _copy_project(tmp_path_factory.mktemp("old") / "p")
    assert _rulegen(old_root, "build", "--force").returncode == 0
    new_root = tmp_path_factory.mktemp("new") / "p"
    shutil.copytree(old_root, new_root, symlinks=True)
    _change_spec(new_root)
    assert _rulegen(new_root, "build").returncode == 0
    old, new = _tree(old_root), _tree(new_root)
    changed = sorted(p for p in new if old.get(p) != new[p] and p != "rules/llama-swap.yaml")
    assert len(changed) >= 4, changed
    return old_root, old, new, changed


def _kill_points(n_changed: int):
    """Before each rename (and after the last), and in the middle of each temp file written:
    the build's journal first (rulegen.gitops.write.apply), then each changed file."""
    return ([("before-replace", i) for i in range(n_changed + 1)]
            + [("mid-write", i) for i in range(n_changed + 1)])


def test_enough_kill_points(versions):
    *_, changed = versions
    assert {"charts/llama-swap/rules/llama-swap.rules.yaml", "runbooks/llama-swap.md",
            "charts/llama-swap/tests/llama-swap.test.yaml"} <= set(changed)


def test_killed_build_leaves_each_file_old_or_new(versions, tmp_path, capsys):
    *_, changed = versions
    points = _kill_points(len(changed))
    assert len(points) == 2 * len(changed) + 2
    for i, (mode, n) in enumerate(points):
        _kill_and_recover(versions, tmp_path / f"run{i}", mode, n, capsys)


def _kill_and_recover(versions, root: Path, mode: str, n: int, capsys) -> None:
    old_root, old, new, changed = versions
    where = f"killed at {mode} {n}"
    shutil.copytree(old_root, root, symlinks=True)
    _change_spec(root)
    log = root.parent / f"{root.name}.log"
    status = _killed_build(mode, n, root, log)
    completes = mode == "before-replace" and n == len(changed)
    assert status == (0 if completes else -9), (where, log.read_text(encoding="utf-8", errors="replace"))

    after = _tree(root)
    temps, journals = [], []
    for path, data in after.items():
        if path == "rules/llama-swap.yaml":
            continue
        m = TMP_RE.match(Path(path).name)
        if m and m.group(1) == "build-journal":  # the build's journal (rulegen.gitops.write.apply)
            journals.append(path)
            continue
        if m:
            temps.append(path)
            continue
        assert data in (old.get(path), new.get(path)), f"{where}: {path} is neither old nor new"
    # Two phases, in plan order (sorted by path): the journal, then every changed file is
    # written to its temp file, then the temp files are renamed. Killed while writing the n-th
    # temp file (0: the journal): no file is new yet, the temp files before it are whole and
    # it is half written. Killed before the n-th rename: the first n files are new, the others
    # still old, and their temp files are whole. The journal is removed after the last rename.
    renamed = n if mode == "before-replace" else 0
    assert [p for p in changed if after[p] == new[p]] == changed[:renamed], where
    # the journal is written first and removed last (mid-write 0: killed while writing it)
    assert len(journals) == (0 if completes else 1), (where, journals)
    if completes:
        assert temps == []
    else:
        pending = changed[renamed:] if mode == "before-replace" else changed[:n]
        of = {}
        for t in temps:
            of[str(Path(t).parent / TMP_RE.match(Path(t).name).group(1))] = t
        assert sorted(of) == sorted(pending) and len(temps) == len(pending), (where, temps)
        for target in pending:
            whole = new[target]
            if mode == "mid-write" and target == changed[n - 1]:  # half written
                text = whole.decode("utf-8")
                assert after[of[target]] == text[: len(text) // 2].encode("utf-8"), where
            else:  # written and fsync'ed, killed before its rename
                assert after[of[target]] == whole, where

    # the next commands, in this process: a new command as any other
    capsys.readouterr()
    code = main(["-C", str(root), "check"])
    assert code == (0 if completes else 1), (where, capsys.readouterr().out)
    code = main(["-C", str(root), "build"])
    assert code == 0, (where, capsys.readouterr().err)
    assert _tree(root) == new, where
