"""What Helm renders from an app chart's ``charts/`` folder besides the chart library (RG776).

Helm's chart loader takes every entry directly under a chart's ``charts/`` folder as a subchart
and renders its templates into the same release, whether or not ``Chart.yaml`` lists it under
``dependencies`` (a listed one that is missing fails the render; an unlisted one is rendered
all the same). The loader's rules, as the pinned ``helm`` (v3) applies them:

* an entry whose name starts with ``_`` or ``.`` is skipped;
* a file ending in ``.prov`` is a provenance file, kept as a chart file, not rendered;
* a file ending in ``.tgz`` (that case exactly) is a chart archive: its first folder holds the
  subchart, ``<folder>/Chart.yaml`` its metadata;
* every other entry is an unpacked chart: a folder with ``Chart.yaml``; a file, or a folder
  without ``Chart.yaml``, fails the render ("error unpacking subchart ...: Chart.yaml file is
  missing"); an empty folder holds no file and is skipped;
* symlinks are followed (with a warning, "found symbolic link in path");
* a subchart is *declared* when a ``dependencies`` item of the parent's ``Chart.yaml`` (or,
  for an ``apiVersion: v1`` chart, its ``requirements.yaml``) has the subchart's own
  ``Chart.yaml`` ``name`` (``helm dependency``'s rule: "the name must match the name in that
  chart's Chart.yaml"; the folder or archive name does not count, the version is not compared
  here).

:func:`entry_problems` judges one app chart's entries by these rules: rulegen's own link
``charts/rulegen-library`` is RG770's (:mod:`rulegen.render.library`), every other entry Helm
would render is a problem unless it is a declared subchart; a symlink into another app's chart
(or to the chart library by another name) is a problem even when declared, and so is a
symlink into another app's chart inside a declared folder (its ``templates`` linked there).
A declared folder that is a copy of another app's chart is not recognised. The
``.helmignore`` file is not read (an entry it hides from Helm is still reported).
"""

from __future__ import annotations

import io
import os
import stat
from dataclasses import dataclass
from pathlib import Path

from . import library

#: Largest ``Chart.yaml`` read from a subchart or an archive, in bytes.
MAX_CHART_YAML = 1 << 20
#: Largest archive read, in bytes, and most archive members looked at before Chart.yaml.
MAX_ARCHIVE = 32 << 20
MAX_MEMBERS = 10_000
#: Most bytes unpacked from an archive before its Chart.yaml is found (Helm's own limit for a
#: whole chart is 100 MiB).
MAX_UNPACKED = 100 << 20


@dataclass(frozen=True)
class Problem:
    """One entry of an app chart's ``charts/`` folder Helm would render without a declaration.

    Attributes:
        path: the entry, relative to the project root (POSIX), e.g. ``charts/shop/charts/zz``.
        message: what it is, why it matters and the fix, one sentence (no code, no path prefix).
    """

    path: str
    message: str


def _loads_yaml(data: bytes, shown: str):
    """The YAML mapping in ``data`` (aliases bounded), or None when it is none."""
    from ..fs import yamlbound
    from ..fs.read import InputRefused
    import yaml
    try:
        doc = yamlbound.safe_load(data.decode("utf-8"), shown)
    except (UnicodeDecodeError, yaml.YAMLError, InputRefused, RecursionError):
        return None
    return doc if isinstance(doc, dict) else None


def _read(path: str, shown: str, limit: int, root: Path | None = None) -> bytes | None:
    """The bytes of regular file ``path`` (links followed) within ``limit``, else None; None
    too when its real path is outside ``root`` (RG742 reports such a link; nothing is read)."""
    from ..fs import read as fs_read
    if root is not None and not _inside(os.path.realpath(path), os.path.realpath(root)):
        return None
    try:
        return fs_read.read_bytes(path, shown, limit)
    except (OSError, fs_read.InputRefused):
        return None


def declared_names(root: Path, chart: str) -> set[str]:
    """The ``name`` of each ``dependencies`` item of ``<chart>/Chart.yaml`` and
    ``<chart>/requirements.yaml`` under ``root`` (strings only; an unreadable file adds
    none), less the chart library's (its link is judged by RG770 alone)."""
    names: set[str] = set()
    for file in ("Chart.yaml", "requirements.yaml"):
        rel = f"{chart}/{file}"
        data = _read(os.path.join(root, rel), rel, MAX_CHART_YAML, root)
        doc = _loads_yaml(data, rel) if data is not None else None
        deps = doc.get("dependencies") if doc else None
        for dep in deps if isinstance(deps, list) else ():
            if isinstance(dep, dict) and isinstance(dep.get("name"), str):
                names.add(dep["name"])
    names.discard(library.NAME)
    return names


def _chart_name(doc) -> str | None:
    name = doc.get("name") if doc else None
    return name if isinstance(name, str) and name else None


