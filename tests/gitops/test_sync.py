"""Issue 29 items 4 and 5: `rulegen check` catches what the Argo CD sync would reject (values
files through the real helm with schema validation, RG735; the Prometheus Operator's CRD schema,
RG736; its admission webhook's rule parser, RG737), and new charts get the rule-selector label
kube-prometheus-stack selects PrometheusRules by (charts.rule_selector_labels, RG734)."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.config import parse_config
from rulegen.findings import RulegenError
from rulegen.gitops import sync

from helpers import REPO

SPEC = """\
app: shop
labels: {team: web}
groups:
  - name: shop
    rules:
      - alert: ShopErrors
        expr: rate(shop_errors_total{job="shop"}[5m]) > [[threshold]]
        params:
          threshold: {default: 0.5, description: Errors per second.}
        for: 5m
        severity: warning
        summary: Shop errors.
        description: Shop errors.
slos:
  - name: availability
    objective: 99.5
    period: 30d
    description: Requests that do not fail.
    sli:
      events:
        bad: http_requests_total{job="shop", code=~"5.."}
        total: http_requests_total{job="shop"}
"""


@pytest.fixture(scope="session")
def crd_file(helm_bin, promtool_bin) -> Path:
    """The pinned PrometheusRule CRD (scripts/install-tools.sh); skipped locally when absent,
    a failure in CI."""
    p = sync.crd_path(REPO)
    if not p.is_file():
        msg = f"{p} is missing; run scripts/install-tools.sh"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return p


@pytest.fixture(scope="module")
def built(tmp_path_factory, crd_file) -> Path:
    """A built one-app project (a parameterised alert and an SLO), gates on."""
    root = tmp_path_factory.mktemp("sync") / "p"
    (root / "rules").mkdir(parents=True)
    (root / "rules/shop.yaml").write_text(SPEC, encoding="utf-8")
    assert main(["-C", str(root), "build"]) == 0
    values = root / "charts/shop/values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("enabled: false", "enabled: true"),
                      encoding="utf-8")
    return root


def _copy(built: Path, tmp_path: Path) -> Path:
    root = tmp_path / "p"
    shutil.copytree(built, root, symlinks=True)
    return root


def _check(root: Path, capsys) -> tuple[int, str]:
    capsys.readouterr()
    code = main(["-C", str(root), "check"])
    return code, capsys.readouterr().out


def _at(text: str, needle: str) -> tuple[int, int]:
    idx = text.index(needle)
    return text.count("\n", 0, idx) + 1, idx - (text.rfind("\n", 0, idx) + 1) + 1


def test_the_built_project_and_the_bundled_charts_pass(built, project, capsys):
    for root in (built, project):
        code, out = _check(root, capsys)
        assert code == 0, out
        assert not re.search(r"RG73[4-9]", out), out


# (what is added under prometheusRule, the key that is wrong, words of the message)
BAD = [
    ("  customRules:\n    ShopErrors:\n      params:\n        treshold: 3\n", "treshold",
     "prometheusRule.customRules.ShopErrors.params.treshold: not a key the chart accepts (did you mean threshold?)"),
    ("  customRules:\n    ShopErrors:\n      severity: criticl\n", "severity",
     "prometheusRule.customRules.ShopErrors.severity: value must be one of 'critical', 'warning', 'info' "
     "(did you mean critical?)"),
    # regression (trial): "value must be one of 'critical', 'warning', 'info' (one of critical, warning, info)"
    ("  customRules:\n    ShopErrors:\n      severity: page\n", "severity",
     "prometheusRule.customRules.ShopErrors.severity: value must be one of 'critical', 'warning', 'info'; helm "
     "template of charts/shop fails"),
    ("  slos:\n    availability:\n      objective: 100\n", "objective",
     "prometheusRule.slos.availability.objective: exclusiveMaximum"),
    # a ratio where a percentage is meant (trial): the schema's exclusiveMinimum is 1
    ("  slos:\n    availability:\n      objective: 0.995\n", "objective",
     "prometheusRule.slos.availability.objective: exclusiveMinimum: got 0.995, want 1 (a ratio where a "
     "percentage is meant: write 99.5); helm template"),
    ("  slos:\n    availability:\n      enabld: false\n", "enabld",
     "prometheusRule.slos.availability.enabld: not a key the chart accepts (did you mean enabled?)"),
    ("  labels:\n    team: 5\n", "team", "prometheusRule.labels.team: got number, want string"),
]


def test_rg735_lists_an_enum_once_whatever_helm_says():
    # Helm's validator lists the choices itself: the hint adds them only to a message that does not
    from rulegen.gitops.sync import values_findings
    schema = {"properties": {"severity": {"enum": ["critical", "warning", "info"]}}}

    def message(said: str) -> str:
        [f] = values_findings(f"Error: values don't meet the specifications of the schema(s):\n- at '/severity': {said}\n",
                              [("charts/shop/values.yaml", "severity: page\n")], schema, "charts/shop",
                              "charts/shop/values.yaml")
        assert (f.code, f.file, f.line, f.col) == ("RG735", "charts/shop/values.yaml", 1, 1)
        return f.message

    assert message("value must be one of 'critical', 'warning', 'info'") == (
        "severity: value must be one of 'critical', 'warning', 'info'; helm template of charts/shop fails on it "
        "(values.schema.json), so the Argo CD sync would")
    assert message("not one of the allowed values").startswith(
        "severity: not one of the allowed values (one of critical, warning, info); helm template")


@pytest.mark.parametrize("added, key, words", BAD, ids=[b[1] + str(i) for i, b in enumerate(BAD)])
def test_a_bad_values_yaml_fails_check_at_the_key(built, tmp_path, capsys, added, key, words):
    root = _copy(built, tmp_path)
    values = root / "charts/shop/values.yaml"
    text = values.read_text(encoding="utf-8")
    # the knob blocks rulegen wrote are flow-style {}: drop the one being replaced
    first = added.split(":", 1)[0].strip()
    text = re.sub(rf"^  {first}: \{{\}}\n", "", text, flags=re.M)
    text = re.sub(rf"^  {first}:\n(    .*\n)+", "", text, flags=re.M)
    text = text.replace("prometheusRule:\n", "prometheusRule:\n" + added, 1)
    values.write_text(text, encoding="utf-8")
    line, col = _at(text, f"{key}:" if key != "team" else "team: 5")
    code, out = _check(root, capsys)
    assert code == 1
    found = [ln for ln in out.splitlines() if " RG735 " in ln]
    assert len(found) == 1, out
    assert found[0].startswith(f"charts/shop/values.yaml:{line}:{col}: error RG735 "), found
    assert words in found[0]


def test_an_extra_values_file_is_rendered_and_reported_at_its_own_line(built, tmp_path, capsys):
    root = _copy(built, tmp_path)
    (root / "deploy").mkdir()
    (root / "deploy/prod.yaml").write_text(
        "# production\nprometheusRule:\n  customRules:\n    ShopErrors:\n      for: 5\n", encoding="utf-8")
    (root / ".rulegen.yaml").write_text("charts:\n  values_files:\n    charts/shop: [deploy/prod.yaml]\n",
                                        encoding="utf-8")
    code, out = _check(root, capsys)
    assert code == 1
    assert "deploy/prod.yaml:5:7: error RG735 prometheusRule.customRules.ShopErrors.for: got number, " \
           "want string" in out
    # the chart's own values.yaml renders fine, and is not blamed
    assert "charts/shop/values.yaml:" not in out


HAND_WRITTEN = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: extra
spec:
  groups:
    - name: extra
      rules:
        - alert: ExtraDown
          expr: up == 0
          for: {{ .Values.extraFor }}
          labels:
            paging: {{ .Values.paging }}
"""


