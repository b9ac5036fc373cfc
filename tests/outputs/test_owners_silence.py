"""Issue 28: owners that are always there (project defaults, required owners, the owner label)
and a silence for every alert (amtool line from the label flow, Alertmanager form link), checked
against the real amtool and Alertmanager of the pinned release."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import time
import urllib.request
from collections import Counter
from pathlib import Path
from urllib.parse import unquote

import pytest
import yaml

from rulegen.cli import main
from rulegen.config import parse_config
from rulegen.findings import RulegenError
from rulegen.promql.labelflow import can_carry
from rulegen.render import silence
from rulegen.spec.model import Group, Rule
from rulegen.spec.owners import OwnerDefaults, resolve
from rulegen.tools import process
from rulegen.validate import validate_texts

from helpers import CORPUS, REPO, links

SPEC = """\
app: shop
@APP_RUNBOOK@groups:
  - name: shop
    rules:
      - alert: ShopCheckoutFailing
        expr: max by (namespace, service) (shop_checkout_errors{env="prod"}) > 0
        for: 5m
        severity: critical
        @LABELS@summary: "Checkout of {{ $labels.service }} fails."
        description: Checkout fails.
        runbook:
          impact: Nobody can pay.
          do_not: Restart by hand.
          @ALERT_OWNER@
      - alert: ShopNoMetrics
        expr: absent(up{job="shop", namespace="web"} == 1)
        for: 10m
        severity: warning
        summary: No metrics from shop.
        description: No metrics from shop.
