"""``rulegen import``: existing rules in, specs out.

Reads plain Prometheus rule files, PrometheusRule manifests and Helm chart templates holding a
PrometheusRule (:mod:`.sources`, :mod:`.helmtext`), turns their groups into one spec per app
(:mod:`.convert`), carries comments over (:mod:`.comments`) and writes each spec with
ruamel.yaml after checking that it passes the spec schema. :mod:`.compare` checks the
round-trip (import, build, ``helm template``) rule by rule.

App names (:mod:`.naming`): ``--app`` puts every rule into one app; otherwise each
PrometheusRule is an app named after it, and each rule file an app named after the file (a
Helm template whose PrometheusRule name Helm computes: after the file, or after the chart
when the file is ``prometheusrule.yaml`` or the like). Names are made DNS labels
(``Foo_Bar.rules`` -> ``foo-bar-rules``); when two sources would get the same name, folders
are put in front (``caddy-embedded-exporter``), never a number.

Notes (``rulegen.findings.Finding``, always at line 1 or later; errors mean something was not
imported):

* ``RG801`` error: a file cannot be read, is not YAML (or YAML Prometheus rejects: duplicate
  keys, a self-referencing alias), or holds no rule groups; warning: a file rulegen generated
  (nothing to import, its spec is named), or an app left with no rule.
  Bad: a rule file without ``groups:``, or with two ``expr:`` in one rule; good: a file ``promtool
  check rules`` accepts.
* ``RG802`` a Helm action cannot be read statically (error when rule content is lost).
  Bad: ``expr: {{ .Values.expr }}`` in a rule; good: the PromQL written out, or the output of ``helm
  template`` imported instead.
* ``RG803`` warning: Helm ``if``/``with`` conditions assumed true.
  Bad: a rule inside ``{{- if .Values.alerts.enabled }}``; good: check the imported rule is wanted
  (the chart's gates now switch it).
* ``RG804`` warning: a value changed type (a label ``5`` becomes the string ``"5"``).
  Bad: ``labels: {priority: 5}``; good: ``labels: {priority: "5"}``.
* ``RG805`` warning: something with no place in a spec, not imported (PrometheusRule
  metadata labels, unknown keys, a zero ``for`` on a recording rule, other Kubernetes objects).
  Bad: ``metadata.labels`` on the PrometheusRule; good: the same labels as ``prometheusRule.labels``
  in the chart's values.
* ``RG806`` error: a rule, or a group for a group-level field, skipped whole because Prometheus
  would reject it too (no ``expr``, PromQL that does not parse, a bad duration, an invalid
  name, a template that does not parse; see :mod:`.convert`), at the line of what is wrong.
  Bad: ``for: 1.5m`` in the source; good: ``for: 90s``, then import again.
* ``RG807`` warning: a comment with nowhere to go.
  Bad: a comment on a key with no place in a spec (such as ``metadata``); good: the comment on the
  rule or key it describes.
* ``RG808`` warning: a name changed (an app, a duplicate group, or a group name holding the
  release a saved ``helm template`` output was rendered for).
  Bad: a rule file ``Foo_Bar.rules`` imported as app ``foo-bar-rules``; good: ``--app foo-bar`` to
  choose the name.
* ``RG809`` error: the spec exists (use ``--force``) or the written spec would not validate.
  Bad: ``rules/shop.yaml`` exists already; good: ``--force`` to overwrite it, or ``--out`` another
  folder.
* ``RG810`` warning: an app is left with no rule to import (its groups are empty); no spec
  is written for it. Bad: a PrometheusRule with ``groups: []``; good: nothing to do, or import
  the file that holds the rules.
* ``RG816`` warning: a Helm template read statically renders nothing with the chart's
  default values (its gate is off); nothing imported from it. Bad: a template wrapped in
  ``{{- if .Values.extraAlerts.enabled }}`` with ``enabled: false``; good: ``--set
  extraAlerts.enabled=true`` to import it.
* ``RG813`` error: importing would leave the project with a validation error a baseline
  cannot hold (PromQL, duplicates...; naming and convention findings of the imported rules
  are baselined, see :mod:`rulegen.baseline`): on an imported spec, shown at the source line
  it comes from (the spec is not written, so its lines do not exist), or on a spec the
  project has (an alert name another app uses, RG412, or an app name, RG413, is reported on
  whichever spec comes later in path order). Bad: ``expr: rate(x[5m]`` in the source, or an
  imported ``ShopDown`` next to the project's app ``shop`` that has one; good: the
  expression fixed, or the alert renamed, then import again.

Any error note means nothing is written (:func:`rulegen.commands.import_.run_import`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from .. import baseline as bl
from ..config import CONFIG_FILE, load_config
from ..fs import read as fs_read
from ..fs import yamlbound
from ..fs.containment import refuse_tree
from ..fs.write import atomic_write
from ..findings import Finding, RulegenError, Severity
from ..pipeline import DEFAULT_SPEC_DIR
from ..spec import PROJECT_SCHEMA, SCHEMA_PATH, SPEC_SUFFIXES, load_text, schema_ref, shown_path
from ..validate import Context, validate, validate_texts
from . import chart, conventions
from .convert import convert, place_comments
from .naming import APP_MAX, Source, app_name, assign_names, dns_label, with_suffix
from .sources import RuleSet, read_source
from .specyaml import _plain, _unliteral, _yaml, dump_spec, reload_text

SUFFIXES = (".yaml", ".yml")


@dataclass
class ImportedSpec:
    """One spec ready to write: ``app``, the ``text`` to write, its ``sources`` (display
    paths), counts of alerts and recording rules, the spec ``data`` (plain Python), and the
    PrometheusRule's static ``metadata.labels``/``annotations`` (``chart_labels``,
    ``chart_annotations``), which are chart settings: ``<values_key>.labels`` in values.yaml."""

    app: str
    text: str
    sources: list[str]
    alerts: int = 0
    records: int = 0
    data: dict = field(default_factory=dict)
    chart_labels: dict = field(default_factory=dict)
    chart_annotations: dict = field(default_factory=dict)
    #: spec path -> (source display, key position, value position), 1-based (line, col)
    #: pairs or None: where each imported node came from (:func:`source_position`).
    origins: dict = field(default_factory=dict)
    #: (source display, line) shown for a finding on a part of the spec no source node made
    #: (``app:``, ``chart:``): the first source's ``groups:``.
    first_source: tuple = ("", 1)


@dataclass
class ImportResult:
    """Outcome of :func:`import_paths`: the specs (not yet written) and every note.
    ``helm``: a Helm template was read statically (so the hint to import what Helm renders
    applies; not for plain files, nor for a chart rendered by helm already)."""

    specs: list[ImportedSpec] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)
    helm: bool = False

    @property
    def ok(self) -> bool:
        return not any(n.is_error for n in self.notes)


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


def source_position(spec: ImportedSpec, text: str, display: str, line: int, col: int,
                    group_offset: int = 0) -> tuple[str, int, int] | None:
    """Where in the imported source the position ``(line, col)`` of the spec ``text``
    (shown as ``display``) comes from: ``(source display, line, col)``, 1-based, or None when
    no imported node starts at or before it (a finding on a spec's own part). The column is
    carried over when the node starts on the finding's line. ``group_offset``: the imported
    groups start at this index (``--app`` into an existing spec, :func:`merge_spec_text`)."""
    lf = load_text(text, display)
    best = None
    for p, (src, kp, vp) in spec.origins.items():
        if group_offset and len(p) > 1 and p[0] == "groups" and isinstance(p[1], int):
            p = ("groups", p[1] + group_offset) + p[2:]
        for at, there in ((lf.key_positions.get(p), kp), (lf.positions.get(p), vp)):
            if at and there and tuple(at) <= (line, col) and (best is None or tuple(at) > best[0]):
                best = (tuple(at), src, there)
    if best is None:
        return None
    (sl, sc), src, (ol, oc) = best
    return (src, ol, max(1, oc + col - sc)) if sl == line else (src, ol, oc)


def _at_source(spec: ImportedSpec, text: str, f: Finding, group_offset: int | None) -> tuple[str, int, int, str]:
    """``(file, line, col, message)`` of the finding ``f`` on an imported spec not yet written,
    told in the source's terms: at the source line it comes from, with every ``line N`` of
    the message mapped the same way. ``group_offset`` None: the spec is new (a position
    outside the imported nodes is shown at the first source); else the spec exists and such a
    position is a real line of it."""
    off = group_offset or 0
    at = source_position(spec, text, f.file, f.line, f.col, off)
    if at is None:
        if group_offset is not None:
            return f.file, f.line, f.col, f.message
        at = (spec.first_source[0], spec.first_source[1], 1)

    def line_ref(m):
        there = source_position(spec, text, f.file, int(m.group(1)), 10 ** 6, off)
        if there is None:
            return m.group(0)
        return f"line {there[1]}" if there[0] == at[0] else f"line {there[1]} of {there[0]}"
    return at[0], at[1], at[2], re.sub(r"\bline (\d+)\b", line_ref, f.message)


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
    sets: list[RuleSet] = []
    project = project if project is not None else display_base
    # no runbook site (mkdocs.yml) in the project: no page to link to, so no invented link
    runbook_site = project is not None and (project / "mkdocs.yml").is_file()

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
            result.notes.extend(notes)
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
            result.notes.extend(notes)
        if chart.is_chart(p):
            chart.strip_common_prefix(of_path)
        sets.extend(of_path)
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
        data, notes, where = convert(group, name)
        result.notes.extend(notes)
        if not runbook_site:
            _no_generated_links(data)
        if not data["groups"]:
            result.notes.append(Finding(group[0].source, group[0].line, 1, "RG810", Severity.WARNING,
                                        f"app `{name}`: no rule to import; no spec written"))
            continue
        result.notes.extend(place_comments(group, where, data))
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
            result.notes.extend(Finding(display, b.line, b.col, "RG809", Severity.ERROR,
                                        f"rulegen import produced a spec that does not validate ({b.code}: "
                                        f"{b.message}); not written — please report this") for b in bad)
            continue
        n_alerts = sum(1 for g in data["groups"] for r in g["rules"] if "alert" in r)
        n_records = sum(1 for g in data["groups"] for r in g["rules"] if "record" in r)
        meta: dict = {"labels": {}, "annotations": {}}
        for rs in group:
            for k, got in (("labels", rs.meta_labels), ("annotations", rs.meta_annotations)):
                for a, b in got.items():
                    if meta[k].setdefault(a, b) != b:
                        result.notes.append(Finding(rs.source, rs.line, 1, "RG808", Severity.WARNING,
                                                    f"app `{name}`: PrometheusRule metadata.{k} `{a}` is "
                                                    f"`{meta[k][a]}` in one source and `{b}` in another; "
                                                    f"`{meta[k][a]}` is kept"))
        result.specs.append(ImportedSpec(name, text, sources, n_alerts, n_records, _plain(data),
                                         meta["labels"], meta["annotations"], _origins(group, where, data),
                                         (group[0].source, max(group[0].line, 1))))
    result.notes.sort(key=lambda f: (f.file, f.line, f.col, f.code, f.message))
    return result


def write_specs(result: ImportResult, out_dir: Path, force: bool = False) -> list[Path]:
    """Write the specs of ``result`` into ``out_dir`` through the one writer
    (:func:`rulegen.fs.write.atomic_write`, kept inside ``out_dir``); an existing file is kept
    (with an RG809 note added to ``result``) unless ``force``. Returns the files written."""
    written = []
    for s in result.specs:
        target = out_dir / f"{s.app}.yaml"
        if target.exists() and not force:
            result.notes.append(Finding(target.as_posix(), 1, 1, "RG809", Severity.ERROR,
                                        "spec exists; not overwritten (rerun with --force to replace it)"))
            continue
        written.append(atomic_write(target, s.text, root=out_dir))
    return written


def chart_values_text(existing: str | None, labels: dict, annotations: dict,
                      values_key: str = "prometheusRule") -> str | None:
    """``values.yaml`` text holding the imported PrometheusRule's ``metadata.labels`` and
    ``annotations`` as ``<values_key>.labels``/``annotations`` (the chart renders them on its
    PrometheusRule), added to ``existing`` without changing what it states; None when there
    is nothing to add."""
    if not labels and not annotations:
        return None
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.indent(mapping=2, sequence=4, offset=2)
    yamlbound.check_text(existing or "", "values.yaml")
    doc = y.load(existing) if existing and existing.strip() else None
    if not isinstance(doc, CommentedMap):
        doc = CommentedMap()
    knobs = doc.get(values_key)
    if not isinstance(knobs, CommentedMap):
        knobs = CommentedMap()
        doc[values_key] = knobs
    changed = False
    for k, got in (("labels", labels), ("annotations", annotations)):
        if not got:
            continue
        node = knobs.get(k)
        if not isinstance(node, CommentedMap):
            node = CommentedMap()
            knobs[k] = node
            knobs.yaml_set_comment_before_after_key(
                k, before=f"metadata.{k} of the PrometheusRule (`rulegen import`: the imported ones"
                + (", and the project's rule-selector labels)" if k == "labels" else ")"), indent=2)
        for a, b in got.items():
            if a not in node:
                node[a] = DoubleQuotedScalarString(b)
                changed = True
    if not changed:
        return None
    buf = StringIO()
    y.dump(doc, buf)
    return buf.getvalue()


def _existing_spec_texts(folders: list[Path], root: Path) -> dict:
    """``{display path: text}`` of the specs under ``folders`` (each once, in path order)."""
    out = {}
    seen: set = set()
    for d in folders:
        if not d.is_dir():
            continue
        for f in sorted(d.rglob("*")):
            if f.suffix in SPEC_SUFFIXES and f.is_file() and f.resolve() not in seen:
                seen.add(f.resolve())
                try:
                    out[shown_path(f, root)] = fs_read.read_text(f, shown_path(f, root))
                except (OSError, UnicodeDecodeError):
                    continue
    return out


def project_of(root: Path, out: str) -> Path:
    """The project the specs written to ``--out`` ``out`` belong to, where ``rulegen import``
    writes ``.rulegen.yaml``, the baseline, ``.rulegen/schema.json`` and chart values: the
    folder holding ``out`` when ``out`` is named ``rules`` (the layout every command reads:
    ``--out team/rules`` makes ``team/`` a project, ``rulegen -C team validate``), else the
    project at ``root`` (``-C``), whose configuration and baseline ``rulegen validate OUT``
    reads."""
    out_dir = root / out
    return out_dir.parent if Path(out).name == DEFAULT_SPEC_DIR else root


def merge_spec_text(existing: str, imported: str, display: str) -> tuple[str, list[Finding]]:
    """``existing`` spec text with the groups of the ``imported`` spec text added after its
    own (``--app`` into an existing spec). A group whose name the spec already has gets
    ``-2``, ``-3``... (RG808 note); the existing text's comments and layout stay. Chart
    ``name``/``namespace`` are taken from the import only where the spec has none.

    Raises:
        RulegenError: the existing spec is not a mapping with a ``groups`` list.
    """
    y = _yaml()
    y.preserve_quotes = True
    yamlbound.check_text(existing, display)
    old = y.load(existing)
    new = y.load(imported)
    if not isinstance(old, CommentedMap) or not isinstance(old.get("groups"), CommentedSeq):
        raise RulegenError(f"{display}: not a spec with `groups:`; cannot add the imported groups to it")
    notes = []
    names = {str(g.get("name")) for g in old["groups"] if isinstance(g, dict)}
    for g in new.get("groups") or []:
        name = base = str(g["name"])
        n = 2
        while name in names:
            name = f"{base}-{n}"
            n += 1
        if name != base:
            notes.append(Finding(display, 1, 1, "RG808", Severity.WARNING,
                                 f"group `{base}` is already in the spec; the imported one is named `{name}`", base))
            g["name"] = name
        names.add(name)
        old["groups"].append(g)
    if isinstance(new.get("chart"), dict):
        chart_old = old.setdefault("chart", CommentedMap())
        if isinstance(chart_old, CommentedMap):
            for k in ("name", "namespace"):
                if k in new["chart"] and k not in chart_old:
                    chart_old[k] = new["chart"][k]
    if new.get("component") is False and "component" not in old:
        # the imported alerts had no component label; the spec's own alerts keep theirs
        for g in new.get("groups") or []:
            for r in g.get("rules") or []:
                if "alert" in r and "component" not in r:
                    r["component"] = False
    buf = StringIO()
    y.dump(old, buf)
    return buf.getvalue(), notes


def plan_import(result: ImportResult, root: Path, out_dir: Path, force: bool, app: str | None = None,
                variant: str | None = None, project: Path | None = None,
                release_label: str | None = None) -> dict:
    """Everything ``rulegen import`` would write for ``result``, decided before anything is
    written: ``{"files": {path: text}, "messages": [...]}``. Problems are added to
    ``result.notes`` as errors (then nothing may be written):

    * RG809: a spec exists and ``force`` is not given;
    * RG813: importing would leave the project with a validation error a baseline cannot hold
      (not a naming or convention finding; the message names it): on an imported spec, shown
      at the source line it comes from, or on a spec the project already has (an alert name
      another app uses, RG412, is reported on whichever spec comes later in path order).

    ``project`` (default ``root``, see :func:`project_of`) is where the configuration, the
    baseline, chart values and the schema copy go; paths are shown relative to ``root``.
    The imported specs are validated with the project's config plus the conventions read
    from them (:mod:`.conventions`), next to every spec the project has (its ``rules/`` and
    ``out_dir``); an error that validating the project without them does not give is the
    import's. Their policy errors (:data:`rulegen.baseline.POLICY_CODES`) on imported rules go
    into the baseline; any other new error is RG813.

    A chart without a values.yaml (a new chart) gets the project's rule-selector labels
    (``charts.rule_selector_labels``, default ``release: kube-prometheus-stack``;
    ``release_label`` replaces the ``release`` value) on its PrometheusRule, beside the
    imported PrometheusRule's own labels (which win on a name both have).
    """
    project = project if project is not None else root
    files: dict[Path, str] = {}
    messages: list[str] = []
    targets = {s.app: out_dir / f"{s.app}.yaml" for s in result.specs}
    merged: dict = {}   # app -> index of its first imported group in the existing spec
    for s in result.specs:
        t = targets[s.app]
        if app and t.is_file() and not force:
            # --app into an existing spec: the imported groups are added to it
            old_text = fs_read.read_text(t, shown_path(t, root))
            s.text, merge_notes = merge_spec_text(old_text, s.text, shown_path(t, root))
            old_groups = (reload_text(old_text) or {}).get("groups") or []
            merged[s.app] = len(old_groups)
            result.notes.extend(merge_notes)
            messages.append(f"{shown_path(t, root)}: the imported groups were added to the existing spec (--app)")
            continue
        if t.exists() and not force:
            result.notes.append(Finding(shown_path(t, root), 1, 1, "RG809", Severity.ERROR,
                                        "spec exists; not overwritten (rerun with --force to replace it, or "
                                        f"--app {s.app} to add the imported groups to it)"))
    base_config = config = load_config(project)
    alerts = [r for s in result.specs for g in s.data.get("groups", []) for r in g.get("rules", []) if "alert" in r]
    updates, conv_msgs, comment = conventions.infer(alerts, config, project)
    top = {}
    if variant and config.duplicate_alert_across_apps == "error" and \
            "duplicate_alert_across_apps" not in conventions.stated_top(project):
        # the variants of one chart define the same alerts, for different clusters
        top["duplicate_alert_across_apps"] = "warning"
        conv_msgs.append("--variant: the apps of a chart's variants define the same alerts (each for its own "
                         "clusters): duplicate_alert_across_apps: warning")
    if updates or top:
        files[project / CONFIG_FILE] = conventions.text_with(project, updates, top, comment)
        messages += [f"{shown_path(project / CONFIG_FILE, root)}: {m}" for m in conv_msgs]
        config = conventions.apply(config, updates)
        if top:
            from dataclasses import replace
            config = replace(config, duplicate_alert_across_apps="warning")
    new_texts = {shown_path(targets[s.app], root): s.text for s in result.specs}
    before = _existing_spec_texts([project / DEFAULT_SPEC_DIR, out_dir], root)
    texts = {k: v for k, v in before.items() if k not in new_texts}
    texts.update(new_texts)
    known = {(f.file, f.line, f.col, f.code, f.message)
             for f in (validate_texts(before, base_config).findings if before else []) if f.is_error}
    res = validate_texts(texts, config)
    app_of = {sp.file: sp.app for sp in res.specs}
    spec_of = {shown_path(targets[s.app], root): s for s in result.specs}
    entries = set()
    imported_rules = {s.app: {r.get("alert") or r.get("record") for g in s.data.get("groups", [])
                              for r in g.get("rules", [])} for s in result.specs}
    for f in res.findings:
        if not f.is_error:
            continue
        if (f.file not in spec_of or spec_of[f.file].app in merged) and \
                (f.file, f.line, f.col, f.code, f.message) in known:
            continue   # an error the project has without this import (a spec --force replaces is all new)
        key = bl.key_of(f, app_of)
        if key is not None and f.file in new_texts and key[1] in imported_rules.get(key[0], ()):
            entries.add(key)   # a policy finding on an imported rule: baselined
            continue
        if f.file in spec_of:
            sp = spec_of[f.file]
            file, line, col, msg = _at_source(sp, new_texts[f.file], f, merged.get(sp.app))
            what = f"the imported spec {f.file} would not validate"
        else:
            file, line, col, msg = f.file, f.line, f.col, f.message
            what = "importing would make this spec fail"
        result.notes.append(Finding(file, line, col, "RG813", Severity.ERROR,
                                    f"{what}: {f.code} {msg}; nothing written (fix the source, or name the "
                                    "imported rules apart, and import again)", f.rule))
    if entries:
        old = bl.load(project)
        imported = {s.app for s in result.specs}
        replaced = {a for a in imported if a not in merged}
        keep = {k for k in (old.entries if old else []) if k[0] not in replaced}
        files[project / bl.BASELINE_FILE] = bl.dump(keep | entries)
        by_code: dict = {}
        for k in entries:
            by_code[k[2]] = by_code.get(k[2], 0) + 1
        messages.append(f"{shown_path(project / bl.BASELINE_FILE, root)}: {len(entries)} policy finding(s) of the "
                        "imported rules baselined ("
                        + ", ".join(f"{c} {n}" for c, n in sorted(by_code.items()))
                        + "); they show as warnings until fixed, then `rulegen baseline` removes them")
    kept: dict = {}
    for s in result.specs:
        vpath = project / "charts" / s.app / "values.yaml"
        existing = fs_read.read_text(vpath, shown_path(vpath, root)) if vpath.exists() else None
        labels = s.chart_labels
        if existing is None:  # a new chart: kube-prometheus-stack's ruleSelector must pick it
            selector = dict(base_config.rule_selector_labels)
            if release_label is not None:
                selector["release"] = release_label
            labels = {**selector, **s.chart_labels}
        text = chart_values_text(existing, labels, s.chart_annotations)
        if text is not None:
            files[vpath] = text
            added = {k: v for k, v in labels.items() if k not in s.chart_labels}
            if added:
                messages.append(f"{shown_path(vpath, root)}: the new chart's PrometheusRule gets the rule-selector "
                                f"label(s) {', '.join(f'{k}: {v}' for k, v in added.items())} (.rulegen.yaml "
                                "charts.rule_selector_labels, --release-label), so kube-prometheus-stack picks it")
        if text is not None and (s.chart_labels or s.chart_annotations):
            kept.setdefault(", ".join(list(s.chart_labels) + [f"annotation {a}" for a in s.chart_annotations]),
                            []).append(shown_path(vpath, root))
    for what, where in kept.items():
        messages.append(f"PrometheusRule metadata ({what}) kept as chart settings (prometheusRule.labels/"
                        f"annotations) in {where[0]}" + (f" and {len(where) - 1} more values.yaml" if len(where) > 1 else ""))
    for s in result.specs:
        files[targets[s.app]] = s.text
    if result.specs and not SCHEMA_PATH.resolve().is_relative_to(project.resolve()):
        schema = SCHEMA_PATH.read_text(encoding="utf-8")
        p = project / PROJECT_SCHEMA
        if not p.is_file() or fs_read.read_text(p, shown_path(p, root)) != schema:
            files[p] = schema
            messages.append(f"{shown_path(p, root)}: the spec schema, for editors (specs name it in their `$schema` line)")
    return {"files": files, "messages": messages}


