"""Adopting existing rules with ``rulegen import``: where the project files go (``--out``),
all or nothing against the project's own specs, findings told at the source, kube-prometheus-
stack's rendered output named like its chart, and the severities import writes.

Corpus: "kube-prometheus-stack" by the Prometheus community Helm chart maintainers, Apache
License 2.0, read from ``../shared/corpus/kube-prometheus-stack`` (see its README); it is
copied only into a temporary folder, never into the project.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from rulegen.baseline import BASELINE_FILE
from rulegen.cli import main
from rulegen.importer import import_paths

from helpers import SHARED
from helpers.chartfixture import mini_chart
from helpers.samples import RULES as BASELINE_RULES
from helpers.samples import TWO_SEVERITIES

KPS = SHARED / "corpus" / "kube-prometheus-stack"

#: one critical alert without runbook content (ShopDown of helpers.samples.RULES)
RULES = BASELINE_RULES.split("      - alert: ShopSlow")[0]

#: a spec of the project with an app `shop` that has ShopDown
EXISTING = TWO_SEVERITIES.replace("severity: page", "severity: warning")


def _run(root: Path, *args: str) -> int:
    return main(["-C", str(root), *args])


def _tree(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --out: the project files go to the project of the specs ------------------------------------

def test_out_rules_folder_makes_its_parent_the_project(tmp_path, capsys):
    (tmp_path / "shop.rules.yml").write_text(RULES, encoding="utf-8")
    assert _run(tmp_path, "import", "shop.rules.yml", "--out", "team/rules") == 0
    out = capsys.readouterr().out
    team = tmp_path / "team"
    assert (team / "rules" / "shop-rules.yaml").is_file()
    assert yaml.safe_load((team / BASELINE_FILE).read_text(encoding="utf-8"))["findings"] == [
        {"app": "shop-rules", "rule": "ShopDown", "code": "RG504", "message": "critical alert has no runbook content"}]
    assert (team / ".rulegen" / "schema.json").is_file()
    assert (team / "rules" / "shop-rules.yaml").read_text(encoding="utf-8").startswith(
        "# yaml-language-server: $schema=../.rulegen/schema.json\n")
    # nothing of the project lands at -C
    # (the new chart's values.yaml holds the rule-selector label, issue 29)
    assert sorted(_tree(tmp_path)) == ["shop.rules.yml", "team/.rulegen-baseline.yaml", "team/.rulegen/schema.json",
                                       "team/charts/shop-rules/values.yaml", "team/rules/shop-rules.yaml"]
    assert "team/.rulegen-baseline.yaml: 1 policy finding(s)" in out
    assert "next: `rulegen -C team build`" in out
    for cmd in ("validate", "build", "check"):
        assert _run(team, cmd) == 0, cmd


def test_out_folder_not_named_rules_stays_in_the_root_project(tmp_path, capsys):
    (tmp_path / "shop.rules.yml").write_text(RULES.replace("critical", "page"), encoding="utf-8")
    assert _run(tmp_path, "import", "shop.rules.yml", "--out", "imported") == 0
    assert "next: `rulegen build imported`" in capsys.readouterr().out
    assert yaml.safe_load((tmp_path / ".rulegen.yaml").read_text(encoding="utf-8"))["conventions"] == {
        "severities": ["page"]}
    assert (tmp_path / ".rulegen" / "schema.json").is_file()
    assert not (tmp_path / "imported" / ".rulegen.yaml").exists()
    assert _run(tmp_path, "validate", "imported") == 0     # reads the root's conventions


def test_out_team_project_keeps_its_own_conventions(tmp_path, capsys):
    """The conventions import reads are those of the project it imports into."""
    (tmp_path / ".rulegen.yaml").write_text("conventions:\n  severities: [page]\n", encoding="utf-8")
    (tmp_path / "team").mkdir()
    (tmp_path / "team" / ".rulegen.yaml").write_text("# team\nconventions:\n  severities: [critical]\n",
                                                      encoding="utf-8")
    (tmp_path / "shop.rules.yml").write_text(RULES.replace("critical", "page"), encoding="utf-8")
    assert _run(tmp_path, "import", "shop.rules.yml", "--out", "team/rules") == 0
    assert (tmp_path / "team" / ".rulegen.yaml").read_text(encoding="utf-8") == \
        "# team\nconventions:\n  severities: [critical]\n"
    codes = {e["code"] for e in yaml.safe_load((tmp_path / "team" / BASELINE_FILE).read_text())["findings"]}
    assert codes == {"RG501"}          # page is not one of the team's severities: baselined there
    assert _run(tmp_path / "team", "validate") == 0


# all or nothing against the project's own specs -----------------------------------------------

@pytest.mark.parametrize("out", ["rules", "imported"])
def test_alert_name_of_an_existing_app_stops_the_import(tmp_path, capsys, out):
    """RG412 lands on the later spec in path order, here the existing rules/shop.yaml (a.yaml
    sorts first), and the existing app is seen wherever --out points: nothing is written."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "shop.yaml").write_text(EXISTING, encoding="utf-8")
    (tmp_path / "a.yml").write_text(RULES.replace("critical", "warning"), encoding="utf-8")
    assert _run(tmp_path, "validate") == 0
    before = _tree(tmp_path)
    capsys.readouterr()
    assert _run(tmp_path, "import", "a.yml", "--out", out) == 1
    err = capsys.readouterr().err
    assert f"rules/shop.yaml:5:16: error RG813 [ShopDown] importing would make this spec fail: RG412 alert " \
           f"'ShopDown' is also defined by app 'a' ({out}/a.yaml)" in err
    assert "nothing was written" in err
    assert _tree(tmp_path) == before


