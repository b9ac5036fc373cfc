"""Writing derived tests into a spec's text: the ``tests:`` block (and ``equivalent_mutants:``)
after the rule's last line, the rest of the file kept byte for byte."""

from __future__ import annotations

import io

from ...spec import Spec
from .shape import Manual

def tests_yaml(tests: list, indent: int, equivalent: list | None = None) -> str:
    """The ``tests:`` block for ``tests`` (and an ``equivalent_mutants:`` block for
    ``equivalent``, (text, reason) pairs) as YAML text indented by ``indent`` spaces, emitted
    by ruamel.yaml (block style; label maps and empty lists in flow style; values quoted)."""
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString

    def flow(d):
        m = CommentedMap(d)
        m.fa.set_flow_style()
        return m

    def empty():
        s = CommentedSeq()
        s.fa.set_flow_style()
        return s

    seq = CommentedSeq()
    for t in tests:
        item = CommentedMap()
        item["name"] = t["name"]
        item["interval"] = t["interval"]
        item["input_series"] = [CommentedMap([("series", s["series"]),
                                              ("values", DoubleQuotedScalarString(s["values"]))])
                                for s in t["input_series"]]
        if "alert_rule_test" in t:
            art = []
            for a in t["alert_rule_test"]:
                e = CommentedMap([("eval_time", a["eval_time"])])
                e["exp_alerts"] = [CommentedMap([("exp_labels", flow(x["exp_labels"]))])
                                   for x in a["exp_alerts"]] if a["exp_alerts"] else empty()
                art.append(e)
            item["alert_rule_test"] = art
        if "promql_expr_test" in t:
            item["promql_expr_test"] = [
                CommentedMap([("eval_time", p["eval_time"]),
                              ("exp_samples", [CommentedMap([("labels", x["labels"]), ("value", x["value"])])
                                               for x in p["exp_samples"]])])
                for p in t["promql_expr_test"]]
        seq.append(item)
    y = YAML()
    y.width = 4096
    y.indent(mapping=2, sequence=4, offset=2)
    buf = io.StringIO()
    doc = {"tests": seq}
    if equivalent:
        doc["equivalent_mutants"] = [CommentedMap([("mutant", t), ("reason", r)]) for t, r in equivalent]
    y.dump(doc, buf)
    pad = " " * indent
    return "".join(pad + line if line.strip() else line for line in buf.getvalue().splitlines(True))


def insert_tests(text: str, spec: Spec, rule, tests: list, equivalent: list | None = None) -> str:
    """``text`` (the spec file) with a ``tests:`` block for ``rule`` inserted after its last
    line; every other byte kept. The block is indented like the rule's keys.

    Raises:
        Manual: the rule already has a ``tests`` key, or is not written under ``groups:`` (a
            rule generated from ``slos:`` has no text of its own).
    """
    lf = spec.source
    if rule.path[:1] != ("groups",):
        raise Manual("generated from `slos:`: its tests are generated too")
    for key in ("tests", "equivalent_mutants"):
        if (*rule.path, key) in lf.key_positions:
            raise Manual(f"the rule already has a `{key}` key; remove it first")
    kind = "alert" if rule.is_alert else "record"
    line, col = lf.pos(rule.path + (kind,), key=True)
    lines = text.splitlines(True)
    # the rule ends before the next line indented at most as far as its `- ` (or at the end)
    dash_col = col - 2
    end = len(lines)
    for i in range(line, len(lines)):
        s = lines[i]
        if s.strip() and not s.lstrip().startswith("#") and len(s) - len(s.lstrip(" ")) <= dash_col:
            end = i
            break
    while end > line and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")
                          and len(lines[end - 1]) - len(lines[end - 1].lstrip(" ")) <= dash_col):
        end -= 1
    block = tests_yaml(tests, col - 1, equivalent)
    if end and not lines[end - 1].endswith("\n"):
        lines[end - 1] += "\n"
    return "".join(lines[:end]) + block + "".join(lines[end:])
