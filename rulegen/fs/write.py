"""The one writer of the package: every file rulegen writes goes through :func:`atomic_write`
or :func:`write_all`.

Each write goes to a temporary file in the target's own folder, is flushed and fsync'ed,
then renamed over the target (``os.replace``, atomic on POSIX), so a command killed at any
moment leaves each file either old or new, never truncated. The temporary file is created
with ``O_CREAT|O_EXCL|O_NOFOLLOW`` under a random name (``.<target name>.<pid>.<random>.rulegen-tmp``):
a file or symlink already there (a pull request can commit one under any fixed name) makes
the create fail and another name is drawn, so nothing is ever written through a link. The
rename replaces a symlink at the target itself, never the file it points to.

With ``root`` given (every write into a project), the target must stay inside ``root``: a
folder on its path, or the target itself, that is a symlink whose real path is outside the
project is refused with ``RG747`` before anything is written (see
:mod:`rulegen.fs.containment`). Files outside a project (the per-user code cache, a JUnit
report named on the command line) are written without ``root``.

A command killed between creating a temporary file and renaming it leaves it behind; the
next ``build`` removes those whose process is gone (:func:`clean_temp_files`), and ``check``
reports them. The suffix keeps them out of every glob that finds generated files.

Codes:

* ``RG747`` a file rulegen is about to write leads outside the project through a symlink found
  at the moment of writing: a folder on its path, or the file itself (validation reports the
  ones it knows as RG742 and RG744). Every write checks this: generated files, the baseline,
  ``.rulegen.yaml``, specs written by ``new``, ``import`` and ``derive-tests``, and the
  ``.rulegen/`` work folders. The message names the link, and nothing is written. Bad: ``runbooks`` made a symlink to ``/var/www`` after
  ``rulegen check`` passed; good: ``runbooks/`` a folder of the project.
"""

from __future__ import annotations

import os
import posixpath
import re
import secrets
import shutil
import stat
from pathlib import Path

from ..findings import RulegenError
from . import read as fs_read
from .containment import escaping_link

#: Suffix of temporary files; see the module docstring for the full name.
TMP_SUFFIX = ".rulegen-tmp"
TMP_RE = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[^.]+" + re.escape(TMP_SUFFIX) + "$")

_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def _rel(root: Path, path: Path) -> str | None:
    """``path`` as a POSIX path relative to ``root``, or None when it lies outside ``root``
    even after resolving the folders of both (``root`` may be given through a link)."""
    a, r = os.path.abspath(path), os.path.abspath(root)
    rel = os.path.relpath(a, r)
    if rel != ".." and not rel.startswith(".." + os.sep):
        return Path(rel).as_posix()
    rel = os.path.relpath(os.path.realpath(os.path.dirname(a)), os.path.realpath(r))
    if rel == ".." or rel.startswith(".." + os.sep):
        return None
    return Path(rel, os.path.basename(a)).as_posix()


def refuse_escaping(root: Path, path, seen: dict | None = None) -> str:
    """Raise unless ``path`` (relative to ``root``, or absolute) stays inside ``root`` through
    every folder on its way and at the target itself; returns it relative to ``root``.

    Raises:
        rulegen.findings.RulegenError: ``RG747``, naming the path and the link that leads out.
    """
    rel = _rel(root, Path(root, path))
    if rel is None:
        raise RulegenError(f"RG747 {path} cannot be written: it is outside the project {root}; rulegen "
                           "writes only inside it (nothing was written)")
    link = escaping_link(root, rel, seen)
    if link is not None:
        raise RulegenError(f"RG747 {rel} cannot be written: {link[0]} is a symlink to {link[1]}, outside "
                           "the project; rulegen writes only inside it. Make it a folder of the project "
                           "(nothing was written)")
    return rel


def atomic_write(path: Path, content: str | bytes, *, root: Path | None = None, sync: bool = True) -> Path:
    """Write ``content`` (text as UTF-8, no newline translation, or bytes) to ``path`` through
    an exclusive temporary file and a rename (see the module docstring); missing parent
    folders are made. Keeps the target's permission bits when it exists (else ``0644``).
    ``sync=False`` skips the fsyncs (scratch files and caches). Returns ``path``.

    Raises:
        rulegen.findings.RulegenError: ``RG747`` with ``root`` given, when ``path`` leads out
            of ``root`` (nothing written).
        OSError: the file cannot be written (no temporary file is left behind).
    """
    path = Path(path)
    if root is not None:
        refuse_escaping(root, path)
    _commit(_stage(path, content, sync), path, sync)
    return path


