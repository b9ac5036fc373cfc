"""Issue 25: `rulegen check`'s sync check has rulegen-helmrender judge every rendered
PrometheusRule with the Kubernetes API server's own CRD validation and the Prometheus
Operator's own admission-webhook code (tools/rulegen-helmrender); rulegen checks only what the
helper does not pass (rulegen/gitops/sync.py), so its findings stay those of checking
everything itself. A differential test: the helper must never pass a PrometheusRule that
rulegen's own check reports (RG736, RG737), on hand-made PrometheusRules where the two
validators could differ, on the bundled project, and on the real corpora imported into charts.

Where the helper rejects and rulegen's own checks say nothing (the webhook is stricter than the
promtool rulegen runs), the webhook is the truth of an Argo CD sync; those cases are listed in
TRUTH_ONLY, and `check` reports them with the helper's reason (test_sync.py,
test_what_only_the_operators_webhook_rejects_is_reported). Where the two YAML readings could differ, the helper leaves the PrometheusRule to
rulegen ("unjudged"); the cases below pin which.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from rulegen.cli import main
from rulegen.gitops import admission, sync
from rulegen.tools import find, helm, process

from helpers import REPO
from helpers.helm import listed

pytestmark = pytest.mark.tools("helm", "promtool", "rulegen-helmrender")

BASE = """\
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: judge
  labels:
    release: kube-prometheus-stack
spec:
  groups:
    - name: g
      rules:
        - alert: Down
          expr: up == 0
          for: 5m
          labels:
            severity: critical
          annotations:
            summary: "{{ $labels.job }} is down"
        - record: job:up:sum
          expr: sum by (job) (up)