def archive_chart_name(path: str, shown: str, root: Path | None = None) -> tuple[str | None, str | None]:
    """``(name, None)``: the ``name`` in the Chart.yaml of the chart archive at ``path``
    (``<first folder>/Chart.yaml``, as Helm reads a ``.tgz``); ``(None, why)`` when it is
    not a readable gzipped tar holding one (within :data:`MAX_ARCHIVE` bytes and
    :data:`MAX_MEMBERS` members and :data:`MAX_UNPACKED` unpacked bytes, and inside ``root`` when given)."""
    import tarfile  # only a chart archive needs it (and its compression modules)
    data = _read(path, shown, MAX_ARCHIVE, root)
    if data is None:
        return None, f"it is not a regular file of at most {MAX_ARCHIVE >> 20} MiB"
    try:
        # not the stream mode "r|gz": it refuses the gzip header Helm writes (FEXTRA, FCOMMENT)
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
            for _ in range(MAX_MEMBERS):
                member = tar.next()
                if member is None:
                    break
                parts = member.name.replace("\\", "/").split("/")
                if len(parts) == 2 and parts[1] == "Chart.yaml" and member.isreg() \
                        and member.size <= MAX_CHART_YAML:
                    f = tar.extractfile(member)
                    name = _chart_name(_loads_yaml(f.read() if f else b"", f"{shown}:{member.name}"))
                    return (name, None) if name else (None, f"its {member.name} names no chart")
                if member.offset_data + member.size > MAX_UNPACKED:
                    return None, f"it unpacks to more than {MAX_UNPACKED} bytes before its Chart.yaml"
    except (tarfile.TarError, OSError, EOFError, ValueError) as e:
        return None, f"it is no gzipped tar archive ({e})"
    return None, "it holds no <chart>/Chart.yaml"


def _folder_name(path: str, shown: str, root: Path) -> str | None:
    """The ``name`` in ``<path>/Chart.yaml`` (inside ``root``), or None."""
    data = _read(os.path.join(path, "Chart.yaml"), f"{shown}/Chart.yaml", MAX_CHART_YAML, root)
    return _chart_name(_loads_yaml(data, f"{shown}/Chart.yaml")) if data is not None else None


def _inside(real: str, folder: str) -> bool:
    return real == folder or real.startswith(folder.rstrip(os.sep) + os.sep)


