"""Building the runbook site the way CI does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from helpers import REPO


def mkdocs_build(project: Path, out: Path) -> subprocess.CompletedProcess:
    """``.venv/bin/mkdocs build --strict -d <out>`` in ``project``."""
    exe = REPO / ".venv/bin/mkdocs"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "mkdocs"]
    return subprocess.run(cmd + ["build", "--strict", "-d", str(out)], cwd=project,
                          capture_output=True, text=True, timeout=300,
                          env={"PATH": "/usr/bin:/bin", "NO_MKDOCS_2_WARNING": "1", "HOME": str(project)})
