"""Read the files ``rulegen import`` is given and find the rule groups in them.

Three shapes are read (detected per file, not by extension):

* a plain Prometheus rule file, ``groups:`` at the top (Prometheus docs, "Recording rules");
* ``PrometheusRule`` manifests (``monitoring.coreos.com/v1``, Prometheus Operator API), one or
  several YAML documents, or a ``kind: List`` of them; ``spec.groups`` as in a rule file;
* a Helm chart template holding a PrometheusRule: the file sits in a chart's ``templates/``
  folder, or holds Helm-only actions (see :func:`rulegen.importer.helmtext.looks_like_helm`);
  it is read statically by :mod:`rulegen.importer.helmtext`, one output line per input line.

Every problem becomes a finding with the file's own line (codes in :mod:`rulegen.importer`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from ..findings import Finding, Severity
from . import comments as cm
from .helmtext import PLACEHOLDER_RE, looks_like_helm, read_template

MAX_BYTES = 8 * 1024 * 1024


@dataclass
class RuleSet:
    """The rule groups of one rule file or one PrometheusRule.

    Attributes:
        source: the file as displayed in notes.
        kind: ``rules`` (plain rule file), ``manifest`` or ``helm``.
        app_hint: the name the app gets unless ``--app`` is given (PrometheusRule name, chart
            name or file stem, not yet made a DNS label).
        parent_hint: the source folder's name, used when two sources would share an app name.
        groups: the ``groups`` node (ruamel round-trip data, positions kept).
        prefix: path of ``groups`` in the file's documents, starting with the document index.
        chart_name / chart_namespace: the PrometheusRule's static ``metadata.name``/``namespace``.
        comments: node path -> {"before": [...], "eol": [...]} (see :mod:`.comments`).
        lines: the YAML text's lines (for the source text of numbers and booleans).
        placeholders: Helm value actions left in lines (index -> (line, action)).
    """

    source: str
    kind: str
    app_hint: str
    parent_hint: str
    groups: CommentedSeq
    prefix: tuple
    chart_name: str | None = None
    chart_namespace: str | None = None
    comments: dict = field(default_factory=dict)
    lines: list = field(default_factory=list)
    placeholders: dict = field(default_factory=dict)


def _note(src: str, line: int, code: str, msg: str, error: bool = False, rule: str = "") -> Finding:
    return Finding(src, line, 1 if line else 0, code, Severity.ERROR if error else Severity.WARNING, msg, rule)


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.allow_duplicate_keys = False
    return y


def _in_chart(path: Path) -> Path | None:
    """The chart folder when ``path`` is ``<chart>/templates/...``, else None."""
    for parent in path.resolve().parents:
        if parent.name == "templates" and (parent.parent / "Chart.yaml").is_file():
            return parent.parent
    return None


def _chart_name(chart: Path) -> str:
    m = re.search(r"^name:\s*['\"]?([^'\"\s#]+)", (chart / "Chart.yaml").read_text(encoding="utf-8"), re.M)
    return m.group(1) if m else chart.name


def _static(v) -> str | None:
    return v if isinstance(v, str) and v and not PLACEHOLDER_RE.search(v) else None


def read_source(path: Path, display: str) -> tuple[list[RuleSet], list[Finding]]:
    """The rule sets in one file and the notes about it. Never raises for bad content."""
    notes: list[Finding] = []
    try:
        raw = path.read_bytes()
    except OSError as e:
        return [], [_note(display, 0, "RG801", f"cannot read the file: {e.strerror or e}", True)]
    if len(raw) > MAX_BYTES:
        return [], [_note(display, 0, "RG801", f"file is {len(raw)} bytes, more than {MAX_BYTES}; split it", True)]
    try:
        text = raw.decode("utf-8").lstrip("\ufeff")
    except UnicodeDecodeError:
        return [], [_note(display, 0, "RG801", "not UTF-8 text; save it as UTF-8", True)]
    chart = _in_chart(path)
    helm = chart is not None or looks_like_helm(text)
    placeholders: dict = {}
    groups_line = 0
    if helm:
        ht = read_template(text)
        text = ht.text
        placeholders = ht.placeholders
        helm_notes = ht.notes
        if ht.assumed_true:
            shown = ", ".join(str(n) for n in ht.assumed_true[:12]) + (", ..." if len(ht.assumed_true) > 12 else "")
            notes.append(_note(display, ht.assumed_true[0], "RG803",
                               f"{len(ht.assumed_true)} Helm `if`/`with` condition(s) assumed true (line(s) {shown}); "
                               "their bodies are imported, the gates become the chart's own"))
    else:
        helm_notes = []
    try:
        docs = list(_yaml().load_all(text))
    except DuplicateKeyError as e:
        mark = e.problem_mark or e.context_mark
        key = re.search(r'found duplicate key "([^"]*)"', str(e))
        return [], notes + [_note(display, mark.line + 1 if mark else 0, "RG801",
                                  f"key \"{key.group(1) if key else '?'}\" appears twice in one mapping; "
                                  "YAML keeps one of them silently, so fix the source first", True)]
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = (e.problem or e.context or "invalid YAML").strip()
        how = " (after reading its Helm actions statically)" if helm else ""
        return [], notes + _helm_notes(display, helm_notes, 0) + [
            _note(display, mark.line + 1 if mark else 0, "RG801", f"not valid YAML{how}: {what}", True)]
    except (YAMLError, RecursionError, ValueError, TypeError) as e:
        return [], notes + [_note(display, 0, "RG801", f"YAML could not be read: {str(e).splitlines()[0] if str(e) else type(e).__name__}", True)]

    lines = text.split("\n")
    anchor_lines: dict = {}
    for di, d in enumerate(docs):
        cm.anchors(d, (di,), anchor_lines)
    found = cm.find_comments(text)
    attached, unattached = cm.attach(found or [], anchor_lines, text)

    if chart is not None:
        default_hint = _chart_name(chart)
        parent = chart.name
    else:
        default_hint = path.stem
        parent = path.resolve().parent.name
    sets: list[RuleSet] = []
    claimed_prefixes = []
    claimed: set = set()
    for di, d in enumerate(docs):
        if d is None:
            continue
        dl = _line_of(d)
        if not isinstance(d, CommentedMap):
            notes.append(_note(display, dl, "RG805", f"YAML document {di + 1} is a {type(d).__name__}, "
                               "not a rule file or a PrometheusRule; skipped"))
            continue
        items = []
        if d.get("kind") == "List" and isinstance(d.get("items"), list):
            for ii, item in enumerate(d["items"]):
                items.append((item, (di, "items", ii)))
        else:
            items.append((d, (di,)))
        for obj, opath in items:
            rs = _rule_set(obj, opath, display, default_hint, parent, notes, placeholders, helm)
            if rs is not None:
                rs.lines = lines
                rs.comments = {p[len(rs.prefix):]: c for p, c in attached.items() if _is_under(p, rs.prefix)}
                # comments above the document's keys, `spec:` or `groups:` go to the spec's top
                top = []
                for p, c in attached.items():
                    if p == rs.prefix or (_is_under(rs.prefix, p) and _is_under(p, opath)) or (
                            _is_under(p, opath) and len(p) == len(opath) + 1):
                        top.extend(c["before"] + c["eol"])
                        claimed.add(p)
                if top:
                    rs.comments[()] = {"before": top, "eol": []}
                claimed_prefixes.append(rs.prefix)
                groups_line = groups_line or (rs.groups.lc.line + 1 if hasattr(rs.groups, "lc") else 0)
                sets.append(rs)
    # comments no rule set claimed
    for p, c in attached.items():
        if p not in claimed and not any(_is_under(p, pre) for pre in claimed_prefixes):
            for t in c["before"] + c["eol"]:
                unattached.append(cm.Comment(anchor_lines.get(p, 0), 1, t, False))
    for c in unattached:
        notes.append(_note(display, c.line, "RG807", f"comment `{_short(c.text)}` is about nothing the spec keeps; "
                           "not carried over"))
    if found is None:
        notes.append(_note(display, 0, "RG807", "comments could not be located (the file does not scan as YAML "
                           "with PyYAML); none carried over"))
    notes.extend(_helm_notes(display, helm_notes, groups_line))
    if not sets and not any(n.code == "RG801" for n in notes):
        notes.append(_note(display, 0, "RG801", "no rule groups found: neither `groups:` (a rule file) nor "
                           "a PrometheusRule with `spec.groups`", True))
    for rs in sets:
        rs.placeholders = placeholders
    return sets, notes


def _helm_notes(display: str, helm_notes, groups_line: int) -> list[Finding]:
    out = []
    for hn in helm_notes:
        # text lost above the rule groups (metadata labels from values) loses no rule content
        error = hn.level == "error" and (groups_line == 0 or hn.line >= groups_line)
        out.append(_note(display, hn.line, "RG802", hn.message, error))
    return out


def _is_under(p: tuple, prefix: tuple) -> bool:
    return len(p) > len(prefix) and p[:len(prefix)] == prefix


def _short(t: str, n: int = 60) -> str:
    return t if len(t) <= n else t[: n - 3] + "..."


def _line_of(node, key=None) -> int:
    try:
        if key is None:
            return node.lc.line + 1
        return node.lc.key(key)[0] + 1
    except (AttributeError, KeyError, TypeError):
        return 0


def _rule_set(obj, opath: tuple, display: str, default_hint: str, parent: str, notes: list,
              placeholders: dict, helm: bool) -> RuleSet | None:
    if not isinstance(obj, CommentedMap):
        return None
    kind = "helm" if helm else "rules"
    if "groups" in obj and "kind" not in obj:
        for k in obj:
            if k != "groups":
                notes.append(_note(display, _line_of(obj, k), "RG805",
                                   f"top-level key `{k}` has no place in a spec; not imported"))
        groups = obj["groups"]
        prefix = opath + ("groups",)
        name = ns = None
        hint = default_hint
    elif obj.get("kind") == "PrometheusRule":
        kind = "helm" if helm else "manifest"
        meta = obj.get("metadata") if isinstance(obj.get("metadata"), CommentedMap) else CommentedMap()
        spec = obj.get("spec") if isinstance(obj.get("spec"), CommentedMap) else CommentedMap()
        name = _static(meta.get("name"))
        ns = _static(meta.get("namespace"))
        hint = name or default_hint
        if meta.get("name") is not None and name is None:
            notes.append(_note(display, _line_of(meta, "name"), "RG802",
                               f"the PrometheusRule name is computed by Helm; the app is named `{default_hint}` "
                               "after the chart or file, and the chart's default name is used"))
        for k in ("labels", "annotations"):
            v = meta.get(k)
            if isinstance(v, dict) and v:
                shown = ", ".join(f"{a}: {b}" for a, b in v.items() if not PLACEHOLDER_RE.search(f"{a}{b}"))
                if shown:
                    notes.append(_note(display, _line_of(meta, k), "RG805",
                                       f"PrometheusRule metadata.{k} ({shown}) have no place in the spec; set them "
                                       f"in the chart values as prometheusRule.{k}"))
        for k in meta:
            if k not in ("name", "namespace", "labels", "annotations"):
                notes.append(_note(display, _line_of(meta, k), "RG805",
                                   f"PrometheusRule metadata.{k} has no place in the spec; not imported"))
        for k in spec:
            if k != "groups":
                notes.append(_note(display, _line_of(spec, k), "RG805",
                                   f"PrometheusRule spec.{k} has no place in the spec; not imported"))
        groups = spec.get("groups")
        prefix = opath + ("spec", "groups")
    else:
        k = obj.get("kind")
        notes.append(_note(display, _line_of(obj), "RG805",
                           f"a {k or 'YAML mapping without groups'} is not a rule file or a PrometheusRule; skipped"))
        return None
    if not isinstance(groups, CommentedSeq):
        notes.append(_note(display, _line_of(obj), "RG801",
                           "`groups` is not a list of rule groups; nothing imported from it", True))
        return None
    return RuleSet(source=display, kind=kind, app_hint=hint, parent_hint=parent, groups=groups, prefix=prefix,
                   chart_name=name, chart_namespace=ns)
