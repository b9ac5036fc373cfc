"""The Prometheus Operator's PrometheusRule CRD for the sync check (:mod:`rulegen.gitops.sync`):
where the pinned CRD file is, its ``v1`` schema, and the problems of a rendered PrometheusRule
against it (``jsonschema``, Draft 4 as OpenAPI v3 uses, after a compiled fastjsonschema
yes/no pre-check; plus the unique keys of ``x-kubernetes-list-type: map`` lists)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import yaml

from ..tools import find

#: The CRD file of the PrometheusRule resource inside the prometheus-operator Go module.
CRD_FILE = "monitoring.coreos.com_prometheusrules.yaml"



def crd_path(root: Path | None = None) -> Path:
    """Where ``scripts/install-tools.sh`` puts the pinned PrometheusRule CRD:
    ``crds/monitoring.coreos.com_prometheusrules.yaml`` in the trusted tools folder
    (:func:`rulegen.tools.find.data_path`)."""
    return find.data_path(f"crds/{CRD_FILE}", root)


@functools.lru_cache(maxsize=4)
def _crd_schema(path: str, mtime: float) -> dict:
    """The ``v1`` openAPIV3Schema of the CRD at ``path`` (``mtime`` keys the cache). Python's
    ``re`` wants a global flag such as ``(?i)`` at the very start of a pattern: moved there.
    Parsed with libyaml when PyYAML has it (the pinned CRD is the tools' own file of plain
    YAML: the same document, several times faster than the pure-Python parser)."""
    doc = yaml.load(Path(path).read_text(encoding="utf-8"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    for v in doc["spec"]["versions"]:
        if v["name"] == "v1":
            schema = v["schema"]["openAPIV3Schema"]
            break
    else:
        raise RulegenError(f"{path}: no v1 schema in the PrometheusRule CRD")

    def fix(node):
        if isinstance(node, dict):
            p = node.get("pattern")
            if isinstance(p, str) and "(?i)" in p and not p.startswith("(?i)"):
                node["pattern"] = "(?i)" + p.replace("(?i)", "")
            for v in node.values():
                fix(v)
        elif isinstance(node, list):
            for v in node:
                fix(v)
    fix(schema)
    return schema


#: The validator made for a schema (by its id, with the schema kept alive): made once per run,
#: not once per PrometheusRule.
_VALIDATORS: dict[int, tuple] = {}


def _draft4(schema: dict):
    """The ``jsonschema`` Draft 4 validator of ``schema``, made once per schema object."""
    kept = _VALIDATORS.get(id(schema))
    if kept is None or kept[0] is not schema:
        import jsonschema
        if len(_VALIDATORS) >= 8:
            _VALIDATORS.clear()
        from ..validate.checks.schema import with_ecma_patterns
        kept = _VALIDATORS[id(schema)] = (schema, with_ecma_patterns(jsonschema.Draft4Validator)(schema))
    return kept[1]


#: The yes/no pre-check made for a schema, like :data:`_VALIDATORS` (None: not available).
_PRECHECKS: dict[int, tuple] = {}


def _precheck(schema: dict):
    """A function ``obj -> bool``, True when fastjsonschema's compiled Draft 4 validator of
    ``schema`` accepts ``obj`` (kept between runs by :mod:`rulegen.codecache`, as the spec
    schema's is: :func:`rulegen.validate.checks.schema._compiled`); None when ``schema`` sets a
    ``default`` (fastjsonschema would write it into ``obj``) or cannot be compiled. Proving a
    valid PrometheusRule valid this way costs a fraction of ``jsonschema``'s ``iter_errors``
    and of importing ``jsonschema`` (about a twelfth of a ``check``); a rejected object goes
    to ``jsonschema``, which says why. fastjsonschema is the stricter of the two where they
    differ (it checks ``format``, which Draft4Validator without a format checker does not), so
    what it accepts ``jsonschema`` accepts: tests/gitops/test_sync.py holds the two to that."""
    kept = _PRECHECKS.get(id(schema))
    if kept is not None and kept[0] is schema:
        return kept[1]
    accepts = None
    definition = json.loads(json.dumps(schema))
    if '"default"' not in json.dumps(definition):
        import fastjsonschema
        from ..validate.checks.schema import _compiled
        definition["$schema"] = "http://json-schema.org/draft-04/schema#"
        try:
            validate = _compiled(definition)
        except fastjsonschema.JsonSchemaDefinitionException:
            validate = None
        if validate is not None:
            def accepts(obj) -> bool:
                try:
                    validate(obj)
                except fastjsonschema.JsonSchemaException:
                    return False
                return True
    if len(_PRECHECKS) >= 8:
        _PRECHECKS.clear()
    _PRECHECKS[id(schema)] = (schema, accepts)
    return accepts


def crd_errors(obj: dict, schema: dict) -> list[tuple[tuple, str]]:
    """Problems of the PrometheusRule ``obj`` against the CRD's openAPIV3Schema ``schema``, as
    (path inside the object, message): the JSON Schema errors (``jsonschema``, draft 4
    semantics as OpenAPI v3 uses; asked only when :func:`_precheck` does not accept ``obj``)
    and duplicate keys of ``x-kubernetes-list-type: map`` lists."""
    out = []
    accepts = _precheck(schema)
    if accepts is None or not accepts(obj):
        for e in sorted(_draft4(schema).iter_errors(obj), key=lambda e: list(map(str, e.path))):
            out.append((tuple(e.path), e.message))

    def lists(node, sch, path):
        if not isinstance(sch, dict):
            return
        if isinstance(node, list):
            keys = sch.get("x-kubernetes-list-map-keys") or []
            if sch.get("x-kubernetes-list-type") == "map" and keys:
                seen = {}
                for i, item in enumerate(node):
                    if isinstance(item, dict):
                        k = tuple(json.dumps(item.get(x)) for x in keys)
                        if k in seen:
                            out.append((path + (i,), f"duplicate {', '.join(keys)} "
                                        f"{', '.join(str(item.get(x)) for x in keys)} (also item {seen[k]}): "
                                        "the list is a map keyed by it"))
                        seen.setdefault(k, i)
            for i, item in enumerate(node):
                lists(item, sch.get("items"), path + (i,))
        elif isinstance(node, dict):
            for k, v in node.items():
                lists(v, (sch.get("properties") or {}).get(k), path + (k,))
    lists(obj, schema, ())
    return out