def test_a_rendered_prometheusrule_that_breaks_the_crd_schema_is_reported(built, tmp_path, capsys):
    root = _copy(built, tmp_path)
    (root / "charts/shop/templates/extra.yaml").write_text(HAND_WRITTEN, encoding="utf-8")
    values = root / "charts/shop/values.yaml"
    values.write_text(values.read_text(encoding="utf-8") + 'extraFor: 5\npaging: "on"\n', encoding="utf-8")
    code, out = _check(root, capsys)
    assert code == 1
    (line,) = [ln for ln in out.splitlines() if " RG736 " in ln]
    assert line.startswith("charts/shop/values.yaml:0:0: error RG736 [ExtraDown] PrometheusRule extra of "
                           "charts/shop (rendered with charts/shop/values.yaml): ")
    # `for: 5` is a number; `paging: on` (unquoted by the template) is a YAML 1.1 boolean
    assert "spec.groups.0.rules.0.for (group \"extra\", rule \"ExtraDown\"): 5 is not of type 'string'" in line
    assert "labels.paging (group \"extra\", rule \"ExtraDown\"): True is not of type 'string'" in line
    # fixed in the values: it passes
    values.write_text(values.read_text(encoding="utf-8").replace("extraFor: 5", "extraFor: 5m")
                      .replace('paging: "on"', "paging: '\"on\"'"), encoding="utf-8")
    code, out = _check(root, capsys)
    assert code == 0, out


