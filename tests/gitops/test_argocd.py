"""Argo CD: the PrometheusRule every bundled chart renders (with the real helm) holds only what
the API server and the Prometheus Operator keep as is, so a synced app never shows a diff.

* no null anywhere: the API server prunes nulls of CRD fields that are not ``nullable``;
* no empty map or list: ``labels: {}`` and ``labels: null`` compare unequal to a missing field
  in some diff modes, and the operator's types drop empty maps (``omitempty``);
* every label and annotation value (of the object and of each rule) a string: the operator's
  mutating webhook rewrites any other type into a string;
* durations (``for``, ``keep_firing_for``, group ``interval``/``query_offset``) in canonical form.

And the example Argo CD Application of ``examples/argocd`` points at a real chart, ignores the
one field the webhook adds, and renders with its own values.
"""

from __future__ import annotations


import pytest
import yaml

from rulegen.pipeline import load_project
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml
from rulegen.spec.durations import canonical
from rulegen.tools import helm

from helpers import REPO

APPLICATION = REPO / "examples" / "argocd" / "application.yaml"
DURATION_KEYS = ("for", "keep_firing_for", "interval", "query_offset")


def problems(node, path="") -> list[str]:
    """Everything in a rendered PrometheusRule that Argo CD would see change after a sync."""
    out = []
    if node is None:
        return [f"{path}: null"]
    if isinstance(node, dict):
        if not node:
            out.append(f"{path}: empty map")
        for k, v in node.items():
            here = f"{path}.{k}"
            if not isinstance(k, str):
                out.append(f"{here}: key is {type(k).__name__}")
            if k in ("labels", "annotations") and isinstance(v, dict):
                out += [f"{here}.{lk}: {type(lv).__name__} value {lv!r}" for lk, lv in v.items()
                        if not isinstance(lv, str)]
            if k in DURATION_KEYS and path.count(".") >= 2:  # inside spec.groups
                if not isinstance(v, str):
                    out.append(f"{here}: duration is {type(v).__name__}")
                elif canonical(v) != v:
                    out.append(f"{here}: {v!r} is not canonical ({canonical(v)!r})")
            out += problems(v, here)
    elif isinstance(node, list):
        if not node:
            out.append(f"{path}: empty list")
        for i, v in enumerate(node):
            out += problems(v, f"{path}[{i}]")
    return out


def test_walker_finds_what_argocd_would_show():
    bad = {"metadata": {"name": "x", "labels": {"a": 1}, "annotations": {}},
           "spec": {"groups": [{"name": "g", "interval": "60s", "rules": [
               {"alert": "A", "expr": "up", "for": "90s", "labels": None,
                "annotations": {"summary": True}}]}]}}
    assert problems(bad) == [
        ".metadata.labels.a: int value 1",
        ".metadata.annotations: empty map",
        ".spec.groups[0].interval: '60s' is not canonical ('1m')",
        ".spec.groups[0].rules[0].for: '90s' is not canonical ('1m30s')",
        ".spec.groups[0].rules[0].labels: null",
        ".spec.groups[0].rules[0].annotations.summary: bool value True",
    ]


def _specs():
    return load_project(REPO).specs


def _value_sets(spec) -> dict[str, list[dict]]:
    gates = gate_values(spec.chart.gates)
    first = spec.alerts()[0].name if spec.alerts() else spec.groups[0].rules[0].name
    rules = [r.name for _, r in spec.rules()]
    key = spec.chart.values_key
    return {
        "defaults": [gates],
        "every knob": [gates, {key: {
            "labels": {"release": "kube-prometheus-stack"},
            "annotations": {"owner": "team-a"},
            "additionalRuleLabels": {"cluster": "prod"},
            "additionalRuleAnnotations": {"dashboard": "https://grafana.example.com/d/x"},
            "customRules": {first: {"for": "1h", "keepFiringFor": "10m", "severity": "info",
                                    "labels": {"tier": "gold"}, "annotations": {"note": "tuned"}}},
        }}],
        "all but one rule disabled": [gates, {key: {"disabled": {r: True for r in rules[1:]}}}],
    }


CASES = [(s.chart.path, name) for s in _specs() for name in ("defaults", "every knob", "all but one rule disabled")]


@pytest.mark.parametrize("chart,case", CASES)
def test_rendered_prometheusrule_is_kept_as_is(helm_bin, chart, case):
    spec = next(s for s in _specs() if s.chart.path == chart)
    rendered = helm.template(REPO / chart, [values_yaml(v) for v in _value_sets(spec)[case]], root=REPO)
    rules = rendered.prometheus_rules()
    assert len(rules) == 1
    assert problems(rules[0]) == []
    n_rules = sum(len(g["rules"]) for g in rules[0]["spec"]["groups"])
    assert n_rules == (1 if case == "all but one rule disabled" else sum(1 for _ in spec.rules()))


