"""Adversarial review of the spec schema's name patterns (RG204 and its concrete fixes): a
pattern says what a name may be, and the name then becomes a folder, a file, a Helm values
path, a label or a shell variable. JSON Schema patterns are ECMA-262 regexes, where ``$`` ends
the text; Python's ``re.search`` (jsonschema's ``pattern``) also lets ``$`` match before a
final line feed, so ``app: "shop\\n"`` passed and ``build`` wrote ``charts/shop\\n/`` and
``runbooks/shop\\n.md``, and a label key ``"team\\n"`` reached the rules file (Prometheus 3
accepts any UTF-8 label name: an alert routed by ``team`` silently lost its route)."""

from __future__ import annotations

import pytest

from rulegen.validate import validate_texts

SPEC = """\
app: {app}
chart:
  gates: [{gate}]
  values_key: {values_key}
  template: {template}
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{{job="shop"}} == 0
        severity: warning
        summary: Shop is down
        description: No shop target is up.
        labels: {{{label}: shop}}
        annotations: {{{annotation}: x}}
        runbook:
          variables: {{{variable}: {variable_label}}}
"""

FINE = {"app": "shop", "gate": "enabled", "values_key": "prometheusRule", "template": "prometheusrule.yaml",
        "label": "team", "annotation": "dashboard", "variable": "NS", "variable_label": "namespace"}


def _codes(**changed) -> list[tuple[str, str]]:
    text = SPEC.format(**dict(FINE, **changed))
    return [(f.code, f.message) for f in validate_texts({"rules/shop.yaml": text}).findings]


def test_the_fine_spec_has_no_schema_finding():
    assert [c for c, _ in _codes() if c.startswith("RG2")] == []


@pytest.mark.parametrize("key", sorted(FINE))
def test_a_name_with_a_final_line_feed_breaks_its_pattern(key):
    value = '"' + FINE[key] + '\\n"'  # YAML's double-quoted escape: the name, then a line feed
    found = [c for c, _ in _codes(**{key: value}) if c in ("RG204", "RG202")]
    assert found == ["RG204"], (key, _codes(**{key: value}))


def test_names_rulegen_checks_itself_refuse_a_final_line_feed(tmp_path):
    """The same kind in rulegen's own name checks (``re.match`` of a ``^...$`` pattern): a
    rule-selector label value of ``.rulegen.yaml``, the app name of ``rulegen new``, and the
    label and record names of an imported rule file."""
    import textwrap

    from rulegen.config import parse_config
    from rulegen.findings import RulegenError
    from rulegen.importer import import_paths
    from rulegen.starter import write_starter
    with pytest.raises(RulegenError):
        parse_config({"charts": {"rule_selector_labels": {"release": "kube-prometheus-stack\n"}}})
    with pytest.raises(RulegenError):
        parse_config({"charts": {"rule_selector_labels": {"release\n": "kube-prometheus-stack"}}})
    with pytest.raises(RulegenError):
        write_starter(tmp_path, "shop\n")
    assert not (tmp_path / "rules").exists()
    src = tmp_path / "odd.yaml"
    src.write_text(textwrap.dedent("""\
        groups:
          - name: g
            rules:
              - record: "a:b:c\\n"
                expr: up
              - alert: BadLabel
                expr: up == 0
                labels:
                  "team\\n": x
        """), encoding="utf-8")
    res = import_paths([src], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert {"a:b:c\n", "BadLabel"} <= {n.rule for n in res.notes if n.code == "RG806"}
