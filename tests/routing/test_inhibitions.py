"""Inhibitions as code (issue 28): ``inhibited_by:`` in a spec, the checks RG960-RG962, the
chart's Helm-gated AlertmanagerConfig, the index and pages showing cause -> symptoms from the
declarations only, and the rendered inhibit rules run by a real Alertmanager of the pinned
release on a loopback port."""

from __future__ import annotations

import json
import socket
import subprocess
import textwrap
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.pipeline import load_project, plan_project
from rulegen.tools import helm

from helpers import CORPUS, REPO

CAUSE = """\
- alert: ShopDown
  expr: up{job="shop"} == 0
  severity: critical
  summary: Shop is down.
  description: No shop target is up.
"""


def symptom(inhibited_by: str, expr: str = 'rate(shop_errors_total{job="shop"}[5m]) > 0') -> str:
    return textwrap.dedent(f"""\
        - alert: ShopErrors
          expr: {expr}
          severity: warning
          summary: Shop errors.
          description: The shop returns errors.
          inhibited_by: {inhibited_by}
        """)


def make(root: Path, alerts: str) -> Path:
    (root / "rules").mkdir(parents=True)
    text = "app: shop\ngroups:\n  - name: shop\n    rules:\n" + textwrap.indent(alerts, " " * 6)
    (root / "rules/shop.yaml").write_text(text, encoding="utf-8")
    (root / ".rulegen.yaml").write_text("conventions: {require_runbook_for: []}\n", encoding="utf-8")
    return root


def found(root: Path) -> list:
    return [(f.code, f.rule, f.message) for f in load_project(root).findings if f.code.startswith("RG96")]


# -- the checks -------------------------------------------------------------------------------------

def test_valid_inhibition_is_quiet(tmp_path):
    assert found(make(tmp_path, CAUSE + symptom("{alert: ShopDown, equal: [instance]}"))) == []


def test_unknown_cause_says_did_you_mean(tmp_path):
    [(code, rule, msg)] = found(make(tmp_path, CAUSE + symptom("{alert: ShopDwn}")))
    assert (code, rule) == ("RG960", "ShopErrors")
    assert msg == "inhibited_by names alert 'ShopDwn', which no spec defines (did you mean ShopDown?)"


def test_equal_label_the_cause_cannot_carry(tmp_path):
    cause = CAUSE.replace('up{job="shop"} == 0', 'sum by (namespace) (up{job="shop"}) == 0')
    [(code, rule, msg)] = found(make(tmp_path, cause + symptom("{alert: ShopDown, equal: [namespace, instance]}")))
    assert (code, rule) == ("RG961", "ShopErrors")
    assert "inhibited_by.equal names 'instance', which the cause ShopDown never carries" in msg
    assert "`sum by (namespace)` drops `instance`" in msg


def test_equal_label_the_symptom_cannot_carry(tmp_path):
    alerts = CAUSE + symptom("[{alert: ShopDown, equal: [instance]}]",
                             expr='sum by (job) (rate(shop_errors_total[5m])) > 0')
    [(code, _, msg)] = found(make(tmp_path, alerts))
    assert code == "RG961" and "which the symptom ShopErrors never carries" in msg


def test_equal_label_set_by_a_rule_label_is_carried(tmp_path):
    cause = CAUSE.replace("severity: critical", "severity: critical\n  labels: {cluster: eu1}")
    cause = cause.replace('up{job="shop"} == 0', 'sum by (namespace) (up{job="shop"}) == 0')
    alerts = cause + symptom("{alert: ShopDown, equal: [cluster]}",
                             expr='sum by (cluster) (rate(shop_errors_total[5m])) > 0')
    assert found(make(tmp_path, alerts)) == []


def test_equal_alertname_and_self_inhibition(tmp_path):
    got = found(make(tmp_path, CAUSE + symptom("[{alert: ShopDown, equal: [alertname]}, {alert: ShopErrors}]")))
    assert [c for c, *_ in got] == ["RG961", "RG962"]
    assert "alertname always differs between two alerts" in got[0][2]