def test_app_name_of_an_existing_spec_stops_the_import(tmp_path, capsys):
    """RG413 (two specs, one app) on the existing spec that sorts later."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "x.yaml").write_text(EXISTING.replace("app: shop", "app: a").replace("Shop", "X"),
                                               encoding="utf-8")
    (tmp_path / "a.yml").write_text(RULES, encoding="utf-8")
    before = _tree(tmp_path)
    assert _run(tmp_path, "import", "a.yml") == 1
    assert "rules/x.yaml:1:6: error RG813 importing would make this spec fail: RG413 app 'a' is also defined in " \
           "rules/a.yaml" in capsys.readouterr().err
    assert _tree(tmp_path) == before


def test_import_still_works_next_to_specs_with_their_own_errors(tmp_path, capsys):
    """An error the project has without the import is not the import's."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "shop.yaml").write_text(EXISTING.replace("severity: warning", "severity: urgent"),
                                                  encoding="utf-8")
    (tmp_path / "a.yml").write_text(RULES.replace("ShopDown", "CartDown"), encoding="utf-8")
    assert _run(tmp_path, "import", "a.yml") == 0
    assert (tmp_path / "rules" / "a.yaml").is_file()


# findings told at the source --------------------------------------------------------------

#: ShopDown twice, the same labels (RG411)
DUPLICATE = RULES + RULES.split("rules:\n", 1)[1]


def test_rg813_points_at_the_source_line(tmp_path, capsys):
    """The spec is not written, so its lines do not exist: the finding and the line it names
    are told in the source file's lines."""
    (tmp_path / "a.yml").write_text(DUPLICATE, encoding="utf-8")
    assert _run(tmp_path, "import", "a.yml") == 1
    err = capsys.readouterr().err
    assert "a.yml:12:16: error RG813 [ShopDown] the imported spec rules/a.yaml would not validate: RG411 alert " \
           "'ShopDown' with the same labels is already defined at line 4;" in err
    assert DUPLICATE.splitlines()[11] == "      - alert: ShopDown" and DUPLICATE.splitlines()[3][15:] == "ShopDown"
    assert "rules/a.yaml:" not in err


def test_rg813_on_groups_added_to_an_existing_spec_points_at_the_source(tmp_path, capsys):
    (tmp_path / "a.yml").write_text(RULES, encoding="utf-8")
    assert _run(tmp_path, "import", "a.yml", "--app", "shop") == 0
    spec = (tmp_path / "rules" / "shop.yaml").read_text(encoding="utf-8")
    capsys.readouterr()
    assert _run(tmp_path, "import", "a.yml", "--app", "shop") == 1
    err = capsys.readouterr().err
    line = next(i for i, t in enumerate(spec.splitlines(), 1) if "alert: ShopDown" in t)
    assert f"a.yml:4:16: error RG813 [ShopDown] the imported spec rules/shop.yaml would not validate: RG411 " \
           f"alert 'ShopDown' with the same labels is already defined at line {line};" in err
    assert (tmp_path / "rules" / "shop.yaml").read_text(encoding="utf-8") == spec


