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
  (nothing to import, its spec is named);
* ``RG802`` a Helm action cannot be read statically (error when rule content is lost);
* ``RG803`` warning: Helm ``if``/``with`` conditions assumed true;
* ``RG804`` warning: a value changed type (a label ``5`` becomes the string ``"5"``);
* ``RG805`` warning: something with no place in a spec, not imported (PrometheusRule
  metadata labels, unknown keys, a zero ``for`` on a recording rule, other Kubernetes objects);
* ``RG806`` error: a rule, or a group for a group-level field, skipped whole because Prometheus
  would reject it too (no ``expr``, PromQL that does not parse, a bad duration, an invalid
  name, a template that does not parse; see :mod:`.convert`), at the line of what is wrong;
* ``RG807`` warning: a comment with nowhere to go;
* ``RG808`` warning: a name changed (an app or a duplicate group);
* ``RG809`` error: the spec exists (use ``--force``) or the written spec would not validate;
* ``RG810`` warning: an app is left with no rule to import (its groups are empty); no spec
  is written for it.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString

from ..findings import Finding, RulegenError, Severity
from ..spec import SCHEMA_PATH, load_text
from .convert import convert, place_comments
from .naming import APP_MAX, Source, app_name, assign_names, dns_label
from .sources import RuleSet, read_source

SUFFIXES = (".yaml", ".yml")


@dataclass
class ImportedSpec:
    """One spec ready to write: ``app``, the ``text`` to write, its ``sources`` (display
    paths), and counts of alerts and recording rules."""

    app: str
    text: str
    sources: list[str]
    alerts: int = 0
    records: int = 0


@dataclass
class ImportResult:
    """Outcome of :func:`import_paths`: the specs (not yet written) and every note."""

    specs: list[ImportedSpec] = field(default_factory=list)
    notes: list[Finding] = field(default_factory=list)

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


def _naming_source(rs: RuleSet) -> Source:
    return Source(key=f"{rs.source}#{dns_label(rs.app_hint)}", hint=rs.app_hint, folders=rs.folders)


def _assign_apps(sets: list[RuleSet], app: str | None) -> dict[str, list[RuleSet]]:
    """Rule sets per app name (see :mod:`.naming`); ``app`` puts them all into one."""
    if app:
        return {app: list(sets)}
    names = assign_names([_naming_source(rs) for rs in sets])
    out: dict[str, list[RuleSet]] = {}
    for rs in sets:
        out.setdefault(names[_naming_source(rs).key], []).append(rs)
    return out


def schema_ref(out_dir: Path) -> str:
    """The ``$schema`` reference written at the top of a spec in ``out_dir``: the packaged
    schema, relative to ``out_dir`` (``../rulegen/spec/schema.json`` for ``rules/`` here)."""
    try:
        return Path(os.path.relpath(SCHEMA_PATH.resolve(), out_dir.resolve())).as_posix()
    except ValueError:  # another drive on Windows
        return SCHEMA_PATH.resolve().as_uri()


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.width = 1_000_000
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def _plain(node):
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    return str(node)


def _unliteral(node):
    """Replace literal blocks with double-quoted strings (fallback when a block is not exact)."""
    if isinstance(node, CommentedMap):
        for k, v in list(node.items()):
            if isinstance(v, LiteralScalarString):
                node[k] = DoubleQuotedScalarString(str(v))
            else:
                _unliteral(v)
    elif isinstance(node, CommentedSeq):
        for v in node:
            _unliteral(v)


def dump_spec(data: CommentedMap, ref: str, sources: list[str], top: list[str]) -> str:
    """The spec text: the ``yaml-language-server`` line, where it came from, the source's
    top comments, then ``data`` written by ruamel.yaml."""
    header = [f"yaml-language-server: $schema={ref}",
              "Imported by `rulegen import` from " + ", ".join(sources) + "."] + top
    data.yaml_set_start_comment("\n".join(header))
    buf = StringIO()
    _yaml().dump(data, buf)
    return buf.getvalue()


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


def import_paths(paths: list[Path], app: str | None = None, out_dir: Path = Path("rules"),
                 display_base: Path | None = None) -> ImportResult:
    """Import ``paths`` (files or folders) into specs, in memory.

    ``app`` puts everything into one app; ``out_dir`` only sets the ``$schema`` reference and
    the file names shown. Paths in notes are shown relative to ``display_base`` when possible.

    Raises:
        RulegenError: a path does not exist; ``app`` is not a DNS label.
    """
    if app is not None and app_name(app) != app:
        raise RulegenError(f"--app {app!r} is not a DNS label (lower case letters, digits and '-', at most "
                           f"{APP_MAX}); try {app_name(app)!r}")
    result = ImportResult()
    sets: list[RuleSet] = []
    for f in expand(paths):
        shown = f.as_posix()
        if display_base is not None:
            try:
                shown = f.resolve().relative_to(display_base.resolve()).as_posix()
            except ValueError:
                pass
        found, notes = read_source(f, shown)
        sets.extend(found)
        result.notes.extend(notes)
    ref = schema_ref(out_dir)
    for name, group in _assign_apps(sets, app).items():
        if not group:
            continue  # --app and no source held rule groups: each file's notes say why
        hints = {app_name(rs.app_hint) for rs in group}
        if not app and name not in hints:
            result.notes.append(Finding(group[0].source, group[0].line, 1, "RG808", Severity.WARNING,
                                        f"app named `{name}`: another source also maps to "
                                        f"`{app_name(group[0].app_hint)}`"))
        data, notes, where = convert(group, name)
        result.notes.extend(notes)
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
        result.specs.append(ImportedSpec(name, text, sources, n_alerts, n_records))
    result.notes.sort(key=lambda f: (f.file, f.line, f.col, f.code, f.message))
    return result


def write_specs(result: ImportResult, out_dir: Path, force: bool = False) -> list[Path]:
    """Write the specs of ``result`` into ``out_dir``; an existing file is kept (with an RG809
    note added to ``result``) unless ``force``. Returns the files written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for s in result.specs:
        target = out_dir / f"{s.app}.yaml"
        if target.exists() and not force:
            result.notes.append(Finding(target.as_posix(), 1, 1, "RG809", Severity.ERROR,
                                        "spec exists; not overwritten (rerun with --force to replace it)"))
            continue
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_text(s.text, encoding="utf-8")
        tmp.replace(target)
        written.append(target)
    return written


def run_import(args) -> int:
    """``rulegen import`` (see :mod:`rulegen.cli`): returns 0 when everything was imported and
    written, 1 when a note is an error (something not imported, or a spec not overwritten).

    Raises:
        RulegenError: a source path does not exist or ``--app`` is not a DNS label (exit 2).
    """
    from ..formatters import render
    root = Path(getattr(args, "root", ".") or ".")
    paths = [Path(p) if Path(p).is_absolute() else root / p for p in args.sources]
    out_dir = Path(args.out) if Path(args.out).is_absolute() else root / args.out
    result = import_paths(paths, args.app, out_dir, display_base=root)
    written = write_specs(result, out_dir, bool(getattr(args, "force", False)))
    if result.notes:
        print(render(result.notes, "text"), file=sys.stderr)
    by_app = {s.app: s for s in result.specs}
    for p in written:
        s = by_app[p.stem]
        shown = p.as_posix()
        try:
            shown = p.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
        print(f"wrote {shown}: {s.alerts} alert(s), {s.records} recording rule(s) from {', '.join(s.sources)}")
    print(f"{len(written)} spec(s) written")
    return 0 if result.ok else 1
