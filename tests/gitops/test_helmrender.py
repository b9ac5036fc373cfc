"""Issue 25: `rulegen check` renders every chart in one `rulegen-helmrender` process
(:func:`rulegen.tools.helm.template_many`) instead of one `helm template` per chart and values
file. The helper must print exactly what `helm template` prints for each chart, and the check's
findings must be byte for byte those of rendering each chart alone with the real helm (what
`check` did before), on the bundled project, on bad values and on an imported corpus chart."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.pipeline import load_project
from rulegen.tools import helm

from helpers import REPO, SHARED

KPS_CHART = SHARED / "corpus" / "kube-prometheus-stack" / "chart"

pytestmark = pytest.mark.tools("helm", "promtool", "rulegen-helmrender")


def _per_chart(monkeypatch) -> None:
    """Make :func:`helm.template_many` render every job with the real helm, one process each
    (the helper answers nothing): how `check` rendered before the helper."""
    monkeypatch.setattr(helm, "HELPER", "rulegen-no-such-helper")


def _check(root: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["-C", str(root), "check"])
    return code, capsys.readouterr().out


def _jobs(root: Path) -> list[helm.Job]:
    """Every app chart under ``root/charts`` as it is, with its gates on, and with an extra
    values file (the knob a team sets per cluster); the chart library is no app chart (a
    library chart is not installable, so helm refuses to render it)."""
    extra = root / "extra-values.yaml"
    extra.write_text("prometheusRule:\n  labels:\n    cluster: eu-1\n", encoding="utf-8")
    jobs = []
    for chart in sorted(p.parent for p in (root / "charts").glob("*/Chart.yaml")
                        if p.parent.name != "rulegen-library"):
        jobs += [helm.Job(chart), helm.Job(chart, set_values=("enabled=true",)),
                 helm.Job(chart, values_files=(str(extra),))]
    return jobs


def _library_layout(root: Path) -> tuple[Path, Path]:
    """A chart whose helpers come from a library chart it links in as a subchart
    (``charts/app/charts/lib -> ../../lib``, listed in its dependencies), the layout that
    moves rulegen's helpers out of each chart; and one listing a dependency it does not
    carry (helm refuses it)."""
    lib = root / "charts" / "lib"
    (lib / "templates").mkdir(parents=True)
    (lib / "Chart.yaml").write_text("apiVersion: v2\nname: lib\ntype: library\nversion: 0.1.0\n", encoding="utf-8")
    (lib / "templates" / "_lib.tpl").write_text('{{- define "lib.rule" -}}\nalert: {{ .name }}\nexpr: up == 0\n'
                                                "for: 5m\n{{- end }}\n", encoding="utf-8")
    app = root / "charts" / "app"
    (app / "templates").mkdir(parents=True)
    (app / "charts").mkdir()
    (app / "charts" / "lib").symlink_to("../../lib")
    (app / "Chart.yaml").write_text("apiVersion: v2\nname: app\nversion: 0.1.0\ndependencies:\n"
                                    "  - name: lib\n    version: 0.1.0\n", encoding="utf-8")
    (app / "values.yaml").write_text("enabled: true\n", encoding="utf-8")
    (app / "templates" / "rule.yaml").write_text(
        "{{- if .Values.enabled }}\napiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n"
        "  name: {{ .Release.Name }}-app\nspec:\n  groups:\n    - name: app\n      rules:\n"
        '        - {{- include "lib.rule" (dict "name" "AppDown") | nindent 10 }}\n{{- end }}\n', encoding="utf-8")
    missing = root / "charts" / "missing-dep"
    (missing / "templates").mkdir(parents=True)
    (missing / "Chart.yaml").write_text("apiVersion: v2\nname: missing-dep\nversion: 0.1.0\ndependencies:\n"
                                        "  - name: lib\n    version: 0.1.0\n", encoding="utf-8")
    return app, missing


def test_the_helper_prints_what_helm_template_prints(tmp_path, shared_dir):
    """The helper's text for each job equals `helm template`'s stdout byte for byte: the
    bundled charts (each three ways), kube-prometheus-stack's own chart (hundreds of
    templates, helpers, `.Capabilities`), the charts `rulegen import` made of it, and a chart
    taking its helpers from a linked library subchart."""
    root = tmp_path / "p"
    shutil.copytree(REPO / "charts", root / "charts", symlinks=True)
    jobs = _jobs(root)
    app, _missing = _library_layout(tmp_path / "lib-layout")
    jobs += [helm.Job(KPS_CHART), helm.Job(app), helm.Job(app, set_values=("enabled=false",))]
    imported = tmp_path / "kps"
    assert main(["-C", str(imported), "import", str(KPS_CHART), "--release", "kps", "--namespace", "monitoring",
                 "--kube-version", "1.33.0"]) == 0
    assert main(["-C", str(imported), "build"]) == 0
    gates = {s.chart.path: s.chart.gates for s in load_project(imported).specs}
    jobs += [helm.Job(imported / c, set_values=tuple(f"{g}=true" for g in gates[c])) for c in sorted(gates)]
    with helm.Batch(jobs, REPO) as batch:
        texts = batch._helper_texts()
    assert None not in texts, [(j.chart, j.set_values) for j, t in zip(jobs, texts) if t is None]
    for job, text in zip(jobs, texts):
        args = [a for f in job.values_files for a in ("--values", f)]
        alone = helm.template(job.chart, set_values=list(job.set_values), extra_args=args, root=REPO)
        assert text == alone.text, job
    assert sum("kind: PrometheusRule" in t for t in texts) >= len(gates) + 3


def test_template_many_is_template_of_each_job(tmp_path):
    """Same result or same error per job, whether the helper renders it or helm does: a bad
    value, a missing chart, a chart with a library subchart, one missing its dependency."""
    root = tmp_path / "p"
    shutil.copytree(REPO / "charts", root / "charts", symlinks=True)
    bad = root / "bad-values.yaml"
    bad.write_text("prometheusRule:\n  customRules:\n    X:\n      severity: page\n", encoding="utf-8")
    app, missing = _library_layout(tmp_path / "lib-layout")
    jobs = _jobs(root) + [helm.Job(root / "charts" / "noctaya", values_files=(str(bad),)),
                          helm.Job(root / "charts" / "missing"), helm.Job(app), helm.Job(missing)]
    many = helm.template_many(jobs, REPO)
    for job, got in zip(jobs, many):
        args = [a for f in job.values_files for a in ("--values", f)]
        try:
            want = helm.template(job.chart, set_values=list(job.set_values), extra_args=args, root=REPO)
        except helm.HelmError as e:
            assert isinstance(got, helm.HelmError) and str(got) == str(e), job
        else:
            assert isinstance(got, helm.Rendered) and (got.text, got.documents) == (want.text, want.documents), job


def _variants(root: Path) -> list[tuple[str, callable]]:
    """(name, edit) of the projects the check is compared on: as built, and the bad-values
    fixtures of tests/gitops/test_sync.py (a misspelt knob, an enum value, a type, an extra
    values file with a bad value, gates off with a template the CRD rejects when they are on, a
    hand-written template the CRD and the webhook reject)."""
    def values_edit(chart: str, old: str, new: str):
        def edit(r: Path):
            p = r / "charts" / chart / "values.yaml"
            text = p.read_text(encoding="utf-8")
            assert old in text, (chart, old)
            p.write_text(text.replace(old, new, 1), encoding="utf-8")
        return edit

    def extra_file(r: Path):
        (r / "deploy").mkdir(exist_ok=True)
        (r / "deploy/prod.yaml").write_text("prometheusRule:\n  customRules:\n    NoctayaLLMServiceDegraded:\n      for: 5\n"
                                            "  labels:\n    team: 5\n", encoding="utf-8")
        cfg = r / ".rulegen.yaml"
        cfg.write_text(cfg.read_text(encoding="utf-8") + "\ncharts:\n  values_files:\n"
                       "    charts/noctaya: [deploy/prod.yaml]\n", encoding="utf-8")

    def gates_off(r: Path):
        values_edit("noctaya", "enabled: true", "enabled: false")(r)
        (r / "charts/noctaya/templates/extra.yaml").write_text(
            "{{- if .Values.enabled }}\napiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n"
            "  name: extra\nspec:\n  groups:\n    - name: extra\n      rules:\n        - alert: ExtraDown\n"
            "          expr: up == 0\n          for: 5\n{{- end }}\n", encoding="utf-8")

    def hand_written(r: Path):
        (r / "charts/llama-swap/templates/extra.yaml").write_text(
            "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: extra\nspec:\n"
            "  groups:\n    - name: extra\n      rules:\n        - alert: ExtraDown\n          expr: up == 0\n"
            "          for: 5\n        - alert: Both\n          record: both:up\n          expr: up\n",
            encoding="utf-8")

    return [("as built", lambda r: None),
            ("misspelt knob", values_edit("noctaya", "customRules: {}",
                                          "customRules:\n    NoctayaLLMServiceDegraded:\n      params:\n        treshold: 3")),
            ("enum value", values_edit("inferencecache", "customRules: {}", "customRules:\n    InferenceCacheAwaitingFirstKVEvent:\n      severity: page")),
            ("type", values_edit("llama-swap", "  labels:\n    release: kube-prometheus-stack",
                                 "  labels:\n    release: kube-prometheus-stack\n    team: 5")),
            ("extra values file", extra_file),
            ("gates off", gates_off),
            ("hand-written template", hand_written)]


@pytest.mark.parametrize("variant", range(7))
def test_check_findings_are_those_of_one_helm_per_chart(tmp_path, monkeypatch, capsys, variant):
    root = tmp_path / "p"
    for name in ("rules", "charts", "runbooks", "deploy", ".rulegen-sums"):
        shutil.copytree(REPO / name, root / name, symlinks=True)
    for name in (".rulegen.yaml", "mkdocs.yml"):
        shutil.copy(REPO / name, root / name)
    what, edit = _variants(root)[variant]
    edit(root)  # fails, not skips, when the bundled values change shape: the variant must be kept
    batched = _check(root, capsys)
    _per_chart(monkeypatch)
    alone = _check(root, capsys)
    assert batched == alone, what
    if what != "as built":
        assert re.search(r" RG73[567] ", alone[1]), (what, alone[1])
