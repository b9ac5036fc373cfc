"""A PrometheusRule inside a list is deployed like any other, so rulegen checks and reads it.

Argo CD's repo server replaces every rendered object whose ``items`` is a list (``kind: List``,
``PrometheusRuleList``, any kind: apimachinery's ``Unstructured.IsList``) by its items
(``GenerateManifests`` in reposerver/repository/repository.go), and drops one whose ``items``
is null with no ``spec`` or ``status`` (``isNullList``); kubectl's resource builder flattens
nested lists too (cli-runtime's ``FlattenListVisitor``), and its decoder gives an item of a
top-level list that has neither ``kind`` nor ``apiVersion`` the list's kind less its ``List``
suffix and the list's ``apiVersion`` (apimachinery's ``unstructuredJSONScheme.decodeToList``).

Regression: a chart template rendering a ``v1`` ``List`` around a PrometheusRule escaped the
sync check (RG736 CRD schema, RG737 webhook, RG739 rule-selector label): rulegen and
rulegen-helmrender looked at top-level objects only, and the helper passed the render unseen.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.gitops import sync
from rulegen.tools import helm

from helpers import REPO
from helpers.helm import listed

RULE = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: listed
  labels:
    release: kube-prometheus-stack
spec:
  groups:
    - name: listed
      rules:
        - alert: ListedDown
          expr: up == 0
          for: 5m
"""


def names(text: str) -> list:
    """(kind, apiVersion, name) of each PrometheusRule rulegen reads from manifest ``text``."""
    return [(pr["kind"], pr["apiVersion"], pr["metadata"]["name"])
            for pr in helm._rendered(text, Path("c")).prometheus_rules()]


PR = ("PrometheusRule", "monitoring.coreos.com/v1", "listed")


@pytest.mark.parametrize("text, expected", [
    (RULE, [PR]),
    (listed(RULE), [PR]),
    # any kind whose items are a list is unpacked (Unstructured.IsList)
    (listed(RULE, kind="ConfigMapList"), [PR]),
    # a kind-less item of a typed list takes the list's kind less "List", and its apiVersion
    (listed(RULE, kind="PrometheusRuleList", api="monitoring.coreos.com/v1", drop=("kind", "apiVersion")), [PR]),
    # ... but only when it has neither: its own apiVersion keeps it kind-less
    (listed(RULE, kind="PrometheusRuleList", api="monitoring.coreos.com/v1", drop=("kind",)), []),
    # a v1 List names no kind for its items
    (listed(RULE, drop=("kind", "apiVersion")), []),
    # nested lists are flattened (kubectl); an inner list's kind-less items stay kind-less
    (listed(listed(listed(RULE))), [PR]),
    (listed(listed(RULE, kind="PrometheusRuleList", api="monitoring.coreos.com/v1", drop=("kind", "apiVersion"))),
     []),
    # two items and a document after the list, in order
    (listed(RULE).replace("items:\n", "items:\n  - apiVersion: v1\n    kind: ConfigMap\n    metadata: {name: x}\n")
     + "  - " + RULE.replace("name: listed", "name: second").replace("\n", "\n    ").rstrip() + "\n---\n"
     + RULE.replace("name: listed", "name: third"),
     [PR, ("PrometheusRule", "monitoring.coreos.com/v1", "second"),
      ("PrometheusRule", "monitoring.coreos.com/v1", "third")]),
    # items that are not objects, and a null items list without spec: nothing applied
    ("apiVersion: v1\nkind: List\nitems: [1, null, [a]]\n", []),
    ("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata: {name: listed}\nitems: null\n", []),
    # a PrometheusRule whose items are null but which has a spec is the object itself (Argo CD)
    (RULE + "items: null\n", [PR]),
])
def test_the_prometheusrules_are_those_a_sync_applies(text, expected):
    assert names(text) == expected


def test_the_rule_groups_of_listed_prometheusrules_are_read():
    """What `rulegen test`, mutation, backtest and diff read from a render: every deployed
    PrometheusRule's groups, listed or not."""
    text = listed(RULE) + "---\n" + RULE.replace("- name: listed", "- name: plain")
    assert [g["name"] for g in helm._rendered(text, Path("c")).rule_groups()] == ["listed", "plain"]


