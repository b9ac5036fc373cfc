"""YAML traps: label and annotation values that another YAML reader turns into something else.

rulegen reads specs as YAML 1.2, where ``off`` and ``1:20`` are strings. Kubernetes' YAML
library (go-yaml v2, YAML 1.1) and many other tools read the same plain (unquoted) scalars as
booleans, numbers or null, so the value Prometheus gets depends on who parsed the file. Label
and annotation values must be strings, so such values must be quoted.

Codes:

* ``RG108`` a label or annotation value is a plain scalar that YAML 1.1 or the YAML 1.2 core
  schema reads as a boolean (``yes``, ``no``, ``on``, ``off``, ``y``, ``n``, ``true``...),
  a number (``5``, ``1e3``, ``0x1F``, ``0o17``, ``1_000``, sexagesimal ``1:20``, ``.inf``),
  null (``~``, ``null``) or a timestamp (``2024-01-31``). Checked in the app's ``labels``,
  group ``labels``, an alert's ``labels``, ``severity``, ``component``, ``summary``,
  ``description`` and ``annotations``, a recording rule's ``labels``. Not in tests: promtool
  reads every scalar of a test's ``external_labels``, ``exp_labels`` and ``exp_annotations``
  as its text (``paging: off`` is ``"off"``, ``condition: true`` is ``"true"``), and so does
  rulegen (:mod:`rulegen.spec.testvalues`). (Values that rulegen itself reads as a
  non-string, e.g. ``replicas: 5``, are ``RG202``.)
  Bad: ``labels: {paging: off}``; good: ``labels: {paging: "off"}``.

Reported by the loader (:mod:`rulegen.spec.loader`) before any check runs; a file with one
of these is not checked further:

* ``RG101`` YAML syntax error, at the parser's position. Bad: ``groups: [a, b`` (unclosed).
  Good: ``groups: [a, b]``.
* ``RG102`` duplicate key in a mapping, at the second key (YAML would silently keep one).
  Bad: two ``expr:`` in one rule.
  Good: one ``expr:`` per rule.
* ``RG103`` tab used for indentation. Bad: a line starting with a tab; good: spaces.
* ``RG104`` an alias inside its own anchor. Bad: ``groups: &g [*g]``.
  Good: the alias after the anchored node, ``base: &b {team: ai}`` then ``labels: *b``.
* ``RG105`` too large or too deep: aliases expanding past 50,000 values ("billion laughs"),
  flow collections nested more than 100 deep, block nesting past libyaml's 1000 levels. Every
  other YAML rulegen reads (rule, test and template files given to ``rulegen import``,
  ``values.yaml``, the baseline, ``.rulegen.yaml``, ``mkdocs.yml``, ``helm template`` output) is
  refused with this code, before it is parsed, when its aliases expand past 1,000,000 values
  (raise that with the environment variable ``RULEGEN_MAX_YAML_VALUES`` in the CI job).
  Bad: ten levels of anchors, each a list of ten aliases of the previous one; good: the values
  written out, or shared with one level of anchors.
* ``RG106`` not a spec file: larger than 512 KiB, not UTF-8, or binary (NUL bytes).
  Bad: a spec saved as UTF-16, or one of 2 MiB; good: a UTF-8 spec under 512 KiB (split a very large
  app into several apps).
* ``RG107`` empty, or not a mapping. Bad: a file that is a list (``- app: x``).
  Good: a mapping, ``app: x``.
"""

from __future__ import annotations

import re

from ...findings import Severity
from .positions import value_at

ID = "yaml"

_BOOL = re.compile(r"y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE"
                   r"|on|On|ON|off|Off|OFF")
_NULL = re.compile(r"~|null|Null|NULL")
_INT = re.compile(r"[-+]?(?:0b[01_]+|0o?[0-7_]+|(?:0|[1-9][0-9_]*)|0x[0-9a-fA-F_]+"
                  r"|[1-9][0-9_]*(?::[0-5]?[0-9])+)")
_FLOAT = re.compile(r"[-+]?(?:(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
                    r"|[0-9][0-9_]*(?:\.[0-9_]*)?[eE][-+]?[0-9]+"
                    r"|[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*"
                    r"|\.(?:inf|Inf|INF))|\.(?:nan|NaN|NAN)")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}"
                        r"(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::[0-9]{2})?))?)?")


def yaml11_type(text: str) -> str | None:
    """What a YAML 1.1 (or YAML 1.2 core schema) reader makes of the plain scalar ``text``:
    ``"boolean"``, ``"null"``, ``"number"``, ``"timestamp"``, or None when it stays a string.
    Patterns from the YAML 1.1 type repository (bool, null, int, float, timestamp) and the
    YAML 1.2 core schema (which adds ``1e3``); a lone ``.`` stays a string."""
    if _BOOL.fullmatch(text):
        return "boolean"
    if _NULL.fullmatch(text):
        return "null"
    if _INT.fullmatch(text):
        return "number"
    if text not in (".", "+.", "-.") and _FLOAT.fullmatch(text) and re.search(r"[0-9]|inf|nan", text, re.I):
        return "number"
    if _TIMESTAMP.fullmatch(text):
        return "timestamp"
    return None


def _list(value) -> list:
    """``value`` when it is a list, else ``[]`` (a wrong type is the schema check's to report)."""
    return value if isinstance(value, list) else []


def _mapping_paths(data):
    """(path, what, rule) of every value checked (see the module docstring)."""
    def values(base, d, what, rule):
        if isinstance(d, dict):
            for k in d:
                yield base + (k,), what, rule

    yield from values(("labels",), data.get("labels"), "label", "")
    for gi, g in enumerate(_list(data.get("groups"))):
        if not isinstance(g, dict):
            continue
        gp = ("groups", gi)
        yield from values(gp + ("labels",), g.get("labels"), "label", str(g.get("name", "")))
        for ri, r in enumerate(_list(g.get("rules"))):
            if not isinstance(r, dict):
                continue
            rp = gp + ("rules", ri)
            name = str(r.get("alert") or r.get("record") or "")
            yield from values(rp + ("labels",), r.get("labels"), "label", name)
            for k in ("severity", "component"):
                if k in r:
                    yield rp + (k,), "label", name
            for k in ("summary", "description"):
                if k in r:
                    yield rp + (k,), "annotation", name
            yield from values(rp + ("annotations",), r.get("annotations"), "annotation", name)


def check_file(lf, ctx):
    """Yield ``RG108`` for each trap (see the module docstring)."""
    data = lf.data
    if not isinstance(data, dict):
        return
    for path, what, rule in _mapping_paths(data):
        if path not in lf.plain:
            continue
        value = value_at(data, path)
        if not isinstance(value, str):
            continue
        kind = yaml11_type(value)
        if kind is None:
            continue
        yield lf.finding(path, "RG108",
                         f"{what} value {value} is unquoted, and YAML 1.1 readers such as "
                         f"Kubernetes read it as a {kind}, not the string {value!r}; quote it: "
                         f"\"{value}\"", rule=rule, severity=Severity.ERROR)