# the helm hint only where a chart was imported -------------------------------------------------

def test_no_helm_hint_for_plain_rule_files(tmp_path, capsys):
    (tmp_path / "a.yml").write_text(DUPLICATE, encoding="utf-8")
    assert _run(tmp_path, "import", "a.yml") == 1
    err = capsys.readouterr().err
    assert "nothing was written. Fix the sources, then import again" in err
    assert "helm" not in err.lower()


def test_helm_hint_for_a_chart_template(tmp_path, capsys):
    """An action only Helm knows at install (RG802): rendering the chart is the way out."""
    mini_chart(tmp_path, "x: {}\n", {"rules.yaml":
               "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: shop\nspec:\n"
               "  groups:\n    - name: shop\n      rules:\n        - alert: ShopDown\n"
               "          expr: up{job=\"{{ .Capabilities.KubeVersion.Major }}\"} == 0\n"}, name="shop")
    assert _run(tmp_path, "import", "shop", "--static") == 1
    assert "(or, for a Helm chart, import what helm renders: `rulegen import CHART_DIR`)" in capsys.readouterr().err


TEMPLATE = """\
{{- if .Values.enabled }}
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {{ .Release.Name }}-shop
spec:
  groups:
    - name: shop
      rules:
        - alert: ShopDown
          expr: up == 0
          labels: {severity: warning}
          annotations: {summary: s, description: d}
        - alert: ShopDown
          expr: up == 0
          labels: {severity: warning}
          annotations: {summary: s, description: d}
{{- end }}
"""


def _chart(root: Path) -> Path:
    return mini_chart(root, "enabled: true\n", {"rules.yaml": TEMPLATE}, name="shop")


def test_rg813_in_a_helm_template_points_at_the_template_line(tmp_path, capsys):
    _chart(tmp_path)
    assert _run(tmp_path, "import", "shop", "--static") == 1
    err = capsys.readouterr().err
    assert TEMPLATE.splitlines()[13][17:] == "ShopDown"
    assert "shop/templates/rules.yaml:14:18: error RG813 [ShopDown] the imported spec rules/shop-shop.yaml would " \
           "not validate: RG411 alert 'ShopDown' with the same labels is already defined at line 10;" in err
    assert "(or, for a Helm chart, import what helm renders: `rulegen import CHART_DIR`)" in err


@pytest.mark.tools
def test_chart_rendered_by_helm_gets_no_hint_to_render_it(tmp_path, capsys, helm_bin):
    _chart(tmp_path)
    assert _run(tmp_path, "import", "shop") == 1
    err = capsys.readouterr().err
    assert "error RG813 [ShopDown]" in err
    assert "nothing was written. Fix the sources, then import again" in err


# kube-prometheus-stack's rendered output --------------------------------------------------------

def _kps_project(tmp_path: Path, shared_dir) -> Path:
    shutil.copy(KPS / "rendered-defaults.yaml", tmp_path / "rendered-defaults.yaml")
    return tmp_path


