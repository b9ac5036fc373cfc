"""Containment: every path rulegen reads or writes for a project stays inside the project.

Specs arrive in pull requests from many teams and CI runs rulegen on them, so a path a spec,
the project config or a command-line option can set (``chart.path``, ``chart.template``,
``rulegen import --out``...) is checked twice:

1. *as written* (:func:`lexical_problem`): relative, POSIX ``/`` separators, no ``..``
   segment, no ``.`` or empty segment, each segment made of letters, digits, ``.``, ``_`` and
   ``-``, not starting with ``-`` (it would read as an option to ``helm``) or ``.`` (no
   hidden folders such as ``.git``), so the text
   names one folder only, the same one for every reader (duplicate checks compare paths as
   text);
2. *on the disk* (:func:`escaping_link`): no component of the path is a symlink whose real
   path (links followed, dangling ones included, as :func:`os.path.realpath` resolves them)
   is outside the project root. Git stores symlinks, so a pull request can add one.

Validation reports these (``RG740``-``RG744``, :mod:`rulegen.validate.checks.paths`) with
``file:line:col``, before ``build``, ``check`` or ``test`` read or write anything there.
What Helm and promtool read is not a fixed list of paths (a template reads any chart file
with ``.Files.Get``), so every file and folder of a chart, of ``rules/`` and of what
``import`` reads is checked too (:func:`tree_problems`): no symlink leading outside the
project (``RG742``) and no special file (``RG760``: a FIFO hangs its reader, a device or
``/proc`` file is not the chart's data);
:func:`rulegen.fs.write.write_all` checks every output path again just before it writes
(``RG747``), so a link made after validation still stops the build before its first write.
These codes cannot be switched off or downgraded in ``.rulegen.yaml`` (:data:`LOCKED_CODES`).
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from ..findings import RulegenError

#: Codes that guard the project's boundary: ``checks.disable`` and ``checks.severity`` in
#: ``.rulegen.yaml`` may not name them (see :mod:`rulegen.config`).
LOCKED_CODES = frozenset({"RG740", "RG741", "RG742", "RG743", "RG744", "RG745", "RG746", "RG747", "RG749",
                          "RG514", "RG721",  # what reaches a reader's terminal or browser
                          "RG760", "RG761",
                          "RG770", "RG771", "RG773",  # the chart library's link, folder and files
                          "RG776",  # what else Helm renders from a chart's charts/
                          "RG777"})  # the sum files' folder

_SEGMENT = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")
_DRIVE = re.compile(r"^[A-Za-z]:")


def lexical_problem(rel: str) -> tuple[str, str] | None:
    """Why ``rel`` (a path as written in a spec, the config or an option) may not name a place
    inside the project, judged on the text alone; None when it is a plain relative path.

    Returns:
        ``(code, reason)``: ``RG740`` absolute (``/x``, ``\\x``, ``C:x``, ``~/x``), ``RG741``
        a ``..`` segment, ``RG743`` anything else that is not a plain relative POSIX path
        (empty, ``.`` or empty segments, a trailing ``/``, a backslash, a control character,
        other characters than letters, digits, ``.``, ``_``, ``-``, a segment starting with
        ``-`` or ``.``). ``reason`` is a clause such as "is an absolute path".
    """
    if not isinstance(rel, str) or rel == "":
        return "RG743", "is empty"
    if rel.startswith(("/", "\\", "~")) or _DRIVE.match(rel):
        return "RG740", "is an absolute path"
    parts = rel.replace("\\", "/").split("/")
    if ".." in parts:
        return "RG741", "has a `..` segment, which leads out of the folder it is in"
    if "\\" in rel:
        return "RG743", "uses `\\`; separate folders with `/`"
    for part in parts:
        if part in ("", "."):
            return "RG743", "has an empty or `.` segment (`//`, `./`, a trailing `/`)"
        if not _SEGMENT.fullmatch(part):
            bad = next((c for c in part if not re.match(r"[A-Za-z0-9_.-]", c)), part[0])
            return "RG743", (f"has the segment {part!r}: use letters, digits, `.`, `_` and `-` "
                             f"only, not starting with `-` or `.` (found {bad!r})")
    return None


def _real(p) -> Path:
    return Path(os.path.realpath(p))


def escaping_link(root: Path, rel: str, seen: dict | None = None) -> tuple[str, str] | None:
    """The first symlink on ``rel`` (relative to ``root``) whose real path is outside ``root``.

    Each component is looked at in turn, from ``root`` down, whether or not the rest of the
    path exists yet (a folder ``build`` would create under a link is outside too). ``seen``:
    a dict to share between calls on the same ``root`` (many paths share their folders), so
    each component is looked at once.

    Returns:
        ``(link, target)``: the link as a POSIX path relative to ``root`` and where it points
        (its ``readlink`` text), or ``(rel, real path)`` when ``rel`` leaves ``root`` without
        a link (a ``..``); None when the whole path stays inside.
    """
    seen = {} if seen is None else seen
    top = seen.get("")
    if top is None:
        top = seen[""] = _real(root)
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    prefix = ""
    for part in parts:
        prefix = f"{prefix}/{part}" if prefix else part
        if part == "..":
            break  # judged on the real path below
        known = seen.get(prefix, False)
        if known is False:
            known = seen[prefix] = _look(root, prefix, top)
        if known is None:
            break  # missing: nothing below it can be a link yet
        if known != "":
            return known
    if ".." in parts and not _real(Path(root) / rel).is_relative_to(top):
        return rel, str(_real(Path(root) / rel))
    return None


def _look(root, prefix: str, top: Path):
    """For :func:`escaping_link`: None when ``root/prefix`` does not exist, ``(prefix,
    target)`` when it is a symlink leading outside ``top``, else ``""``."""
    here = os.path.join(root, prefix)
    try:
        st = os.lstat(here)
    except OSError:  # missing, under a file, a symlink loop (ELOOP), too long: nothing to follow
        return None
    if not stat.S_ISLNK(st.st_mode) or _real(here).is_relative_to(top):
        return ""
    try:
        target = os.readlink(here)
    except OSError:
        target = str(_real(here))
    return prefix, target


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"))


def _special(mode: int) -> str | None:
    return next((what for test, what in _KINDS if test(mode)), None)


_GIT = ".git"
#: RG742 details of :func:`tree_problems` for a path that stays inside the project but must
#: not be read: git's own folder (``.git/config`` can hold the CI job's credentials, e.g.
#: ``http.extraheader``), and a link to a folder above itself (an endless tree to a reader
#: that follows links).
GIT_META = "git's own folder .git (its config can hold the CI job's credentials)"
LOOP = "a folder above itself (an endless loop to Helm and to every reader that follows links)"


def tree_problems(root: Path, rel: str, limit: int = 100, seen: dict | None = None) -> list[tuple[str, str, str]]:
    """What makes file or folder ``rel`` (relative to ``root``) unsafe to hand to a reader that
    follows links and reads whatever it finds (Helm's ``.Files.Get``, promtool, ``import``):
    ``rel`` itself and, for a folder, every file and folder below it, links to folders
    inside the project followed as such a reader follows them (each real folder once). At most ``limit`` problems, in walk order (sorted names).

    Returns:
        ``(code, path relative to root (POSIX), detail)`` each: ``RG742`` a symlink on the
        way to ``rel`` or below it whose real path is outside ``root`` (detail: where it
        points), or a file or folder below it (a symlink, or reached through one) whose real
        path is in git's own folder ``.git`` (detail :data:`GIT_META`), or a symlink to a
        folder above itself (detail :data:`LOOP`); ``RG760`` a FIFO, socket or device, or a link to one (detail: which). Empty
        when ``rel`` is missing or safe.

    ``seen``: as for :func:`escaping_link`, a dict shared between calls on the same ``root``
    within one run (the project's real path and the folders on the way are looked at once).
    """
    seen = {} if seen is None else seen
    link = escaping_link(root, rel, seen)
    if link is not None:
        return [("RG742", link[0], link[1])]
    top = seen[""]
    out: list[tuple[str, str, str]] = []
    walked: set = set()  # real folders already walked (links may reach one twice)

    def look(path: str) -> bool:
        """Record a problem of one entry; True when it is a folder to walk into (a real one,
        or one a link inside the project leads to: Helm and ``test``'s copy follow links)."""
        try:
            st = os.lstat(path)
        except OSError:
            return False
        shown = Path(os.path.relpath(path, root)).as_posix()
        real = _real(path)
        if not real.is_relative_to(top):
            if stat.S_ISLNK(st.st_mode):
                try:
                    target = os.readlink(path)
                except OSError:
                    target = str(real)
                out.append(("RG742", shown, target))
            return False
        if _GIT in real.relative_to(top).parts:
            out.append(("RG742", shown, GIT_META))
            return False
        if stat.S_ISLNK(st.st_mode):
            try:
                st = os.stat(path)
            except OSError:  # dangling inside the project, or a loop: nothing to read
                return False
            if stat.S_ISDIR(st.st_mode) and _real(os.path.dirname(path)).is_relative_to(real):
                out.append(("RG742", shown, LOOP))
                return False
            what = _special(st.st_mode)
            if what is not None:
                out.append(("RG760", shown, f"a symlink to {what}"))
        else:
            what = _special(st.st_mode)
            if what is not None:
                out.append(("RG760", shown, what))
        if not stat.S_ISDIR(st.st_mode) or real in walked:
            return False
        walked.add(real)
        return True

    start = os.path.join(root, rel)
    if os.path.islink(start):  # a link to another place in the project: walk that place
        start = str(_real(start))
    if not look(start):
        return out[:limit]
    stack = [start]
    while stack and len(out) < limit:
        folder = stack.pop()
        try:
            names = sorted(os.listdir(folder))
        except OSError:
            continue
        below = []
        for name in names:
            p = os.path.join(folder, name)
            if look(p):
                below.append(p)
        stack.extend(reversed(below))
    return out[:limit]


def refuse_tree(root: Path, rel: str, what: str) -> None:
    """Raise unless :func:`tree_problems` finds nothing under ``rel`` of ``root``; for the
    commands that hand a folder to Helm or read it (``test``, ``import``) as a last guard.

    Raises:
        rulegen.findings.RulegenError: ``"<CODE> <path> ..."`` naming every problem.
    """
    problems = tree_problems(root, rel)
    if problems:
        where = what if rel in ("", ".") else f"{what} {rel}"
        raise RulegenError(f"{where} holds files rulegen will not read (nothing was read or run): "
                           + "; ".join(describe(*p) for p in problems))


def describe(code: str, path: str, detail: str) -> str:
    """One :func:`tree_problems` entry as text: ``"RG742 a/b is a symlink to /etc, outside
    the project"``."""
    if code == "RG742" and detail in (GIT_META, LOOP):
        return f"RG742 {path} leads into {detail}" if detail == GIT_META else f"RG742 {path} is a symlink to {detail}"
    if code == "RG742":
        return f"RG742 {path} is a symlink to {detail}, outside the project"
    return f"{code} {path} is {detail}, not a regular file"


def refuse_link_out(root: Path, rel: str) -> None:
    """Raise unless file ``rel`` of ``root`` (the project's ``.rulegen.yaml``, its baseline)
    stays inside the project: a pull request can commit it as a symlink to a file elsewhere
    (a credentials file, ``/proc/self/environ``), whose text an error message would quote.

    Raises:
        rulegen.findings.RulegenError: ``"RG742 <rel> is a symlink to <target>, outside the
            project; ..."`` (or leads into ``.git``; ``RG760``: a special file).
    """
    problem = first_problem(root, rel)
    if problem is not None:
        raise RulegenError(f"{problem}; {rel} was not read: make it a regular file of the project")


def first_problem(root: Path, rel: str) -> str | None:
    """Why file ``rel`` of ``root`` must not be read (:func:`describe` of the first
    :func:`tree_problems` entry: a symlink leading out, a link into ``.git``, a special file),
    or None. For every file a path in ``.rulegen.yaml`` names (a pull request sets it)."""
    found = tree_problems(root, rel, limit=1)
    return describe(*found[0]) if found else None


def refuse_outside(root: Path, rel: str, what: str) -> None:
    """Raise unless ``rel`` is a plain relative path that stays inside ``root``.

    For paths given on the command line or in the project config (``rulegen import --out``):
    the same rules as the spec's paths, reported as a usage error.

    Raises:
        rulegen.findings.RulegenError: ``"<CODE> <what> <rel> <reason>; ..."``.
    """
    problem = lexical_problem(rel)
    if problem is not None:
        code, reason = problem
        raise RulegenError(f"{code} {what} {rel!r} {reason}; give a folder inside the project, "
                           "relative to its root (nothing was written)")
    link = escaping_link(root, rel)
    if link is not None:
        raise RulegenError(f"RG742 {what} {rel!r} leads outside the project through the symlink "
                           f"{link[0]} -> {link[1]}; replace the link with a folder (nothing was written)")
