"""Where the pinned ``helm`` and ``promtool`` come from.

A pull request can change any file of the project it targets, so a tool is never taken from
it. :func:`find` looks, in order, in ``$RULEGEN_TOOLS_DIR/bin``, in the per-user cache
``${XDG_CACHE_HOME:-$HOME/.cache}/rulegen/tools/bin`` (where ``scripts/install-tools.sh``
builds them) and on ``PATH``; a candidate that lies inside the project being checked is
refused (``RG762``), and so is a project that carries a tools folder of its own
(:func:`project_tools`, ``RG761``): a committed ``.tools/bin/helm`` is an attack, not a tool.
"""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path

from ..findings import RulegenError

#: Tools rulegen runs (all built by ``scripts/install-tools.sh``): the Prometheus server and
#: Alertmanager serve the live-Prometheus and routing features and their tests;
#: ``rulegen-amroute`` is rulegen's routing helper on the pinned Alertmanager packages;
#: ``rulegen-backtest`` (``tools/rulegen-backtest``) replays alerting rules for ``rulegen backtest``;
#: ``rulegen-helmrender`` (``tools/rulegen-helmrender``) renders many charts in one process.
NAMES = ("helm", "promtool", "prometheus", "alertmanager", "amtool", "rulegen-amroute", "rulegen-backtest",
         "rulegen-helmrender")
INSTALL_HINT = ("install the pinned tools with: scripts/install-tools.sh (needs Go and the Go module proxy; "
                "it builds into $RULEGEN_TOOLS_DIR/bin, else ~/.cache/rulegen/tools/bin)")
#: The folder a project must not carry (older rulegen took tools from ``<project>/.tools/bin``).
PROJECT_TOOLS = ".tools"


class UntrustedTool(RulegenError):
    """A tool would come from a place a pull request can write (``RG761``, ``RG762``)."""


def cache_dir() -> Path:
    """The per-user tools folder: ``${XDG_CACHE_HOME:-$HOME/.cache}/rulegen/tools``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "rulegen" / "tools"


def tool_dirs() -> list[tuple[str, Path]]:
    """``(what, bin folder)`` searched before ``PATH``, in order."""
    out = []
    env = os.environ.get("RULEGEN_TOOLS_DIR")
    if env:
        out.append(("RULEGEN_TOOLS_DIR", Path(env) / "bin"))
    out.append(("the per-user tools cache", cache_dir() / "bin"))
    return out


def data_path(rel: str, root: Path | None = None) -> Path:
    """A file ``scripts/install-tools.sh`` fetched beside the binaries (``rel`` from the tools
    folder, e.g. ``crds/monitoring.coreos.com_prometheusrules.yaml``): in the first trusted
    tools folder (:func:`tool_dirs`) that holds it, else where the first one would. A folder
    inside the project ``root`` is never used (a pull request could write there)."""
    dirs = [b.parent for _, b in tool_dirs() if not _inside(b, root)]
    for d in dirs:
        if (d / rel).is_file():
            return d / rel
    return (dirs[0] if dirs else cache_dir()) / rel


def _inside(path: Path, root: Path | None) -> bool:
    if root is None:
        return False
    real = Path(os.path.realpath(path))
    return real == Path(os.path.realpath(root)) or real.is_relative_to(os.path.realpath(root))


def project_tools(root: Path) -> tuple[str, str] | None:
    """Why the project at ``root`` carries tools of its own, or None: ``(path relative to
    root, reason)`` for the first file named ``helm`` or ``promtool`` (an executable or a
    symlink) under ``<root>/.tools``, else for ``.tools`` itself when git tracks a file under
    it. Symlinks are not followed."""
    top = Path(root) / PROJECT_TOOLS
    try:
        st = os.lstat(top)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        return PROJECT_TOOLS, "is a symlink"
    for dirpath, dirnames, filenames in os.walk(top):
        for name in sorted(dirnames + filenames):
            if name not in NAMES:
                continue
            p = os.path.join(dirpath, name)
            try:
                lst = os.lstat(p)
            except OSError:
                continue
            if stat.S_ISLNK(lst.st_mode) or (stat.S_ISREG(lst.st_mode) and lst.st_mode & 0o111):
                return Path(p).relative_to(root).as_posix(), f"is an executable named {name}"
    from . import process  # (subprocess: imported only by the runs that start one)
    try:
        git = system_program("git", root)
        if git is None:
            return None
        proc = process.run([git, "ls-files", "-z", "--", PROJECT_TOOLS], cwd=root, timeout=60)
    except (OSError, process.TimeoutExpired):
        return None
    tracked = [f for f in proc.stdout.split("\0") if f] if proc.returncode == 0 else []
    if tracked:
        return tracked[0], "is tracked by git"
    return None


def refuse_project_tools(root: Path | None) -> None:
    """Raise :class:`UntrustedTool` (``RG761``) when the project at ``root`` carries tools."""
    if root is None:
        return
    problem = project_tools(root)
    if problem is not None:
        raise UntrustedTool(
            f"RG761 {problem[0]} {problem[1]}: rulegen never runs tools from the project it checks "
            f"(a pull request can commit them); remove {PROJECT_TOOLS}/ from the project; {INSTALL_HINT}")


def search_path() -> list[str]:
    """The entries of ``PATH`` a program may come from: the absolute ones. An empty or
    relative entry (``.``, ``bin``, ``::``) names a folder of the current working folder,
    which is the checkout rulegen checks (and the folder a child runs in), so a pull
    request could put a program there; it is skipped."""
    return [d for d in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(d)]


def system_program(name: str, root: Path | None = None) -> str | None:
    """Path of program ``name`` (``git``, ``bash``) on the absolute entries of ``PATH``
    (:func:`search_path`), skipping entries inside the project ``root``; None when none
    holds it. Programs rulegen starts by name go through here, never through a bare name a
    child process would look up itself."""
    for d in search_path():
        if _inside(Path(d), root):
            continue
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def find(name: str, root: Path | None = None) -> Path | None:
    """Path of tool ``name`` (one of :data:`NAMES`) for checking the project at ``root``,
    or None when it is not installed.

    Raises:
        UntrustedTool: the project carries tools (``RG761``), or a tools folder searched
            before ``name`` is found (``RULEGEN_TOOLS_DIR``, the cache) or the ``PATH`` entry
            it is found in lies inside the project (``RG762``).
    """
    refuse_project_tools(root)
    for what, folder in tool_dirs():
        if _inside(folder, root):
            raise _inside_error(f"{what} {folder}", root)
        p = folder / name
        if p.is_file() and os.access(p, os.X_OK):
            return Path(os.path.realpath(p))
    hit = shutil.which(name, path=os.pathsep.join(search_path()))
    if hit is None:
        return None
    if _inside(Path(hit), root):
        raise _inside_error(f"{name} found on PATH at {hit}", root)
    return Path(os.path.realpath(hit))


def _inside_error(what: str, root: Path | None) -> UntrustedTool:
    return UntrustedTool(
        f"RG762 {what} lies inside the project being checked ({root}), which a pull request can write: "
        "keep the tools outside the checkout (point RULEGEN_TOOLS_DIR, XDG_CACHE_HOME or HOME elsewhere, "
        f"and take the project's folders off PATH); {INSTALL_HINT}")


def require(name: str, root: Path | None = None) -> Path:
    """Like :func:`find`, but raises RulegenError saying how to install a missing tool."""
    p = find(name, root)
    if p is None:
        where = ", ".join(str(d) for _, d in tool_dirs())
        raise RulegenError(f"{name} not found in {where} or on PATH; {INSTALL_HINT}")
    return p

