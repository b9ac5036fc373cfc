"""Routing proven with Alertmanager's own code (issue 28): ``rulegen-amroute`` (the pinned
Alertmanager's ``config`` and ``dispatch`` packages), the label sets rulegen routes, the checks
RG950-RG954, the pages' "Notifies" line and ``rulegen diff``'s routing changes."""

from __future__ import annotations

import os
import subprocess
import textwrap
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.config import parse_config
from rulegen.findings import RulegenError
from rulegen.pipeline import load_project, plan_project
from rulegen.routing.project import route_project
from rulegen.tools import amroute

from helpers import REPO

pytestmark = pytest.mark.tools("rulegen-amroute")

AM = """\
route:
  receiver: default
  routes:
    - matchers: ['severity="critical"']
      routes:
        - matchers: ['team="shop"']
          receiver: shop-pager
      continue: true
    - matchers: ['team="shop"']
      receiver: shop-chat
    - matchers: ['severity="info"']
      receiver: blackhole
receivers:
  - name: default
    email_configs: [{to: a@example.com, from: b@example.com, smarthost: "smtp.example.com:25"}]
  - name: blackhole
  - name: shop-pager
    pagerduty_configs: [{routing_key_file: /secret/pd}]
  - name: shop-chat
    webhook_configs: [{url: "https://chat.example.com/hook"}]
"""


def spec(alerts: str, labels: str = "labels: {team: shop}") -> str:
    return textwrap.dedent("""\
        app: shop
        {labels}
        groups:
          - name: shop
            rules:
        """).format(labels=labels) + textwrap.indent(textwrap.dedent(alerts), " " * 6)


DOWN = """\
- alert: ShopDown
  expr: up{job="shop"} == 0
  severity: critical
  summary: Shop is down.
  description: No shop target is up.
"""


def make(tmp_path: Path, alerts: str = DOWN, am: str = AM, labels: str = "labels: {team: shop}",
         extra_config: str = "") -> Path:
    (tmp_path / "rules").mkdir(parents=True)
    (tmp_path / "rules/shop.yaml").write_text(spec(alerts, labels), encoding="utf-8")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy/alertmanager.yml").write_text(am, encoding="utf-8")
    (tmp_path / ".rulegen.yaml").write_text(
        "conventions: {require_runbook_for: []}\nalertmanager:\n  config: deploy/alertmanager.yml\n"
        "  null_receivers: [blackhole]\n" + extra_config, encoding="utf-8")
    return tmp_path


def codes(root: Path, prefix: str = "RG95") -> list:
    return [(f.code, f.rule, f.message) for f in load_project(root).findings if f.code.startswith(prefix)]


# -- the helper ----------------------------------------------------------------------------------

def test_helper_routes_like_alertmanager_with_continue_and_default():
    got = amroute.route(AM, [{"severity": "critical", "team": "shop"}, {"team": "shop"}, {"x": "y"},
                             {"severity": "info"}])
    assert [[m.receiver for m in r] for r in got.results] == [
        ["shop-pager", "shop-chat"], ["shop-chat"], ["default"], ["blackhole"]]
    # the route ids are Alertmanager's Route.ID(): matchers from the root down, and position
    assert got.results[0][0].route == '{}/{severity="critical"}/0/{team="shop"}/0'
    assert got.default == "default"
    assert got.receivers == {"default": 1, "blackhole": 0, "shop-pager": 1, "shop-chat": 1}


