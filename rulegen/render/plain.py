"""Plain Prometheus rule files (``rulegen build --format rules``), for teams without the
Prometheus Operator: ``groups:`` as in the Prometheus docs ("Defining recording rules"),
one file per app under ``rules-out/``, what the chart renders with its default values
(every rule on, no extra labels). Strings are written with :func:`yaml_string`, so each
parses back exactly; multi-line ``expr`` stays a literal block.
"""

from __future__ import annotations

from ..spec import Spec
from ..spec.durations import canonical
from .promtool_tests import runbook_url
from .yamltext import folded_plain, folded_quoted, readable_string, yaml_key, yaml_string


def rule_groups(spec: Spec, site_url: str) -> list[dict]:
    """The spec's rule groups as Prometheus sees them, as plain data (keys in Prometheus'
    order: alert/record, expr, for, keep_firing_for, labels, annotations)."""
    groups = []
    for g in spec.groups:
        rules = []
        for r in g.rules:
            d: dict = {r.kind: r.name, "expr": r.expr}
            if r.is_alert and r.for_:
                d["for"] = canonical(r.for_)
            if r.is_alert and r.keep_firing_for:
                d["keep_firing_for"] = canonical(r.keep_firing_for)
            labels = r.all_labels(spec.labels, g.labels)
            if labels:
                d["labels"] = labels
            if r.is_alert:
                ann = dict(sorted(r.annotations.items()))
                if spec.chart.runbook_url:
                    ann.setdefault("runbook_url", runbook_url(site_url, spec.app, r.name))
                d["annotations"] = ann
            rules.append(d)
        gd: dict = {"name": g.name}
        if g.interval:
            gd["interval"] = canonical(g.interval)
        if g.query_offset:
            gd["query_offset"] = canonical(g.query_offset)
        if g.limit is not None:
            gd["limit"] = g.limit
        gd["rules"] = rules
        groups.append(gd)
    return groups


def dump(value, indent: int = 0, readable: bool = False) -> str:
    """Block-style YAML for dicts, lists and strings/ints, every string exact. ``readable``:
    strings plain where that is exact (:func:`rulegen.render.yamltext.readable_string`),
    a long one over several lines of at most 120 characters where it can be cut
    (:func:`rulegen.render.yamltext.folded_plain`), else double-quoted; otherwise every
    single-line string is double-quoted."""
    pad = " " * indent
    lines = []
    if isinstance(value, dict):
        for k, v in value.items():
            key = yaml_key(str(k))
            if isinstance(v, (dict, list)) and v:
                lines.append(f"{pad}{key}:")
                lines.append(dump(v, indent + 2, readable))
            else:
                lines.append(f"{pad}{key}: {_scalar(v, indent + 2, readable, len(pad) + len(key) + 2)}")
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, dict) and item:
                sub = dump(item, indent + 2, readable)
                lines.append(pad + "- " + sub[indent + 2:])
            else:
                lines.append(f"{pad}- {_scalar(item, indent + 2, readable, indent + 2)}")
    return "\n".join(lines)


def _scalar(v, indent: int, readable: bool = False, first: int = 0) -> str:
    if readable and isinstance(v, str):
        # a long line of text over lines of at most 120
        folded = folded_plain(v, first, indent) or folded_quoted(v, first, indent)
        if folded is not None:
            return folded
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    if v == {} or v == []:
        return "{}" if v == {} else "[]"
    return (readable_string if readable else yaml_string)(str(v), indent)


def render_rules_file(spec: Spec, site_url: str, header_lines: list[str]) -> str:
    """The rule file text for ``spec``."""
    return "\n".join(header_lines) + "\n" + dump({"groups": rule_groups(spec, site_url)}) + "\n"
