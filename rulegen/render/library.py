"""The chart library: one Helm library chart per project, a subchart of every app chart by a symlink.

``rulegen build`` writes the named templates every app chart needs (``rulegen.v3.*``, from
``templates/helm/_rulegen.tpl`` of rulegen's package) once, as the library chart
``charts/rulegen-library/`` (``Chart.yaml`` with ``type: library``, and
``templates/_rulegen.tpl``), each file with the generated-file notice and listed in the
library's sum file (:mod:`rulegen.render.sums`: a hand edit is refused as for every generated
file). Each app chart gets:

* ``<chart>/charts/rulegen-library``: a relative symlink to the library folder
  (``../../rulegen-library`` for ``charts/<app>``; :func:`link_target`). Helm loads every
  unpacked chart folder under ``charts/`` as a subchart without a ``dependencies:`` entry in
  ``Chart.yaml``, and named templates of subcharts are global, so plain ``helm template
  charts/<app>`` renders from the repository as it is (no ``helm dependency build``); Argo CD
  follows symlinks that stay inside the repository. Helm prints a warning for the link
  ("found symbolic link in path"); :func:`rulegen.tools.helm.without_link_warnings` drops that
  line and keeps the rest of Helm's stderr.
* ``<chart>/templates/prometheusrule.yaml``: the notice and one ``include
  "rulegen.v3.prometheusrule" .`` (the chart's own context is passed, so ``.Files``,
  ``.Values`` and ``.Template.Name`` are the app chart's).

The link is the only symlink rulegen makes, and the only one at that name it accepts: exactly
:func:`link_target`, nothing else (:func:`link_problem`; the validation check RG770 in
:mod:`rulegen.validate.checks.paths`). Every other symlink in a chart is judged as before
(RG742, RG760). A chart of an older rulegen holds its own copy,
``<chart>/templates/_rulegen.tpl``: ``build`` removes it when it is unchanged (the checksum
line an older rulegen wrote into it matches) and refuses when it was edited by hand (:func:`old_copy_path`).
"""

from __future__ import annotations

import os
import posixpath
import stat
from pathlib import Path

#: The library chart's folder, relative to the project root.
LIBRARY_DIR = "charts/rulegen-library"
#: Its name: the folder name, ``Chart.yaml``'s ``name`` and each app chart's link name.
NAME = "rulegen-library"
#: ``Output.source`` of the library's files: not a spec, kept in builds of some specs (each
#: link needs it) and by ``rulegen new``.
SOURCE = "rulegen's templates/helm/"
#: The library's files: (path under LIBRARY_DIR, package file under ``templates/helm/``).
FILES = (("Chart.yaml", "Chart.yaml"), ("templates/_rulegen.tpl", "_rulegen.tpl"))


def link_path(chart_path: str) -> str:
    """Where an app chart's link to the library is: ``<chart>/charts/rulegen-library``."""
    return f"{chart_path.rstrip('/')}/charts/{NAME}"


def link_target(chart_path: str) -> str:
    """The link's text: the library folder relative to the link's folder, POSIX
    (``../../rulegen-library`` for ``charts/<app>``, ``../../../charts/rulegen-library`` for
    ``deploy/<app>``)."""
    return posixpath.relpath(LIBRARY_DIR, f"{chart_path.rstrip('/')}/charts")


def old_copy_path(chart_path: str) -> str:
    """Where an older rulegen copied the library into an app chart:
    ``<chart>/templates/_rulegen.tpl`` (removed by ``build``)."""
    return f"{chart_path.rstrip('/')}/templates/_rulegen.tpl"


def is_library(chart_path: str) -> bool:
    """True when ``chart_path`` (as written, POSIX) is the library folder or inside it."""
    p = chart_path.rstrip("/")
    return p == LIBRARY_DIR or p.startswith(LIBRARY_DIR + "/")


def files() -> list[tuple[str, str]]:
    """(path, text) of the library chart's files."""
    from .helm import package_file
    return [(f"{LIBRARY_DIR}/{rel}", package_file(name)) for rel, name in FILES]


def link_state(root: Path, rel: str) -> tuple[str, str | None]:
    """What is at ``rel`` (relative to ``root``), not following it: ``("missing", None)``,
    ``("link", its text)``, ``("file", its text when it is a short UTF-8 file, else None)``
    (git checks a symlink out as such a file with ``core.symlinks`` false) or
    ``("other", None)`` (a folder, a special file)."""
    p = os.path.join(root, rel)
    try:
        st = os.lstat(p)
    except OSError:  # missing, under a file, under a link loop (ELOOP): nothing Helm would load
        return "missing", None
    if stat.S_ISLNK(st.st_mode):
        try:
            return "link", os.readlink(p)
        except OSError:
            return "other", None
    if stat.S_ISREG(st.st_mode) and st.st_size < 4096:
        from ..fs import read as fs_read
        try:
            return "file", fs_read.read_bytes(p, rel).decode("utf-8")
        except (OSError, UnicodeDecodeError, fs_read.InputRefused):
            return "file", None
    return ("file", None) if stat.S_ISREG(st.st_mode) else ("other", None)