def test_helper_gives_alertmanagers_own_error(amtool_bin, tmp_path):
    bad = AM.replace("receiver: shop-chat", "receiver: shop-chatt")
    with pytest.raises(amroute.InvalidConfig) as e:
        amroute.route(bad, [])
    # the same words amtool check-config (Alertmanager's config.Load) prints
    (tmp_path / "am.yml").write_text(bad, encoding="utf-8")
    out = subprocess.run([str(amtool_bin), "check-config", str(tmp_path / "am.yml")], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode != 0
    assert str(e.value) == 'undefined receiver "shop-chatt" used in route'
    assert str(e.value) in out.stdout + out.stderr


def test_helper_reads_no_file_the_config_names(tmp_path):
    # templates and *_file entries are never opened: the text comes on stdin only
    am = AM.replace("receivers:", f"templates: ['{tmp_path}/secret/*.tmpl']\nreceivers:")
    got = amroute.route(am, [{"team": "shop"}])
    assert [m.receiver for m in got.results[0]] == ["shop-chat"]


def test_helper_matches_amtool_on_many_label_sets(amtool_bin, tmp_path):
    """The helper and amtool (one process per label set) agree: both are Alertmanager's code."""
    (tmp_path / "am.yml").write_text(AM, encoding="utf-8")
    sets = [{"severity": s, "team": t} for s in ("critical", "warning", "info") for t in ("shop", "other")]
    got = amroute.route(AM, sets)
    for ls, res in zip(sets, got.results):
        out = subprocess.run([str(amtool_bin), "config", "routes", "test", f"--config.file={tmp_path / 'am.yml'}",
                              *(f"{k}={v}" for k, v in ls.items())], capture_output=True, text=True, timeout=60)
        assert out.stdout.strip() == ",".join(m.receiver for m in res), ls


# -- label sets ------------------------------------------------------------------------------------

def test_label_set_has_rule_labels_knob_defaults_and_pinned_expr_labels(tmp_path):
    root = make(tmp_path, DOWN + """\
- alert: ShopSlow
  expr: sum by (namespace) (rate(x{namespace="shop-prod"}[5m])) > 1
  severity: warning
  labels: {tier: "{{ $labels.namespace }}"}
  summary: s
  description: d
""")
    (root / "charts/shop").mkdir(parents=True)
    (root / "charts/shop/values.yaml").write_text(
        "prometheusRule:\n  additionalRuleLabels: {cluster: eu1}\n  customRules:\n    ShopSlow: {severity: info}\n",
        encoding="utf-8")
    loaded = load_project(root)
    routing = route_project(loaded.specs, root, loaded.config)
    down, slow = routing.alerts
    assert down.labels == {"alertname": "ShopDown", "cluster": "eu1", "component": "shop", "job": "shop",
                           "severity": "critical", "team": "shop"}
    assert down.receivers == ("shop-pager", "shop-chat")
    # customRules severity from values routes it as info; the templated label is open
    assert slow.labels["severity"] == "info" and slow.labels["namespace"] == "shop-prod"
    assert slow.open == ("tier",)
    assert slow.receivers == ("shop-chat",)


# -- the checks --------------------------------------------------------------------------------------

def test_invalid_config_is_reported_with_alertmanagers_error_and_the_file(tmp_path):
    root = make(tmp_path, am=AM.replace("- name: shop-chat", "- name: shop-chat2"))
    found = [f for f in load_project(root).findings if f.code == "RG950"]
    assert len(found) == 1
    assert found[0].file == "deploy/alertmanager.yml"
    assert 'undefined receiver "shop-chat" used in route' in found[0].message


def test_config_that_leads_out_of_the_project_is_not_read(tmp_path):
    outside = tmp_path / "outside.yml"
    outside.write_text(AM, encoding="utf-8")
    root = make(tmp_path / "p")
    (root / "deploy/alertmanager.yml").unlink()
    (root / "deploy/alertmanager.yml").symlink_to(outside)
    found = [f for f in load_project(root).findings if f.code == "RG950"]
    assert found and "RG742" in found[0].message and "outside the project" in found[0].message


def test_missing_config_is_rg950(tmp_path):
    root = make(tmp_path)
    (root / "deploy/alertmanager.yml").unlink()
    assert [c for c, *_ in codes(root)] == ["RG950"]


def test_config_path_must_stay_in_the_project():
    with pytest.raises(RulegenError, match="alertmanager.config"):
        parse_config({"alertmanager": {"config": "../am.yml"}})
    with pytest.raises(RulegenError, match="unknown key"):
        parse_config({"alertmanager": {"confg": "am.yml"}})


def test_routes_to_typo_says_did_you_mean(tmp_path):
    root = make(tmp_path, DOWN + "  routes_to: [shop-pagr, shop-chat]\n")
    assert codes(root) == [("RG951", "ShopDown", "routes_to names receiver 'shop-pagr', which "
                            "deploy/alertmanager.yml does not define (did you mean shop-pager?)")]


def test_routes_to_right_route_is_quiet(tmp_path):
    assert codes(make(tmp_path, DOWN + "  routes_to: [shop-pager, shop-chat]\n")) == []


def test_routes_to_wrong_route_names_both(tmp_path):
    root = make(tmp_path, DOWN + "  routes_to: [shop-chat]\n")
    [(code, rule, msg)] = codes(root)
    assert code == "RG952" and rule == "ShopDown"
    assert "routes_to says shop-chat, but Alertmanager routes ShopDown" in msg
    assert "to shop-pager, shop-chat" in msg


@pytest.mark.parametrize("labels, why", [("labels: {team: nobody}", "the default receiver"),
                                         ("labels: {team: shop}", None)])
def test_critical_alert_reaching_only_the_default_receiver(tmp_path, labels, why):
    found = codes(make(tmp_path, labels=labels))
    if why is None:
        assert found == []
    else:
        [(code, rule, msg)] = found
        assert (code, rule) == ("RG953", "ShopDown") and why in msg and "nobody is paged" in msg


def test_critical_alert_reaching_only_a_null_receiver(tmp_path):
    am = AM.replace("receiver: shop-pager", "receiver: blackhole").replace("receiver: shop-chat", "receiver: blackhole")
    [(code, _, msg)] = codes(make(tmp_path, am=am))
    assert code == "RG953" and "receivers that notify nobody" in msg


def test_paging_severities_setting(tmp_path):
    # severity page is the paging one here: routed to the default receiver only, it is RG953;
    # critical is not paging in this project, so the same route is quiet for it
    for sev, want in (("page", ["RG953"]), ("critical", [])):
        root = make(tmp_path / sev, DOWN.replace("critical", sev), labels="labels: {team: x}")
        (root / ".rulegen.yaml").write_text(
            "conventions: {severities: [page, critical], require_runbook_for: []}\n"
            "alertmanager: {config: deploy/alertmanager.yml, paging_severities: [page]}\n", encoding="utf-8")
        assert [c for c, *_ in codes(root)] == want, sev


def test_null_receivers_typo(tmp_path):
    root = make(tmp_path)
    assert codes(root) == []
    (root / ".rulegen.yaml").write_text((root / ".rulegen.yaml").read_text().replace(
        "null_receivers: [blackhole]", "null_receivers: [blackhol]"), encoding="utf-8")
    [(code, _, msg)] = codes(root)
    assert code == "RG955" and "'blackhol', which deploy/alertmanager.yml does not define (did you mean blackhole?)" in msg


def test_no_alertmanager_config_no_routing(tmp_path):
    root = make(tmp_path)
    (root / ".rulegen.yaml").write_text("conventions: {require_runbook_for: []}\n")
    assert codes(root) == []
    loaded = load_project(root)
    assert route_project(loaded.specs, root, loaded.config) is None


def test_missing_helper_is_rg954(tmp_path, monkeypatch):
    root = make(tmp_path)
    monkeypatch.setattr(amroute.find, "require", lambda name, root=None: (_ for _ in ()).throw(
        RulegenError("rulegen-amroute not found")))
    amroute_cache = __import__("rulegen.routing.project", fromlist=["_CACHE"])._CACHE
    amroute_cache.clear()
    assert [c for c, *_ in codes(root)] == ["RG954"]


# -- the page and the bundled project -----------------------------------------------------------------

def test_page_says_who_is_notified(tmp_path):
    root = make(tmp_path)
    outputs, _ = plan_project(load_project(root))
    page = next(o.content for o in outputs if o.path == "runbooks/shop.md")
    assert "**Notifies:** `shop-pager`, `shop-chat`" in page


def test_bundled_project_routes_every_critical_alert_to_a_pager():
    loaded = load_project(REPO)
    assert [f for f in loaded.findings if f.code.startswith(("RG95", "RG96"))] == []
    routing = route_project(loaded.specs, REPO, loaded.config)
    critical = [a for a in routing.alerts if a.severity == "critical"]
    assert critical and all(any(r.endswith("-oncall") for r in a.receivers) for a in critical)
    page = (REPO / "runbooks/llama-swap.md").read_text(encoding="utf-8")
    assert "**Notifies:** `ai-platform-oncall`, `ai-platform-chat`" in page


# -- rulegen diff --------------------------------------------------------------------------------------

def _git(root, *args):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env, timeout=60)


