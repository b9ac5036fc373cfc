"""Gates that name a key the chart's ``values.yaml`` does not have.

The PrometheusRule renders only when every gate of ``chart.gates`` is ``true`` in the values
Helm renders with, and ``rulegen build`` adds a missing gate to ``values.yaml`` as ``false``
(with the end-of-line comment ``# rulegen gate: ...``). So a misspelt gate
(``gates: [monitoring.enbled]``) renders nothing and fails nowhere: the chart's own
``monitoring.enabled: true`` is never read, and the ``enbled: false`` line rulegen added looks
like every other gate of a chart not yet switched on. This check reads the chart's
``values.yaml`` (``<chart.path>/values.yaml`` under the project root; nothing when it is
missing or not YAML, RG701 reports that at build) and compares each gate with the keys a
person wrote there: the keys under ``chart.valuesKey`` (rulegen's knobs) and the lines
carrying ``# rulegen gate:`` do not count, nor does a mapping holding only such lines.

Codes:

* ``RG733`` (warning) a gate of ``chart.gates`` is not ``true`` in the chart's ``values.yaml``,
  names no key a person wrote there (absent, or only the ``false`` line rulegen added for it),
  and a key of the same depth that a person wrote is close to it: a typo, so the
  PrometheusRule never renders with the values the team set. The message names that key
  ("did you mean"). A gate that is simply not switched on yet (no close key) is not reported:
  it may be set where the chart is deployed. Bad: ``gates: [monitoring.enbled]`` beside
  ``monitoring: {enabled: true}`` in values.yaml; good: ``gates: [monitoring.enabled]``.
"""

from __future__ import annotations

from ...fs import read as fs_read
from ...fs import yamlbound
from ...fs.containment import escaping_link, lexical_problem
from ...findings import Severity
from ...hints import closest

ID = "gates"

#: The end-of-line comment rulegen writes on a gate it adds (``rulegen.render.values``).
MARKER = "# rulegen gate:"

#: How close (:class:`difflib.SequenceMatcher` ratio of the dotted paths) a person's key must
#: be to a gate to be read as what the gate meant. 0.8 takes one or two wrong letters in
#: ``monitoring.enabled`` and keeps ``metrics.enabled`` apart from ``monitoring.enabled``.
CUTOFF = 0.8


def _read(ctx, chart_path: str) -> str | None:
    """The chart's values.yaml text, or None when it cannot be read (or is outside the
    project: the paths checks report that, and nothing is read through it)."""
    rel = f"{chart_path.rstrip('/')}/values.yaml"
    if lexical_problem(chart_path.rstrip("/")) is not None or escaping_link(ctx.root, rel) is not None:
        return None
    path = ctx.root / rel
    if not path.is_file():  # a folder, or a FIFO whose open would wait for a writer forever (RG701 says so)
        return None
    try:
        text = fs_read.read_text(path, rel)  # over the input size limit: RG756, raised
    except (OSError, UnicodeDecodeError):
        return None
    return None if yamlbound.problem(text) else text  # aliases expanding too far: RG701 says so


def values_keys(text: str, skip_top: str | None = None) -> tuple[set, object] | None:
    """(the key paths of ``text`` a person wrote, as tuples of strings; the loaded document)
    for a values.yaml text, or None when it is not a YAML mapping. A key counts unless its
    line carries :data:`MARKER` or it is a mapping holding no key that counts (a parent
    rulegen added for its gate); keys under ``skip_top`` (the values key) never count."""
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        root = yaml.compose(text, Loader=loader)
        data = yaml.load(text, Loader=loader)
    except Exception:
        return None
    if not isinstance(root, yaml.MappingNode) or not isinstance(data, dict):
        return None
    lines = text.split("\n")
    out: set = set()

    def walk(node, prefix: tuple) -> bool:
        """Add the counting keys under ``node``; True when there is one."""
        any_key = False
        for k, v in node.value:
            if not isinstance(k, yaml.ScalarNode):
                continue
            path = prefix + (k.value,)
            if not prefix and k.value == skip_top:
                continue
            line = lines[k.start_mark.line] if k.start_mark.line < len(lines) else ""
            if MARKER in line:
                continue
            if isinstance(v, yaml.MappingNode) and v.value:
                counts = walk(v, path)
            else:
                counts = True
            if counts:
                out.add(path)
                any_key = True
        return any_key

    walk(root, ())
    return out, data


def _value(data, parts):
    for part in parts:
        data = data.get(part) if isinstance(data, dict) else None
    return data


def check_spec(spec, ctx):
    """Yield RG733 for each gate of ``spec.chart.gates`` that is off and written nowhere in
    the chart's values.yaml while a key of the same depth is close to it."""
    text = _read(ctx, spec.chart.path)
    if text is None:
        return
    got = values_keys(text, spec.chart.values_key)
    if got is None:
        return
    keys, data = got
    gates = [tuple(g.split(".")) for g in spec.chart.gates]
    lf = spec.source
    written = isinstance(lf.data.get("chart"), dict) and "gates" in lf.data["chart"]
    for i, gate in enumerate(gates):
        if _value(data, gate) is True or gate in keys:
            continue
        candidates = sorted(".".join(k) for k in keys if len(k) == len(gate) and k not in gates)
        near = closest(".".join(gate), candidates, cutoff=CUTOFF)
        if near is None:
            continue
        where = ("chart", "gates", i) if written else ("chart",)
        state = "absent" if _value(data, gate) is None and not _has(data, gate) else "only rulegen's `false` line"
        yield lf.finding(where, "RG733",
                         f"gate {'.'.join(gate)} names no key of {spec.chart.path}/values.yaml ({state}), so the "
                         f"PrometheusRule renders only if it is set where the chart is deployed; did you mean "
                         f"{near}? (rename the gate in chart.gates, then remove the line rulegen added for "
                         "it from values.yaml)",
                         severity=Severity.WARNING)


def _has(data, parts) -> bool:
    for part in parts:
        if not isinstance(data, dict) or part not in data:
            return False
        data = data[part]
    return True
