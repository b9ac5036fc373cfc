"""Loading specs: find spec files, read them with positions, build the model.

Pipeline step 1 of 4 (load -> validate -> render -> test).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..findings import RulegenError
from .loader import LoadedFile, load_file, load_text
from .build import build_spec
from .model import Chart, Group, Rule, Spec, Test

__all__ = ["LoadedFile", "load_file", "load_text", "find_spec_files", "load_paths", "shown_path",
           "Chart", "Group", "Rule", "Spec", "Test", "build_spec", "SCHEMA_PATH", "PROJECT_SCHEMA",
           "schema_ref"]

SCHEMA_PATH = Path(__file__).with_name("schema.json")

#: Where ``rulegen import`` puts a copy of the spec schema in a project that does not hold
#: rulegen's own (relative to the project root), so that ``$schema`` stays inside the project.
PROJECT_SCHEMA = ".rulegen/schema.json"
SPEC_SUFFIXES = (".yaml", ".yml")


def find_spec_files(paths: list[Path]) -> list[Path]:
    """Spec files under ``paths`` (files as given, folders searched recursively), sorted. A
    FIFO, device or socket named like a spec is found too, so loading it reports RG760
    instead of its being passed over in silence (it is never opened).

    Raises:
        RulegenError: a path does not exist, or no spec file was found.
    """
    found: list[Path] = []
    for p in paths:
        if p.is_dir():
            found.extend(sorted(q for q in p.rglob("*") if q.suffix in SPEC_SUFFIXES and q.exists()
                                and not q.is_dir()))
        elif p.exists() and not p.is_dir():
            found.append(p)
        else:
            raise RulegenError(f"{p}: no such file or folder")
    if not found:
        raise RulegenError(f"no spec files (*.yaml) found in {', '.join(str(p) for p in paths)}; "
                           "write one, e.g. rules/<app>.yaml (see rulegen's docs/spec-format.md)")
    return sorted(set(found), key=lambda q: q.as_posix())


def shown_path(f: Path, root: Path | None = None, real_root: Path | None = None) -> str:
    """How findings name spec file ``f``: relative to ``root`` when it is under it, POSIX.
    ``real_root``: ``root.resolve()``, when the caller has it (one resolve a run, not a file)."""
    if root is not None:
        try:
            return f.resolve().relative_to(real_root or root.resolve()).as_posix()
        except ValueError:
            pass
    return f.as_posix()


def load_paths(paths: list[Path], root: Path | None = None) -> list[LoadedFile]:
    """Load every spec file under ``paths``; positions shown relative to ``root`` when possible."""
    return [load_file(f, shown_path(f, root)) for f in find_spec_files(paths)]


def schema_ref(out_dir: Path, root: Path | None = None) -> str:
    """The ``$schema`` reference written at the top of a spec in ``out_dir``, relative to it:
    the packaged schema when it lies inside the project at ``root`` (``../rulegen/spec/schema.json``
    for ``rules/`` in rulegen's own repository), else the project's copy
    (:data:`PROJECT_SCHEMA`, written by ``rulegen import``). Without ``root``, the packaged
    schema."""
    target = SCHEMA_PATH.resolve()
    if root is not None and not target.is_relative_to(root.resolve()):
        target = (root / PROJECT_SCHEMA).resolve()
    try:
        return Path(os.path.relpath(target, out_dir.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return target.as_uri()
