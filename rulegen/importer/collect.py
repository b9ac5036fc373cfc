"""Reading the sources of an import into rule sets and giving each set its app name."""

from __future__ import annotations

import os
from pathlib import Path

from ruamel.yaml.comments import CommentedMap

from ..findings import Finding, RulegenError, Severity
from ..fs.containment import refuse_tree
from . import chart
from .naming import Source, assign_names, dns_label, with_suffix
from .sources import RuleSet, read_source

SUFFIXES = (".yaml", ".yml")


def expand(paths: list[Path]) -> list[Path]:
    """Files under ``paths`` (folders searched recursively for *.yaml/*.yml; in a chart
    folder only ``templates/``), in order.

    Raises:
        RulegenError: a path does not exist, or a folder holds no YAML file.
    """
    out: list[Path] = []
    for p in paths:
        if p.is_dir():
            # a chart: only its templates hold resources (Chart.yaml, values.yaml do not)
            base = p / "templates" if (p / "Chart.yaml").is_file() and (p / "templates").is_dir() else p
            found = sorted(q for q in base.rglob("*") if q.suffix in SUFFIXES and q.is_file()
                           and not (q.name in ("Chart.yaml", "values.yaml") and (q.parent / "Chart.yaml").is_file()))
            if not found:
                raise RulegenError(f"{p}: no *.yaml or *.yml file in this folder")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise RulegenError(f"{p}: no such file or folder")
    seen = set()
    return [q for q in out if not (q.resolve() in seen or seen.add(q.resolve()))]


def _refuse_unsafe_source(p: Path, project: Path | None) -> None:
    """:func:`rulegen.fs.containment.refuse_tree` on import source ``p`` (file or folder): within
    ``project`` when ``p`` lies in it, else within ``p`` itself (a folder) or its folder."""
    if project is not None and Path(os.path.abspath(p)).is_relative_to(os.path.abspath(project)):
        refuse_tree(project, Path(os.path.relpath(p, project)).as_posix(), "import source")
    elif p.is_dir() and not p.is_symlink():
        refuse_tree(p, ".", f"import source {p}")
    else:
        refuse_tree(p.parent, p.name, "import source")


def _naming_source(rs: RuleSet) -> Source:
    return Source(key=f"{rs.source}#{dns_label(rs.app_hint)}", hint=rs.app_hint, folders=rs.folders)


def _assign_apps(sets: list[RuleSet], app: str | None, variant: str | None = None) -> dict[str, list[RuleSet]]:
    """Rule sets per app name (see :mod:`.naming`); ``app`` puts them all into one;
    ``variant`` ends every derived name with ``-<variant>``."""
    if app:
        return {app: list(sets)}
    names = assign_names([_naming_source(rs) for rs in sets])
    if variant:
        names = with_suffix(names, variant)
    out: dict[str, list[RuleSet]] = {}
    for rs in sets:
        out.setdefault(names[_naming_source(rs).key], []).append(rs)
    return out


def _unreleased(path: Path, sets: list[RuleSet]) -> list[Finding]:
    """Name the rule sets of a file of ``helm template`` output as the chart's own import does
    (:func:`.chart.as_chart_named`): the release name Helm put into the PrometheusRule names
    (the app names) and the group names is replaced by the chart's name, with an RG808 note
    per group renamed, since the spec's group name is written as it is into every release."""
    release, chart_name = chart.release_and_chart(path, sets)
    notes: list[Finding] = []
    if not release or not chart_name:
        return notes
    for rs in sets:
        rs.app_hint = chart.as_chart_named(rs.app_hint, release, chart_name)
        for g in rs.groups:
            name = g.get("name") if isinstance(g, CommentedMap) else None
            if not isinstance(name, str) or chart.as_chart_named(name, release, chart_name) == name:
                continue
            g["name"] = new = chart.as_chart_named(name, release, chart_name)
            notes.append(Finding(rs.source, max(1, g.lc.key("name")[0] + 1), 1, "RG808", Severity.WARNING,
                                 f"group `{name}` is named `{new}`: the release name `{release}` Helm rendered into "
                                 f"it is the chart's name `{chart_name}` here, as importing the chart names it (the "
                                 "spec's group name is the same in every release)", name))
    return notes


def _read_sets(paths: list[Path], render: chart.RenderOptions | None, display_base: Path | None,
               notes_out: list[Finding]) -> list[RuleSet]:
    """The rule sets of ``paths`` (see :func:`rulegen.importer.build.import_paths`); the notes
    of reading them go to ``notes_out``."""
    sets: list[RuleSet] = []

    def shown_of(f: Path) -> str:
        if display_base is not None:
            try:
                return f.resolve().relative_to(display_base.resolve()).as_posix()
            except ValueError:
                pass
        return f.as_posix()

    rendered = [p for p in paths if render is not None and not render.static and chart.is_chart(p)]
    for c in rendered:
        text = chart.render(c, render, display_base)
        of_chart: list[RuleSet] = []
        for shown, doc in chart.documents(text, shown_of(c)):
            found, notes = read_source(c / "Chart.yaml", shown, rendered=doc)
            of_chart.extend(found)
            notes_out.extend(notes)
        chart.strip_common_prefix(of_chart)
        sets.extend(of_chart)
    release = (render.release, render.namespace, tuple(str(v) for v in render.values), tuple(render.set_values)) \
        if render is not None else (None, "default", (), ())
    seen: set = set()
    for p in paths:
        if p in rendered:
            continue
        of_path: list[RuleSet] = []
        for f in expand([p]):
            if f.resolve() in seen:
                continue
            seen.add(f.resolve())
            found, notes = read_source(f, shown_of(f), release=release)
            if not chart.is_chart(p) and chart.helm_rendered(f, found):
                # `helm template` output saved to a file: named as importing the chart names it
                notes.extend(_unreleased(f, found))
                chart.strip_common_prefix(found)
            of_path.extend(found)
            notes_out.extend(notes)
        if chart.is_chart(p):
            chart.strip_common_prefix(of_path)
        sets.extend(of_path)
    return sets
