"""Adopting kube-prometheus-stack: the chart rendered by the real helm, imported, built and
checked with the default configuration; the rules helm renders from the generated charts
equal the chart's own rendering, 249/249, and the PrometheusRule labels its Prometheus'
``ruleSelector`` needs (``release: kps``) are kept.

Corpus: "kube-prometheus-stack" by the Prometheus community Helm chart maintainers,
Apache License 2.0, read from ``../shared/corpus/kube-prometheus-stack`` (see its README);
nothing of it is copied into the project.
"""

from __future__ import annotations

import pytest
import yaml

from rulegen.cli import main
from rulegen.importer.compare import compare_groups
from rulegen.pipeline import load_project
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm

from helpers import REPO, SHARED
from helpers.chartfixture import mini_chart
from helpers.helm import write_outputs

pytestmark = [pytest.mark.slow, pytest.mark.tools]

KPS = SHARED / "corpus" / "kube-prometheus-stack"
HELM_FLAGS = ["--release", "kps", "--namespace", "monitoring", "--kube-version", "1.33.0"]


def _originals() -> dict:
    """The chart's own rendering (``rendered-defaults.yaml``): PrometheusRule name -> object."""
    return {d["metadata"]["name"]: d for d in yaml.safe_load_all((KPS / "rendered-defaults.yaml").read_text())
            if d and d.get("kind") == "PrometheusRule"}


def _compare_with_chart(root, specs) -> tuple[int, list, list]:
    """(rules equal, differences, rendered PrometheusRules): each spec's chart rendered by
    helm (gates on, namespace monitoring) against the chart's own rendering."""
    originals = _originals()
    assert (len(originals), sum(len(g["rules"]) for d in originals.values() for g in d["spec"]["groups"])) \
        == (35, 249)
    equal, diffs, prs = 0, [], []
    for spec in specs:
        [pr] = helm.template(root / spec.chart.path, values=[values_yaml(gate_values(spec.chart.gates))], root=REPO,
                             namespace="monitoring").prometheus_rules()
        e, d = compare_groups(originals[pr["metadata"]["name"]]["spec"]["groups"], pr["spec"]["groups"])
        equal += e
        diffs += d
        prs.append(pr)
    return equal, diffs, prs


def test_kps_rendered_chart_adopted(tmp_path, helm_bin, capsys, shared_dir):
    root = tmp_path
    assert main(["-C", str(root), "import", str(KPS / "chart"), *HELM_FLAGS]) == 0
    for cmd in ("build", "check"):
        assert main(["-C", str(root), cmd]) == 0, capsys.readouterr()
    loaded = load_project(root)
    assert len(loaded.specs) == 35
    equal, diffs, prs = _compare_with_chart(root, loaded.specs)
    for pr in prs:
        assert pr["metadata"]["namespace"] == "monitoring"
        # the labels kube-prometheus-stack's Prometheus selects rules by
        assert pr["metadata"]["labels"]["release"] == "kps", pr["metadata"]["name"]
        assert pr["metadata"]["labels"]["app"] == "kube-prometheus-stack"
    assert diffs == []
    assert {pr["metadata"]["name"] for pr in prs} == set(_originals())
    assert equal == 249
    # apps are named after what tells the PrometheusRules apart, not the release's fullname
    assert "alertmanager-rules" in {s.app for s in loaded.specs}


def test_helm_default_kube_version_meets_kube_prometheus_stack(tmp_path, helm_bin):
    """The advice of docs/import.md (no --kube-version needed for kube-prometheus-stack): the
    pinned helm renders a chart with kube-prometheus-stack's own constraint, and its default is not 1.20."""
    import re
    import subprocess
    constraint = re.search(r'^kubeVersion: "(.*)"$', (KPS / "chart/Chart.yaml").read_text(encoding="utf-8"), re.M)
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text(f"apiVersion: v2\nname: kv\nversion: 0.1.0\nkubeVersion: \"{constraint.group(1)}\"\n",
                                      encoding="utf-8")
    (chart / "templates/kv.yaml").write_text("kube: {{ .Capabilities.KubeVersion.Version }}\n", encoding="utf-8")
    out = subprocess.run([str(helm_bin), "template", str(chart)], capture_output=True, text=True, check=True).stdout
    version = re.search(r"^kube: v1\.(\d+)\.", out, re.M)
    assert version and int(version.group(1)) > 20, out


def test_a_kube_version_constraint_helm_rejects_says_how_to_pass_one(tmp_path, helm_bin, capsys):
    # kube-prometheus-stack's `kubeVersion: ">=1.19.0-0"` failed with helm builds whose default
    # Kubernetes version is older; the release-stamped helm defaults to a current one, so a chart
    # asking for a future version stands in for that case
    chart = tmp_path / "chart"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: future\nversion: 0.1.0\n"
                                      "kubeVersion: \">=99.0.0-0\"\n", encoding="utf-8")
    project = tmp_path / "project"
    project.mkdir()
    assert main(["-C", str(project), "import", str(chart)]) == 2
    err = capsys.readouterr().err
    assert "--kube-version 1.33.0" in err and "--static" in err
    assert list(project.iterdir()) == []


# --- static reading of the 41 templates ---------------------------------------------------------