def entry_problems(root: Path, chart: str, other_charts: dict[str, str] | None = None,
                   skip: frozenset | set = frozenset()) -> list[Problem]:
    """What under ``<chart>/charts/`` (``chart`` relative to ``root``, POSIX, no trailing
    ``/``) Helm would render into the chart's release that the chart does not declare: one
    :class:`Problem` per entry, in name order; for a declared folder, its first symlink into
    another app's chart (at that link's path).

    Args:
        root: the project root.
        chart: the app chart's folder.
        other_charts: the other app charts of the project, ``{chart folder: app}``; a symlink
            into one of them is a problem even when declared (that app's alerts twice).
        skip: entry paths already reported otherwise (RG742 a link leading outside, RG760 a
            special file), left out.

    Returns:
        Empty when ``<chart>/charts`` is missing, or holds only the library link, entries
        Helm skips (``_x``, ``.x``, ``*.prov``, empty folders) and declared subcharts. A
        ``<chart>/charts`` that is itself a symlink is one problem at that path.
    """
    from ..fs.containment import escaping_link
    top = f"{chart}/charts"
    here = os.path.join(root, top)
    if escaping_link(root, top) is not None:
        return []  # RG742: nothing is read through it
    try:
        st = os.lstat(here)
    except OSError:
        return []
    if stat.S_ISLNK(st.st_mode):
        if top in skip:
            return []
        return [Problem(top, f"{top} is a symlink to {os.readlink(here)!r}: Helm renders every chart in the folder "
                        "it leads to into this chart's release (another chart's subcharts, its alerts a second "
                        "time); rulegen makes charts/ a folder holding only the link to the chart library: "
                        f"replace the link with a folder, and `rulegen build` makes the library link in it")]
    if not stat.S_ISDIR(st.st_mode):
        return []
    try:
        names = sorted(os.listdir(here))
    except OSError:
        return []
    if all(n == library.NAME or n.startswith(("_", ".")) for n in names):
        return []  # the usual case: only the library link (nothing else is read)
    declared = declared_names(root, chart)
    others = {os.path.realpath(os.path.join(root, c)): (c, app) for c, app in (other_charts or {}).items()}
    lib_real = os.path.realpath(os.path.join(root, library.LIBRARY_DIR))
    root_real = os.path.realpath(root)
    out: list[Problem] = []
    for name in names:
        rel = f"{top}/{name}"
        if name == library.NAME or name.startswith(("_", ".")) or rel in skip:
            continue
        p = os.path.join(here, name)
        try:
            lst = os.lstat(p)
        except OSError:
            continue
        is_link = stat.S_ISLNK(lst.st_mode)
        what = ""
        if is_link:
            target = os.readlink(p)
            real = os.path.realpath(p)
            if not _inside(real, root_real):
                continue  # RG742 (a link leading outside the project): nothing is read through it
            hit = next((v for k, v in others.items() if _inside(real, k)), None)
            if hit is not None:
                out.append(Problem(rel, f"{rel} is a symlink to {target!r}, into the chart of app {hit[1]} "
                                        f"({hit[0]}): Helm renders every subchart under {top}/ into this chart's "
                                        f"release, so {hit[1]}'s alerts would be deployed a second time (duplicate "
                                        "pages) and its objects with them, from a pull request that changes no spec "
                                        f"of {hit[1]}; remove the link (each app's alerts come from its own chart)"))
                continue
            if _inside(real, lib_real):
                out.append(Problem(rel, f"{rel} is a symlink to {target!r}, the chart library under another name: "
                                        f"Helm renders it a second time into the release; the chart links the "
                                        f"library once, as {top}/{library.NAME}: remove it"))
                continue
            what = f"a symlink to {target!r}, "
        try:
            st = os.stat(p)
        except OSError:
            out.append(Problem(rel, f"{rel} is {what or 'a symlink, '}leading nowhere; Helm loads every entry "
                                    f"under {top}/ as a subchart and fails on it: remove it"))
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                empty = not os.listdir(p)
            except OSError:
                empty = False
            if empty:
                continue  # no file: Helm loads nothing from it
            if name.endswith(".tgz"):
                out.append(Problem(rel, f"{rel} is {what}a folder named like a chart archive; Helm loads every "
                                        f"*.tgz under {top}/ as an archive and fails on a folder: remove it"))
                continue
            sub = _folder_name(p, rel, root)
            if sub is None:
                out.append(Problem(rel, f"{rel} is {what}a folder without a readable Chart.yaml naming a chart, "
                                        f"under {top}/, where Helm loads every entry as a subchart (`helm template` "
                                        "fails: \"Chart.yaml file is missing\"); remove it (files the templates "
                                        "read belong elsewhere in the chart, e.g. files/)"))
            elif sub not in declared:
                out.append(Problem(rel, _undeclared(rel, chart, what + "a folder", sub)))
            else:
                inner = _link_into(p, rel, others)
                if inner is not None:
                    path, target, (c, app) = inner
                    out.append(Problem(path, f"{path} is a symlink to {target!r}, into the chart of app {app} ({c}), "
                                             f"inside the subchart {rel} Helm renders into this chart's release: "
                                             f"{app}'s templates and rules would be deployed a second time (duplicate "
                                             f"pages); remove the link (each app's alerts come from its own chart)"))
            continue
        if not stat.S_ISREG(st.st_mode):
            continue  # a special file: RG760
        if name.endswith(".prov"):
            continue  # provenance: a chart file, not a subchart
        if name.endswith(".tgz"):
            sub, why = archive_chart_name(p, rel, root)
            if sub is None:
                out.append(Problem(rel, f"{rel} is {what}a .tgz rulegen cannot read as a chart archive ({why}); "
                                        f"Helm loads every .tgz under {top}/ as a subchart of the release: remove "
                                        "it, or replace it with the archive `helm dependency build` fetches for a "
                                        "dependency Chart.yaml declares"))
            elif sub not in declared:
                out.append(Problem(rel, _undeclared(rel, chart, what + "a chart archive", sub)))
            continue
        out.append(Problem(rel, f"{rel} is {what}a file under {top}/, where Helm loads every entry as a subchart "
                                "(`helm template` fails: \"Chart.yaml file is missing\"); remove it (files the "
                                "templates read belong elsewhere in the chart, e.g. files/)"))
    return out


#: Most entries of a declared subchart folder looked at by :func:`_link_into`.
MAX_WALK = 10_000


def _link_into(folder: str, shown: str, others: dict) -> tuple[str, str, tuple] | None:
    """``(path as shown, link text, (chart, app))`` of the first symlink (in name order) below
    ``folder`` whose real path is inside one of ``others`` (``{real chart folder: (chart,
    app)}``); the walk follows no link and stops after :data:`MAX_WALK` entries. None when
    there is none."""
    seen = 0
    for here, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(dirs + files):
            seen += 1
            if seen > MAX_WALK:
                return None
            q = os.path.join(here, name)
            if os.path.islink(q):
                real = os.path.realpath(q)
                hit = next((v for k, v in others.items() if _inside(real, k)), None)
                if hit is not None:
                    rel = os.path.relpath(q, folder).replace(os.sep, "/")
                    return f"{shown}/{rel}", os.readlink(q), hit
    return None


def _undeclared(rel: str, chart: str, what: str, name: str) -> str:
    if name == library.NAME:
        return (f"{rel} is {what} holding the chart library ({name!r}), which Helm renders into this chart's "
                f"release a second time; the chart holds the library once, as the link {chart}/charts/{name} "
                "`rulegen build` makes: remove it")
    return (f"{rel} is {what} Helm renders into this chart's release as the subchart {name!r}, which "
            f"{chart}/Chart.yaml does not declare among its dependencies: its templates deploy objects no spec "
            "declares (a PrometheusRule among them means alerts twice, duplicate pages) and `rulegen check` "
            "never sees them; remove it, or, when it is the team's own subchart, declare it in Chart.yaml "
            f"(`- name: {name}` with its version under `dependencies:`)")