def test_example_application_is_valid_and_ignores_only_the_webhook_annotation():
    app = yaml.safe_load(APPLICATION.read_text(encoding="utf-8"))
    assert (app["apiVersion"], app["kind"]) == ("argoproj.io/v1alpha1", "Application")
    src = app["spec"]["source"]
    assert (REPO / src["path"] / "Chart.yaml").is_file()
    assert all((REPO / src["path"] / f).is_file() for f in src["helm"]["valueFiles"])
    assert app["spec"]["ignoreDifferences"] == [{
        "group": "monitoring.coreos.com", "kind": "PrometheusRule",
        "jsonPointers": ["/metadata/annotations/prometheus-operator-validated"]}]
    assert "RespectIgnoreDifferences=true" in app["spec"]["syncPolicy"]["syncOptions"]


def test_example_application_renders_its_prometheusrule(helm_bin):
    app = yaml.safe_load(APPLICATION.read_text(encoding="utf-8"))
    src = app["spec"]["source"]
    chart = REPO / src["path"]
    values = [yaml.safe_load((chart / f).read_text(encoding="utf-8")) for f in src["helm"]["valueFiles"]]
    rendered = helm.template(chart, [values_yaml(v) for v in values + [src["helm"]["valuesObject"]]],
                             release=src["helm"]["releaseName"],
                             namespace=app["spec"]["destination"]["namespace"], root=REPO)
    (pr,) = rendered.prometheus_rules()
    assert pr["metadata"]["labels"]["release"] == "kube-prometheus-stack"  # the chart's own values.yaml's
    assert problems(pr) == []


def test_example_application_keeps_the_charts_own_rule_selector_label(helm_bin, tmp_path):
    """A new-user trial: the example's valuesObject set `release: kube-prometheus-stack`, which
    overrode the label `rulegen new --release` wrote into the chart's values.yaml. It sets only
    the gates: a chart copied with another release label renders with its own."""
    import shutil
    app = yaml.safe_load(APPLICATION.read_text(encoding="utf-8"))
    src = app["spec"]["source"]
    assert set(src["helm"]["valuesObject"]) == {"enabled", "monitoring"}
    chart = tmp_path / "chart"
    shutil.copytree(REPO / src["path"], chart, symlinks=False)
    values = chart / "values.yaml"
    text = values.read_text(encoding="utf-8")
    assert "    release: kube-prometheus-stack\n" in text
    values.write_text(text.replace("    release: kube-prometheus-stack\n", "    release: monitoring\n"),
                      encoding="utf-8")
    given = [yaml.safe_load((chart / f).read_text(encoding="utf-8")) for f in src["helm"]["valueFiles"]]
    rendered = helm.template(chart, [values_yaml(v) for v in given + [src["helm"]["valuesObject"]]],
                             release=src["helm"]["releaseName"], namespace=app["spec"]["destination"]["namespace"],
                             root=tmp_path)
    (pr,) = rendered.prometheus_rules()
    assert pr["metadata"]["labels"]["release"] == "monitoring"


def test_spec_durations_are_rendered_canonically(helm_bin, project):
    from rulegen.cli import main
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text(encoding="utf-8")
    assert text.count("for: 5m") == 1 and text.count("for: 10m") == 1
    spec.write_text(text.replace("for: 5m", "for: 300s").replace("for: 10m", "for: 1h0m"), encoding="utf-8")
    assert main(["-C", str(project), "build", "rules/llama-swap.yaml"]) == 0
    rendered = helm.template(project / "charts/llama-swap", [values_yaml({"enabled": True, "monitoring": {"enabled": True}})],
                             root=REPO)
    (pr,) = rendered.prometheus_rules()
    fors = {r["alert"]: r["for"] for g in pr["spec"]["groups"] for r in g["rules"]}
    assert fors == {"LlamaSwapDown": "5m", "LlamaSwapNoMetrics": "1h"}
    assert problems(pr) == []


def test_leftover_temp_file_in_templates_is_not_rendered_by_helm(helm_bin, project):
    """A build killed before its rename leaves ``templates/.prometheusrule.yaml.<pid>.<x>.rulegen-tmp``
    (a whole copy of the template); Argo CD must not deploy it as a second PrometheusRule."""
    templates = project / "charts/llama-swap/templates"
    (templates / ".prometheusrule.yaml.999999.abc.rulegen-tmp").write_text(
        (templates / "prometheusrule.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    rendered = helm.template(project / "charts/llama-swap", [values_yaml({"enabled": True, "monitoring": {"enabled": True}})],
                             root=REPO)
    assert [pr["metadata"]["name"] for pr in rendered.prometheus_rules()] == ["llama-swap"]