def test_rendered_kps_file_is_named_like_its_chart(tmp_path, shared_dir):
    """`helm template` output saved to a file: the release's fullname
    (`kps-kube-prometheus-stack-`) is left out of the app names, as for the chart, while each
    PrometheusRule keeps its full name (chart.name)."""
    res = import_paths([KPS / "rendered-defaults.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert res.ok
    names = sorted(s.app for s in res.specs)
    assert len(names) == 35
    assert not [n for n in names if n.startswith(("kps", "kube-prometheus-stack"))]
    assert {"general-rules", "alertmanager-rules", "kubernetes-apps", "node-exporter"} <= set(names)
    assert {s.app: s.data["chart"]["name"] for s in res.specs}["general-rules"] == \
        "kps-kube-prometheus-stack-general.rules"
    # the static read of the chart's templates names the same apps, except where Helm cut the
    # PrometheusRule name at 63 characters (`...-container-cpu-usage-seconds-tot` there)
    static = sorted(s.app for s in import_paths([KPS / "chart"], out_dir=tmp_path / "rules",
                                                display_base=tmp_path).specs)
    differ = sorted(set(names) ^ set(static))
    assert len(differ) == 4 and all(any(b.startswith(a) and a != b for b in static) for a in set(names) - set(static))


@pytest.mark.tools
def test_rendered_kps_file_names_equal_the_helm_chart_import(tmp_path, helm_bin, shared_dir):
    from rulegen.importer import chart
    file_names = {s.app for s in import_paths([KPS / "rendered-defaults.yaml"], out_dir=tmp_path / "rules",
                                              display_base=tmp_path).specs}
    opts = chart.RenderOptions(release="kps", namespace="monitoring", kube_version="1.33.0")
    chart_names = {s.app for s in import_paths([KPS / "chart"], out_dir=tmp_path / "rules", display_base=tmp_path,
                                               render=opts).specs}
    assert file_names == chart_names


def test_hand_written_prometheusrules_keep_their_names(tmp_path):
    """Only Helm's output loses the shared prefix: two hand-written PrometheusRules keep theirs."""
    doc = ("apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: shop-{n}\nspec:\n"
           "  groups:\n    - name: {n}\n      rules:\n        - record: job:up:{n}\n          expr: sum by (job) (up)\n")
    (tmp_path / "m.yaml").write_text(doc.format(n="a") + "---\n" + doc.format(n="b"), encoding="utf-8")
    res = import_paths([tmp_path / "m.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert sorted(s.app for s in res.specs) == ["shop-a", "shop-b"]
    helm_labels = doc.replace("metadata:\n", "metadata:\n  labels:\n    heritage: Helm\n")
    (tmp_path / "m.yaml").write_text(helm_labels.format(n="a") + "---\n" + helm_labels.format(n="b"), encoding="utf-8")
    res = import_paths([tmp_path / "m.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert sorted(s.app for s in res.specs) == ["a", "b"]


RENDERED_SHOP = """\
---
# Source: shop/templates/prometheusrule.yaml
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: release-name-shop
  labels:
    app.kubernetes.io/instance: release-name
    app.kubernetes.io/managed-by: Helm
spec:
  groups:
    - name: release-name-shop-availability
      rules:
        - alert: ShopDown
          expr: up{job="shop"} == 0
    - name: other
      rules:
        - alert: ShopSlow
          expr: up{job="shop"} < 1
"""


def test_rendered_file_of_one_prometheusrule_loses_the_release_name(tmp_path):
    """One PrometheusRule (no shared prefix to leave out): the release Helm rendered it for
    (`release-name`, helm's default) is replaced by the chart's name, in the app name and in
    group names, which a spec writes the same into every release."""
    (tmp_path / "rendered.yaml").write_text(RENDERED_SHOP, encoding="utf-8")
    res = import_paths([tmp_path / "rendered.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    [spec] = res.specs
    assert spec.app == "shop"
    assert [g["name"] for g in spec.data["groups"]] == ["shop-availability", "other"]
    assert spec.data["chart"]["name"] == "release-name-shop"          # the PrometheusRule keeps its name
    [note] = [n for n in res.notes if n.code == "RG808"]
    assert (note.file, note.line, note.rule) == ("rendered.yaml", 12, "release-name-shop-availability")
    assert "release name `release-name`" in note.message and "`shop-availability`" in note.message


def test_release_and_chart_read_from_labels_without_source_lines(tmp_path):
    from rulegen.importer.chart import as_chart_named
    text = RENDERED_SHOP.replace("# Source: shop/templates/prometheusrule.yaml\n", "").replace(
        "    app.kubernetes.io/managed-by: Helm\n", "    app.kubernetes.io/managed-by: Helm\n    helm.sh/chart: shop-1.2.3\n")
    (tmp_path / "rendered.yaml").write_text(text, encoding="utf-8")
    [spec] = import_paths([tmp_path / "rendered.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path).specs
    assert spec.app == "shop"
    assert as_chart_named("kps-kube-prometheus-stack-etcd", "kps", "kube-prometheus-stack") == \
        "kube-prometheus-stack-etcd"
    assert as_chart_named("shop-prod-rules", "shop-prod", "shop") == "shop-rules"
    assert as_chart_named("unrelated", "kps", "kube-prometheus-stack") == "unrelated"


@pytest.mark.tools
def test_kps_rendered_with_helms_default_release_name(tmp_path, helm_bin, shared_dir):
    """`helm template` without a release name (`release-name`): the apps are named as for the
    `kps` release, except where Helm cut a longer name at 63 characters."""
    import subprocess
    text = subprocess.run([str(helm_bin), "template", str(KPS / "chart"), "-n", "monitoring", "--kube-version",
                           "1.33.0"], check=True, capture_output=True, text=True).stdout
    (tmp_path / "release-name.yaml").write_text(text, encoding="utf-8")
    names = {s.app for s in import_paths([tmp_path / "release-name.yaml"], out_dir=tmp_path / "rules",
                                         display_base=tmp_path).specs}
    kps = {s.app for s in import_paths([KPS / "rendered-defaults.yaml"], out_dir=tmp_path / "rules",
                                       display_base=tmp_path).specs}
    assert len(names) == 35 and not [n for n in names if "release" in n]
    assert sorted(names - kps) == ["k8s-rules-container-cpu-usage-second", "k8s-rules-container-memory-working-s"]
    assert sorted(kps - names) == ["k8s-rules-container-cpu-usage-seconds", "k8s-rules-container-memory-working-se"]


# severities -----------------------------------------------------------------------------

def test_kps_import_adds_none_after_the_default_severities(tmp_path, capsys, shared_dir):
    """kube-prometheus-stack uses critical, warning, info and none (Watchdog, InfoInhibitor):
    the defaults stay, in their order, and none is added with a comment saying why."""
    root = _kps_project(tmp_path, shared_dir)
    assert _run(root, "import", "rendered-defaults.yaml") == 0
    assert ".rulegen.yaml: the imported alerts use none besides critical, warning, info" in capsys.readouterr().out
    assert (root / ".rulegen.yaml").read_text(encoding="utf-8").split("\n", 1)[1] == (
        "conventions:\n"
        "  # read from the imported rules by `rulegen import`: critical, warning, info are rulegen's defaults; none is "
        "used by the imported Watchdog, InfoInhibitor\n"
        "  severities: [critical, warning, info, none]\n"
        # a config import creates says what `rulegen check --base` does (issue 23, class 7)
        "# `rulegen check --base <the pull request's base branch>` fails when a pull request adds\n"
        "# entries to .rulegen-baseline.yaml or switches a check off or weakens it here (RG820-RG823);\n"
        "# the value on the base branch counts, not the pull request's. warn: report them only.\n"
        "policy_changes: fail\n")
    assert _run(root, "validate") == 0
    assert "RG501" not in capsys.readouterr().out


def test_kps_import_keeps_the_projects_severities(tmp_path, capsys, shared_dir):
    root = _kps_project(tmp_path, shared_dir)
    conf = "# ours\nconventions:\n  severities: [critical, warning]   # we page on critical\n"
    (root / ".rulegen.yaml").write_text(conf, encoding="utf-8")
    assert _run(root, "import", "rendered-defaults.yaml") == 0
    assert (root / ".rulegen.yaml").read_text(encoding="utf-8") == conf
    found = yaml.safe_load((root / BASELINE_FILE).read_text(encoding="utf-8"))["findings"]
    rg501 = sorted(e["rule"] for e in found if e["code"] == "RG501")
    assert {"Watchdog", "InfoInhibitor"} <= set(rg501)          # none, and the info alerts, baselined
    assert _run(root, "validate") == 0


def test_defaults_only_write_no_config(tmp_path, capsys):
    (tmp_path / "a.yml").write_text(RULES, encoding="utf-8")
    assert _run(tmp_path, "import", "a.yml") == 0
    assert not (tmp_path / ".rulegen.yaml").exists()


# strings YAML 1.1 reads otherwise ---------------------------------------------------------

@pytest.mark.parametrize("word", ["y", "n", "Y", "N", "1_000", "0o17"])
def test_strings_yaml_1_1_reads_otherwise_are_quoted(tmp_path, word):
    """`description: y` in a rule file read as YAML 1.2 is the string 'y'; written plain into
    the spec, Kubernetes' YAML 1.1 reader would make it a boolean (RG108). Import quotes it,
    instead of stopping with RG809 "please report this"."""
    (tmp_path / "a.yml").write_text(RULES.replace("No shop target is up.", word)
                                    .replace("severity: critical", f"severity: critical\n          flag: {word}"),
                                    encoding="utf-8")
    res = import_paths([tmp_path / "a.yml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert res.ok, res.notes
    [spec] = res.specs
    assert f'description: "{word}"' in spec.text and f'flag: "{word}"' in spec.text
    [rule] = spec.data["groups"][0]["rules"]
    assert (rule["description"], rule["labels"]["flag"]) == (word, word)


def test_nothing_to_import_writes_nothing(tmp_path, capsys):
    """A template whose gate is off with the default values (RG816): no spec, and no schema
    copy or anything else written either."""
    chart = _chart(tmp_path)
    (chart / "values.yaml").write_text("enabled: false\n", encoding="utf-8")
    before = _tree(tmp_path)
    assert _run(tmp_path, "import", "shop", "--static") == 0
    assert "no rule to import (the notes above say why); nothing was written" in capsys.readouterr().out
    assert _tree(tmp_path) == before


def test_a_failed_write_leaves_nothing_half_imported(tmp_path, capsys):
    """`charts` is a file, so the chart values of the PrometheusRule's labels cannot be
    written: the conventions, baseline and specs written before it are not left behind."""
    (tmp_path / "charts").write_text("not a folder\n", encoding="utf-8")
    (tmp_path / "m.yaml").write_text(
        "apiVersion: monitoring.coreos.com/v1\nkind: PrometheusRule\nmetadata:\n  name: shop\n  labels:\n"
        "    release: kps\nspec:\n" + "\n".join("  " + line for line in RULES.replace("critical", "page").splitlines())
        + "\n", encoding="utf-8")
    before = _tree(tmp_path)
    assert _run(tmp_path, "import", "m.yaml") == 2
    assert _tree(tmp_path) == before
    assert not [p for p in tmp_path.rglob("*.tmp")]


def test_force_over_a_spec_with_the_same_error_still_stops(tmp_path, capsys):
    """A spec --force replaces is all the import's: that the replaced spec had the same error
    at the same place does not let it through."""
    (tmp_path / "a.yml").write_text(DUPLICATE, encoding="utf-8")
    [spec] = import_paths([tmp_path / "a.yml"], out_dir=tmp_path / "rules", display_base=tmp_path).specs
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "a.yaml").write_text(spec.text, encoding="utf-8")     # written by hand, say
    before = _tree(tmp_path)
    assert _run(tmp_path, "import", "a.yml", "--force") == 1
    assert "a.yml:12:16: error RG813 [ShopDown]" in capsys.readouterr().err
    assert _tree(tmp_path) == before


def _rules_with_severities(sevs) -> str:
    out = ["groups:", "  - name: g", "    rules:"]
    for i, sev in enumerate(sevs):
        out += [f"      - alert: Thing{i}Down", f"        expr: up{{job=\"t{i}\"}} == 0",
                "        annotations: {summary: down}"]
        if sev:
            out += [f"        labels: {{severity: {sev}}}"]
    return "\n".join(out) + "\n"


def test_severities_read_when_a_few_alerts_have_none(tmp_path, capsys):
    """Issue 26: 7 of ~385 alerts without a severity kept the team's scheme (page, notify,
    ticket, none) from being read; they are a minority, named, and baselined (RG501)."""
    (tmp_path / "a.rules.yml").write_text(_rules_with_severities(
        ["page", "page", "ticket", "notify", "none", "ticket", None, None]), encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "a.rules.yml"]) == 0
    out = capsys.readouterr().out
    conf = yaml.safe_load((tmp_path / ".rulegen.yaml").read_text(encoding="utf-8"))
    assert conf["conventions"]["severities"] == ["page", "ticket", "none", "notify"]
    assert "(all 6 of them with one; 2 alert(s) have none: Thing6Down, Thing7Down)" in out
    base = yaml.safe_load((tmp_path / BASELINE_FILE).read_text(encoding="utf-8"))
    assert sorted((f["rule"], f["code"]) for f in base["findings"]) == [("Thing6Down", "RG501"),
                                                                         ("Thing7Down", "RG501")]
    assert main(["-C", str(tmp_path), "validate"]) == 0


def test_no_scheme_read_when_most_alerts_have_no_severity(tmp_path, capsys):
    """Both ways: a few severities among mostly unrated alerts are no scheme to adopt."""
    (tmp_path / "a.rules.yml").write_text(_rules_with_severities(["page", None, None]), encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "a.rules.yml"]) == 0
    conf = yaml.safe_load((tmp_path / ".rulegen.yaml").read_text(encoding="utf-8")) or {}
    assert "severities" not in (conf.get("conventions") or {})