"""


def _spec(app_runbook: str = "", labels: str = "", alert_owner: str = "") -> str:
    return (SPEC.replace("@APP_RUNBOOK@", app_runbook).replace("@LABELS@", labels)
            .replace("@ALERT_OWNER@", alert_owner or "causes: [x]"))


def _codes(text: str, config: dict, codes=("RG515", "RG516", "RG517", "RG518")):
    r = validate_texts({"rules/shop.yaml": text}, parse_config(config))
    return [(f.code, f.severity.value, f.message) for f in r.findings if f.code in codes]


# --- configuration ---------------------------------------------------------------------------

def test_owners_config_parses_and_rejects_bad_input():
    c = parse_config({"owners": {"label": "team", "require_for": ["critical"],
                                 "apps": {"shop": {"team": "payments", "paging": "pay-oncall", "escalation": "x"}},
                                 "labels": {"team": {"search": {"chat": "#search"}}}},
                      "runbooks": {"alertmanager_url": "https://am.example.com/"}})
    assert c.owners == OwnerDefaults("team", ("critical",), {"shop": {"team": "payments", "paging": "pay-oncall",
                                                                      "escalation": "x"}},
                                     {"team": {"search": {"chat": "#search"}}})
    assert c.alertmanager_url == "https://am.example.com"
    assert parse_config({}).owners == OwnerDefaults() and parse_config({}).alertmanager_url is None
    for bad, words in [
        ({"owners": {"lable": "team"}}, "unknown key(s) owners.lable"),
        ({"owners": {"label": "severity"}}, "owners.label must be a Prometheus label name other than"),
        ({"owners": {"label": "a-b"}}, "owners.label must be"),
        ({"owners": {"apps": {"shop": {"chat": "#x"}}}}, "owners.apps.shop needs team:"),
        ({"owners": {"apps": {"shop": {"team": ""}}}}, "owners.apps.shop.team must be a non-empty string"),
        ({"owners": {"apps": {"shop": {"team": "x", "pager": "y"}}}}, "unknown key(s) owners.apps.shop.pager"),
        ({"owners": {"labels": {"a-b": {}}}}, "is not a Prometheus label name"),
        ({"owners": {"require_for": "critical"}}, "owners.require_for must be a list of strings"),
        ({"runbooks": {"alertmanager_url": "javascript:alert(1)"}}, "runbooks.alertmanager_url must be an http"),
    ]:
        with pytest.raises(RulegenError) as e:
            parse_config(bad)
        assert words in str(e.value), (bad, str(e.value))


# --- resolution ------------------------------------------------------------------------------

def _spec_obj(text: str, config: dict):
    r = validate_texts({"rules/shop.yaml": text}, parse_config(config))
    assert r.specs, r.findings
    return r.specs[0]


def test_owner_resolution_order_spec_first_then_label_then_app():
    defaults = parse_config({"owners": {
        "apps": {"shop": {"team": "payments", "escalation": "Page the payments lead."}},
        "labels": {"team": {"search": {"chat": "#search", "escalation": "Search on-call."}}}}}).owners

    def first(text):
        spec = _spec_obj(text, {})
        g, r = next(spec.rules())
        return resolve(spec, g, r, defaults)

    res = first(_spec())
    assert (res.owner, res.source, res.escalation, res.escalation_source) == (
        {"team": "payments"}, "app shop", "Page the payments lead.", "app shop")
    res = first(_spec(labels="labels: {team: search}\n        "))
    assert (res.owner, res.source, res.escalation) == ({"team": "search", "chat": "#search"}, "label team=search",
                                                       "Search on-call.")
    res = first(_spec(app_runbook="runbook: {owner: {team: web}}\n"))
    assert (res.owner, res.source, res.escalation, res.escalation_source) == (
        {"team": "web"}, "spec", "Page the payments lead.", "app shop")  # escalation on its own
    res = first(_spec(app_runbook="runbook: {owner: {team: web}}\n",
                      alert_owner="owner: {team: checkout, paging: co}\n          escalation: Call Bo."))
    assert (res.owner, res.source, res.escalation, res.escalation_source) == (
        {"team": "checkout", "paging": "co"}, "spec", "Call Bo.", "spec")
    spec = _spec_obj(_spec(), {})
    g, r = next(spec.rules())
    assert resolve(spec, g, r, None) == resolve(spec, g, r, OwnerDefaults())
    assert resolve(spec, g, r, None).owner is None


# --- RG515-RG518: both ways ------------------------------------------------------------------

def test_rg515_owner_required_for_chosen_severities():
    need = {"owners": {"require_for": ["critical"]}}
    found = _codes(_spec(), need)
    assert [(c, s) for c, s, _ in found] == [("RG515", "error")]
    assert "critical alert ShopCheckoutFailing has no owner" in found[0][2]
    assert _codes(_spec(), {}) == []  # off by default
    assert _codes(_spec(), {"owners": {"require_for": ["critical"], "apps": {"shop": {"team": "payments"}}}}) == []
    assert _codes(_spec(alert_owner="owner: {team: checkout}"), need) == []
    assert _codes(_spec(labels="labels: {team: search}\n        "),
                  {"owners": {"require_for": ["critical"], "labels": {"team": {"search": {}}}}}) == []
    # the warning alert is not required, the critical one is
    assert [c for c, _, _ in _codes(_spec(), {"owners": {"require_for": ["critical", "warning"]}})] == ["RG515"] * 2


def test_rg510_counts_the_project_default_owner():
    cfg = {"conventions": {"require_triage": {"critical": ["owner"]}}}
    assert ["runbook.owner" in m for c, _, m in _codes(_spec(), cfg, ("RG510",))] == [True]
    cfg["owners"] = {"apps": {"shop": {"team": "payments"}}}
    assert _codes(_spec(), cfg, ("RG510",)) == []


def test_rg516_owner_label_that_disagrees_and_the_label_added():
    cfg = {"owners": {"label": "team"}}
    text = _spec(labels="labels: {team: search}\n        ", alert_owner="owner: {team: checkout}")
    found = _codes(text, cfg)
    assert [(c, s) for c, s, _ in found] == [("RG516", "warning")]
    assert "carries team='search' but its owner is 'checkout'" in found[0][2]
    assert _codes(text, {}) == []  # no owner label: nothing to disagree with
    assert _codes(_spec(labels="labels: {team: checkout}\n        ", alert_owner="owner: {team: checkout}"), cfg) == []
    spec = _spec_obj(_spec(alert_owner="owner: {team: checkout}"), {"owners": {"label": "team",
                                                                                  "apps": {"shop": {"team": "pay"}}}})
    assert [(r.name, r.labels.get("team")) for r in spec.alerts()] == [("ShopCheckoutFailing", "checkout"),
                                                                       ("ShopNoMetrics", "pay")]


def test_rg517_config_app_no_spec_has():
    found = _codes(_spec(), {"owners": {"apps": {"shp": {"team": "payments"}}}})
    assert [(c, s) for c, s, _ in found] == [("RG517", "warning")]
    assert "owners.apps.shp names no app of the project" in found[0][2] and "did you mean shop?" in found[0][2]
    assert _codes(_spec(), {"owners": {"apps": {"shop": {"team": "payments"}}}}) == []


def test_rg518_example_value_the_commands_do_not_hold():
    block = ("diagnosis:\n            - commands: |\n                kubectl get pods -n serving\n"
             "              examples: [@V@]")
    found = _codes(_spec(alert_owner=block.replace("@V@", "servng")), {})
    assert [(c, s) for c, s, _ in found] == [("RG518", "warning")]
    assert _codes(_spec(alert_owner=block.replace("@V@", "serving")), {}) == []


# --- the built project: owner label in the chart and tests, Team column, silence on the page ---

def _project(tmp_path: Path, config: str, text: str) -> Path:
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules/shop.yaml").write_text(text)
    (tmp_path / ".rulegen.yaml").write_text(config)
    assert main(["-C", str(tmp_path), "build"]) == 0
    return tmp_path


def test_owner_label_team_column_and_silence_on_the_built_page(tmp_path):
    root = _project(tmp_path, "owners:\n  label: team\n  apps:\n    shop: {team: payments, paging: pay-oncall, "
                              "escalation: Page the payments lead.}\nrunbooks:\n  alertmanager_url: "
                              "https://am.example.com\n", _spec())
    rules = yaml.safe_load((root / "charts/shop/rules/shop.rules.yaml").read_text())
    assert [r["labels"]["team"] for g in rules["groups"] for r in g["rules"]] == ["payments", "payments"]
    index = (root / "runbooks/alerts.md").read_text()
    assert re.search(r"^- \[ShopCheckoutFailing\].*\n  · team <span class=\"rg-team\">payments</span>\n", index, re.M)
    page = (root / "runbooks/shop.md").read_text()
    box = page[page.index("## ShopCheckoutFailing"):page.index("## ShopNoMetrics")]
    box = box[:box.index("\n</div>\n")]
    assert "**Owner:** payments · paging `pay-oncall` · *no chat handle recorded* · **Escalate:** Page the payments lead." in box
    # the command, continued with a backslash where it would grow over 120 characters (issue 29)
    assert ("```bash\nNAMESPACE='‹namespace›' SERVICE='‹service›'  # alert labels: namespace service\n"
            "amtool silence add --alertmanager.url='https://am.example.com' alertname=ShopCheckoutFailing "
            "namespace=\"$NAMESPACE\" \\\n  service=\"$SERVICE\" --duration=1h --comment='ShopCheckoutFailing: see the runbook'\n"
            "```") in box
    assert all(len(line) <= 120 for line in box.splitlines() if "silences/new" not in line)
    # the form's long address goes on over lines (issue 29): HTML, as the link's attributes were
    assert '<a class="rg-silence-link" data-rg-silence="namespace service" href="https://am.example.com/' in box
    link = [url for label, url in links(box) if label == "Open a silence in Alertmanager"]
    assert len(link) == 1 and unquote(link[0]) == (
        'https://am.example.com/#/silences/new?filter={alertname="ShopCheckoutFailing",namespace="‹namespace›",'
        'service="‹service›"}')
    absent = page[page.index("## ShopNoMetrics"):]
    assert ("amtool silence add --alertmanager.url='https://am.example.com' alertname=ShopNoMetrics --duration=1h"
            in absent)  # absent(): alertname only
    js = (root / "runbooks/assets/rulegen.js").read_text()
    # one alert a line (a new alert adds a line to the diff)
    assert ('var RG_ALERTS = [\n  ["ShopCheckoutFailing", "shop/#shopcheckoutfailing"],\n'
            '  ["ShopNoMetrics", "shop/#shopnometrics"]\n];\n') in js
    # a second build changes nothing (the label is not added twice, the order holds)
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert main(["-C", str(root), "build"]) == 0
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def test_silence_keeps_hand_written_when_duration_and_matchers():
    text = _spec(alert_owner="silence: {when: During a rollout., matchers: {namespace: web}, duration: 30m}")
    spec = _spec_obj(text, {})
    g, r = next(spec.rules())
    cmd = silence.command(spec, g, r, r.runbook["silence"], {}, None)
    assert cmd == ("amtool silence add alertname=ShopCheckoutFailing namespace='web' --duration=30m \\\n"
                   "  --comment='ShopCheckoutFailing: see the runbook'")


def _rule(expr: str, summary: str = "", labels: dict | None = None):
    class _Spec:
        labels: dict = {}
    r = Rule(kind="alert", name="X", expr=expr, path=(), severity="warning", labels=dict(labels or {}),
             annotations={"summary": summary})
    return _Spec(), Group(name="g", path=(), rules=[r]), r


@pytest.mark.parametrize("expr, summary, labels, expected", [
    ("max by (namespace, pod) (x) > 0", "", {}, ["namespace", "pod"]),
    ('up{job="api"} == 0', "", {}, ["job"]),  # a plain selector: the labels it pins
    ('up{job="api"} == 0', "{{ $labels.instance }} down", {}, ["instance", "job"]),  # and those the text reads
    ("sum(x) > 0", "{{ $labels.pod }}", {}, []),  # the text reads a label the alert never carries
    ('absent(up{job="api"})', "", {}, []),  # absent(): alertname only
    ("max by (namespace, long) (x) > 0", "", {"long": "1h"}, ["namespace"]),  # static rule labels left out
    ("vector(1)", "", {}, []),
])
def test_matcher_labels(expr, summary, labels, expected):
    assert silence.matcher_labels(*_rule(expr, summary, labels), {}) == expected


def test_silence_on_the_corpus_parses_and_names_only_labels_the_alert_can_carry(shared_dir):
    """Every alert of "Awesome Prometheus alerts" (CC BY 4.0, read in place) gets a silence
    line that bash parses, whose matchers are labels its expr can carry."""
    counts = Counter()
    for p in sorted(CORPUS.rglob("*.y*ml")):
        for g in yaml.safe_load(p.read_text(encoding="utf-8")).get("groups") or []:
            for raw in g.get("rules") or []:
                if "alert" not in raw:
                    continue
                spec, group, r = _rule(str(raw["expr"]), str((raw.get("annotations") or {}).get("summary", "")),
                                       {k: str(v) for k, v in (raw.get("labels") or {}).items() if k != "severity"})
                labels = silence.matcher_labels(spec, group, r, {})
                for label in labels:
                    assert can_carry(r.expr, label) is not False, (r.expr, label)
                cmd = silence.command(spec, group, r, None, {}, "https://am.example.com")
                assert subprocess.run(["bash", "-n", "-c", cmd]).returncode == 0, cmd
                counts["alerts"] += 1
                counts["matchers"] += len(labels)
                counts["alertname only"] += not labels
    print(f"silences on the corpus: {dict(counts)}")
    assert counts["alerts"] > 400 and counts["matchers"] > counts["alerts"]


# --- the real amtool and Alertmanager --------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def alertmanager(alertmanager_bin, tmp_path):
    """A real Alertmanager of the pinned release on a loopback port; yields its URL."""
    (tmp_path / "am.yml").write_text("route: {receiver: 'null'}\nreceivers: [{name: 'null'}]\n")
    port = _free_port()
    proc = subprocess.Popen([str(alertmanager_bin), f"--config.file={tmp_path / 'am.yml'}",
                             f"--storage.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                             "--cluster.listen-address="], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(url + "/-/ready", timeout=1)
                break
            except OSError:
                assert proc.poll() is None, "alertmanager exited"
                time.sleep(0.1)
        else:
            pytest.fail("alertmanager did not get ready")
        yield url
    finally:
        proc.kill()
        proc.wait()


def test_generated_silence_command_works_with_the_real_amtool(alertmanager, amtool_bin, tmp_path):
    """The page's command, its preamble filled as the page's script fills it, run by bash with
    the pinned amtool: Alertmanager then holds a silence with exactly the alert's matchers."""
    spec = _spec_obj(_spec(), {})
    g, r = next(spec.rules())
    cmd = silence.command(spec, g, r, {"when": "x", "duration": "30m"}, {}, alertmanager)
    lines = cmd.split("\n")
    assert lines[0] == "NAMESPACE='‹namespace›' SERVICE='‹service›'  # alert labels: namespace service"
    # the command goes on over continuation lines (`\` at the end of a line, issue 29): bash
    # runs it as pasted, and joined it is the one command line the words make
    assert len(lines) > 2 and all(x.endswith(" \\") for x in lines[1:-1]) and not lines[-1].endswith("\\")
    joined = " ".join(x.removesuffix(" \\").strip() for x in lines[1:])
    assert joined.startswith(f"amtool silence add --alertmanager.url='{alertmanager}' alertname=ShopCheckoutFailing ")
    assert all(len(x) <= 120 for x in lines)
    filled = "NAMESPACE='web' SERVICE='check out'  # alert labels: namespace service\n" + "\n".join(lines[1:])
    env = process.environment(tmp_path)
    env["PATH"] = f"{Path(amtool_bin).parent}:{env.get('PATH', '/usr/bin:/bin')}"
    done = subprocess.run(["bash", "-c", filled], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    with urllib.request.urlopen(alertmanager + "/api/v2/silences", timeout=5) as resp:
        silences = json.load(resp)
    assert len(silences) == 1
    got = sorted((m["name"], m["value"], m["isEqual"], m["isRegex"]) for m in silences[0]["matchers"])
    assert got == [("alertname", "ShopCheckoutFailing", True, False), ("namespace", "web", True, False),
                   ("service", "check out", True, False)]
    assert silences[0]["comment"] == "ShopCheckoutFailing: see the runbook"


def test_script_quotes_matcher_values_and_ranks_alert_names():
    """rulegen.js (run by node): a value from the URL stays inside its matcher's quotes; a
    query fragment lists the alerts whose name holds it, exact name first."""
    import shutil
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = (REPO / "templates/rulegen.js").read_text()
    harness = ("globalThis.RG_ALERTS = [['LlamaSwapNoMetrics', 'llama-swap/#llamaswapnometrics'],"
               " ['NoMetrics', 'x/#nometrics'], ['LlamaSwapDown', 'llama-swap/#llamaswapdown']];\n"
               "const m = {exports: {}};\n"
               "new Function('module', 'window', 'document', require('fs').readFileSync(0, 'utf8'))(m, {}, {});\n"
               "process.stdout.write(JSON.stringify([m.exports.matcherValue('a\"b\\\\c'),"
               " m.exports.alertMatches('NoMetrics').map(a => a[0]), m.exports.alertMatches('swap').map(a => a[0]),"
               " m.exports.alertMatches('no').map(a => a[0])]));\n")
    r = subprocess.run([node, "-e", harness], input=script, capture_output=True, text=True, timeout=60,
                       env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    quoted, exact, fragment, short = json.loads(r.stdout)
    assert quoted == 'a\\"b\\\\c'
    assert exact == ["NoMetrics", "LlamaSwapNoMetrics"]
    assert fragment == ["LlamaSwapDown", "LlamaSwapNoMetrics"]
    assert short == []  # under 3 characters: mkdocs-material's results alone
