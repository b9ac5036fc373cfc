"""Thresholds as knobs: ``params:`` of an alert's expr (``[[name]]``), their defaults in the
rules file, values overrides through the real helm, the values schema's types, the runbook
page, and the validation codes RG731/RG732."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from rulegen.render import helm as helm_render
from rulegen.render.plain import rule_groups
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run
from rulegen.tools.helm import HelmError

from helpers.helm import SITE, make_spec, rules_by_name, strict_load_all, write_chart

SPEC = {"app": "redis", "groups": [{"name": "redis", "rules": [
    {"alert": "RedisDown", "expr": "redis_up == 0", "for": "1m", "severity": "critical"},
    {"alert": "RedisMemoryHigh", "expr": "redis_memory_used_bytes / redis_memory_max_bytes\n  > [[threshold]]\n",
     "params": {"threshold": {"default": 0.9, "description": "Fraction of maxmemory in use."}},
     "for": "5m", "severity": "warning"},
    {"alert": "RedisRejected", "expr": "increase(redis_rejected_connections_total[[[window]]]) > [[count]]",
     "params": {"window": "5m", "count": 10}, "severity": "warning"},
]}]}


def test_the_spec_expr_holds_the_defaults():
    spec = make_spec(SPEC)
    rules = {r.name: r for _, r in spec.rules()}
    assert rules["RedisMemoryHigh"].expr == "redis_memory_used_bytes / redis_memory_max_bytes\n  > 0.9\n"
    assert rules["RedisRejected"].expr == "increase(redis_rejected_connections_total[5m]) > 10"
    assert rules["RedisRejected"].expr_template == SPEC["groups"][0]["rules"][2]["expr"]
    assert rules["RedisDown"].params == {} and rules["RedisDown"].expr_template is None


def test_rules_file_keeps_the_defaults_and_the_metadata_file_the_exprs_by_name(tmp_path):
    """The rules file holds the exprs with their defaults and no comment lines; the metadata
    file holds each parameterised alert by group and name (never by position): its expr as
    written and its defaults, as plain YAML."""
    spec = make_spec(SPEC)
    text = helm_render.render_rules_file(spec, tmp_path, SITE, ["# h"])
    lines = text.splitlines()
    assert not any(ln.startswith("# rulegen-") for ln in lines)
    body = [ln for ln in lines if not ln.startswith("#")]
    assert "        expr: increase(redis_rejected_connections_total[5m]) > 10" in body
    assert not any("[[" in ln for ln in body)
    meta = helm_render.render_meta_file(spec, tmp_path, SITE, ["# h"])
    assert yaml.safe_load(meta)["params"] == {"redis": {
        "RedisMemoryHigh": {"expr": SPEC["groups"][0]["rules"][1]["expr"], "defaults": {"threshold": "0.9"}},
        "RedisRejected": {"expr": SPEC["groups"][0]["rules"][2]["expr"], "defaults": {"window": "5m", "count": "10"}}}}
    assert "\n".join(ln for ln in meta.splitlines() if not ln.startswith("#")).split("params:\n")[1] == (
        "  redis:\n"
        "    RedisMemoryHigh:\n"
        "      expr: |\n"
        "        redis_memory_used_bytes / redis_memory_max_bytes\n"
        "          > [[threshold]]\n"
        "      defaults:\n"
        '        threshold: "0.9"\n'
        "    RedisRejected:\n"
        "      expr: increase(redis_rejected_connections_total[[[window]]]) > [[count]]\n"
        "      defaults:\n"
        "        window: 5m\n"
        '        count: "10"')


@pytest.fixture(scope="module")
def chart(tmp_path_factory):
    return write_chart(tmp_path_factory.mktemp("params"), SPEC)


def _rules(chart, **kw):
    out = helm_run.template(chart[0], **kw)
    (pr,) = [d for d in strict_load_all(out.text) if d.get("kind") == "PrometheusRule"]
    return rules_by_name(pr["spec"]["groups"])


@pytest.mark.tools
def test_an_override_changes_that_expr_and_nothing_else(chart, helm_bin):
    baseline = _rules(chart)
    assert list(baseline.values()) == [r for g in rule_groups(chart[1], SITE) for r in g["rules"]]
    for kw in ({"values": [values_yaml({"prometheusRule": {"customRules": {"RedisMemoryHigh": {"params": {"threshold": 0.95}}}}})]},
               {"set_values": ["prometheusRule.customRules.RedisMemoryHigh.params.threshold=0.95"]}):
        after = _rules(chart, **kw)
        changed = {k: r for k, r in after.items() if r != baseline[k]}
        assert list(changed) == [("redis", "RedisMemoryHigh")], kw
        assert changed[("redis", "RedisMemoryHigh")] == {
            **baseline[("redis", "RedisMemoryHigh")],
            "expr": "redis_memory_used_bytes / redis_memory_max_bytes\n  > 0.95\n"}, kw


@pytest.mark.tools
@pytest.mark.parametrize("params,expr", [
    ({"count": 1000000}, "increase(redis_rejected_connections_total[5m]) > 1000000"),
    ({"count": 2.5e-7, "window": "1h30m"}, "increase(redis_rejected_connections_total[1h30m]) > 2.5e-07"),
    ({"window": "10m"}, "increase(redis_rejected_connections_total[10m]) > 10"),
], ids=["int", "float-and-duration", "one-of-two"])
def test_numbers_and_durations_are_written_as_promql(chart, helm_bin, promtool_bin, tmp_path, params, expr):
    after = _rules(chart, values=[values_yaml({"prometheusRule": {"customRules": {"RedisRejected": {"params": params}}}})])
    assert after[("redis", "RedisRejected")]["expr"] == expr
    f = tmp_path / "r.yaml"
    import yaml
    f.write_text(yaml.safe_dump({"groups": [{"name": "g", "rules": [after[("redis", "RedisRejected")]]}]}))
    proc = subprocess.run([str(promtool_bin), "check", "rules", str(f)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


@pytest.mark.tools
@pytest.mark.parametrize("sets,error", [
    (["prometheusRule.customRules.RedisMemoryHigh.params.treshold=1"],
     "- at '/prometheusRule/customRules/RedisMemoryHigh/params': additional properties 'treshold' not allowed"),
    (["prometheusRule.customRules.RedisRejected.params.window=5 minutes"],
     "- at '/prometheusRule/customRules/RedisRejected/params/window': '5 minutes' does not match pattern "),
    (["prometheusRule.customRules.RedisMemoryHigh.params.threshold=high"],
     "- at '/prometheusRule/customRules/RedisMemoryHigh/params/threshold': 'high' does not match pattern "),
    (["prometheusRule.customRules.RedisDown.params.threshold=1"],
     "- at '/prometheusRule/customRules/RedisDown': additional properties 'params' not allowed"),
    (["prometheusRule.customRules.RedisRejected.params.window=0s"],
     "- at '/prometheusRule/customRules/RedisRejected/params/window': 'not' failed"),
    (["prometheusRule.customRules.RedisRejected.params.window=0"],
     "- at '/prometheusRule/customRules/RedisRejected/params/window': got number, want string"),
], ids=["typo", "duration", "number", "no-params", "zero-range", "zero"])
def test_the_schema_types_each_parameter(chart, helm_bin, sets, error):
    with pytest.raises(HelmError) as e:
        helm_run.template(chart[0], set_values=sets)
    assert str(e.value).splitlines()[2].startswith(error)


def test_only_a_duration_written_as_a_range_must_not_be_zero():
    # regression: `window: 0s` passed the schema and promtool then rejected `[0s]`
    import json
    import re
    from rulegen.render.values import render_values_schema
    import copy
    spec = copy.deepcopy(SPEC)
    rejected = spec["groups"][0]["rules"][2]
    rejected["expr"] = "increase(redis_rejected_connections_total[[[window]]] offset [[shift]]) > [[count]]"
    rejected["params"]["shift"] = "0s"
    doc = json.loads(render_values_schema(make_spec(spec), None))
    params = doc["properties"]["prometheusRule"]["properties"]["customRules"]["properties"]["RedisRejected"][
        "properties"]["params"]["properties"]
    zero = re.compile(params["window"]["not"]["pattern"])
    assert all(zero.search(v) for v in ("0", "0s", "0m0s", "00h"))
    assert not any(zero.search(v) for v in ("5m", "1h0m", "10s", "0s5ms"))
    assert "not" not in params["shift"] and params["shift"]["$ref"].endswith("/duration")


def test_a_number_parameter_schema_fits_a_line_and_reads_promql_numbers():
    """Regression (issue 29: no line over 120 characters): a number parameter's pattern was
    written inline at the parameter's depth, a 135-character line of values.schema.json in
    every chart with one. It is one ``promqlNumber`` definition now (only in such a chart),
    and the pattern, written with ``\\d``, reads the same PromQL number literals."""
    import json
    import re
    from rulegen.render.values import render_values_schema
    text = render_values_schema(make_spec(SPEC), None)
    assert max(len(line) for line in text.splitlines()) <= 120
    doc = json.loads(text)
    knobs = doc["properties"]["prometheusRule"]
    params = knobs["properties"]["customRules"]["properties"]["RedisMemoryHigh"]["properties"]["params"]["properties"]
    assert params["threshold"]["$ref"].endswith("/definitions/promqlNumber")
    number = re.compile(knobs["definitions"]["promqlNumber"]["pattern"], re.ASCII)  # Go's and ECMA's \\d
    assert all(number.search(v) for v in ("0.95", "1", "-.5", "+3.", "2.5e-07", "1E3", "0x1F", "Inf", "-inf", "NaN"))
    assert not any(number.search(v) for v in ("high", "1.2.3", "e3", "0x", "٣", "1 ", ""))
    no_numbers = {"app": "x", "groups": [{"name": "x", "rules": [
        {"alert": "XRejected", "expr": "increase(x_total[[[window]]]) > 1", "params": {"window": "5m"}}]}]}
    assert "promqlNumber" not in render_values_schema(make_spec(no_numbers), None)


def test_runbook_page_names_the_knob():
    from rulegen.render.runbook import params_note
    spec = make_spec(SPEC)
    rules = {r.name: r for _, r in spec.rules()}
    assert params_note(rules["RedisMemoryHigh"], "prometheusRule") == (
        "\n\n**Knobs** (the chart's values; the expr above shows the defaults):\n\n"
        "- `prometheusRule.customRules.RedisMemoryHigh.params.threshold` (default `0.9`): Fraction of maxmemory in use.")
    assert params_note(rules["RedisDown"], "prometheusRule") == ""


def _findings(tmp_path: Path, spec_text: str):
    from rulegen.pipeline import load_project
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/x.yaml").write_text(spec_text, encoding="utf-8")
    return [(f.line, f.col, f.code, f.severity.value, f.message) for f in load_project(tmp_path).findings
            if f.code in ("RG731", "RG732")]


BAD = """\
app: x
groups:
  - name: x
    rules:
      - alert: XHigh
        expr: x > [[treshold]]
        params:
          threshold: 0.9
        severity: warning
        summary: X is high.
        description: X is high.
      - record: x:sum
        expr: sum(x) > [[limit]]
