"""Locating the real ``helm`` and ``promtool`` binaries.

They are built from pinned Go modules by ``scripts/install-tools.sh`` into ``.tools/bin`` of the
project (``RULEGEN_TOOLS_DIR`` overrides the folder). A binary on ``PATH`` is used only when
the project folder has none.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..findings import RulegenError

INSTALL_HINT = "install the pinned tools with: scripts/install-tools.sh (needs Go and the Go module proxy)"


def tools_dir(root: Path | None = None) -> Path:
    """The project-local tools folder (``<root>/.tools/bin`` or ``$RULEGEN_TOOLS_DIR/bin``)."""
    env = os.environ.get("RULEGEN_TOOLS_DIR")
    if env:
        return Path(env) / "bin"
    base = root if root is not None else Path.cwd()
    return base / ".tools" / "bin"


def find(name: str, root: Path | None = None) -> Path | None:
    """Path of tool ``name`` (``helm`` or ``promtool``), or None when not installed."""
    local = (tools_dir(root) / name).resolve()
    if local.is_file() and os.access(local, os.X_OK):
        return local
    # the package's own checkout, when rulegen runs from a project without .tools
    here = Path(__file__).resolve().parents[2] / ".tools" / "bin" / name
    if here.is_file() and os.access(here, os.X_OK):
        return here
    found = shutil.which(name)
    return Path(found).resolve() if found else None


def require(name: str, root: Path | None = None) -> Path:
    """Like :func:`find`, but raises RulegenError saying how to install the tool."""
    p = find(name, root)
    if p is None:
        raise RulegenError(f"{name} not found in {tools_dir(root)} or on PATH; {INSTALL_HINT}")
    return p


def version(path: Path) -> str:
    """First line of ``<tool> --version`` (promtool) or ``version --short`` (helm)."""
    args = [str(path), "version", "--short"] if path.name == "helm" else [str(path), "--version"]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60)
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr) else "?"
