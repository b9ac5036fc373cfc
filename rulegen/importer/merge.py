"""Imported content merged into files a project has: groups into an existing spec (``--app``),
PrometheusRule metadata into a chart's ``values.yaml``."""

from __future__ import annotations

from io import StringIO

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ..findings import Finding, RulegenError, Severity
from ..fs import yamlbound
from .specyaml import _yaml


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
