"""Loki rule files among the sources of an import (RG817): recognised by their LogQL,
left out with one note per file, the other sources imported."""

from __future__ import annotations

import glob
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.importer.logql import is_logql

PROM = """\
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        labels: {severity: critical}
        annotations: {summary: Shop is down}
"""
LOKI = """\
groups:
  - name: shop-logs
    rules:
      - alert: ShopErrorLogs
        expr: sum(rate({app="shop"}[5m])) > 100
        labels: {severity: warning}
      - alert: ShopPanics
        expr: sum by (pod) (count_over_time({app="shop"} |= "panic" [5m])) > 0
        labels: {severity: critical}
"""


@pytest.mark.parametrize("expr", [
    'count_over_time({app="x"} |= "error" [5m]) > 0',
    'sum(rate({app="x"} |~ "err.*" [1m]))',
    'sum(rate({app="x"} | json | level="error" [5m])) by (pod)',
    'sum(count_over_time({app="x"} | logfmt | unwrap duration [5m]))',
    '{app="x"} != "debug"',
    'sum(bytes_over_time({app="x"}[5m]))',
    'sum by (host) (rate({job="varlogs"} |> "<_> error <_>" [1m]))',
])
def test_logql_is_recognised(expr):
    assert is_logql(expr)


@pytest.mark.parametrize("expr", [
    'up{job="a|b"} == 0',                        # a pipe inside a string
    'label_replace(up, "x", "$1", "job", "(a|b)")',
    '{job="x"} != 0',                            # PromQL comparison after a selector
    'sum(rate({app="x"}[5m]))',                  # PromQL and LogQL alike: decides nothing alone
    'a or b unless c',
    'rate(x[5m]',                                # broken PromQL stays a PromQL error (RG806)
])
def test_promql_is_not_logql(expr):
    assert not is_logql(expr)


def test_loki_file_left_out_with_one_note_the_rest_imported(tmp_path, capsys):
    (tmp_path / "shop.rules.yml").write_text(PROM, encoding="utf-8")
    (tmp_path / "loki.rules.yml").write_text(LOKI, encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "shop.rules.yml", "loki.rules.yml"]) == 0
    err = capsys.readouterr().err
    assert err.count("RG817") == 1
    assert "loki.rules.yml:8:1: warning RG817 Loki rules, not Prometheus rules: `sum by (pod) (count_over_time(" in err
    assert "is LogQL; the 2 rule(s) of this file are left out" in err
    assert "RG806" not in err
    assert sorted(p.name for p in (tmp_path / "rules").iterdir()) == ["shop-rules.yaml"]


def test_broken_promql_beside_it_is_still_an_error(tmp_path, capsys):
    (tmp_path / "shop.rules.yml").write_text(PROM.replace('== 0', '== (0'), encoding="utf-8")
    (tmp_path / "loki.rules.yml").write_text(LOKI, encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "shop.rules.yml", "loki.rules.yml"]) == 1
    err = capsys.readouterr().err
    assert "shop.rules.yml:5:1: error RG806 [ShopDown]" in err
    assert err.count("RG817") == 1


def test_logql_recognised_nowhere_in_the_corpora(shared_dir):
    """Quiet on real PromQL: every expr of awesome-prometheus-alerts and of
    kube-prometheus-stack's rendered rules."""
    exprs = []
    for f in glob.glob(str(shared_dir / "corpus/awesome-prometheus-alerts/rules/**/*.yml"), recursive=True):
        for g in (yaml.safe_load(Path(f).read_text(encoding="utf-8")) or {}).get("groups") or []:
            exprs += [str(r.get("expr", "")) for r in g.get("rules") or []]
    for d in yaml.safe_load_all((shared_dir / "corpus/kube-prometheus-stack/rendered-all-groups.yaml").read_text(
            encoding="utf-8")):
        if d and d.get("kind") == "PrometheusRule":
            exprs += [str(r["expr"]) for g in d["spec"]["groups"] for r in g["rules"]]
    assert len(exprs) > 1200
    assert [e for e in exprs if is_logql(e)] == []