def _temp_for(path: Path) -> tuple[int, Path]:
    """An open descriptor and the name of a new temporary file beside ``path``, created
    exclusively without following links; a name taken (by anything) is skipped."""
    for _ in range(100):
        tmp = path.parent / f".{path.name[:160]}.{os.getpid()}.{secrets.token_hex(6)}{TMP_SUFFIX}"
        try:
            return os.open(tmp, _CREATE, 0o600), tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def _stage(path: Path, content: str | bytes, sync: bool = True) -> Path:
    """The first half of :func:`atomic_write`: ``content`` written (and fsynced) to a new
    temporary file beside ``path`` (missing parent folders made), with the target's
    permission bits; returns the temporary file. Raises OSError, leaving no temporary file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o644
    try:
        mode = os.stat(path).st_mode & 0o777
    except (FileNotFoundError, NotADirectoryError):
        pass
    fd, tmp = _temp_for(path)
    try:
        text = isinstance(content, str)
        with os.fdopen(fd, "w" if text else "wb", **({"encoding": "utf-8", "newline": ""} if text else {})) as f:
            f.write(content)
            f.flush()
            if sync:
                os.fsync(f.fileno())
            os.fchmod(f.fileno(), mode)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise
    return tmp


def write_temp(root: Path, path: str, content: str) -> Path:
    """``content`` in a new temporary file beside ``path`` (relative to ``root``), fsync'ed and
    never renamed: a journal that lives as long as the command writing it. Killed, the command
    leaves it as any temporary file, for the next ``build`` to remove (:func:`clean_temp_files`)
    and ``check`` to report. Returns its path.

    Raises:
        rulegen.findings.RulegenError: ``RG747``, ``path`` leads outside ``root``.
        OSError: it cannot be written (nothing is left behind).
    """
    refuse_escaping(root, path)
    return _stage(Path(root, path), content)


def _commit(tmp: Path, path: Path, sync: bool = True) -> None:
    """The second half of :func:`atomic_write`: rename ``tmp`` over ``path`` and fsync the
    folder (best effort), so the rename survives a crash."""
    os.replace(tmp, path)
    if not sync:
        return
    try:
        dfd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
    except OSError:
        pass


def write_all(root: Path, files: dict, remove=(), links: dict | None = None) -> list[str]:
    """Write ``files`` (``{path relative to root: text or bytes}``) and ``links``
    (``{path relative to root: symlink text}``: the chart library links of
    :mod:`rulegen.render.library`, each made at a fresh temporary name and renamed over its
    path, so a link or file already there is replaced, never followed) and remove the files
    of ``remove``, all or nothing; returns the relative paths touched, in the order given
    (links after files).

    Every file and link is first written to its temporary name; only when all of them are there
    are they renamed over their targets, so a write that fails (a folder on the path, no
    permission, a full disk) changes nothing: the temporary files and the folders made for
    them are removed again.

    Raises:
        rulegen.findings.RulegenError: a symlink on a path leads outside ``root`` (``RG747``,
            naming the link), or a file cannot be written; nothing was written.
    """
    links = dict(links or {})
    seen: dict = {}
    for path in list(files) + list(remove):
        refuse_escaping(root, path, seen)
    for path in links:  # the link itself is replaced: only the folders on its way must stay inside
        parent, _, name = Path(path).as_posix().rpartition("/")
        refuse_escaping(root, parent or ".", seen)
        if not name or name in (".", ".."):
            raise RulegenError(f"{path} cannot be written as a link (nothing was written)")
    blocked = unwritable(root, files) + unlinkable(root, links)
    if blocked:  # found before anything is written: either all or nothing
        raise RulegenError(f"{blocked[0]} cannot be written: it, or a folder on its path, exists as "
                           "something else (a folder, a FIFO, a dangling symlink...); remove or "
                           "rename that (nothing was written)")
    staged: list[tuple[Path, Path]] = []
    made: list[Path] = []  # folders made here, deepest last
    try:
        for path, content in list(files.items()) + list(links.items()):
            target = Path(root, path)
            missing = []
            parent = target.parent
            while not parent.exists() and parent != parent.parent:
                missing.append(parent)
                parent = parent.parent
            try:
                staged.append((_stage(target, content) if path in files else _stage_link(target, content), target))
            finally:
                made.extend(d for d in reversed(missing) if d.is_dir())
    except OSError as e:
        for tmp, _ in staged:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        for d in reversed(made):
            try:
                d.rmdir()
            except OSError:
                pass
        raise RulegenError(f"cannot write {path}: {e.strerror or e} (nothing was written)") from None
    touched = []
    for tmp, target in staged:
        _commit(tmp, target)
        touched.append(Path(os.path.relpath(target, root)).as_posix())
    for path in remove:
        try:
            Path(root, path).unlink()
            touched.append(Path(path).as_posix())
        except FileNotFoundError:
            pass
    return touched


def _stage_link(path: Path, target: str) -> Path:
    """A new symlink with text ``target`` at a fresh temporary name beside ``path`` (missing
    parent folders made); a name taken (by anything) is skipped. Returns its name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(100):
        tmp = path.parent / f".{path.name[:160]}.{os.getpid()}.{secrets.token_hex(6)}{TMP_SUFFIX}"
        try:
            os.symlink(target, tmp)
            return tmp
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name beside {path}")


