"""The project at a Git ref, read without checking it out: ``git ls-tree`` lists files,
``git show REF:./<path>`` reads them (run in the project root, so paths are relative to it even
in a subfolder of the repository). Used by ``rulegen diff`` (:mod:`rulegen.gitops.diff`) and
the policy comparison of ``diff`` and ``check --base`` (:mod:`rulegen.gitops.policy`).

Every function raises :class:`rulegen.findings.RulegenError` when git fails (not installed, not
a work tree, no such ref).
"""

from __future__ import annotations

from pathlib import Path

from .. import baseline
from ..findings import RulegenError
from ..spec import load_text
from ..tools import find, process
from ..validate import Context, validate

#: The folder of the specs, relative to the project root.
SPEC_DIR = "rules"


def _git_program(root: Path) -> str:
    """git from ``PATH``, never from the project (:func:`rulegen.tools.find.system_program`:
    an empty, relative or in-project ``PATH`` entry is skipped)."""
    git = find.system_program("git", root)
    if git is None:
        raise RulegenError("git is not installed; rulegen diff reads the base specs with git")
    return git


def _git(root: Path, *args: str) -> str:
    try:
        proc = process.run([_git_program(root), *args], cwd=root, timeout=60)
    except FileNotFoundError:
        raise RulegenError("git is not installed; rulegen diff reads the base specs with git") from None
    if proc.returncode != 0:
        raise RulegenError(f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout


def verify_ref(root: Path, ref: str) -> None:
    """Check that ``ref`` names a commit of the Git repository holding ``root``.

    Raises:
        RulegenError: ``root`` is not in a Git work tree (git's message) or no commit is named
            ``ref``.
    """
    try:
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
    except RulegenError:
        _git(root, "rev-parse", "--show-toplevel")  # not a Git work tree: git says so
        raise RulegenError(f"no commit named {ref!r} in this repository (try HEAD, main or a SHA)") from None


def base_file(root: Path, ref: str, name: str) -> str | None:
    """The text of file ``name`` (relative to ``root``) at Git ``ref``, or None when ``ref``
    has no such file.

    Raises:
        RulegenError: git failed (the file is not UTF-8 text, say).
    """
    if not _git(root, "ls-tree", "--name-only", ref, "--", name).strip():
        return None
    return _git(root, "show", f"{ref}:./{name}")


def load_base(root: Path, ref: str, config=None):
    """Validated specs of ``rules/`` at Git ``ref`` and the findings about them.

    Returns:
        (specs, findings, n_files).
    Raises:
        RulegenError: ``root`` is not in a Git work tree or ``ref`` does not name a commit.
    """
    verify_ref(root, ref)
    result, n_files = validate_base(root, ref, config)
    return result.specs, _baselined(root, ref, result), n_files


def validate_base(root: Path, ref: str, config=None, only=None):
    """(validation result, number of spec files) of the specs under ``rules/`` at Git ``ref``
    (read with ``git show``), checked with ``config`` (default: rulegen's defaults; no routing
    through the working tree's Alertmanager configuration), no
    baseline applied. ``only``: a set of paths (relative to ``root``) to read, the others left
    out; None: all.

    Raises:
        RulegenError: git failed.
    """
    names = [n for n in _git(root, "ls-tree", "-r", "--name-only", ref, "--", SPEC_DIR).splitlines()
             if n.endswith((".yaml", ".yml")) and (only is None or n in only)]
    files = [load_text(_git(root, "show", f"{ref}:./{n}"), n) for n in sorted(names)]
    ctx = Context(config=config, root=root, at_ref=True) if config is not None else Context(root=root, at_ref=True)
    return validate(files, ctx), len(files)


def _baselined(root: Path, ref: str, result) -> list:
    """The findings of ``result`` (the specs at ``ref``) with the baseline file at ``ref``
    applied, as ``validate`` applies the working tree's (:func:`rulegen.baseline.apply`):
    a baselined policy finding is a warning there, not an error. An unreadable baseline file
    at ``ref`` leaves the findings as they are."""
    text = base_file(root, ref, baseline.BASELINE_FILE)
    if text is None:
        return result.findings
    try:
        base_line = baseline.parse(text)
    except RulegenError:
        return result.findings
    app_of = {s.file: s.app for s in result.specs}
    return baseline.apply(result.findings, base_line, app_of, False)
