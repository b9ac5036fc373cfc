"""Multi-cluster / per-provider rule repositories (issue 26 item 3): ``rulegen import`` reads
which apps share a Prometheus from the source layout and writes ``prometheus_scopes``, so
the same alert and PrometheusRule names per provider import, validate and build with no
hand-written configuration; names shared otherwise still fail (RG813 for RG412/RG415)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.config import load_config

from helpers.chartfixture import mini_chart

PR = """apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {name}
  namespace: monitoring
spec:
  groups:
    - name: node
      rules:
        - alert: NodeDown
          expr: up{{job="node"}} < {threshold}
          for: 5m
          labels: {{severity: warning}}
          annotations: {{summary: Node down, description: A node is down}}
"""


def _write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text, encoding="utf-8")


def _cli(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def test_sibling_provider_folders_become_scopes(tmp_path, capsys):
    for i, p in enumerate(("aws", "gcp")):
        _write(tmp_path, f"providers/{p}/node.yaml", PR.format(name="node.rules", threshold=i + 1))
    _write(tmp_path, "providers/common.yml", "groups:\n  - name: c\n    rules:\n      - alert: CommonDown\n"
                                             "        expr: up == 0\n        labels: {severity: warning}\n"
                                             "        annotations: {summary: x, description: y}\n")
    _write(tmp_path, "mkdocs.yml", "site_name: Runbooks\nsite_url: https://runbooks.example.com/\ndocs_dir: runbooks\n")
    assert _cli(tmp_path, "import", "providers") == 0, capsys.readouterr().err
    out = capsys.readouterr().out
    assert "aws (1 app(s)), gcp (1 app(s)) in prometheus_scopes" in out
    raw = yaml.safe_load((tmp_path / ".rulegen.yaml").read_text())
    assert raw["prometheus_scopes"] == {"aws": ["aws-node-node-rules"], "gcp": ["gcp-node-node-rules"]}
    config = load_config(tmp_path)
    assert config.scopes_of("common") is None          # the common file: loaded everywhere
    for cmd in ("validate", "build", "check"):
        assert _cli(tmp_path, cmd) == 0, (cmd, capsys.readouterr())
    # two pages, each with its own NodeDown section, which each chart's runbook_url opens
    for app in ("aws-node-node-rules", "gcp-node-node-rules"):
        assert "## NodeDown { #nodedown }" in (tmp_path / f"runbooks/{app}.md").read_text()
        assert f"/{app}/#nodedown" in (tmp_path / f"charts/{app}/values.yaml").read_text() + \
            (tmp_path / f"charts/{app}/rules/{app}.rules.yaml").read_text()


def test_same_alert_in_different_files_of_sibling_folders_is_still_a_duplicate(tmp_path, capsys):
    # not the same file per provider: two teams naming an alert alike, one Prometheus
    _write(tmp_path, "src/shop/alerts.yaml", PR.format(name="shop", threshold=1))
    _write(tmp_path, "src/cart/other.yaml", PR.format(name="cart", threshold=1))
    assert _cli(tmp_path, "import", "src") == 1
    err = capsys.readouterr().err
    assert "RG813" in err and "RG412" in err and "prometheus_scopes" in err
    assert not (tmp_path / "rules").exists() and not (tmp_path / ".rulegen.yaml").exists()


def test_same_alert_twice_in_one_provider_folder_is_still_a_duplicate(tmp_path, capsys):
    for p in ("aws", "gcp"):
        _write(tmp_path, f"providers/{p}/node.yaml", PR.format(name="node.rules", threshold=1))
    _write(tmp_path, "providers/aws/node-extra.yaml", PR.format(name="node-extra", threshold=2))
    assert _cli(tmp_path, "import", "providers") == 1
    assert "RG412" in capsys.readouterr().err


def test_variant_imports_write_one_scope_each(tmp_path, capsys):
    mini_chart(tmp_path, "threshold: 1\n", {"r.yaml": PR.format(name="node.rules", threshold="{{ .Values.threshold }}")})
    for i, v in enumerate(("capa", "capz")):
        _write(tmp_path, f"{v}.yaml", f"threshold: {i + 2}\n")
        assert _cli(tmp_path, "import", "c", "--static", "-f", f"{v}.yaml", "--variant", v) == 0, capsys.readouterr()
    raw = yaml.safe_load((tmp_path / ".rulegen.yaml").read_text())
    assert raw["prometheus_scopes"] == {"capa": ["node-rules-capa"], "capz": ["node-rules-capz"]}
    assert "duplicate_alert_across_apps" not in raw   # RG412 stays an error within a scope
    for cmd in ("validate", "build", "check"):
        assert _cli(tmp_path, cmd) == 0, (cmd, capsys.readouterr())
    # importing a variant again adds no app twice
    assert _cli(tmp_path, "import", "c", "--static", "-f", "capa.yaml", "--variant", "capa", "--force") == 0
    assert yaml.safe_load((tmp_path / ".rulegen.yaml").read_text())["prometheus_scopes"] == raw["prometheus_scopes"]


@pytest.mark.tools
def test_helm_rendered_variants_share_prometheusrule_names(tmp_path, helm_bin, capsys):
    """Before: the second ``--variant`` import of a helm-rendered chart failed with RG415 (the
    same PrometheusRule name and namespace in both variants)."""
    mini_chart(tmp_path, "threshold: 1\n", {"r.yaml": PR.format(name="node.rules", threshold="{{ .Values.threshold }}")})
    for i, v in enumerate(("capa", "capz")):
        _write(tmp_path, f"{v}.yaml", f"threshold: {i + 2}\n")
        assert _cli(tmp_path, "import", "c", "-f", f"{v}.yaml", "--variant", v) == 0, capsys.readouterr()
    specs = {p.stem: yaml.safe_load(p.read_text()) for p in (tmp_path / "rules").glob("*.yaml")}
    assert {k: (v["chart"]["name"], v["groups"][0]["rules"][0]["expr"]) for k, v in specs.items()} == {
        "node-rules-capa": ("node.rules", 'up{job="node"} < 2'), "node-rules-capz": ("node.rules", 'up{job="node"} < 3')}
    for cmd in ("validate", "build", "check"):
        assert _cli(tmp_path, cmd) == 0, (cmd, capsys.readouterr())
    # the scopes removed by hand: the duplicates are back
    cfg = tmp_path / ".rulegen.yaml"
    raw = yaml.safe_load(cfg.read_text())
    del raw["prometheus_scopes"]
    cfg.write_text(yaml.safe_dump(raw))
    assert _cli(tmp_path, "validate") == 1
    err = capsys.readouterr()
    assert "RG415" in err.out + err.err and "RG412" in err.out + err.err


def _imported(app: str, source: str, alerts=("NodeDown",), name=None):
    from rulegen.importer.result import ImportedSpec
    data = {"app": app, "groups": [{"name": "g", "rules": [{"alert": a, "expr": "up == 0"} for a in alerts]}]}
    if name:
        data["chart"] = {"name": name, "namespace": "monitoring"}
    return ImportedSpec(app, "", [source], data=data)


def test_folder_inference_both_ways():
    from rulegen.importer.scopes import from_folders
    same = [_imported("aws-x", "p/aws/x.yaml"), _imported("gcp-x", "p/gcp/x.yaml"),
            _imported("common", "p/common.yaml", ("Other",))]
    assert from_folders(same) == {"aws": ["aws-x"], "gcp": ["gcp-x"]}
    # the same PrometheusRule name alone (no shared alert) is a layout too (RG415)
    assert from_folders([_imported("a", "p/aws/x.yaml", ("A",), "n"), _imported("b", "p/gcp/x.yaml", ("B",), "n")]) \
        == {"aws": ["a"], "gcp": ["b"]}
    # nothing shared: no scope needed; a shared name across different files: not a layout
    assert from_folders([_imported("a", "p/aws/x.yaml", ("A",)), _imported("b", "p/gcp/x.yaml", ("B",))]) == {}
    assert from_folders([_imported("a", "p/aws/x.yaml"), _imported("b", "p/gcp/y.yaml")]) == {}
    # the common file shares a name with a provider's: it is loaded everywhere, so a duplicate
    assert from_folders(same[:2] + [_imported("common", "p/common.yaml")]) == {}
    # two folders that would be one scope name
    assert from_folders([_imported("a", "p/a b/x.yaml"), _imported("b", "p/a-b/x.yaml")]) == {}


def test_merged_adds_only_apps_a_scope_does_not_name():
    from rulegen.config import Config
    from rulegen.importer.scopes import merged
    config = Config(prometheus_scopes={"capa": ("*-capa",)})
    assert merged(config, {"capa": ["x-capa"]}) == {}
    assert merged(config, {"capa": ["other"], "capz": ["x-capz"]}) == {"capa": ["*-capa", "other"], "capz": ["x-capz"]}
