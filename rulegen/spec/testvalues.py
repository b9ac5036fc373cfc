"""Test values as promtool reads them.

promtool decodes a test file with go-yaml v2 into Go structs (``cmd/promtool/unittest.go``):
label maps (``external_labels``, ``exp_labels``, ``exp_annotations``) are
``map[string]string``; ``series``, ``values``, ``alertname``, ``expr``, ``labels``,
``histogram``, ``name``, ``external_url`` and ``start_timestamp`` are read as strings. go-yaml
v2 puts the text of any scalar
into a Go string as written: ``condition: true`` is ``"true"``, ``quantile: 0.990`` is
``"0.990"``, ``id: 0x1F`` is ``"0x1F"``; a null (``x:``, ``~``) is the empty string, and a null
list or mapping (``exp_alerts:``) is an empty one.

:func:`as_promtool_reads` applies this to one test group, so a spec test (read by
:mod:`rulegen.spec.loader`) and an imported promtool test file (:mod:`rulegen.importer.tests`)
mean what promtool makes of them, whatever YAML type the value has.
"""

from __future__ import annotations

from typing import Callable

#: Per place in a test group: key -> "str" (a Go string), "map" (``map[string]string``), or
#: ("list", place of the items).
SHAPE = {
    "group": {"name": "str", "external_url": "str", "start_timestamp": "str",
              "input_series": ("list", "series"),
              "external_labels": "map", "alert_rule_test": ("list", "alert_test"),
              "promql_expr_test": ("list", "expr_test")},
    "series": {"series": "str", "values": "str"},
    "alert_test": {"alertname": "str", "exp_alerts": ("list", "alert")},
    "alert": {"exp_labels": "map", "exp_annotations": "map"},
    "expr_test": {"expr": "str", "exp_samples": ("list", "sample")},
    "sample": {"labels": "str", "histogram": "str"},
}


def as_promtool_reads(node, path: tuple, as_text: Callable, new_map: Callable = dict, new_list: Callable = list,
                      place: str = "group") -> None:
    """Change the test group ``node`` (a mapping; ``path`` is its path) in place: every value
    where promtool wants a string and the YAML holds another scalar becomes
    ``as_text(container, key, path)`` (the scalar's text as written; called only for a
    boolean, number, date or null), and a null list or mapping becomes ``new_list()`` /
    ``new_map()``. Lists and mappings where a string belongs are left for the schema check."""
    if not isinstance(node, dict):
        return
    for k, want in SHAPE[place].items():
        if k not in node:
            continue
        v = node[k]
        p = path + (k,)
        if want == "str":
            if not isinstance(v, (str, dict, list)):
                node[k] = as_text(node, k, p)
        elif want == "map":
            if v is None:
                node[k] = new_map()
            elif isinstance(v, dict):
                for lk in list(v.keys()):
                    if not isinstance(v[lk], (str, dict, list)):
                        v[lk] = as_text(v, lk, p + (lk,))
        elif v is None:
            node[k] = new_list()
        elif isinstance(v, list):
            for i, item in enumerate(v):
                as_promtool_reads(item, p + (i,), as_text, new_map, new_list, want[1])


def scalar_text(v) -> str:
    """The text YAML writes for the scalar ``v`` when its source text is unknown: ``""`` for
    null, ``true``/``false``, numbers as Python prints them."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)
