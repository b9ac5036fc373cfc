"""Specs made from the rule sets of an import: converted, checked against the spec schema and
written as text, with where each node came from (:func:`import_paths`)."""

from __future__ import annotations

from pathlib import Path

from ruamel.yaml.comments import CommentedMap, CommentedSeq

from ..findings import Finding, RulegenError, Severity
from ..spec import load_text, schema_ref
from . import chart
from .collect import _assign_apps, _read_sets, _refuse_unsafe_source
from .convert import convert, place_comments
from .logql import without_loki
from .naming import APP_MAX, app_name
from .result import ImportedSpec, ImportResult
from .sources import RuleSet
from .specyaml import _plain, _unliteral, dump_spec

def _no_generated_links(data: CommentedMap) -> None:
    """Set ``chart.runbook_url: false`` in the spec ``data`` (``chart`` placed before
    ``groups``): the chart adds no generated ``runbook_url``; alerts keep their own."""
    chart_map = data.get("chart")
    if not isinstance(chart_map, CommentedMap):
        chart_map = CommentedMap()
        data.insert(list(data.keys()).index("groups"), "chart", chart_map)
    chart_map["runbook_url"] = False


def _check_written(text: str, data, display: str) -> list[Finding]:
    """Schema findings (RG1xx/RG2xx) of the spec ``text``, plus a finding when it does not
    read back as ``data``."""
    from ..validate import Context, validate
    lf = load_text(text, display)
    res = validate([lf], Context())
    bad = [f for f in res.findings if f.is_error and f.code.startswith(("RG1", "RG2"))]
    if not bad and lf.data != _plain(data):
        bad.append(Finding(display, 1, 1, "RG809", Severity.ERROR, "the written spec does not read back as "
                           "the imported data"))
    return bad


def _origins(group: list[RuleSet], where: dict, data: CommentedMap) -> dict:
    """``{spec path: (source display, key position, value position)}`` for the nodes
    :func:`.convert.convert` placed (``where``, see there), positions 1-based ``(line, col)``
    in the source file, None where there is none (a sequence item has no key)."""
    path_of: dict = {}

    def walk(node, path):
        path_of[id(node)] = path
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            if isinstance(v, (dict, list)):
                walk(v, path + (k,))
    walk(data, ())
    out: dict = {}
    for (si, spath), (container, key, _indent) in where.items():
        if not spath or id(container) not in path_of or si >= len(group):
            continue
        parent = group[si].groups
        try:
            for k in spath[:-1]:
                parent = parent[k]
            last = spath[-1]
            if isinstance(parent, CommentedSeq):
                kp, vp = None, parent.lc.item(last)
            else:
                kp, vp = parent.lc.key(last), parent.lc.value(last)
        except (AttributeError, KeyError, TypeError, IndexError):
            continue
        pos = [(a + 1, b + 1) if isinstance(a, int) and isinstance(b, int) else None
               for a, b in (kp or (None, None), vp or (None, None))]
        out[path_of[id(container)] + (key,)] = (group[si].source, pos[0], pos[1])
    return out