def unlinkable(root: Path, paths) -> list[str]:
    """Those of ``paths`` (relative to ``root``) where a symlink cannot replace what is there:
    something other than a symlink or a regular file (a folder), or under a parent that is
    not a folder."""
    bad = []
    for path in paths:
        p = Path(root, path)
        try:
            mode = os.lstat(p).st_mode
        except FileNotFoundError:
            bad += [path] if unwritable(root, [path]) else []
            continue
        except NotADirectoryError:
            bad.append(path)
            continue
        if not (stat.S_ISLNK(mode) or stat.S_ISREG(mode)):
            bad.append(path)
    return bad


def unwritable(root: Path, paths) -> list[str]:
    """Those of ``paths`` (relative to ``root``) that exist as something other than a regular
    file, or under a parent that is not a folder (a file, a dangling symlink): writing them
    would fail half-way."""
    bad = []
    for path in paths:
        p = Path(root, path)
        try:
            mode = os.stat(p).st_mode
        except FileNotFoundError:
            parent = p.parent
            while parent != Path(root) and not parent.exists():
                if parent.is_symlink():  # dangling: mkdir cannot make the folder it stands for
                    break
                parent = parent.parent
            if parent.is_symlink() and not parent.exists() or parent.exists() and not parent.is_dir():
                bad.append(path)
            continue
        except NotADirectoryError:
            bad.append(path)
            continue
        if not stat.S_ISREG(mode):
            bad.append(path)
    return bad


def fresh_dir(root: Path, path) -> Path:
    """The folder ``path`` (relative to ``root``, or absolute inside it) emptied and made
    again, for scratch work (``.rulegen/test``...); returns its resolved path. A symlink on
    the way that leads outside is refused (``RG747``) before anything is removed, and
    ``shutil.rmtree`` removes links inside the folder without following them."""
    refuse_escaping(root, path)
    p = Path(root, path)
    if p.is_symlink():
        p.unlink()
    elif p.exists():
        shutil.rmtree(p)
    p.mkdir(parents=True)
    return p.resolve()


def copy_tree(src: Path, dst: Path, skip: tuple = (), skip_paths: tuple = ()) -> None:
    """Copy the folder ``src`` to ``dst`` (made when missing) as ``shutil.copytree`` does with
    links followed, except that every file is read through :func:`rulegen.fs.read.read_bytes`
    (a FIFO or device is refused, ``RG760``; the size is checked first, ``RG756``) and written
    through :func:`atomic_write`; folders named in ``skip`` (at any depth) and the entries at
    the POSIX paths ``skip_paths`` (relative to ``src``, not followed) are left out, and a
    folder reached twice through links is copied once.

    Raises:
        rulegen.fs.read.InputRefused: a file is special or too large. OSError: as copying.
    """
    seen: set = set()
    for here, dirs, files in os.walk(src, followlinks=True):
        real = os.path.realpath(here)
        if real in seen:
            dirs[:] = []
            continue
        seen.add(real)
        at = Path(os.path.relpath(here, src)).as_posix()
        left = {posixpath.relpath(s, at) for s in skip_paths if at == "." or s.startswith(at + "/")}
        dirs[:] = sorted(d for d in dirs if d not in skip and d not in left)
        out = Path(dst, os.path.relpath(here, src))
        out.mkdir(parents=True, exist_ok=True)
        for name in sorted(set(files) - left):
            atomic_write(out / name, fs_read.read_bytes(Path(here, name)), sync=False)


def work_dir(root: Path, path) -> Path:
    """The folder ``path`` (relative to ``root``) made when missing, its contents kept;
    resolved. Refused (``RG747``) when it leads outside ``root``."""
    refuse_escaping(root, path)
    p = Path(root, path)
    p.mkdir(parents=True, exist_ok=True)
    return p.resolve()


def temp_files(root: Path, dirs) -> list[str]:
    """Leftover temporary files (see the module docstring) in the folders ``dirs`` (paths
    under ``root``); relative POSIX paths, sorted. Folders reached through a symlink that
    leads outside the project are not looked into."""
    seen: dict = {}
    found = set()
    for d in dirs:
        rel = _rel(root, Path(d))
        if rel is None or escaping_link(root, rel, seen) is not None:
            continue
        for p in Path(d).glob("*" + TMP_SUFFIX):
            if p.name.startswith(".") and (p.is_file() or p.is_symlink()):  # a link: a chart library link's
                found.add(p.relative_to(root).as_posix())
    return sorted(found)


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def clean_temp_files(root: Path, dirs) -> list[str]:
    """Remove temporary files left by killed commands in ``dirs``; returns the paths removed.

    A temporary file whose name carries the id of a live process is kept: another command in
    the same checkout may be writing it. Names without a process id are removed.
    """
    removed = []
    for rel in temp_files(root, dirs):
        m = TMP_RE.match(Path(rel).name)
        if m and _alive(int(m.group("pid"))):
            continue
        try:
            Path(root, rel).unlink()
            removed.append(rel)
        except FileNotFoundError:
            pass
    return removed
