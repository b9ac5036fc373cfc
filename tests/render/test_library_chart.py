"""The chart library (issue 29): one library chart per project, each app chart's subchart through
a symlink, so a new chart adds no copy of the library (rulegen.render.library).

* the bundled charts render the same bytes through the link as with the per-chart copy the
  previous release wrote (its template is the body of rulegen.v3.prometheusrule, verbatim);
* the previous layout (tests/fixtures/layout-v2: a chart with its own templates/_rulegen.tpl)
  moves on `rulegen build`: the unchanged copy is removed, a hand-edited one is refused;
* the link is the only symlink rulegen accepts at its name (RG770), a hostile link elsewhere in
  a chart stays RG742, a hand-edited library is refused like every generated file;
* `rulegen new`, `import`, `check`, `test` and `diff` follow the layout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.fs import write as fs_write
from rulegen.render import library
from rulegen.render.values import gate_values
from rulegen.render.yamltext import values_yaml
from rulegen.tools import helm as helm_run

from helpers import FIXTURES, REPO

V2 = FIXTURES / "layout-v2"
BUNDLED = ("inferencecache", "llama-swap", "noctaya")
LINK = "charts/llama-swap/charts/rulegen-library"
OLD_COPY = "charts/llama-swap/templates/_rulegen.tpl"


def _run(capsys, root: Path, *args: str) -> tuple[int, str, str]:
    code = main(["-C", str(root), *args])
    out, err = capsys.readouterr()
    return code, out, err


def _values(chart: str) -> list[dict]:
    """Gates on, and gates on with knobs set (labels, a severity, a runbook base)."""
    on = {"enabled": True, "monitoring": {"enabled": True}}
    knobs = {**on, "prometheusRule": {"runbookUrl": "https://wiki.example.org/", "additionalRuleLabels": {"env": "p"},
                                      "labels": {"release": "kps"}}}
    return [on, knobs]


def _old_template(library_text: str) -> str:
    """The previous release's chart template: the body of rulegen.v3.prometheusrule."""
    start = library_text.index('{{- define "rulegen.v3.prometheusrule" }}\n') + len(
        '{{- define "rulegen.v3.prometheusrule" }}\n')
    body = library_text[start:]
    return "{{- /* the previous release's template */}}\n" + body[:body.rindex("{{- end }}")]


@pytest.mark.tools("helm")
@pytest.mark.parametrize("chart", BUNDLED)
def test_bundled_chart_renders_the_same_bytes_as_with_its_own_copy_of_the_library(tmp_path, chart):
    """helm template of the chart from the repository (through the link) against the same chart
    with the previous layout: the library copied into templates/_rulegen.tpl, the template
    writing the PrometheusRule itself."""
    old = tmp_path / chart
    shutil.copytree(REPO / "charts" / chart, old, symlinks=True, ignore=shutil.ignore_patterns("tests"))
    (old / "charts/rulegen-library").unlink()
    (old / "charts").rmdir()
    text = (old / "Chart.yaml").read_text(encoding="utf-8")
    (old / "Chart.yaml").write_text(text[:text.index("dependencies:")], encoding="utf-8")
    lib = (REPO / "charts/rulegen-library/templates/_rulegen.tpl").read_text(encoding="utf-8")
    lib_defines = lib[:lib.index('{{- define "rulegen.v3.prometheusrule" }}')]
    (old / "templates/_rulegen.tpl").write_text(lib_defines, encoding="utf-8")
    (old / "templates/prometheusrule.yaml").write_text(_old_template(lib), encoding="utf-8")
    for values in _values(chart):
        new = helm_run.template(REPO / "charts" / chart, values=[values_yaml(values)], root=REPO).text
        assert "kind: PrometheusRule" in new
        assert new == helm_run.template(old, values=[values_yaml(values)], root=REPO).text