def import_paths(paths: list[Path], app: str | None = None, out_dir: Path = Path("rules"),
                 display_base: Path | None = None, render: chart.RenderOptions | None = None,
                 project: Path | None = None) -> ImportResult:
    """Import ``paths`` (files or folders) into specs, in memory.

    When the ``project`` the specs go to (default ``display_base``, see
    :func:`project_of`) has no runbook site (no ``mkdocs.yml``), each spec says
    ``chart.runbook_url: false``: an alert without ``runbook_url`` gets none invented.

    A file of several PrometheusRules that Helm rendered (``# Source:`` lines, or a
    ``managed-by``/``heritage: Helm`` label) is named like a rendered chart: the release
    prefix all their names share is left out of the app names
    (:func:`.chart.strip_common_prefix`), so ``rulegen import rendered.yaml`` names the apps
    as ``rulegen import CHART_DIR`` does.

    ``render``: a chart folder in ``paths`` is rendered with the real helm with these options
    and its PrometheusRules imported (:mod:`.chart`); None (or ``render.static``) reads chart
    templates statically (:mod:`.helmtext`).

    ``app`` puts everything into one app; ``out_dir`` only sets the ``$schema`` reference and
    the file names shown. Paths in notes are shown relative to ``display_base`` when possible.

    Raises:
        RulegenError: a path does not exist; ``app`` is not a DNS label; a source holds a
            symlink leading outside the project (outside the source folder for one outside the
            project) or a special file (RG742, RG760; checked before anything is read or
            helm runs); helm is missing or fails on a chart.
    """
    for p in paths:
        _refuse_unsafe_source(p, display_base)
    if render is not None and render.variant is not None and (
            app_name(render.variant) != render.variant or len(render.variant) >= 30):
        raise RulegenError(f"--variant {render.variant!r} is not a DNS label shorter than 30 characters")
    if app is not None and app_name(app) != app:
        raise RulegenError(f"--app {app!r} is not a DNS label (lower case letters, digits and '-', at most "
                           f"{APP_MAX}); try {app_name(app)!r}")
    result = ImportResult()
    project = project if project is not None else display_base
    # no runbook site (mkdocs.yml) in the project: no page to link to, so no invented link
    runbook_site = project is not None and (project / "mkdocs.yml").is_file()

    sets = _read_sets(paths, render, display_base, result.notes)
    sets = without_loki(sets, result.notes)   # Loki's rule files: one RG817 each, the rest imported
    # a Helm template read statically: rendering it with helm is the way out of what it cannot read
    result.helm = any(rs.kind == "helm" for rs in sets) or \
        any(n.code in ("RG802", "RG803", "RG816") for n in result.notes)
    ref = schema_ref(out_dir, project)
    variant = render.variant if render is not None else None
    for name, group in _assign_apps(sets, app, variant).items():
        if not group:
            continue  # --app and no source held rule groups: each file's notes say why
        hints = {app_name(rs.app_hint) for rs in group}
        if not app and not variant and name not in hints:
            result.notes.append(Finding(group[0].source, group[0].line, 1, "RG808", Severity.WARNING,
                                        f"app named `{name}`: another source also maps to "
                                        f"`{app_name(group[0].app_hint)}`"))
        spec = _make_spec(name, group, out_dir, ref, runbook_site, result.notes)
        if spec is not None:
            result.specs.append(spec)
    result.notes.sort(key=lambda f: (f.file, f.line, f.col, f.code, f.message))
    return result


def _make_spec(name: str, group: list[RuleSet], out_dir: Path, ref: str, runbook_site: bool,
               notes_out: list[Finding]) -> ImportedSpec | None:
    """The spec of app ``name`` made from the rule sets ``group`` (see :func:`import_paths`),
    or None when it holds no rule or would not validate (the notes, added to ``notes_out``,
    say why)."""
    data, notes, where = convert(group, name)
    notes_out.extend(notes)
    if not runbook_site:
        _no_generated_links(data)
    if not data["groups"]:
        notes_out.append(Finding(group[0].source, group[0].line, 1, "RG810", Severity.WARNING,
                                 f"app `{name}`: no rule to import; no spec written"))
        return None
    notes_out.extend(place_comments(group, where, data))
    top = getattr(data, "_rulegen_top", [])
    sources = list(dict.fromkeys(rs.source for rs in group))
    display = (out_dir / f"{name}.yaml").as_posix()
    text = dump_spec(data, ref, sources, top)
    bad = _check_written(text, data, display)
    if bad:
        _unliteral(data)
        text = dump_spec(data, ref, sources, top)
        bad = _check_written(text, data, display)
    if bad:
        notes_out.extend(Finding(display, b.line, b.col, "RG809", Severity.ERROR,
                                 f"rulegen import produced a spec that does not validate ({b.code}: "
                                 f"{b.message}); not written — please report this") for b in bad)
        return None
    n_alerts = sum(1 for g in data["groups"] for r in g["rules"] if "alert" in r)
    n_records = sum(1 for g in data["groups"] for r in g["rules"] if "record" in r)
    meta: dict = {"labels": {}, "annotations": {}}
    for rs in group:
        for k, got in (("labels", rs.meta_labels), ("annotations", rs.meta_annotations)):
            for a, b in got.items():
                if meta[k].setdefault(a, b) != b:
                    notes_out.append(Finding(rs.source, rs.line, 1, "RG808", Severity.WARNING,
                                             f"app `{name}`: PrometheusRule metadata.{k} `{a}` is "
                                             f"`{meta[k][a]}` in one source and `{b}` in another; "
                                             f"`{meta[k][a]}` is kept"))
    return ImportedSpec(name, text, sources, n_alerts, n_records, _plain(data),
                        meta["labels"], meta["annotations"], _origins(group, where, data),
                        (group[0].source, max(group[0].line, 1)))