"""


def edit(old: str, new: str, text: str = BASE) -> str:
    """``text`` with ``old`` (which it must hold) replaced by ``new`` once."""
    assert old in text, old
    return text.replace(old, new, 1)


def rule(*lines: str) -> str:
    """BASE with ``lines`` added to the alert Down."""
    return edit("          for: 5m\n", "          for: 5m\n" + "".join(f"          {x}\n" for x in lines))


def group(*lines: str) -> str:
    """BASE with ``lines`` added to the group."""
    return edit("      rules:\n", "".join(f"      {x}\n" for x in lines) + "      rules:\n")


def label(value: str) -> str:
    """BASE with a label ``odd: value`` on the alert Down."""
    return edit("severity: critical", f"severity: critical\n            odd: {value}")


def annotation(line: str) -> str:
    """BASE with an annotation line added to the alert Down."""
    return edit('summary: "{{ $labels.job }} is down"', f'summary: "{{{{ $labels.job }}}} is down"\n            {line}')


CONFIGMAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: odd\ndata:\n  since: 2024-01-31\n  paging: on\n---\n"

#: (id, manifest, the helper's verdict, whether rulegen's own check reports it)
CASES = [
    # valid: the helper passes them, rulegen's check finds nothing
    ("base", BASE, "valid", False),
    ("for 1d", edit("for: 5m", "for: 1d"), "valid", False),
    ("for 0s", edit("for: 5m", "for: 0s"), "valid", False),
    ("keep_firing_for", rule("keep_firing_for: 1h30m"), "valid", False),
    ("expr int", edit("expr: up == 0", "expr: 1"), "valid", False),
    ("expr quoted int", edit("expr: up == 0", 'expr: "1"'), "valid", False),
    ("group fields", group("interval: 1m", "limit: 10", "query_offset: 30s", "labels: {team: a}"), "valid", False),
    ("quoted odd values", label('"yes"\n            b: \'on\'\n            c: "2024-01-31"\n            d: "1:30"\n'
                                '            e: ""\n            f: "5"\n            g: "~"'), "valid", False),
    ("templates", annotation("description: 'v {{ $value | humanize }} {{ humanizeDuration 5 }}"
                             " {{ with query \"up\" }}{{ . | first | value }}{{ end }}'"), "valid", False),
    ("unicode and escapes", edit('summary: "{{ $labels.job }} is down"',
                                 'summary: "Ünïcødé ✓ \\t tab \\u00e9 \\" quote"\n'
                                 "            description: |\n              two\n              lines\n"), "valid", False),
    ("plain multi-line", edit("expr: up == 0", "expr: up\n            == 0"), "valid", False),
    ("long label", label("x" * 5000), "valid", False),
    ("labels in rule templates", label('"{{ $labels.job }}"'), "valid", False),
    ("two rules", BASE + "---\n" + edit("name: judge", "name: judge2"), "valid", False),
    ("odd configmap beside", CONFIGMAP + BASE, "valid", False),
    ("no groups", edit(BASE[BASE.index("  groups:"):], "  groups: []\n"), "valid", False),
    ("empty labels", edit("labels:\n            severity: critical", "labels: {}"), "valid", False),
    ("large but judged", annotation("description: " + "x" * 100_000), "valid", False),
    # the CRD schema rejects them (RG736)
    ("for int", edit("for: 5m", "for: 5"), "invalid", True),
    ("for spaced", edit("for: 5m", 'for: "5 m"'), "invalid", True),
    ("for fraction", edit("for: 5m", "for: 1.5h"), "invalid", True),
    # Python's `$` also matches before a final newline: rulegen's schema check passes it, the
    # API server's does not, promtool then refuses the duration (RG737 instead of RG736)
    ("for with a newline", edit("for: 5m", 'for: "5m\\n"'), "invalid", True),
    ("keep_firing_for empty", rule('keep_firing_for: ""'), "invalid", True),
    ("keep_firing_for fraction", rule("keep_firing_for: 1.5h"), "invalid", True),
    ("alert int", edit("alert: Down", "alert: 3"), "invalid", True),
    ("labels list", edit("labels:\n            severity: critical", "labels: [a]"), "invalid", True),
    ("limit string", group("limit: ten"), "invalid", True),
    ("interval spaced", group('interval: "1 m"'), "invalid", True),
    ("partial_response_strategy", group("partial_response_strategy: sometimes"), "invalid", True),
    ("group name empty", edit("- name: g", '- name: ""'), "invalid", True),
    ("rules map", edit(BASE[BASE.index("      rules:"):], "      rules: {}\n"), "invalid", True),
    ("duplicate group names", BASE + "    - name: g\n      rules:\n        - alert: Other\n          expr: up\n",
     "invalid", True),
    ("no spec", BASE[:BASE.index("spec:")], "invalid", True),
    ("group name int", edit("- name: g", "- name: 3"), "invalid", True),
    ("groups string", edit(BASE[BASE.index("  groups:"):], "  groups: shop\n"), "invalid", True),
    ("metadata name int", edit("  name: judge\n", "  name: 3\n"), "unjudged", False),
    ("one of two bad", BASE + "---\n" + edit("for: 5m", "for: 5", edit("name: judge", "name: judge2")),
     "invalid", True),
    # the webhook rejects them (RG737)
    ("alert and record", rule("record: both:up"), "invalid", True),
    ("neither", edit("- alert: Down\n          expr: up == 0", "- expr: up == 0"), "invalid", True),
    ("bad promql", edit("expr: up == 0", 'expr: "up =="'), "invalid", True),
    ("empty expr", edit("expr: up == 0", 'expr: ""'), "invalid", True),
    ("bad template", annotation("description: '{{ .Foo'"), "invalid", True),
    ("for on a record", edit("expr: sum by (job) (up)", "expr: sum by (job) (up)\n          for: 5m"), "invalid", True),
    ("keep_firing_for on a record", edit("expr: sum by (job) (up)", "expr: sum by (job) (up)\n"
                                         "          keep_firing_for: 5m"), "invalid", True),
    ("__name__ label", group("labels: {__name__: x}"), "invalid", True),
    # rulegen's check runs rulefmt on the spec as rendered, the webhook on its decoded copy
    # (empty for and interval dropped, partial_response_strategy emptied): still reported
    ("for empty", edit("for: 5m", 'for: ""'), "invalid", True),
    ("interval empty", group('interval: ""'), "invalid", True),
    ("partial_response_strategy abort", group("partial_response_strategy: abort"), "invalid", True),
    ("partial_response_strategy ABORT", group("partial_response_strategy: ABORT"), "invalid", True),
    ("empty spec", edit(BASE[BASE.index("  groups:"):], "", edit("spec:\n", "spec: {}\n")), "valid", False),
    # the two YAML readings may differ, or an object Kubernetes would prune: left to rulegen
    ("bool label", label("on"), "unjudged", True),
    ("null for", edit("for: 5m", "for: null"), "unjudged", True),
    ("empty for", edit("for: 5m", "for:"), "unjudged", True),
    ("date label", label("2024-01-31"), "unjudged", True),
    ("sexagesimal label", label("1:30"), "unjudged", True),
    ("octal label", label("017"), "unjudged", True),
    ("underscored int label", label("1_000"), "unjudged", True),
    ("tilde label", label("~"), "unjudged", True),
    ("float expr", edit("expr: up == 0", "expr: 1.5"), "unjudged", True),
    ("float limit", group("limit: 5.0"), "unjudged", True),
    ("bool limit", group("limit: true"), "unjudged", True),
    ("exponent label", label("1e3"), "unjudged", False),
    ("hex label", label("0x1F"), "unjudged", True),
    ("unknown rule field", rule("extra: x"), "unjudged", True),
    ("unknown group field", group("extra: x"), "unjudged", True),
    ("unknown top field", BASE + "status: {}\n", "unjudged", False),
    ("unknown metadata field", edit("  name: judge\n", "  name: judge\n  foo: bar\n"), "unjudged", False),
    ("metadata label int", edit("release: kube-prometheus-stack", "release: 5"), "unjudged", False),
    ("anchor and alias", edit("labels:\n            severity: critical", "labels: &l\n            severity: critical",
                              edit("expr: sum by (job) (up)", "expr: sum by (job) (up)\n          labels: *l")),
     "unjudged", False),
    ("explicit tag", edit("for: 5m", "for: !!str 5m"), "unjudged", False),
    ("v1alpha1", edit("monitoring.coreos.com/v1", "monitoring.coreos.com/v1alpha1"), "unjudged", False),
    ("large", annotation("description: " + "x" * 200_000), "unjudged", False),
    ("above the limit", annotation("description: " + "x" * 600_000), "unjudged", True),
    # in a list: a sync applies the items (tests/gitops/test_sync_lists.py)
    ("in a List", listed(BASE), "valid", False),
    ("in a nested List", listed(listed(BASE)) + "---\n" + BASE, "valid", False),
    ("kind-less in a PrometheusRuleList", listed(BASE, "PrometheusRuleList", "monitoring.coreos.com/v1",
                                                 ("kind", "apiVersion")), "valid", False),
    ("in a List, for int", listed(edit("for: 5m", "for: 5")), "invalid", True),
    ("in a nested List, alert and record", listed(listed(rule("record: both:up"))), "invalid", True),
    ("kind-less in a PrometheusRuleList, bad promql", listed(edit("expr: up == 0", 'expr: "up =="'),
                                                              "PrometheusRuleList", "monitoring.coreos.com/v1",
                                                              ("kind", "apiVersion")), "invalid", True),
    ("in a List, date label", listed(label("2024-01-31")), "unjudged", True),
    ("kind null in a PrometheusRuleList", listed(edit("kind: PrometheusRule", "kind: null"), "PrometheusRuleList",
                                                 "monitoring.coreos.com/v1", ("apiVersion",)), "unjudged", False),
    ("list kind read otherwise", listed(BASE, "yes", "monitoring.coreos.com/v1", ("kind", "apiVersion")),
     "unjudged", False),
    ("items null", edit("spec:", "items: null\nspec:"), "unjudged", False),
]

#: The webhook of the pinned operator release rejects them, rulegen's promtool (a later
#: Prometheus, UTF-8 names) does not: the helper is right; rulegen's own checks say nothing, so
#: the check reports the helper's reason (rulegen.gitops.admission.unexplained).
TRUTH_ONLY = [
    ("dotted label name", edit("severity: critical", 'severity: critical\n            "a.b": x'), "invalid", False),
    ("dashed annotation name", annotation("run-book: x"), "invalid", False),
    ("function of a later Prometheus", edit("expr: up == 0", "expr: first_over_time(up[5m]) == 0"), "invalid", False),
    ("template function of a later Prometheus", annotation("description: '{{ now }}'"), "invalid", False),
]


@pytest.fixture(scope="module")
def crd(helm_bin, promtool_bin) -> Path:
    p = sync.crd_path(REPO)
    if not p.is_file():
        msg = f"{p} is missing; run scripts/install-tools.sh"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return p


def _charts(root: Path, manifests: list[str]) -> list[Path]:
    """One chart per manifest, rendering it as it is (``.Files.Get``: no template runs on it)."""
    charts = []
    for i, text in enumerate(manifests):
        c = root / f"c{i}"
        (c / "templates").mkdir(parents=True)
        (c / "Chart.yaml").write_text(f"apiVersion: v2\nname: c{i}\nversion: 0.1.0\n", encoding="utf-8")
        (c / "manifest.txt").write_text(text, encoding="utf-8")
        (c / "templates" / "all.yaml").write_text('{{ .Files.Get "manifest.txt" }}', encoding="utf-8")
        charts.append(c)
    return charts


def _helper(charts: list[Path], crd: Path | None) -> list[dict]:
    """The helper's results for rendering each chart (judged when ``crd``)."""
    request = {"jobs": [{"release": helm.DEFAULT_RELEASE, "namespace": helm.DEFAULT_NAMESPACE, "chart": str(c),
                         "values": [], "set": []} for c in charts]}
    if crd is not None:
        request["check"] = {"crd": str(crd)}
    proc = process.run([str(find.find(helm.HELPER, REPO))], input=json.dumps(request), timeout=300)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["results"]


