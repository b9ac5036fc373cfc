"""Everything ``rulegen import`` writes, decided before anything is written
(:func:`plan_import`), and writing it all or nothing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .. import baseline as bl
from ..config import CONFIG_FILE, load_config
from ..findings import Finding, Severity
from ..fs import read as fs_read
from ..fs.write import atomic_write
from ..pipeline import DEFAULT_SPEC_DIR
from ..spec import PROJECT_SCHEMA, SCHEMA_PATH, SPEC_SUFFIXES, shown_path
from ..validate import validate_texts
from . import conventions
from .merge import chart_values_text, merge_spec_text
from .positions import _at_source
from .result import ImportResult
from .scopes import as_yaml as scopes_yaml, infer as infer_scopes, merged as merged_scopes
from .specyaml import reload_text


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
    merged = _merge_or_refuse(result, targets, root, force, app, messages)
    base_config, config = _conventions(result, root, project, variant, files, messages)
    entries = _validate_with_project(result, targets, merged, root, out_dir, project, base_config, config)
    if entries:
        _baseline_entries(entries, result, merged, root, project, files, messages)
    _chart_values(result, root, project, files, messages, base_config.rule_selector_labels, release_label)
    for s in result.specs:
        files[targets[s.app]] = s.text
    if result.specs and not SCHEMA_PATH.resolve().is_relative_to(project.resolve()):
        schema = SCHEMA_PATH.read_text(encoding="utf-8")
        p = project / PROJECT_SCHEMA
        if not p.is_file() or fs_read.read_text(p, shown_path(p, root)) != schema:
            files[p] = schema
            messages.append(f"{shown_path(p, root)}: the spec schema, for editors (specs name it in their `$schema` line)")
    return {"files": files, "messages": messages}


def _merge_or_refuse(result: ImportResult, targets: dict, root: Path, force: bool, app: str | None,
                     messages: list[str]) -> dict:
    """For each imported spec whose file exists: with ``app`` (and no ``force``), its groups
    added to the existing spec (:func:`.merge.merge_spec_text`); else, without ``force``,
    RG809. Returns app -> index of its first imported group in the existing spec."""
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
    return merged


def _conventions(result: ImportResult, root: Path, project: Path, variant: str | None, files: dict,
                 messages: list[str]) -> tuple:
    """``(project config, config with the conventions read from the imported alerts)``; the
    updated ``.rulegen.yaml`` goes to ``files`` when they add any (:mod:`.conventions`)."""
    base_config = config = load_config(project)
    alerts = [r for s in result.specs for g in s.data.get("groups", []) for r in g.get("rules", []) if "alert" in r]
    updates, conv_msgs, comment = conventions.infer(alerts, config, project)
    top = {}
    scopes = merged_scopes(config, infer_scopes(result.specs, variant))
    if scopes:
        # one chart per cluster or provider: only the apps one Prometheus loads collide
        top["prometheus_scopes"] = scopes_yaml(scopes)
        added = {k: v for k, v in scopes.items() if list(v) != list(config.prometheus_scopes.get(k, ()))}
        conv_msgs.append("the imported apps are loaded by different Prometheus servers ("
                         + ("--variant" if variant else "sibling folders holding the same rules") + "): "
                         + ", ".join(f"{k} ({len(v)} app(s))" for k, v in added.items())
                         + " in prometheus_scopes; alert and PrometheusRule names are compared within each")
    if updates or top:
        files[project / CONFIG_FILE] = conventions.text_with(project, updates, top, comment)
        messages += [f"{shown_path(project / CONFIG_FILE, root)}: {m}" for m in conv_msgs]
        config = conventions.apply(config, updates)
        if scopes:
            config = replace(config, prometheus_scopes={k: tuple(v) for k, v in scopes.items()})
    return base_config, config


def _validate_with_project(result: ImportResult, targets: dict, merged: dict, root: Path, out_dir: Path,
                           project: Path, base_config, config) -> set:
    """Validate the imported specs next to the project's (see :func:`plan_import`): RG813 for
    each new error that is not a policy finding on an imported rule (added to
    ``result.notes``); returns the baseline entries of those policy findings."""
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
    return entries


def _baseline_entries(entries: set, result: ImportResult, merged: dict, root: Path, project: Path, files: dict,
                      messages: list[str]) -> None:
    """The project's baseline with ``entries`` added (an imported app's old entries dropped,
    unless its groups were merged into its spec) into ``files``."""
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


def _chart_values(result: ImportResult, root: Path, project: Path, files: dict, messages: list[str],
                  selector_labels: dict, release_label: str | None) -> None:
    """Each imported PrometheusRule's metadata labels and annotations into its chart's
    ``values.yaml`` (:func:`.merge.chart_values_text`), into ``files``; a new chart's also
    gets the rule-selector labels (``selector_labels``, ``release_label`` replacing the
    ``release`` value; see :func:`plan_import`)."""
    kept: dict = {}
    for s in result.specs:
        vpath = project / "charts" / s.app / "values.yaml"
        existing = fs_read.read_text(vpath, shown_path(vpath, root)) if vpath.exists() else None
        labels = s.chart_labels
        if existing is None:  # a new chart: kube-prometheus-stack's ruleSelector must pick it
            selector = dict(selector_labels)
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