@pytest.mark.tools("helm")
def test_helm_lint_strict_passes_and_helm_prints_only_the_link_warning(helm_bin):
    proc = subprocess.run([str(helm_bin), "lint", "--strict", str(REPO / "charts/llama-swap")], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "found symbolic link in path" in proc.stderr
    assert helm_run.without_link_warnings(proc.stderr).strip() == ""


def test_the_link_warning_is_dropped_and_every_other_line_kept():
    warn = ("walk.go:75: found symbolic link in path: /p/charts/a/charts/rulegen-library resolves to "
            "/p/charts/rulegen-library. Contents of linked file included and used\n")
    other = ("walk.go:75: found symbolic link in path: /p/charts/a/files/x resolves to /p/secret. Contents of "
             "linked file included and used\n")
    err = "Error: values don't meet the specifications of the schema(s)\n"
    assert helm_run.without_link_warnings(warn + other + warn + err) == other + err


def test_link_target_is_relative_to_the_charts_folder():
    assert library.link_target("charts/shop") == "../../rulegen-library"
    assert library.link_target("deploy/apps/shop") == "../../../../charts/rulegen-library"
    assert library.link_path("charts/shop/") == "charts/shop/charts/rulegen-library"


# -- migration from the per-chart copies --------------------------------------------------------


def _v2(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    shutil.copytree(V2, root, symlinks=True)
    return root


@pytest.mark.tools("helm")
def test_build_removes_an_unmodified_copy_links_the_library_and_renders_the_same(tmp_path, capsys):
    root = _v2(tmp_path)
    chart = root / "charts/llama-swap"
    before = [helm_run.template(chart, values=[values_yaml(v)], root=REPO).text for v in _values("llama-swap")]
    code, out, err = _run(capsys, root, "build")
    assert code == 0, out + err
    lines = out.splitlines()
    assert f"removed {OLD_COPY}" in lines and f"wrote {LINK}" in lines
    assert "wrote charts/rulegen-library/templates/_rulegen.tpl" in lines
    assert not (root / OLD_COPY).exists()
    assert os.readlink(root / LINK) == "../../rulegen-library"
    template = (chart / "templates/prometheusrule.yaml").read_text(encoding="utf-8")
    assert len(template.splitlines()) == 2 and "checksum" not in template  # the notice and one include
    assert "- name: rulegen-library" in (chart / "Chart.yaml").read_text(encoding="utf-8")
    # migration (issue 29): every file lost its checksum line, without --force; the sums are written
    assert not [p for p in root.rglob("*") if p.is_file() and "rulegen-checksum" in p.read_text(encoding="utf-8")]
    assert {"wrote .rulegen-sums/llama-swap.sum.yaml", "wrote .rulegen-sums/_library.sum.yaml",
            "wrote .rulegen-sums/_site.sum.yaml"} <= set(lines)
    after = [helm_run.template(chart, values=[values_yaml(v)], root=REPO).text for v in _values("llama-swap")]
    assert after == before
    assert _run(capsys, root, "check")[0] == 0


@pytest.mark.parametrize("partial", [False, True])
def test_build_refuses_a_hand_edited_copy_and_writes_nothing(tmp_path, capsys, partial):
    root = _v2(tmp_path)
    copy = root / OLD_COPY
    copy.write_text(copy.read_text(encoding="utf-8").replace("{{- end }}", "{{- end}}", 1), encoding="utf-8")
    snapshot = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, out, err = _run(capsys, root, "build", *(["rules/llama-swap.yaml"] if partial else []))
    assert code == 1
    assert f"{OLD_COPY}: edited by hand since rulegen generated it; refusing to overwrite" in err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == snapshot
    assert not (root / LINK).is_symlink()
    code, out, _ = _run(capsys, root, "build", "--force")
    assert code == 0 and f"removed {OLD_COPY}" in out


def test_a_build_of_one_spec_moves_its_chart_too(tmp_path, capsys):
    root = _v2(tmp_path)
    code, out, err = _run(capsys, root, "build", "rules/llama-swap.yaml")
    assert code == 0, out + err
    assert f"removed {OLD_COPY}" in out.splitlines()
    assert (root / "charts/rulegen-library/Chart.yaml").is_file() and (root / LINK).is_symlink()


# -- the library and the links, in a built project -----------------------------------------------


@pytest.fixture
def built(tmp_path, capsys) -> Path:
    root = _v2(tmp_path)
    assert main(["-C", str(root), "build"]) == 0
    capsys.readouterr()
    return root


def test_a_hand_edited_library_is_refused(built, capsys):
    lib = built / "charts/rulegen-library/templates/_rulegen.tpl"
    lib.write_text(lib.read_text(encoding="utf-8").replace("{{- end }}", "{{- end}}", 1), encoding="utf-8")
    code, out, _ = _run(capsys, built, "check")
    assert code == 1 and "hand-edited: charts/rulegen-library/templates/_rulegen.tpl" in out
    code, _, err = _run(capsys, built, "build")
    assert code == 1 and "charts/rulegen-library/templates/_rulegen.tpl: differs from what rulegen wrote, so it may have been edited by hand" in err


def test_a_missing_link_is_a_finding_of_check_naming_the_file_and_the_fix(built, capsys):
    (built / LINK).unlink()
    code, out, _ = _run(capsys, built, "check")
    assert code == 1
    assert re.search(rf"^{LINK}:0:0: error RG770 {LINK} is missing: .*run `rulegen build`", out, re.M), out
    assert "--- " not in out  # no diff of a link
    # helm's own failure to render the unlinked chart (advising `helm dependency build`, the
    # wrong fix) is not reported again as RG735
    assert " RG735 " not in out and "helm dependency build" not in out, out
    code, out, _ = _run(capsys, built, "build")
    assert code == 0 and f"wrote {LINK}" in out
    assert os.readlink(built / LINK) == "../../rulegen-library"
    assert _run(capsys, built, "check")[0] == 0


@pytest.mark.parametrize("make, words", [
    (lambda p: p.symlink_to("../../../.."), "is a symlink to '../../../..'"),
    (lambda p: p.symlink_to("/etc"), "is a symlink to '/etc'"),
    (lambda p: p.symlink_to("../../llama-swap"), "is a symlink to '../../llama-swap'"),
    (lambda p: shutil.copytree(REPO / "charts/rulegen-library", p), "is a folder or special file"),
    (lambda p: p.write_text("../../rulegen-library", encoding="utf-8"),
     "is a file holding '../../rulegen-library', not a symlink: git checked the link out as a file (core.symlinks"),
])
def test_anything_but_the_link_at_its_name_is_refused(built, capsys, make, words):
    (built / LINK).unlink()
    make(built / LINK)
    for cmd in ("validate", "check", "build"):
        code, out, err = _run(capsys, built, cmd)
        assert code == 1, cmd
        assert f"{LINK}:0:0: error RG770 {LINK} {words}" in out + err, (cmd, out + err)


@pytest.mark.parametrize("target", ["/etc", "../../../.."])
def test_a_hostile_symlink_elsewhere_in_a_chart_is_refused(built, capsys, target):
    (built / "charts/llama-swap/charts/x").symlink_to(target)
    code, out, err = _run(capsys, built, "validate")
    assert code == 1
    assert f"charts/llama-swap/charts/x:0:0: error RG742 charts/llama-swap/charts/x is a symlink to {target}" \
        in out + err
    assert _run(capsys, built, "build")[0] == 1


def test_the_library_folder_as_a_link_is_refused(built, capsys):
    lib = built / "charts/rulegen-library"
    shutil.move(lib, built / "elsewhere")
    lib.symlink_to("../elsewhere")
    code, out, err = _run(capsys, built, "validate")
    assert code == 1 and "error RG770 charts/rulegen-library is a symlink" in out + err


def test_a_chart_at_the_library_folder_is_rg771(built, capsys):
    spec = built / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("  path: charts/llama-swap\n",
                                                             "  path: charts/rulegen-library\n", 1), encoding="utf-8")
    code, out, err = _run(capsys, built, "validate")
    assert code == 1 and "RG771" in out + err


def test_the_writer_replaces_a_link_without_following_it(tmp_path):
    (tmp_path / "target").mkdir()
    (tmp_path / "target/keep").write_text("x", encoding="utf-8")
    (tmp_path / "c/charts").mkdir(parents=True)
    (tmp_path / "c/charts/rulegen-library").symlink_to("../../target")
    assert fs_write.write_all(tmp_path, {}, links={"c/charts/rulegen-library": "../../lib"}) == \
        ["c/charts/rulegen-library"]
    assert os.readlink(tmp_path / "c/charts/rulegen-library") == "../../lib"
    assert (tmp_path / "target/keep").read_text(encoding="utf-8") == "x"
    assert [p.name for p in (tmp_path / "c/charts").iterdir()] == ["rulegen-library"]  # no temp left


# -- the commands follow the layout ----------------------------------------------------------------


@pytest.mark.tools("helm")
def test_new_makes_the_link_and_a_chart_helm_lints_and_renders(tmp_path, capsys, helm_bin):
    code, out, err = _run(capsys, tmp_path, "new", "shop")
    assert code == 0, out + err
    assert os.readlink(tmp_path / "charts/shop/charts/rulegen-library") == "../../rulegen-library"
    assert not (tmp_path / "charts/shop/templates/_rulegen.tpl").exists()
    proc = subprocess.run([str(helm_bin), "lint", "--strict", str(tmp_path / "charts/shop")], capture_output=True,
                          text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rendered = helm_run.template(tmp_path / "charts/shop", values=[values_yaml(gate_values(["enabled",
                                                                                           "monitoring.enabled"]))],
                                 root=REPO)
    assert rendered.prometheus_rules()
    assert _run(capsys, tmp_path, "check")[0] == 0


def test_import_then_build_makes_charts_that_link_to_the_library(tmp_path, capsys):
    src = tmp_path / "in.rules.yaml"
    src.write_text("groups:\n  - name: g\n    rules:\n      - alert: XDown\n        expr: up == 0\n"
                   "        labels: {severity: critical}\n        annotations: {summary: x is down}\n",
                   encoding="utf-8")
    root = tmp_path / "p"
    root.mkdir()
    code, out, err = _run(capsys, root, "import", str(src))
    assert code == 0, out + err
    assert _run(capsys, root, "build")[0] == 0
    links = sorted(p.relative_to(root).as_posix() for p in root.glob("charts/*/charts/rulegen-library"))
    assert len(links) == 1 and (root / links[0]).is_symlink()
    assert [p.relative_to(root).as_posix() for p in root.glob("charts/*/templates/_rulegen.tpl")] == \
        ["charts/rulegen-library/templates/_rulegen.tpl"]
    assert _run(capsys, root, "check")[0] == 0


@pytest.mark.tools
def test_rulegen_test_renders_a_copy_with_the_planned_library_not_the_link(built, capsys):
    """`rulegen test` copies the chart without following its link and lays the planned library
    in, so a project not yet built (the link missing) tests as it will render."""
    (built / LINK).unlink()
    shutil.rmtree(built / "charts/rulegen-library")
    code, out, err = _run(capsys, built, "test")
    assert code == 0, out + err
    copy = built / ".rulegen/test/llama-swap/chart/charts/rulegen-library"
    assert copy.is_dir() and not copy.is_symlink()


def _git(root: Path, *args: str) -> str:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com"}
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True).stdout


@pytest.mark.tools("helm")
def test_diff_renders_the_base_chart_with_its_library(built, capsys):
    """The base side of `rulegen diff` is `git archive` of the chart: its link is followed into
    the library exported beside it."""
    _git(built, "init", "-q", "-b", "main")
    _git(built, "add", "-A")
    _git(built, "commit", "-qm", "base")
    values = built / "charts/llama-swap/values.yaml"
    text = values.read_text(encoding="utf-8")
    assert "  customRules: {}\n" in text
    values.write_text(text.replace("  customRules: {}\n", "  customRules: {LlamaSwapDown: {severity: info}}\n"),
                      encoding="utf-8")
    code, out, err = _run(capsys, built, "diff", "--base", "main")
    assert code == 0, out + err
    assert "values not compared" not in out + err
    assert "LlamaSwapDown severity critical -> info (values)" in out, out


@pytest.mark.tools("helm")
def test_a_values_schema_closed_at_the_top_accepts_the_librarys_values(built, capsys):
    """Helm puts an empty map under each subchart's name into the values; a chart whose own
    values.schema.json is closed at the top gets rulegen-library in its properties."""
    import json
    schema = built / "charts/llama-swap/values.schema.json"
    doc = json.loads(schema.read_text(encoding="utf-8"))
    doc["additionalProperties"] = False
    schema.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(helm_run.HelmError, match="additional properties 'rulegen-library' not allowed"):
        helm_run.template(built / "charts/llama-swap", root=REPO)
    assert _run(capsys, built, "build")[0] == 0
    assert json.loads(schema.read_text(encoding="utf-8"))["properties"]["rulegen-library"] == {"type": "object"}
    assert helm_run.template(built / "charts/llama-swap", root=REPO).prometheus_rules()


def test_a_chart_no_spec_renders_into_loses_its_link(built, capsys):
    spec = built / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("  path: charts/llama-swap\n",
                                                             "  path: charts/llama-swap-2\n", 1), encoding="utf-8")
    code, out, err = _run(capsys, built, "build")
    assert code == 0, out + err
    assert f"removed {LINK}" in out.splitlines()
    assert not (built / LINK).is_symlink()
    assert os.readlink(built / "charts/llama-swap-2/charts/rulegen-library") == "../../rulegen-library"
    assert (built / "charts/rulegen-library/templates/_rulegen.tpl").is_file()  # the other chart's


@pytest.mark.parametrize("extra", ["templates/_a.tpl", "templates/zz/x.yaml", "values.yaml", "templates/link"])
def test_a_file_rulegen_does_not_write_in_the_library_is_refused(built, capsys, extra):
    """Adversarial review: `templates/_a.tpl` in the shared library, redefining
    `rulegen.v3.runbookBase`, sorted before `_rulegen.tpl` and changed every chart's runbook_url,
    with check, build and test all passing. Any file rulegen does not write there is RG773."""
    path = built / "charts/rulegen-library" / extra
    path.parent.mkdir(parents=True, exist_ok=True)
    if extra.endswith("link"):
        path.symlink_to("_rulegen.tpl")
    else:
        path.write_text('{{- define "rulegen.v3.runbookBase" }}https://evil.example.com/#{{- end }}\n',
                        encoding="utf-8")
    for cmd in ("validate", "check", "build"):
        code, out, err = _run(capsys, built, cmd)
        assert code == 1, (cmd, out, err)
        assert f"charts/rulegen-library/{extra}:0:0: error RG773 " in out + err, (cmd, out + err)
    path.unlink()
    assert _run(capsys, built, "check")[0] == 0