def test_bundled_and_corpus_quiet(shared_dir, tmp_path):
    """The bundled specs declare an inhibition (quiet); the imported corpus declares none
    (and so has no inhibition findings)."""
    from rulegen.importer import import_paths, write_specs
    loaded = load_project(REPO)
    assert sum(len(r.inhibited_by) for s in loaded.specs for r in s.alerts()) == 1
    assert [f for f in loaded.findings if f.code.startswith("RG96")] == []
    res = import_paths([CORPUS], out_dir=tmp_path / "rules", display_base=CORPUS)
    write_specs(res, tmp_path / "rules")
    corpus = load_project(tmp_path)
    assert [f for f in corpus.findings if f.code.startswith(("RG95", "RG96"))] == []


# -- the index and the pages --------------------------------------------------------------------------

def test_index_and_page_show_cause_and_symptoms_from_declarations_only(tmp_path):
    alerts = CAUSE + symptom("{alert: ShopDown, equal: [instance]}")
    alerts += textwrap.dedent("""\
        - alert: ShopSlow
          expr: up{job="shop"} > 1
          severity: warning
          summary: s
          description: d
          runbook:
            related: [{alert: ShopDown}]
        """)
    outputs, _ = plan_project(load_project(make(tmp_path, alerts)))
    by_path = {o.path: o.content for o in outputs}
    index = by_path["runbooks/alerts.md"]
    assert "Fires together with" not in index
    assert '<span class="rg-inhibits">mutes [ShopErrors](shop.md#shoperrors)</span>' in index
    assert '<span class="rg-inhibits">symptom of [ShopDown](shop.md#shopdown)</span>' in index
    # related (no cause declared) is no inhibition: ShopSlow's item says nothing
    item = index[index.index("- [ShopSlow]"):].split("\n- ")[0].split("\n\n")[0]
    assert "rg-summary" in item and "rg-inhibits" not in item
    page = by_path["runbooks/shop.md"]
    assert "**Mutes:** [ShopErrors](#shoperrors) (same `instance`)" in page
    assert "**Symptom of:** [ShopDown](#shopdown) (same `instance`) (muted while it fires)" in page


# -- the chart ---------------------------------------------------------------------------------------

def build(root: Path, capsys) -> None:
    assert main(["-C", str(root), "build"]) == 0
    capsys.readouterr()


def amconfig(root: Path, values: dict | None = None) -> list:
    rendered = helm.template(root / "charts/shop", values=[yaml.safe_dump(values or {})], root=REPO, namespace="shop")
    return [d for d in rendered.documents if isinstance(d, dict) and d.get("kind") == "AlertmanagerConfig"]


@pytest.mark.tools("helm")
def test_chart_renders_a_gated_alertmanagerconfig(tmp_path, capsys):
    root = make(tmp_path, CAUSE + symptom("{alert: ShopDown, equal: [instance]}"))
    build(root, capsys)
    assert (root / "charts/shop/templates/alertmanagerconfig-shop.yaml").is_file()
    on = {"enabled": True, "monitoring": {"enabled": True}}
    [doc] = amconfig(root, {**on, "prometheusRule": {"inhibitRules": {"labels": {"alertmanager": "main"}}}})
    assert doc["apiVersion"] == "monitoring.coreos.com/v1alpha1"
    assert doc["metadata"]["namespace"] == "shop"
    assert doc["metadata"]["labels"]["alertmanager"] == "main"
    assert doc["spec"]["inhibitRules"] == [{
        "sourceMatch": [{"name": "alertname", "value": "ShopDown", "matchType": "="}],
        "targetMatch": [{"name": "alertname", "value": "ShopErrors", "matchType": "="}],
        "equal": ["instance"]}]
    assert amconfig(root, {**on, "prometheusRule": {"inhibitRules": {"enabled": False}}}) == []
    assert amconfig(root, {"enabled": True, "monitoring": {"enabled": False}}) == []
    # the values schema knows the knob (a typo under it is refused by helm)
    with pytest.raises(Exception):
        amconfig(root, {**on, "prometheusRule": {"inhibitRules": {"enabeld": False}}})