def test_duplicate_group_names_break_the_crd_list_map():
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"groups": {
        "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}}}
    obj = {"spec": {"groups": [{"name": "a"}, {"name": "b"}, {"name": "a"}]}}
    assert sync.crd_errors(obj, schema) == [
        (("spec", "groups", 2), "duplicate name a (also item 0): the list is a map keyed by it")]


def test_a_rule_the_webhook_parser_rejects_is_reported_with_its_name(built, tmp_path, capsys):
    root = _copy(built, tmp_path)
    (root / "charts/shop/templates/extra.yaml").write_text(
        HAND_WRITTEN.replace("for: {{ .Values.extraFor }}", "record: extra:up")
        .replace("paging: {{ .Values.paging }}", "paging: x"), encoding="utf-8")
    code, out = _check(root, capsys)
    assert code == 1
    (line,) = [ln for ln in out.splitlines() if " RG737 " in ln]
    assert "[ExtraDown] PrometheusRule extra of charts/shop" in line
    assert "only one of 'record' and 'alert' must be set" in line


@pytest.mark.parametrize("edit, said", [
    # the pinned operator release is built on an older Prometheus than rulegen's promtool, and
    # holds label names to the legacy scheme: its webhook rejects these, promtool 3.16 does not
    (("expr: up == 0", "expr: first_over_time(up[5m]) == 0"), 'unknown function with name "first_over_time"'),
    (("paging: {{ .Values.paging }}", "run-book: x"), 'invalid annotation name: run-book'),
])
def test_what_only_the_operators_webhook_rejects_is_reported(built, tmp_path, capsys, edit, said):
    """Regression: rulegen-helmrender judged these invalid with the operator's own ValidateRule,
    rulegen's promtool found nothing, and `check` passed a chart whose Argo CD sync fails."""
    root = _copy(built, tmp_path)
    (root / "charts/shop/templates/extra.yaml").write_text(
        HAND_WRITTEN.replace("for: {{ .Values.extraFor }}", "for: 5m").replace(*edit)
        .replace("paging: {{ .Values.paging }}", "paging: x"), encoding="utf-8")
    if edit[0].startswith("paging"):
        text = (root / "charts/shop/templates/extra.yaml").read_text(encoding="utf-8")
        (root / "charts/shop/templates/extra.yaml").write_text(text.replace("labels:", "annotations:"),
                                                                encoding="utf-8")
    code, out = _check(root, capsys)
    assert code == 1, out
    (line,) = [ln for ln in out.splitlines() if " RG737 " in ln]
    assert line.startswith("charts/shop/values.yaml:0:0: error RG737 charts/shop (rendered with "
                           "charts/shop/values.yaml): the Prometheus Operator's admission webhook rejects a "
                           "PrometheusRule it renders, so the Argo CD sync would fail: document "), line
    assert said in line, line


def test_gates_off_still_checks_the_prometheusrule(built, tmp_path, capsys):
    root = _copy(built, tmp_path)
    values = root / "charts/shop/values.yaml"
    values.write_text(values.read_text(encoding="utf-8").replace("enabled: true", "enabled: false", 1),
                      encoding="utf-8")
    (root / "charts/shop/templates/extra.yaml").write_text(
        "{{- if .Values.monitoring.enabled }}\n" + HAND_WRITTEN + "{{- end }}\n", encoding="utf-8")
    values.write_text(values.read_text(encoding="utf-8") + "extraFor: 5\n", encoding="utf-8")
    code, out = _check(root, capsys)
    assert code == 1 and " RG736 " in out


# --- item 5: the rule-selector label -----------------------------------------------------------

def test_new_charts_get_the_release_label_by_default_and_with_release(tmp_path, capsys):
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    assert main(["-C", str(tmp_path), "new", "cart", "--release", "monitoring"]) == 0
    shop = yaml.safe_load((tmp_path / "charts/shop/values.yaml").read_text(encoding="utf-8"))
    cart = yaml.safe_load((tmp_path / "charts/cart/values.yaml").read_text(encoding="utf-8"))
    assert shop["prometheusRule"]["labels"] == {"release": "kube-prometheus-stack"}
    assert cart["prometheusRule"]["labels"] == {"release": "monitoring"}
    assert main(["-C", str(tmp_path), "new", "bad", "--release", "a b"]) == 2
    assert "--release.release: 'a b' is not a Kubernetes label value" in capsys.readouterr().err


def test_an_existing_values_yaml_never_gets_the_label(project):
    before = (project / "charts/noctaya/values.yaml").read_text(encoding="utf-8")
    assert main(["-C", str(project), "build"]) == 0
    assert (project / "charts/noctaya/values.yaml").read_text(encoding="utf-8") == before


def test_the_project_setting_and_the_warning_when_it_sets_none(tmp_path, capsys):
    (tmp_path / ".rulegen.yaml").write_text("charts:\n  rule_selector_labels: {prometheus: main}\n",
                                            encoding="utf-8")
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    shop = yaml.safe_load((tmp_path / "charts/shop/values.yaml").read_text(encoding="utf-8"))
    assert shop["prometheusRule"]["labels"] == {"prometheus": "main"}
    (tmp_path / ".rulegen.yaml").write_text("# none\ncharts:\n  rule_selector_labels: {}\n", encoding="utf-8")
    capsys.readouterr()
    main(["-C", str(tmp_path), "check"])
    out = capsys.readouterr().out
    assert ".rulegen.yaml:3:0: warning RG734 charts.rule_selector_labels sets no label" in out


def _labels(root: Path, text: str) -> str:
    """``root``'s chart values.yaml with the PrometheusRule's ``labels`` block written as
    ``text``; the new file's text."""
    values = root / "charts/shop/values.yaml"
    new = re.sub(r"^  labels:\n(    .*\n)+", text, values.read_text(encoding="utf-8"), count=1, flags=re.M)
    assert new != values.read_text(encoding="utf-8")
    values.write_text(new, encoding="utf-8")
    return new


@pytest.mark.parametrize("labels", ["  labels: {}\n", "  labels:\n    team: web\n", '  labels: {release: ""}\n'])
def test_a_chart_whose_values_drop_the_rule_selector_label_is_warned_at_the_values_line(
        built, tmp_path, capsys, labels):
    """A new-user trial: a chart's own values.yaml with `prometheusRule.labels: {}` passed check,
    and kube-prometheus-stack never loaded its rules (RG739, at the `labels` key)."""
    root = _copy(built, tmp_path)
    text = _labels(root, labels)
    line, col = _at(text, "  labels:")
    code, out = _check(root, capsys)
    assert code == 0, out  # a warning
    found = [ln for ln in out.splitlines() if " RG739 " in ln]
    assert found == [f"charts/shop/values.yaml:{line}:{col + 2}: warning RG739 PrometheusRule shop of charts/shop "
                     "(rendered with charts/shop/values.yaml) has no release label, which "
                     "charts.rule_selector_labels (the default, release: kube-prometheus-stack) says your "
                     "Prometheus selects rules by: a kube-prometheus-stack install's default ruleSelector ignores "
                     "its rules; set "
                     "prometheusRule.labels: {release: kube-prometheus-stack} here (or the value your Prometheus "
                     "selects)"], out


def test_any_value_of_the_label_counts_and_an_extra_values_file_that_drops_it_is_named(built, tmp_path, capsys):
    root = _copy(built, tmp_path)
    _labels(root, "  labels:\n    release: monitoring\n")  # what `rulegen new --release monitoring` writes
    code, out = _check(root, capsys)
    assert code == 0 and " RG739 " not in out, out
    (root / "deploy").mkdir()
    # helm merges the files' maps: a later file removes a label by setting it to null
    (root / "deploy/prod.yaml").write_text("# production\nprometheusRule:\n  labels: {release: null}\n",
                                           encoding="utf-8")
    (root / ".rulegen.yaml").write_text("charts:\n  values_files:\n    charts/shop: [deploy/prod.yaml]\n",
                                        encoding="utf-8")
    code, out = _check(root, capsys)
    found = [ln for ln in out.splitlines() if " RG739 " in ln]
    assert len(found) == 1 and found[0].startswith("deploy/prod.yaml:3:3: warning RG739 PrometheusRule shop of "
                                                   "charts/shop (rendered with deploy/prod.yaml) has no release"), out
    # regression (trial): the message said ".rulegen.yaml says" of a key the file does not set
    assert "which charts.rule_selector_labels (the default, release: kube-prometheus-stack) says" in found[0]
    (root / ".rulegen.yaml").write_text("charts:\n  rule_selector_labels: {release: kube-prometheus-stack}\n"
                                        "  values_files:\n    charts/shop: [deploy/prod.yaml]\n", encoding="utf-8")
    code, out = _check(root, capsys)
    found = [ln for ln in out.splitlines() if " RG739 " in ln]
    assert len(found) == 1 and "which charts.rule_selector_labels in .rulegen.yaml says" in found[0], out


def test_the_label_check_follows_the_project_setting(built, tmp_path, capsys):
    """The label names come from charts.rule_selector_labels; none set is RG734, once."""
    root = _copy(built, tmp_path)
    (root / ".rulegen.yaml").write_text("charts:\n  rule_selector_labels: {prometheus: main}\n", encoding="utf-8")
    code, out = _check(root, capsys)
    assert "has no prometheus label, which charts.rule_selector_labels in .rulegen.yaml says" in out
    assert "set prometheusRule.labels: {prometheus: main} here" in out
    (root / ".rulegen.yaml").write_text("charts:\n  rule_selector_labels: {}\n", encoding="utf-8")
    code, out = _check(root, capsys)
    assert " RG734 " in out and " RG739 " not in out, out


def test_a_hand_written_prometheusrule_without_the_label_is_warned_at_the_file(built, tmp_path, capsys):
    """The chart's values set the label; a PrometheusRule template of the team's own that does
    not read them is named, at the values file it was rendered with."""
    root = _copy(built, tmp_path)
    (root / "charts/shop/templates/extra.yaml").write_text(HAND_WRITTEN, encoding="utf-8")
    values = root / "charts/shop/values.yaml"
    values.write_text(values.read_text(encoding="utf-8") + 'extraFor: 5m\npaging: "on"\n', encoding="utf-8")
    code, out = _check(root, capsys)
    found = [ln for ln in out.splitlines() if " RG739 " in ln]
    assert found == ["charts/shop/values.yaml:0:0: warning RG739 PrometheusRule extra of charts/shop (rendered with "
                     "charts/shop/values.yaml) has no release label, which charts.rule_selector_labels (the "
                     "default, release: kube-prometheus-stack) says your Prometheus selects rules by: a "
                     "kube-prometheus-stack install's default ruleSelector ignores its rules; prometheusRule.labels "
                     "sets it, but the template "
                     "that renders extra does not use them: give its metadata the label"], out


def test_import_gives_a_new_chart_the_label(tmp_path, capsys):
    src = tmp_path / "a.rules.yml"
    src.write_text("groups:\n  - name: g\n    rules:\n      - alert: Down\n        expr: up == 0\n"
                   "        labels: {severity: critical}\n", encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", str(src), "--app", "shop", "--release-label", "kps"]) == 0
    values = yaml.safe_load((tmp_path / "charts/shop/values.yaml").read_text(encoding="utf-8"))
    assert values["prometheusRule"]["labels"] == {"release": "kps"}


@pytest.mark.parametrize("raw, words", [
    ({"charts": {"rule_selector_labels": {"release": 5}}}, "is not a Kubernetes label value"),
    ({"charts": {"rule_selector_labels": {"bad name": "x"}}}, "is not a Kubernetes label name"),
    ({"charts": {"values_files": {"charts/a": ["../x.yaml"]}}}, "must be a path inside the project"),
    ({"charts": {"values_files": {"charts/a": "x.yaml"}}}, "must be a list of strings"),
    ({"charts": {"release": "x"}}, "unknown key(s) charts.release"),
])
def test_config_errors(raw, words):
    with pytest.raises(RulegenError, match=re.escape(words)):
        parse_config(raw)


def _rule_objects():
    """PrometheusRule objects, valid and not, as a rendered chart could hold them."""
    ok = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule",
          "metadata": {"name": "shop", "labels": {"release": "kps"}},
          "spec": {"groups": [{"name": "shop", "interval": "1m", "partial_response_strategy": "ABORT",
                               "rules": [{"alert": "ShopDown", "expr": "up == 0", "for": "5m",
                                          "labels": {"severity": "page"}, "annotations": {"summary": "x"}},
                                         {"record": "job:up:sum", "expr": "sum by (job) (up)"},
                                         {"alert": "X", "expr": 1, "keep_firing_for": "1h30m"}]}]}}
    yield ok
    for path, value in [(("for",), 5), (("labels", "paging"), True), (("extra",), "x"), (("for",), "5 m"),
                        (("expr",), None), (("expr",), 1.5), (("labels",), ["a"]), (("keep_firing_for",), "1.5h"),
                        (("alert",), 3)]:
        obj = json.loads(json.dumps(ok))
        node = obj["spec"]["groups"][0]["rules"][0]
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
        yield obj
    for key, value in [("interval", "1 m"), ("partial_response_strategy", "sometimes"), ("rules", {}),
                       ("name", 3), ("limit", "ten"), ("limit", 1.0), ("limit", 10), ("limit", True)]:
        obj = json.loads(json.dumps(ok))
        obj["spec"]["groups"][0][key] = value
        yield obj
    yield {**ok, "spec": {"groups": "shop"}}
    yield {**ok, "spec": {}}
    yield {**ok, "metadata": {"name": 3}}


def test_the_crd_precheck_accepts_exactly_what_jsonschema_accepts(crd_file):
    """The fastjsonschema pre-check that spares a valid PrometheusRule jsonschema's
    ``iter_errors`` (and its import) agrees with jsonschema on valid and broken objects."""
    schema = sync._crd_schema(str(crd_file), crd_file.stat().st_mtime)
    accepts = sync._precheck(schema)
    assert accepts is not None
    verdicts = []
    for obj in _rule_objects():
        errors = list(sync._draft4(schema).iter_errors(obj))
        assert accepts(obj) == (not errors), (obj, [e.message for e in errors])
        verdicts.append(not errors)
    assert verdicts[0] and verdicts.count(True) >= 2 and verdicts.count(False) >= 10  # both kinds were tried


def test_a_crd_schema_with_defaults_is_not_prechecked():
    """fastjsonschema writes ``default`` values into the object it validates: such a schema
    goes to jsonschema alone, and the object is left as it was."""
    schema = {"type": "object", "properties": {"spec": {"type": "object", "default": {}}}}
    assert sync._precheck(schema) is None
    obj = {}
    assert sync.crd_errors(obj, schema) == [] and obj == {}
    assert sync.crd_errors({"spec": 3}, schema) == [(("spec",), "3 is not of type 'object'")]


def test_the_crd_reads_the_same_with_libyaml(crd_file):
    """_crd_schema parses the pinned CRD with libyaml: the same document the pure-Python
    parser reads."""
    text = crd_file.read_text(encoding="utf-8")
    assert yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) == yaml.safe_load(text)