def test_kps_templates_read_statically(tmp_path, shared_dir):
    """The chart's idioms are read with its values.yaml: `dig "<Alert>" "for" "15m"
    .Values.customRules` is the default, `$kubeStateMetricsJob := include ...` variables,
    `.Values.defaultRules.runbookUrl` prefixes, empty `range`/`toYaml` blocks print nothing.
    All 155 alerts come in (target >= 140); the 6 templates off by default are RG816 notes."""
    from rulegen.importer import import_paths
    from rulegen.importer.chart import RenderOptions
    res = import_paths([KPS / "chart"], out_dir=tmp_path / "rules", display_base=KPS,
                       render=RenderOptions(static=True, release="kps", namespace="monitoring"))
    assert [n for n in res.notes if n.is_error] == []
    assert (sum(s.alerts for s in res.specs), sum(s.records for s in res.specs)) == (155, 94)
    off = sorted(n.file.rsplit("/", 1)[1] for n in res.notes if n.code == "RG816")
    assert off == ["k8s.rules.container_cpu_limits.yaml", "k8s.rules.container_cpu_requests.yaml",
                   "k8s.rules.container_memory_limits.yaml", "k8s.rules.container_memory_requests.yaml",
                   "windows.node.rules.yaml", "windows.pod.rules.yaml"]
    rules = {r["alert"]: r for s in res.specs for g in yaml.safe_load(s.text)["groups"] for r in g["rules"]
             if "alert" in r}
    a = rules["AlertmanagerFailedReload"]
    assert (a["for"], a["severity"]) == ("10m", "critical")   # dig defaults
    assert a["annotations"]["runbook_url"] == \
        "https://runbooks.prometheus-operator.dev/runbooks/alertmanager/alertmanagerfailedreload"
    assert 'job="kps-kube-prometheus-stack-alertmanager"' in a["expr"]   # variable from a helper
    assert 'namespace="monitoring"' in a["expr"]
    ksm = rules["KubeStateMetricsListErrors"]["expr"]
    assert "by (cluster)" in ksm and "{{" not in ksm                    # empty range: nothing
    assert 'job="kube-state-metrics"' in ksm
    names = {s.app for s in res.specs}
    assert "alertmanager-rules" in names and len(names) == 35


@pytest.mark.tools
def test_kps_templates_read_statically_render_as_the_chart_does(tmp_path, helm_bin, shared_dir):
    """Built from the statically read specs, helm renders the chart's own rules: 249/249
    (multi-line descriptions included: a line that held only `{{- end }}` is no line)."""
    from rulegen.importer import import_paths, write_specs
    from rulegen.importer.chart import RenderOptions
    from rulegen.render import plan
    res = import_paths([KPS / "chart"], out_dir=tmp_path / "rules", display_base=tmp_path,
                       render=RenderOptions(static=True, release="kps", namespace="monitoring"))
    write_specs(res, tmp_path / "rules")
    loaded = load_project(tmp_path)
    outputs, _ = plan(loaded.specs, tmp_path)
    write_outputs(tmp_path, outputs)
    equal, diffs, _ = _compare_with_chart(tmp_path, loaded.specs)
    assert diffs == []
    assert equal == 249


def test_static_reading_reports_every_unreadable_construct(tmp_path):
    """Each construct that cannot be read is reported, all of them, per rule, with the hint."""
    from rulegen.importer import import_paths
    chart = mini_chart(tmp_path, "x: {}\n", {"r.yaml":
        "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: r\n"
        "  labels: {{- include \"c.labels\" . | nindent 4 }}\nspec:\n  groups:\n    - name: g\n      rules:\n"
        "        - alert: A\n          expr: up{job=\"{{ .Capabilities.KubeVersion.Major }}\"} == 0\n"
        "          for: {{ lookup \"v1\" \"Pod\" \"\" \"\" }}\n"
        "        - alert: B\n          expr: up == 0\n          for: {{ dig \"B\" \"for\" \"7m\" .Values.x }}\n"})
    res = import_paths([chart], out_dir=tmp_path / "rules", display_base=tmp_path)
    a = [(n.line, n.code) for n in res.notes if n.rule == "A"]
    assert a == [(11, "RG802"), (12, "RG802")]     # both constructs of A, not only the first
    assert all("rulegen import CHART_DIR" in n.message for n in res.notes if n.rule == "A")
    [spec] = res.specs
    [b] = yaml.safe_load(spec.text)["groups"][0]["rules"]
    assert (b["alert"], b["for"]) == ("B", "7m")
    # `labels: {{- include ... | nindent 4}}` on the key's line is valid YAML, not RG801
    assert not any(n.code == "RG801" for n in res.notes)


def test_helper_that_prints_a_constant_is_known(tmp_path):
    from rulegen.importer import import_paths
    helpers = ('{{- define "providerTeam" -}}\n{{- default "storage" .Values.team.name -}}\n{{- end -}}\n'
               '{{- define "c.labels" -}}\napp: c\nteam: {{ include "providerTeam" . }}\n{{- end -}}\n')
    chart = mini_chart(tmp_path, "team: {name: ''}\n", {"r.yaml":
        "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: r\n"
        "  labels: {{- include \"c.labels\" . | nindent 4 }}\nspec:\n  groups:\n    - name: g\n      rules:\n"
        "        - alert: A\n          expr: up == 0\n          labels:\n            team: {{ include \"providerTeam\" . }}\n"},
        helpers)
    res = import_paths([chart], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [n for n in res.notes if n.is_error] == []
    [spec] = res.specs
    assert yaml.safe_load(spec.text)["groups"][0]["rules"][0]["labels"] == {"team": "storage"}
    assert spec.chart_labels == {"app": "c", "team": "storage"}
