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
from rulegen.run import helm

from conftest import REPO, SHARED

pytestmark = [pytest.mark.slow, pytest.mark.tools]

KPS = SHARED / "corpus" / "kube-prometheus-stack"
HELM_FLAGS = ["--release", "kps", "--namespace", "monitoring", "--kube-version", "1.33.0"]


def test_kps_rendered_chart_adopted(tmp_path, helm_bin, capsys, shared_dir):
    root = tmp_path
    assert main(["-C", str(root), "import", str(KPS / "chart"), *HELM_FLAGS]) == 0
    for cmd in ("build", "check"):
        assert main(["-C", str(root), cmd]) == 0, capsys.readouterr()
    originals = {d["metadata"]["name"]: d for d in yaml.safe_load_all((KPS / "rendered-defaults.yaml").read_text())
                 if d and d.get("kind") == "PrometheusRule"}
    n_rules = sum(len(g["rules"]) for d in originals.values() for g in d["spec"]["groups"])
    assert (len(originals), n_rules) == (35, 249)
    loaded = load_project(root)
    assert len(loaded.specs) == 35
    equal, diffs, names = 0, [], set()
    for spec in loaded.specs:
        r = helm.template(root / spec.chart.path, values=[helm.gate_values(spec.chart.gates)], root=REPO,
                          namespace="monitoring")
        [pr] = r.prometheus_rules()
        names.add(pr["metadata"]["name"])
        assert pr["metadata"]["namespace"] == "monitoring"
        # the labels kube-prometheus-stack's Prometheus selects rules by
        assert pr["metadata"]["labels"]["release"] == "kps", spec.app
        assert pr["metadata"]["labels"]["app"] == "kube-prometheus-stack"
        e, d = compare_groups(originals[pr["metadata"]["name"]]["spec"]["groups"], pr["spec"]["groups"])
        equal += e
        diffs += d
    assert diffs == []
    assert names == set(originals)
    assert equal == 249
    # apps are named after what tells the PrometheusRules apart, not the release's fullname
    assert "alertmanager-rules" in {s.app for s in loaded.specs}


def test_kps_needs_kube_version_and_says_so(tmp_path, helm_bin, capsys, shared_dir):
    assert main(["-C", str(tmp_path), "import", str(KPS / "chart")]) == 2
    err = capsys.readouterr().err
    assert "--kube-version 1.33.0" in err and "--static" in err
    assert list(tmp_path.iterdir()) == []