def _differential(tmp_path: Path, crd: Path, cases: list) -> None:
    charts = _charts(tmp_path, [c[1] for c in cases])
    judged, plain = _helper(charts, crd), _helper(charts, None)
    schema = sync._crd_schema(str(crd), crd.stat().st_mtime)
    problems = []
    for (what, _text, verdict, reported), chart, j, p in zip(cases, charts, judged, plain):
        assert p["ok"], (what, p.get("error"))
        rules = helm._rendered(p["manifest"], chart).prometheus_rules()
        found = admission.findings([(chart.name, "values.yaml", pr) for pr in rules], schema, REPO)
        if j.get("verdict") == "valid":
            assert "manifest" not in j and j["prometheusrules"] == len(rules), what
            assert not found, (what, "passed by the helper, reported by rulegen", [f.message for f in found])
        else:
            assert j.get("manifest") == p["manifest"], what
        if (j.get("verdict"), bool(found)) != (verdict, reported):
            problems.append((what, j.get("verdict"), j.get("why"), [f.message[:300] for f in found]))
    assert not problems, problems


def test_the_helper_never_passes_what_rulegen_reports(tmp_path, crd):
    _differential(tmp_path, crd, CASES)


def test_where_the_webhook_is_stricter_than_rulegens_promtool(tmp_path, crd):
    _differential(tmp_path, crd, TRUTH_ONLY)