def link_problem(root: Path, chart_path: str) -> str | None:
    """Why ``<chart>/charts/rulegen-library`` under ``root`` is not the link rulegen makes
    (a sentence naming what is there and the fix), or None when it is that link or missing
    (``build`` makes it; ``check`` reports a missing one, :func:`missing_link_message`)."""
    rel, want = link_path(chart_path), link_target(chart_path)
    kind, text = link_state(root, rel)
    if kind == "missing" or (kind == "link" and text == want):
        return None
    if kind == "link":
        return (f"{rel} is a symlink to {text!r}; the only symlink rulegen accepts there is the link to the "
                f"chart library, {want!r}: remove it, and `rulegen build` makes the link")
    if kind == "file" and text is not None and text.strip() == want:
        return (f"{rel} is a file holding {want!r}, not a symlink: git checked the link out as a file "
                "(core.symlinks is false, e.g. on Windows without symlink rights); run "
                "`git config core.symlinks true` and check the file out again (`git checkout -- "
                f"{rel}`), or remove it and run `rulegen build`")
    what = "a file" if kind == "file" else "a folder or special file"
    return (f"{rel} is {what}, not the symlink to the chart library ({want!r}) rulegen makes there: Helm would "
            "load it as a subchart; remove it, and `rulegen build` makes the link")


def missing_link_message(chart_path: str) -> str:
    """The message for a missing link (``check``)."""
    rel, want = link_path(chart_path), link_target(chart_path)
    return (f"{rel} is missing: the chart's template includes rulegen.v3.prometheusrule from the chart "
            f"library, which the chart holds as this symlink to {want!r}; run `rulegen build` (it makes "
            "the link) and commit it")


#: The notice source of an older rulegen's copy of the library in an app chart.
OLD_COPY_SOURCE = "rulegen's templates/helm/_rulegen.tpl"


def is_old_copy(root: Path, chart_path: str) -> bool:
    """True when ``<chart>/templates/_rulegen.tpl`` under ``root`` is an older rulegen's copy
    of the library (its generated-file notice names :data:`OLD_COPY_SOURCE`), which
    ``build`` removes."""
    from ..fs import read as fs_read
    from . import ownership
    p = Path(root, old_copy_path(chart_path))
    if not fs_read.is_regular(p):
        return False
    try:
        return ownership.source_of(fs_read.read_text(p)) == OLD_COPY_SOURCE
    except (OSError, UnicodeDecodeError, fs_read.InputRefused):
        return False


#: The chart library's version (its Chart.yaml; the ``v3`` of the ``rulegen.v3.*`` names).
VERSION = "3.0.0"
_DECLARATION = ("  - name: {name}  # rulegen's chart library: the symlink charts/{name}\n"
                "    version: {version}\n")


def declare(text: str) -> str | None:
    """``text`` of an app chart's ``Chart.yaml`` with the chart library declared in its
    ``dependencies`` (``name: rulegen-library``, no ``repository``: Helm takes the unpacked
    subchart in ``charts/``, and ``helm dependency build`` keeps it), which ``helm lint`` wants
    for every subchart; ``helm template`` renders without it. ``text`` itself when it declares
    it already; the item is added at the end (no ``dependencies`` key) or first in a block
    list, every other line kept as written; None when the file is no YAML mapping or its
    ``dependencies`` is of another shape (rulegen does not rewrite it). Parsed with libyaml
    when PyYAML has it (the same data as ``yaml.safe_load``, a tenth of the time: ``check`` of
    a hundred charts spent 0.13 s here)."""
    import re
    import yaml
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    if not isinstance(data, dict):
        return None
    deps = data.get("dependencies")
    nl = "\r\n" if "\r\n" in text else "\n"
    item = _DECLARATION.format(name=NAME, version=VERSION).replace("\n", nl)
    if isinstance(deps, list) and any(isinstance(d, dict) and d.get("name") == NAME for d in deps):
        return text
    if "dependencies" not in data:
        return text + ("" if text.endswith("\n") or not text else nl) + "dependencies:" + nl + item
    m = re.search(r"^dependencies:[ \t]*(?:#[^\r\n]*)?\r?\n(?P<indent>[ \t]*)- ", text, re.M)
    if not isinstance(deps, list) or m is None:
        return None
    indent = m.group("indent")
    lines = item.splitlines(keepends=True)
    block = "".join(indent + ln[2:] for ln in lines)
    at = m.start("indent")
    return text[:at] + block + text[at:]