"""


def test_undeclared_and_unused_parameters_are_reported(tmp_path):
    assert _findings(tmp_path, BAD) == [
        (6, 19, "RG731", "error", "`[[treshold]]` in the expr names no parameter of this alert; did you mean threshold?"),
        (8, 11, "RG732", "warning", "parameter `threshold` is not used in the expr (write `[[threshold]]` where its "
                                    "value goes); a values override of it would change nothing"),
        (13, 24, "RG731", "error", "`[[limit]]` in the expr of a recording rule: only alerts take parameters"),
    ]


def test_a_bad_parameter_name_is_reported_once_at_the_placeholder(tmp_path):
    """Regression (new-user review): a bad ``[[name]]`` gave RG731 and a follow-on RG301
    (the placeholder does not parse as PromQL) at the same place; two bad names in one expr
    were one finding at the expr's start."""
    from rulegen.pipeline import load_project
    text = BAD.replace("x > [[treshold]]", "rate(x[[[windw]]]) > [[treshold]]").replace(
        "threshold: 0.9", "threshold: 0.9\n          window: 5m")
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/x.yaml").write_text(text, encoding="utf-8")
    found = [(f.line, f.col, f.code) for f in load_project(tmp_path).findings
             if f.code in ("RG731", "RG301", "RG303")]
    assert found == [(6, 22, "RG731"), (6, 36, "RG731"), (14, 24, "RG731")]


def test_no_upstream_expr_holds_a_placeholder(shared_dir):
    """The corpora (awesome-prometheus-alerts, kube-prometheus-stack rendered) stay quiet:
    ``[[`` does not occur in a real expr, so RG731 cannot fire on one."""
    import yaml
    from rulegen.spec.model import PARAM_RE
    n = hits = 0
    for f in sorted((shared_dir / "corpus").rglob("*.y*ml")):
        try:
            docs = list(yaml.safe_load_all(f.read_text(encoding="utf-8")))
        except yaml.YAMLError:
            continue  # Helm templates, not YAML
        for doc in docs:
            groups = (doc or {}).get("groups") or ((doc or {}).get("spec") or {}).get("groups") or [] \
                if isinstance(doc, dict) else []
            for g in groups:
                for r in g.get("rules") or []:
                    if isinstance(r, dict) and "expr" in r:
                        n += 1
                        hits += bool(PARAM_RE.search(str(r["expr"])))
    assert n > 900 and hits == 0, (n, hits)