def test_yaml_11_scalars_are_never_judged_by_a_different_reading(tmp_path, crd):
    """Plain scalars PyYAML reads as something other than a string (YAML 1.1's bool, int,
    float, null, timestamp), as a label value: the helper never passes one (rulegen reports
    it); and it passes the strings a rule commonly holds."""
    odd = ["yes", "No", "TRUE", "off", "~", "null", "NULL", "1", "-1", "+1", "0", "017", "0b101", "0x1f", "1_000",
           "1:30", "-1:30", "1:2:3", "1.5", "1.", ".5", "1.0e+3", "6.8523015e+5", ".inf", "-.Inf", ".NaN",
           "190:20:30.15", "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
           "2001-12-15T02:59:43.1Z", "0.99", "99.9"]
    ordinary = ["1d", "0s", "5m", "1h30m", "12:34:56:78", "critical", "team-a", "up == 0", "v1.2.3", "5xx", "1e"]
    for s in odd:
        assert not isinstance(yaml.safe_load(f"v: {s}\n")["v"], str), s
    for s in ordinary:
        assert isinstance(yaml.safe_load(f"v: {s}\n")["v"], str), s
    judged = _helper(_charts(tmp_path, [label(s) for s in odd + ordinary]), crd)
    verdicts = {s: j.get("verdict") for s, j in zip(odd + ordinary, judged)}
    assert {s: v for s, v in verdicts.items() if s in odd and v == "valid"} == {}
    assert {s: v for s, v in verdicts.items() if s in ordinary and v != "valid"} == {}


