"""Are two sets of rule groups the same rules? The round-trip check of ``rulegen import``.

Rules are matched by (group name, position in group) and compared as Prometheus evaluates them:

* ``expr`` after PromQL normalisation (``promql_parser.parse(x).prettify()``, through
  :func:`rulegen.promql.syntax.parsed`, so quoting, spacing and line breaks do not count); text
  that does not parse, or is too large to (:func:`rulegen.promql.syntax.too_large`), is
  compared stripped;
* ``for`` and ``keep_firing_for`` as durations (:func:`rulegen.spec.durations.parse_ms`;
  absent equals ``0s``, as in Prometheus);
* labels with the group's ``labels`` merged under the rule's own (Prometheus 3 group labels);
* annotations exactly, except a ``runbook_url`` that rulegen added where the original had
  none (rulegen links every alert to its runbook section unless the spec sets one).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..promql.syntax import parsed
from ..spec.durations import DurationError, parse_ms


@dataclass
class Difference:
    """One way a rendered rule differs from its original: ``group``, ``rule`` name, ``what``."""

    group: str
    rule: str
    what: str

    def __str__(self) -> str:
        return f"{self.group}/{self.rule}: {self.what}"


def normalise_expr(expr) -> str:
    """PromQL text in one canonical form (prettified AST), or the stripped text when it does not parse."""
    text = str(expr)
    ast = parsed(text)  # rulegen's one (cached) parse: too large (RG316) or not PromQL is None
    return ast.prettify() if ast is not None else text.strip()


def _ms(v) -> int | str:
    if v is None:
        return 0
    try:
        return parse_ms(str(v))
    except DurationError:
        return str(v)


def rule_view(rule: dict, group_labels: dict | None = None) -> dict:
    """What Prometheus evaluates of one rule (see the module docstring)."""
    kind = "alert" if "alert" in rule else "record"
    labels = {str(k): str(v) for k, v in (group_labels or {}).items()}
    labels.update({str(k): ("" if v is None else str(v)) for k, v in (rule.get("labels") or {}).items()})
    view = {"kind": kind, "name": str(rule.get(kind)), "expr": normalise_expr(rule.get("expr", "")),
            "labels": {k: v for k, v in labels.items() if v != ""}}
    if kind == "alert":
        view["for"] = _ms(rule.get("for"))
        view["keep_firing_for"] = _ms(rule.get("keep_firing_for"))
        view["annotations"] = {str(k): ("" if v is None else str(v)) for k, v in (rule.get("annotations") or {}).items()}
    return view


def compare_groups(original: list[dict], rendered: list[dict],
                   generated_runbook_url: bool = True) -> tuple[int, list[Difference]]:
    """Compare the rules of ``original`` groups with ``rendered`` ones.

    Returns ``(number of original rules found equal, differences)``. A generated
    ``runbook_url`` (present only in the rendered rule) is not a difference, unless
    ``generated_runbook_url`` is False (the chart must not invent one).
    """
    rendered_by_name = {}
    for g in rendered:
        rendered_by_name.setdefault(str(g.get("name")), []).append(g)
    equal = 0
    diffs: list[Difference] = []
    for g in original:
        gname = str(g.get("name"))
        cands = rendered_by_name.get(gname) or []
        rg = cands.pop(0) if cands else None
        orules = g.get("rules") or []
        if rg is None:
            diffs.extend(Difference(gname, str(r.get("alert") or r.get("record")), "group missing from the render")
                         for r in orules)
            continue
        for attr in ("interval", "query_offset"):
            if _ms(g.get(attr)) != _ms(rg.get(attr)):
                diffs.append(Difference(gname, "", f"group {attr} {g.get(attr)!r} != {rg.get(attr)!r}"))
        if g.get("limit") != rg.get("limit") and (g.get("limit") or 0) != (rg.get("limit") or 0):
            diffs.append(Difference(gname, "", f"group limit {g.get('limit')!r} != {rg.get('limit')!r}"))
        rrules = rg.get("rules") or []
        if len(rrules) != len(orules):
            diffs.append(Difference(gname, "", f"{len(orules)} rules in the original, {len(rrules)} rendered"))
        for i, r in enumerate(orules):
            a = rule_view(r, g.get("labels"))
            if i >= len(rrules):
                diffs.append(Difference(gname, a["name"], "not rendered"))
                continue
            b = rule_view(rrules[i], rg.get("labels"))
            if generated_runbook_url and a["kind"] == "alert" and "runbook_url" not in a["annotations"]:
                b.get("annotations", {}).pop("runbook_url", None)
            found = [f"{k}: {a[k]!r} != {b.get(k)!r}" for k in a if a[k] != b.get(k)]
            if found:
                diffs.extend(Difference(gname, a["name"], f) for f in found)
            else:
                equal += 1
    return equal, diffs
