"""RG733: a gate naming no key of the chart's values.yaml, next to a key close to it (a typo
that renders nothing and fails nowhere), and the note of ``rulegen diff`` when a chart's gates
are off in the values it rendered."""

from __future__ import annotations

from pathlib import Path

from rulegen.pipeline import load_project, plan_project
from rulegen.validate.checks.gates import values_keys

SPEC = """\
app: shop
chart:
  path: charts/shop
  gates: [{gates}]
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{{job="shop"}} == 0
        for: 5m
        severity: warning
        summary: Shop is down.
        description: No shop target is up.
"""


def _project(tmp_path: Path, gates: str, values: str | None) -> Path:
    (tmp_path / "rules").mkdir(parents=True)
    (tmp_path / "rules" / "shop.yaml").write_text(SPEC.format(gates=gates), encoding="utf-8")
    if values is not None:
        (tmp_path / "charts" / "shop").mkdir(parents=True)
        (tmp_path / "charts" / "shop" / "values.yaml").write_text(values, encoding="utf-8")
    return tmp_path


def _rg733(root: Path) -> list:
    return [f for f in load_project(root).findings if f.code == "RG733"]


def test_misspelt_gate_beside_the_real_key_is_reported_with_did_you_mean(tmp_path):
    root = _project(tmp_path, "enabled, monitoring.enbled", "enabled: true\nmonitoring:\n  enabled: true\n")
    found = _rg733(root)
    assert [(f.line, f.col, f.severity.name) for f in found] == [(4, 20, "WARNING")]
    assert "gate monitoring.enbled names no key of charts/shop/values.yaml (absent)" in found[0].message
    assert "did you mean monitoring.enabled?" in found[0].message


def test_the_false_line_rulegen_adds_for_a_typo_does_not_count_as_a_key(tmp_path):
    """After a build, values.yaml holds ``enbled: false  # rulegen gate: ...``: still reported."""
    root = _project(tmp_path, "enabled, monitoring.enbled", "enabled: true\nmonitoring:\n  enabled: true\n")
    outputs, _ = plan_project(load_project(root))
    values = next(o.content for o in outputs if o.path == "charts/shop/values.yaml")
    assert "  enbled: false  # rulegen gate:" in values
    (root / "charts/shop/values.yaml").write_text(values, encoding="utf-8")
    found = _rg733(root)
    assert len(found) == 1
    assert "(only rulegen's `false` line)" in found[0].message
    assert "did you mean monitoring.enabled?" in found[0].message


def test_a_typo_of_a_top_level_gate_and_default_gates(tmp_path):
    root = _project(tmp_path, "enbled, monitoring.enabled", "enabled: true\nmonitoring:\n  enabled: true\n")
    found = _rg733(root)
    assert [(f.line, f.col) for f in found] == [(4, 11)]
    assert "gate enbled" in found[0].message and "did you mean enabled?" in found[0].message


def test_quiet_on_correct_gates_off_gates_and_charts_rulegen_made(tmp_path):
    # the gates as written, on or deliberately off
    for i, values in enumerate(("enabled: true\nmonitoring:\n  enabled: true\n",
                   "enabled: false\nmonitoring:\n  enabled: false\n",
                   "enabled: true\nmonitoring:\n  enabled: null\n")):
        root = _project(tmp_path / f"g{i}", "enabled, monitoring.enabled", values)
        assert _rg733(root) == [], values
    # no values.yaml yet, an empty one, and one that is not YAML
    for i, values in enumerate((None, "", "monitoring: [enabled\n")):
        assert _rg733(_project(tmp_path / f"v{i}", "enabled, monitoring.enabled", values)) == []
    # a chart rulegen made (rulegen new): every key is its own, nothing to be close to
    root = _project(tmp_path / "new", "enabled, monitoring.enabled", None)
    outputs, _ = plan_project(load_project(root))
    for o in outputs:
        if o.path.startswith("charts/shop/values"):
            (root / o.path).parent.mkdir(parents=True, exist_ok=True)
            (root / o.path).write_text(o.content, encoding="utf-8")
    assert _rg733(root) == []
    # a gate not switched on yet, with no key close to it (set where the chart is deployed)
    root = _project(tmp_path / "far", "enabled, metrics.enabled",
                    "enabled: true\nmonitoring:\n  serviceMonitor: {enabled: true}\n")
    assert _rg733(root) == []


def test_a_gate_switched_on_on_rulegens_line_is_quiet(tmp_path):
    root = _project(tmp_path, "enabled, monitoring.enbled",
                    "enabled: true\nmonitoring:\n  enabled: true\n  enbled: true  # rulegen gate: x\n")
    assert _rg733(root) == []


def test_values_keys_skips_rulegens_lines_their_parents_and_the_knobs():
    text = ("replicaCount: 1\nmonitoring:\n  enabled: false  # rulegen gate: the PrometheusRule renders\n"
            "extra:\n  on: true\nprometheusRule:\n  disabled: {}\n")
    keys, data = values_keys(text, "prometheusRule")
    assert keys == {("replicaCount",), ("extra",), ("extra", "on")}
    assert data["monitoring"] == {"enabled": False}
    assert values_keys("- a\n", "prometheusRule") is None
