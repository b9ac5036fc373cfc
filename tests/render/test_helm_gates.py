"""Gates and toggles, for every bundled chart, with the real helm.

For each spec in ``rules/*.yaml`` (collected when the tests run, so new specs are covered
without editing this file) the project is rebuilt in a temp folder with the current generator,
then every combination is rendered: each gate on/off (all 2^n), each group toggled off, each
rule disabled, all rules of a group disabled, all groups off. Each output must parse (no
duplicate keys), validate against the PrometheusRule CRD (tests/fixtures/crd), hold exactly
the groups and rules the combination leaves, equal to the spec's own rules
(``rulegen.render.plain.rule_groups``); ``helm lint`` must pass with the same values.

A synthetic chart then checks gate and knob values of the wrong shape (absent, null, ``{}``,
a string, a list): nothing renders, or the defaults do, and helm never errors.
"""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path

import pytest
import yaml

from rulegen.pipeline import load_project, plan_project
from rulegen.render import site
from rulegen.render.plain import rule_groups
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run
from rulegen.tools.helm import HelmError

from helpers import REPO
from helpers.helm import SITE, crd_validator, rules_by_name, strict_load_all, write_chart, write_outputs

pytestmark = pytest.mark.tools

SPEC_FILES = sorted(p.name for p in (REPO / "rules").glob("*.yaml"))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The bundled project copied to a temp folder and rebuilt with the current generator:
    returns (root, {spec file name: Spec}, site_url)."""
    root = tmp_path_factory.mktemp("project")
    for name in ("rules", "charts", "runbooks", "deploy", ".rulegen-sums"):  # deploy: the Alertmanager config .rulegen.yaml names
        if (REPO / name).exists():
            shutil.copytree(REPO / name, root / name, symlinks=True)
    for name in ("mkdocs.yml", ".rulegen.yaml"):
        if (REPO / name).exists():
            shutil.copy(REPO / name, root / name)
    loaded = load_project(root)
    outputs, _ = plan_project(loaded)
    write_outputs(root, outputs)
    specs = {Path(s.file).name: s for s in loaded.specs}
    errors = [f for f in loaded.findings if f.severity.name == "ERROR"]
    return root, specs, site.site_url(root), errors


def _nest(path: str, value) -> dict:
    out: dict = {}
    node = out
    parts = path.split(".")
    for p in parts[:-1]:
        node = node.setdefault(p, {})
    node[parts[-1]] = value
    return out


def _merge(*dicts: dict) -> dict:
    out: dict = {}
    for d in dicts:
        for k, v in d.items():
            if isinstance(v, dict) and isinstance(out.get(k), dict):
                out[k] = _merge(out[k], v)
            else:
                out[k] = v
    return out


def _combinations(spec):
    """(id, values overlay, gates all on?, off groups, off rules) for every combination."""
    key = spec.chart.values_key
    gates = list(spec.chart.gates)
    for bits in itertools.product([True, False], repeat=len(gates)):
        vals = _merge(*[_nest(g, b) for g, b in zip(gates, bits)]) if gates else {}
        yield ("gates=" + ",".join(map(str, bits)), vals, all(bits), set(), set())
    on = _merge(*[_nest(g, True) for g in gates]) if gates else {}
    for g in spec.groups:
        yield (f"group-off:{g.name}", _merge(on, {key: {"groups": {g.name: {"enabled": False}}}}),
               True, {g.name}, set())
        names = {r.name for r in g.rules}
        yield (f"all-disabled:{g.name}", _merge(on, {key: {"disabled": {n: True for n in names}}}),
               True, set(), names)
    for _, r in spec.rules():
        yield (f"disabled:{r.name}", _merge(on, {key: {"disabled": {r.name: True}}}), True, set(), {r.name})
    yield ("all-groups-off", _merge(on, {key: {"groups": {g.name: {"enabled": False} for g in spec.groups}}}),
           True, {g.name for g in spec.groups}, set())


@pytest.mark.parametrize("spec_file", SPEC_FILES)
def test_every_gate_and_toggle_combination(built, spec_file, helm_bin):
    root, specs, site_url, errors = built
    assert spec_file in specs, f"{spec_file} did not validate: {[str(e) for e in errors]}"
    spec = specs[spec_file]
    chart = root / spec.chart.path
    validator = crd_validator()
    expected_all = rule_groups(spec, site_url)
    # the chart's default runbookUrl is the site URL rule_groups uses
    seen = 0
    for cid, vals, gates_on, off_groups, off_rules in _combinations(spec):
        out = helm_run.template(chart, values=[values_yaml(vals)], root=REPO)
        docs = strict_load_all(out.text)
        prs = [d for d in docs if d.get("kind") == "PrometheusRule"]
        expected = []
        for g in expected_all:
            if g["name"] in off_groups:
                continue
            rules = [r for r in g["rules"] if r.get("alert", r.get("record")) not in off_rules]
            if rules:
                expected.append({**g, "rules": rules})
        if not gates_on or not expected:
            assert prs == [], cid
        else:
            assert len(prs) == 1, cid
            pr = prs[0]
            errs = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(pr)]
            assert errs == [], cid
            assert pr["spec"]["groups"] == expected, cid
            assert pr["metadata"]["namespace"] == (spec.chart.namespace or helm_run.DEFAULT_NAMESPACE)
        ok, lint_out = helm_run.lint(chart, values=[values_yaml(vals)], root=REPO)
        assert ok, f"{cid}: {lint_out}"
        seen += 1
    assert seen == 2 ** len(spec.chart.gates) + 2 * len(spec.groups) + len(list(spec.rules())) + 1


# --- wrong-shaped values on a synthetic chart -------------------------------------------

SYNTH = {"app": "gated", "chart": {"gates": ["enabled", "monitoring.enabled"]}, "groups": [
    {"name": "one", "rules": [{"alert": "OneA", "expr": "up == 0", "for": "1m", "severity": "warning"},
                              {"alert": "OneB", "expr": "up == 1"}]},
    {"name": "two", "rules": [{"record": "job:up:sum", "expr": "sum by (job) (up)"}]}]}


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    root = tmp_path_factory.mktemp("synth")
    chart, spec = write_chart(root, SYNTH)
    return chart, spec


def _render(chart, vals, skip_schema=False):
    out = helm_run.template(chart, values=[values_yaml(vals)], root=REPO,
                            extra_args=["--skip-schema-validation"] if skip_schema else None)
    return [d for d in strict_load_all(out.text) if d.get("kind") == "PrometheusRule"]


@pytest.mark.parametrize("vals", [
    {"monitoring": None},            # null deletes the key: parent absent
    {"monitoring": {"enabled": None}},
    {"monitoring": {"enabled": False}},
    {"enabled": False},
    {"enabled": None},
], ids=repr)
def test_gate_absent_null_or_false_renders_nothing(synth, helm_bin, vals):
    chart, _ = synth
    assert _render(chart, vals) == []


@pytest.mark.parametrize("vals", [
    {"monitoring": "x"}, {"monitoring": ["enabled"]}, {"monitoring": True}, {"monitoring": 1},
    {"monitoring": {"enabled": "true"}}, {"monitoring": {"enabled": "yes"}}, {"monitoring": {"enabled": 1}},
    {"enabled": "true"},
], ids=repr)
def test_gate_of_wrong_shape_renders_nothing_without_schema(synth, helm_bin, vals):
    """With schema validation skipped, a gate that is not the boolean true (or a parent that is
    not a map) switches the PrometheusRule off instead of failing the template (sprig's dig
    would panic on a non-map parent)."""
    chart, _ = synth
    assert _render(chart, vals, skip_schema=True) == []


def test_gate_parent_null_in_chart_values_renders_nothing(helm_bin, tmp_path):
    """``monitoring:`` left empty (null) in the chart's own values.yaml passes the schema and
    renders nothing."""
    chart, _ = write_chart(tmp_path, SYNTH, values_text="enabled: true\nmonitoring:\n", gates_on=False)
    text = (chart / "values.yaml").read_text(encoding="utf-8")
    assert text.startswith("enabled: true\nmonitoring:\n")
    assert _render(chart, {}) == []
    ok, out = helm_run.lint(chart)
    assert ok, out


def test_empty_parent_map_renders_nothing(helm_bin, tmp_path):
    chart, _ = write_chart(tmp_path, SYNTH, values_text="enabled: true\nmonitoring: {}\n", gates_on=False)
    assert _render(chart, {}) == []
    assert len(_render(chart, {"monitoring": {"enabled": True}})) == 1


@pytest.mark.parametrize("vals", [
    {"prometheusRule": "x"}, {"prometheusRule": None}, {"prometheusRule": []},
    {"prometheusRule": {"disabled": ["OneA"], "customRules": "x", "groups": "x",
                        "additionalRuleLabels": [], "additionalRuleAnnotations": 1,
                        "labels": "x", "annotations": True, "runbookUrl": 5}},
    {"prometheusRule": {"groups": {"one": None, "two": "off"}, "customRules": {"OneA": None, "OneB": []},
                        "disabled": {"OneA": "true", "OneB": None}}},
    {"prometheusRule": {"groups": {"one": {"enabled": None, "additionalRuleLabels": "x"}},
                        "customRules": {"OneA": {"labels": "x", "annotations": [], "severity": 3}}}},
], ids=repr)
def test_knobs_of_wrong_shape_fall_back_to_defaults(synth, helm_bin, vals):
    """Knobs that are not maps/booleans/strings where expected count as unset: the default
    rules render, exactly as the spec says, and helm does not fail."""
    chart, spec = synth
    prs = _render(chart, vals, skip_schema=True)
    assert len(prs) == 1
    assert prs[0]["spec"]["groups"] == rule_groups(spec, SITE)


def test_schema_rejects_wrong_shaped_knobs(synth, helm_bin):
    chart, _ = synth
    with pytest.raises(HelmError, match=r"/prometheusRule/disabled/OneA"):
        _render(chart, {"prometheusRule": {"disabled": {"OneA": "true"}}})


def test_group_toggle_and_disable_matrix_on_synthetic_chart(synth, helm_bin):
    """Disabling every rule of a group drops the group (never ``rules: null``); disabling all
    groups drops the PrometheusRule."""
    chart, _ = synth
    prs = _render(chart, {"prometheusRule": {"disabled": {"OneA": True, "OneB": True}}})
    assert [g["name"] for g in prs[0]["spec"]["groups"]] == ["two"]
    prs = _render(chart, {"prometheusRule": {"disabled": {"OneA": True}}})
    assert [[r.get("alert", r.get("record")) for r in g["rules"]] for g in prs[0]["spec"]["groups"]] \
        == [["OneB"], ["job:up:sum"]]
    assert _render(chart, {"prometheusRule": {"disabled": {"OneA": True, "OneB": True, "job:up:sum": True}}}) == []
    assert _render(chart, {"prometheusRule": {"groups": {"one": {"enabled": False}},
                                              "disabled": {"job:up:sum": True}}}) == []
    prs = _render(chart, {"prometheusRule": {"groups": {"one": {"enabled": False}}}})
    assert list(rules_by_name(prs[0]["spec"]["groups"])) == [("two", "job:up:sum")]


def test_build_says_a_new_chart_is_off_until_its_gates_are_turned_on(project, capsys):
    # a new user's chart rendered nothing with helm template, and nothing said why
    from rulegen.cli import main
    (project / "rules/orderbook.yaml").write_text(
        "app: orderbook\nrunbook:\n  owner: {team: trading}\ngroups:\n  - name: orderbook\n    rules:\n      - alert: OrderbookDown\n"
        "        expr: up{job=\"orderbook\"} == 0\n        for: 5m\n        severity: critical\n"
        "        summary: orderbook is down.\n        description: No orderbook target answers.\n"
        "        runbook:\n          resolution: [Restart the orderbook deployment.]\n", encoding="utf-8")
    assert main(["-C", str(project), "build"]) == 0
    out = capsys.readouterr().out
    assert ("new chart charts/orderbook: its PrometheusRule renders only when enabled and "
            "monitoring.enabled are true; charts/orderbook/values.yaml sets them false until you "
            "turn them on there (or with helm --set, or in the Argo CD Application)") in out.splitlines()
    values = yaml.safe_load((project / "charts/orderbook/values.yaml").read_text())
    assert values["enabled"] is False and values["monitoring"]["enabled"] is False
    assert main(["-C", str(project), "build"]) == 0
    assert "new chart" not in capsys.readouterr().out  # said once, when the chart is made