def test_without_the_crd_the_helper_judges_nothing(tmp_path, crd):
    """A CRD the helper cannot read (a stale tools folder): every render comes back with its
    text, and rulegen checks it as it did without the judge."""
    charts = _charts(tmp_path, [BASE])
    (result,) = _helper(charts, tmp_path / "missing.yaml")
    assert (result["ok"], result["verdict"], "prometheusrules" in result) == (True, "unjudged", False)
    with helm.Batch([helm.Job(charts[0])], REPO, check=tmp_path / "missing.yaml") as batch:
        (rendered,) = batch.results()
    assert isinstance(rendered, helm.Rendered) and len(rendered.prometheus_rules()) == 1
    with helm.Batch([helm.Job(charts[0])], REPO, check=crd) as batch:
        # judged valid: no text, only the PrometheusRule's name and labels (for RG739)
        assert batch.results() == [helm.Passed(1, ({"name": "judge", "labels": {"release": "kube-prometheus-stack"}},))]


# --- whole projects: the check's report with and without the judge ------------------------------

def _report(root: Path, capsys, monkeypatch, judge: bool) -> tuple[int, str, int]:
    """(exit code, report, renders the helper passed) of `rulegen check` at ``root``."""
    passed = []
    real = helm.Batch

    class Recorded(real):
        def __init__(self, *a, check=None, **kw):
            super().__init__(*a, check=check if judge else None, **kw)

        def results(self, wanted=None):
            out = super().results(wanted)
            passed.extend(i for i, r in enumerate(out) if isinstance(r, helm.Passed) and i not in passed)
            return out

    with monkeypatch.context() as m:
        m.setattr(helm, "Batch", Recorded)
        capsys.readouterr()
        code = main(["-C", str(root), "check"])
        out = capsys.readouterr().out
    return code, out, len(passed)


def _same_report(root: Path, capsys, monkeypatch) -> int:
    code, out, passed = _report(root, capsys, monkeypatch, True)
    assert (code, out) == _report(root, capsys, monkeypatch, False)[:2]
    return passed


def test_the_bundled_project_reads_the_same(tmp_path, capsys, monkeypatch, crd):
    root = tmp_path / "p"
    for name in ("rules", "charts", "runbooks", "deploy", ".rulegen-sums"):
        shutil.copytree(REPO / name, root / name, symlinks=True)
    for name in (".rulegen.yaml", "mkdocs.yml"):
        shutil.copy(REPO / name, root / name)
    assert _same_report(root, capsys, monkeypatch) >= 3


@pytest.mark.parametrize("corpus", ["awesome-prometheus-alerts", "kube-prometheus-stack"])
def test_the_corpora_imported_into_charts_read_the_same(tmp_path, capsys, monkeypatch, crd, shared_dir, corpus):
    """The real corpora (awesome-prometheus-alerts' rule files, CC BY 4.0, Samuel Berthe and
    contributors; kube-prometheus-stack's rendered rules, Apache-2.0), imported into one chart
    per app: every render is judged valid, and the report is the same as without the judge."""
    src = shared_dir / "corpus" / corpus
    sources = sorted(src.glob("rules/*/*.yml")) if corpus == "awesome-prometheus-alerts" \
        else [src / "rendered-defaults.yaml"]
    root = tmp_path / "p"
    assert main(["-C", str(root), "import", *map(str, sources)]) == 0
    assert main(["-C", str(root), "build"]) == 0
    apps = len(list((root / "rules").glob("*.yaml")))
    # each chart as it is (gates off: no PrometheusRule) and with its gates on
    assert _same_report(root, capsys, monkeypatch) == 2 * apps
