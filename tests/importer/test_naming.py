"""App names of imported rule sets: distinct, valid, from names not positions, and import ends.

Regression (issue 15): two PrometheusRules named ``core.storage.management-cluster.rules`` in
two folders made ``rulegen import`` loop forever: the ``-N`` suffix that told the apps apart
was cut off again by the 53-character app-name limit.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from rulegen.importer import import_paths
from rulegen.importer.naming import APP_MAX, Source, app_name, assign_names

from helpers.chartfixture import mini_chart

DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")

PR = """apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: {name}
spec:
  groups:
    - name: g
      rules:
        - alert: X
          expr: up == 0
"""


def _bounded(fn, seconds: float = 20.0):
    """Run ``fn`` in a thread; fail when it does not return within ``seconds``."""
    box: dict = {}
    t = threading.Thread(target=lambda: box.setdefault("r", fn()), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"did not end within {seconds}s"
    return box["r"]


def _assert_good(names: dict[str, str], taken=frozenset()):
    for n in names.values():
        assert DNS_LABEL.match(n) and len(n) <= APP_MAX, n
    assert len(set(names.values())) == len(names), names
    assert not set(names.values()) & set(taken)


def test_same_long_name_in_two_folders_imports_and_ends(tmp_path):
    for d in ("capa", "capz"):
        (tmp_path / d / "management-cluster").mkdir(parents=True)
        (tmp_path / d / "management-cluster" / "r.yaml").write_text(
            PR.format(name="core.storage.management-cluster.rules"), encoding="utf-8")
    res = _bounded(lambda: import_paths([tmp_path], out_dir=tmp_path / "rules", display_base=tmp_path))
    assert sorted(s.app for s in res.specs) == ["capa-core-storage-management-cluster-rules",
                                                "capz-core-storage-management-cluster-rules"]
    assert res.ok


def test_names_differing_only_past_the_limit_stay_apart(tmp_path):
    long = "x" * 60
    (tmp_path / "a.yaml").write_text(PR.format(name=long + "-one") + "---\n" + PR.format(name=long + "-two"),
                                     encoding="utf-8")
    res = _bounded(lambda: import_paths([tmp_path / "a.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path))
    apps = [s.app for s in res.specs]
    assert len(apps) == 2 and len(set(apps)) == 2
    assert all(DNS_LABEL.match(a) and len(a) <= APP_MAX and a.startswith("x" * 40) for a in apps)
    # not from a position: the same file imported again gives the same names
    again = import_paths([tmp_path / "a.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [s.app for s in again.specs] == apps


def test_a_name_does_not_depend_on_the_other_inputs(tmp_path):
    (tmp_path / "one").mkdir()
    (tmp_path / "one" / "alertmanager.rules.yaml").write_text(PR.format(name="alertmanager.rules"),
                                                              encoding="utf-8")
    (tmp_path / "two.yaml").write_text(PR.format(name="node.rules"), encoding="utf-8")
    alone = import_paths([tmp_path / "one"], out_dir=tmp_path / "rules", display_base=tmp_path)
    both = import_paths([tmp_path], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [s.app for s in alone.specs] == ["alertmanager-rules"]
    assert sorted(s.app for s in both.specs) == ["alertmanager-rules", "node-rules"]


def test_chart_templates_are_named_after_their_files(tmp_path):
    """Each template of a chart whose PrometheusRule name Helm computes is an app named after
    the file (kube-prometheus-stack's 41 templates), not the chart name plus a position."""
    chart = tmp_path / "kps"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: kube-prometheus-stack\nversion: 1.0.0\n")
    for stem in ("alertmanager.rules", "node.rules"):
        (chart / "templates" / f"{stem}.yaml").write_text(
            PR.replace("{name}", '{{ printf "%s-%s" (include "x.fullname" .) "' + stem + '" }}'), encoding="utf-8")
    res = import_paths([chart], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [s.app for s in res.specs] == ["alertmanager-rules", "node-rules"]
    one = import_paths([chart / "templates" / "node.rules.yaml"], out_dir=tmp_path / "rules", display_base=tmp_path)
    assert [s.app for s in one.specs] == ["node-rules"]
    assert yaml.safe_load(one.specs[0].text)["app"] == "node-rules"


_words = st.sampled_from(["core", "storage", "management-cluster", "rules", "a", "x" * 30, "node.exporter",
                          "Kube_API", "--", "é"])
_hint = st.one_of(
    st.lists(_words, min_size=1, max_size=6).map(".".join),
    st.text(alphabet="ab-._", min_size=0, max_size=70),
    st.builds(lambda tail: "y" * 55 + tail, st.text(alphabet="abc", min_size=0, max_size=4)),  # past the limit
)
_folder = st.sampled_from(["capa", "capz", "management-cluster", "templates", "x" * 40, "a_b", "a-b", "rules"])


@st.composite
def _sources(draw):
    n = draw(st.integers(1, 25))
    shared_hint = draw(_hint)
    out = []
    for i in range(n):
        hint = shared_hint if draw(st.booleans()) else draw(_hint)   # many sources with one name
        folders = tuple(draw(st.lists(_folder, max_size=4)))
        out.append(Source(key=f"{'/'.join(folders)}/{i}.yaml#{hint}", hint=hint, folders=folders))
    return out


@settings(max_examples=300, deadline=None)
@given(_sources(), st.frozensets(st.sampled_from(["core-storage-management-cluster-rules", "app", "rules"])))
def test_generated_name_sets_end_with_distinct_valid_names(sources, taken):
    names = assign_names(sources, taken)
    assert set(names) == {s.key for s in sources}
    _assert_good(names, taken)
    # the order of the inputs does not matter
    assert assign_names(list(reversed(sources)), taken) == names


@given(st.text(max_size=120))
def test_app_name_is_always_a_dns_label(hint):
    n = app_name(hint)
    assert DNS_LABEL.match(n) and len(n) <= APP_MAX


def test_schema_reference_stays_inside_the_project(tmp_path, capsys):
    """`$schema` names a path inside the project (a copy of the schema that import writes),
    never ../../<install dir>/rulegen/spec/schema.json."""
    from rulegen.cli import main
    (tmp_path / "r.yml").write_text("groups:\n  - name: g\n    rules:\n      - record: a:b:c\n        expr: up\n",
                                    encoding="utf-8")
    assert main(["-C", str(tmp_path), "import", "r.yml"]) == 0
    first = (tmp_path / "rules" / "r.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../.rulegen/schema.json"
    import json

    from rulegen.spec import SCHEMA_PATH
    assert json.loads((tmp_path / ".rulegen" / "schema.json").read_text()) == json.loads(SCHEMA_PATH.read_text())


@given(st.dictionaries(st.text(min_size=1, max_size=5), st.sampled_from(
    ["a", "x" * 53, "x" * 52 + "y", "core-storage-management-cluster-rules"]), max_size=8),
    st.sampled_from(["capa", "capz", "aws-eu-1"]))
def test_variant_suffix_survives_the_limit(names, variant):
    from rulegen.importer.naming import with_suffix
    out = with_suffix(names, variant)
    _assert_good(out)
    assert all(n.endswith("-" + variant) for n in out.values())


def test_one_app_per_variant(tmp_path, capsys):
    """One chart imported once per value set keeps one app per variant."""
    from rulegen.cli import main
    mini_chart(tmp_path, "threshold: 1\n", {"r.yaml": PR.replace("{name}", "core.storage.management-cluster.rules")
                                             .replace("up == 0", "up < {{ .Values.threshold }}")})
    (tmp_path / "capa.yaml").write_text("threshold: 2\n", encoding="utf-8")
    (tmp_path / "capz.yaml").write_text("threshold: 3\n", encoding="utf-8")
    for v in ("capa", "capz"):
        assert main(["-C", str(tmp_path), "import", "c", "--static", "--values", f"{v}.yaml", "--variant", v]) == 0
    specs = {p.stem: yaml.safe_load(p.read_text()) for p in (tmp_path / "rules").glob("*.yaml")}
    assert {k: v["groups"][0]["rules"][0]["expr"] for k, v in specs.items()} == {
        "core-storage-management-cluster-rules-capa": "up < 2",
        "core-storage-management-cluster-rules-capz": "up < 3"}


def test_static_reading_takes_set_values(tmp_path):
    from rulegen.importer import import_paths
    from rulegen.importer.chart import RenderOptions
    chart = mini_chart(tmp_path, "rules: {threshold: 1, extra: false}\n", {"r.yaml":
        PR.replace("{name}", "r").replace("up == 0", "up < {{ .Values.rules.threshold }}")
        + "{{- if .Values.rules.extra }}\n        - alert: Y\n          expr: up == 2\n{{- end }}\n"})
    res = import_paths([chart], out_dir=tmp_path / "rules", display_base=tmp_path,
                       render=RenderOptions(static=True, set_values=["rules.threshold=5", "rules.extra=true"]))
    rules = yaml.safe_load(res.specs[0].text)["groups"][0]["rules"]
    assert [(r["alert"], r["expr"]) for r in rules] == [("X", "up < 5"), ("Y", "up == 2")]


# --- the template evaluator, both ways: what it knows, and what it must not guess ------------------

import pytest  # noqa: E402

from rulegen.importer.helmeval import UNKNOWN, Context, evaluate  # noqa: E402

_CTX = Context(values={"a": {"b": "x", "empty": {}, "off": False, "list": []}, "customRules": {"A": {"for": "1m"}}},
               chart={"Name": "c"}, release={"Name": "r", "Namespace": "ns"},
               helpers={"h": '{{- if .Values.a.off -}}no{{- else -}}{{ .Values.a.b }}-{{ .Release.Name }}{{- end -}}'})


@pytest.mark.parametrize("expr, want", [
    ('dig "A" "for" "5m" .Values.customRules', "1m"),            # the knob set in values wins
    ('dig "B" "for" "5m" .Values.customRules', "5m"),            # else the default
    (".Values.a.b", "x"),
    ('.Values.a.missing | default "d"', "d"),
    ('not (.Values.a.off | default false)', True),
    ('and .Values.a.off .Capabilities.KubeVersion', False),      # a known false decides `and`
    ('include "h" .', "x-r"),
    ('printf "%s-%s" .Release.Name "alertmanager"', "r-alertmanager"),
    ('toYaml .Values.a.empty | nindent 4', "\n    {}"),
    ('hasKey (dict "k" 1) "k"', True),
])
def test_evaluator_knows(expr, want):
    assert evaluate(expr, _CTX, _CTX.root()) == want


@pytest.mark.parametrize("expr", [
    ".Capabilities.KubeVersion.GitVersion",
    'semverCompare ">=1.14" "1.20"',
    'lookup "v1" "Pod" "" ""',
    'and .Capabilities.KubeVersion .Values.a.b',                  # true so far, the rest unknown
    'include "nope" .',
    "$undefined",
])
def test_evaluator_does_not_guess(expr):
    assert evaluate(expr, _CTX, _CTX.root()) is UNKNOWN