# --- the sync check end to end -----------------------------------------------------------------

SPEC = """\
app: shop
labels: {team: web}
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        for: 5m
        severity: warning
        summary: Shop down.
        description: Shop down.
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory, helm_bin, promtool_bin) -> Path:
    if not sync.crd_path(REPO).is_file():
        pytest.skip("the PrometheusRule CRD is missing; run scripts/install-tools.sh")
    root = tmp_path_factory.mktemp("lists") / "p"
    (root / "rules").mkdir(parents=True)
    (root / "rules/shop.yaml").write_text(SPEC, encoding="utf-8")
    assert main(["-C", str(root), "build"]) == 0
    return root


def _check(built: Path, tmp_path: Path, template: str, capsys) -> tuple[int, str]:
    root = tmp_path / "p"
    shutil.copytree(built, root, symlinks=True)
    (root / "charts/shop/templates/listed.yaml").write_text(template, encoding="utf-8")
    capsys.readouterr()
    code = main(["-C", str(root), "check"])
    return code, capsys.readouterr().out


BROKEN = RULE.replace("for: 5m", "for: 5")  # the CRD's duration pattern refuses a bare number


@pytest.mark.parametrize("template", [
    listed(BROKEN),
    listed(BROKEN, kind="PrometheusRuleList", api="monitoring.coreos.com/v1", drop=("kind", "apiVersion")),
    listed(listed(BROKEN)),
], ids=["List", "PrometheusRuleList", "nested"])
def test_a_list_holding_a_broken_prometheusrule_fails_check(built, tmp_path, capsys, template):
    code, out = _check(built, tmp_path, template, capsys)
    assert code == 1, out
    (line,) = [ln for ln in out.splitlines() if " RG736 " in ln]
    assert line.startswith("charts/shop/values.yaml:0:0: error RG736 [ListedDown] PrometheusRule listed of "
                           "charts/shop (rendered with charts/shop/values.yaml): "), line
    assert "spec.groups.0.rules.0.for (group \"listed\", rule \"ListedDown\"): 5 is not of type 'string'" in line


def test_a_rule_the_webhook_rejects_in_a_list_fails_check(built, tmp_path, capsys):
    code, out = _check(built, tmp_path, listed(RULE.replace("for: 5m", "record: both:up")), capsys)
    assert code == 1, out
    (line,) = [ln for ln in out.splitlines() if " RG737 " in ln]
    assert "only one of 'record' and 'alert' must be set" in line, line


def test_a_list_holding_a_valid_prometheusrule_passes(built, tmp_path, capsys):
    code, out = _check(built, tmp_path, listed(listed(RULE)), capsys)
    assert code == 0, out
    assert " RG73" not in out, out


def test_a_listed_prometheusrule_without_the_selector_label_is_warned(built, tmp_path, capsys):
    code, out = _check(built, tmp_path, listed(RULE.replace("    release: kube-prometheus-stack\n", "")
                                              .replace("  labels:\n", "  labels: {}\n")), capsys)
    found = [ln for ln in out.splitlines() if " RG739 " in ln]
    assert len(found) == 1 and found[0].startswith(
        "charts/shop/values.yaml:0:0: warning RG739 PrometheusRule listed of charts/shop (rendered with "
        "charts/shop/values.yaml) has no release label"), out


# --- import ------------------------------------------------------------------------------------

def test_import_reads_the_prometheusrules_of_lists(tmp_path):
    """A PrometheusRuleList with kind-less items and a List inside a List are imported, as a
    sync would deploy them."""
    src = tmp_path / "rules-list.yaml"
    src.write_text(listed(RULE, kind="PrometheusRuleList", api="monitoring.coreos.com/v1",
                          drop=("kind", "apiVersion"))
                   + "---\n" + listed(listed(RULE.replace("ListedDown", "NestedDown")
                                             .replace("name: listed", "name: nested"))), encoding="utf-8")
    root = tmp_path / "p"
    assert main(["-C", str(root), "import", str(src)]) == 0
    text = "".join(p.read_text(encoding="utf-8") for p in sorted((root / "rules").rglob("*.yaml")))
    assert "alert: ListedDown" in text and "alert: NestedDown" in text, text