def test_diff_headline_is_an_alert_that_stops_paging(tmp_path, capsys):
    root = make(tmp_path)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    am = AM.replace("receiver: shop-pager", "receiver: blackhole").replace("receiver: shop-chat", "receiver: blackhole")
    (root / "deploy/alertmanager.yml").write_text(am, encoding="utf-8")
    assert main(["-C", str(root), "diff", "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == ("STOPS PAGING: 1 alert stops paging: ShopDown (shop: shop-pager, shop-chat "
                                   "-> blackhole)")
    assert main(["-C", str(root), "diff", "--base", "HEAD", "-o", "markdown"]) == 0
    md = capsys.readouterr().out
    assert "> **1 alert stops paging: ShopDown" in md
    assert "| `ShopDown` | shop | shop-pager, shop-chat | blackhole **(stops paging)** |" in md


def test_diff_quiet_when_routing_is_unchanged(tmp_path, capsys):
    root = make(tmp_path)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    assert main(["-C", str(root), "diff", "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "routing" not in out and "PAGING" not in out


def test_diff_does_not_judge_the_base_by_the_working_trees_alertmanager_config(tmp_path, capsys):
    """A pull request changing a route and the alert's `routes_to` together: the base's specs
    were validated against the pull request's alertmanager.yml, so `diff` said "at HEAD, these
    specs have errors" (an RG952 the base never had)."""
    root = make(tmp_path, DOWN + "  routes_to: [shop-pager, shop-chat]\n")
    assert codes(root) == []
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    (root / "deploy/alertmanager.yml").write_text(AM.replace("receiver: shop-pager", "receiver: shop-chat"),
                                                  encoding="utf-8")
    spec_file = root / "rules/shop.yaml"
    spec_file.write_text(spec_file.read_text(encoding="utf-8").replace("[shop-pager, shop-chat]", "[shop-chat]"),
                         encoding="utf-8")
    assert codes(root) == []
    assert main(["-C", str(root), "diff", "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "ShopDown (shop): shop-pager, shop-chat -> shop-chat" in out
    assert "have errors" not in out, out


def test_routing_checks_switched_off_in_a_pull_request_are_policy_changes(tmp_path, capsys):
    """`alertmanager.config` removed or `paging_severities` emptied turns RG953 (and the rest)
    off: `rulegen diff` lists each as RG823 with what it hides (it listed nothing)."""
    am = AM.replace("receiver: shop-pager", "receiver: default").replace("receiver: shop-chat", "receiver: default")
    root = make(tmp_path, DOWN, am)
    assert [c[:2] for c in codes(root)] == [("RG953", "ShopDown")]
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "base")
    cfg = root / ".rulegen.yaml"
    base_text = cfg.read_text(encoding="utf-8")
    cfg.write_text(base_text + "  paging_severities: []\n", encoding="utf-8")
    assert codes(root) == []
    assert main(["-C", str(root), "diff", "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "! RG823 .rulegen.yaml:5: alertmanager.paging_severities: [critical] -> []" in out, out
    assert "RG953" in out.split("paging_severities", 1)[1], out
    cfg.write_text("conventions: {require_runbook_for: []}\n", encoding="utf-8")
    assert main(["-C", str(root), "diff", "--base", "HEAD"]) == 0
    out = capsys.readouterr().out
    assert "alertmanager.config: deploy/alertmanager.yml -> (none) (routing not checked)" in out, out


# -- the corpus ------------------------------------------------------------------------------------------

CORPUS_AM = """\
route:
  receiver: default
  routes:
    - matchers: ['severity="critical"']
      receiver: pager
    - matchers: ['severity=~"warning|info"']
      receiver: chat
receivers:
  - name: default
  - name: pager
    pagerduty_configs: [{routing_key_file: /secret/pd}]
  - name: chat
    webhook_configs: [{url: "https://chat.example.com/hook"}]
"""


def route_corpus(corpus: Path, tmp_path: Path):
    """Import the corpus into a project routed by severity; (findings of the routing checks,
    the project's routing)."""
    from rulegen.importer import import_paths, write_specs
    res = import_paths([corpus], out_dir=tmp_path / "rules", display_base=corpus)
    write_specs(res, tmp_path / "rules")
    (tmp_path / "deploy").mkdir()
    (tmp_path / "deploy/alertmanager.yml").write_text(CORPUS_AM, encoding="utf-8")
    (tmp_path / ".rulegen.yaml").write_text("alertmanager: {config: deploy/alertmanager.yml}\n", encoding="utf-8")
    loaded = load_project(tmp_path)
    routing = route_project(loaded.specs, tmp_path, loaded.config)
    return [f for f in loaded.findings if f.code.startswith(("RG95", "RG96"))], routing


def test_corpus_routes_quietly(shared_dir, tmp_path):
    """The 954 alerts of the corpus, routed by severity: every critical one reaches the pager,
    and the routing checks stay quiet."""
    from helpers import CORPUS
    findings, routing = route_corpus(CORPUS, tmp_path)
    assert findings == []
    assert len(routing.alerts) == 954
    assert all(a.receivers == ("pager",) for a in routing.alerts if a.severity == "critical")


# -- hostile input --------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ['<script>alert(1)</script>', "[x](javascript:alert(1))", "a`b``c",
                                  "<img src=x onerror=alert(1)>", "x\\`<b>"])
def test_hostile_receiver_names_reach_the_page_as_text(tmp_path, name):
    """A receiver name comes from another team's configuration: the page shows it as code,
    never as markup or a link."""
    import yaml
    from rulegen.render import safe
    am = yaml.safe_load(AM)
    am["route"]["routes"][1]["receiver"] = name
    am["receivers"][3]["name"] = name
    root = make(tmp_path, am=yaml.safe_dump(am))
    loaded = load_project(root)
    assert name in route_project(loaded.specs, root, loaded.config).alerts[0].receivers
    outputs, _ = plan_project(loaded)
    page = next(o.content for o in outputs if o.path == "runbooks/shop.md")
    html = safe.to_html(page)
    assert safe.html_problems(html) == []
    assert "<script>" not in html and "<img" not in html and 'href="javascript' not in html