def test_no_declaration_no_alertmanagerconfig(tmp_path, capsys):
    root = make(tmp_path, CAUSE)
    build(root, capsys)
    assert not (root / "charts/shop/templates/alertmanagerconfig-shop.yaml").exists()
    assert "inhibitRules" not in (root / "charts/shop/values.yaml").read_text()


# -- a real Alertmanager ------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_alertmanager_yml(doc: dict) -> dict:
    """The AlertmanagerConfig's inhibit rules as Alertmanager's own configuration, the way the
    Prometheus Operator converts them (with its default matcher strategy, OnNamespace: a
    ``namespace`` matcher of the resource's namespace on both sides)."""
    ns = doc["metadata"]["namespace"]
    rules = []
    for r in doc["spec"]["inhibitRules"]:
        def side(ms):
            return [f'{m["name"]}{m.get("matchType", "=")}"{m["value"]}"' for m in ms] + [f'namespace="{ns}"']
        rules.append({"source_matchers": side(r["sourceMatch"]), "target_matchers": side(r["targetMatch"]),
                      **({"equal": r["equal"]} if r.get("equal") else {})})
    return {"route": {"receiver": "null"}, "receivers": [{"name": "null"}], "inhibit_rules": rules}


@pytest.fixture
def alertmanager(alertmanager_bin, tmp_path):
    """Start a real Alertmanager on a free loopback port with the config the test writes to
    ``am.yml`` (call the returned function with it); killed at teardown."""
    procs = []

    def start(config: dict) -> str:
        (tmp_path / "am.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
        port = _free_port()
        proc = subprocess.Popen([str(alertmanager_bin), f"--config.file={tmp_path / 'am.yml'}",
                                 f"--storage.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                                 "--cluster.listen-address="], stdout=subprocess.DEVNULL,
                                stderr=open(tmp_path / "am.log", "wb"))
        procs.append(proc)
        url = f"http://127.0.0.1:{port}"
        for _ in range(100):
            try:
                with urllib.request.urlopen(url + "/-/ready", timeout=1) as r:
                    if r.status == 200:
                        return url
            except OSError:
                time.sleep(0.1)
            assert proc.poll() is None, (tmp_path / "am.log").read_text()
        raise AssertionError("alertmanager did not become ready: " + (tmp_path / "am.log").read_text())

    yield start
    for p in procs:
        p.kill()
        p.wait(timeout=10)


def _post(url: str, alerts: list[dict]) -> None:
    body = json.dumps([{"labels": a} for a in alerts]).encode()
    req = urllib.request.Request(url + "/api/v2/alerts", data=body, method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=5) as r:
        assert r.status == 200


def _states(url: str) -> dict:
    with urllib.request.urlopen(url + "/api/v2/alerts", timeout=5) as r:
        got = json.load(r)
    return {(a["labels"]["alertname"], a["labels"].get("namespace"), a["labels"].get("instance")): a["status"]["state"]
            for a in got}


@pytest.mark.tools("helm", "alertmanager")
def test_real_alertmanager_mutes_exactly_the_declared_symptoms(tmp_path, capsys, alertmanager):
    root = make(tmp_path / "p", CAUSE + symptom("{alert: ShopDown, equal: [instance]}"))
    build(root, capsys)
    [doc] = amconfig(root, {"enabled": True, "monitoring": {"enabled": True}})
    url = alertmanager(_as_alertmanager_yml(doc))
    _post(url, [
        {"alertname": "ShopDown", "namespace": "shop", "instance": "a"},
        {"alertname": "ShopErrors", "namespace": "shop", "instance": "a"},   # same instance: muted
        {"alertname": "ShopErrors", "namespace": "shop", "instance": "b"},   # other instance: fires
        {"alertname": "ShopSlow", "namespace": "shop", "instance": "a"},     # not declared: fires
        {"alertname": "ShopErrors", "namespace": "other", "instance": "a"},  # other namespace: fires
    ])
    want = {("ShopDown", "shop", "a"): "active", ("ShopErrors", "shop", "a"): "suppressed",
            ("ShopErrors", "shop", "b"): "active", ("ShopSlow", "shop", "a"): "active",
            ("ShopErrors", "other", "a"): "active"}
    deadline = time.monotonic() + 15
    while True:
        states = _states(url)
        if states == want or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert states == want
