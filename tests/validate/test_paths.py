"""Nothing leaves the project: paths from specs, the config and options stay under the root.

Each regression builds a small project in ``<tmp>/proj`` next to an ``<tmp>/outside`` folder,
runs the real command line, and checks the exact finding (code, position, message), the exit
code, and that nothing was written outside the project (``<tmp>`` holds only ``proj`` and the
empty ``outside``).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rulegen.cli import main
from rulegen.config import parse_config
from rulegen.fs.containment import escaping_link, lexical_problem, refuse_outside
from rulegen.findings import RulegenError
from rulegen.gitops import write
from rulegen.pipeline import load_project, plan_project
from rulegen.spec import load_text
from rulegen.validate import Context, validate

from helpers import REPO

SPEC = """\
app: demo
{chart}groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        severity: warning
        summary: Down.
        description: Down.
"""


def make(tmp_path: Path, chart: str = "") -> Path:
    root = tmp_path / "proj"
    (root / "rules").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    (root / "rules" / "demo.yaml").write_text(SPEC.format(chart=chart), encoding="utf-8")
    return root


def nothing_outside(tmp_path: Path) -> None:
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "proj"]
    assert list((tmp_path / "outside").rglob("*")) == []


def build(root: Path, capsys) -> tuple[int, str]:
    code = main(["-C", str(root), "build"])
    out = capsys.readouterr()
    return code, out.out + out.err


def test_dotdot_chart_path_is_refused(tmp_path, capsys):
    root = make(tmp_path, "chart: {path: ../outside}\n")
    code, out = build(root, capsys)
    assert code == 1
    assert ("rules/demo.yaml:2:15: error RG741 chart.path '../outside' has a `..` segment, which leads out "
            "of the folder it is in; rulegen reads and writes only inside the project: give a folder "
            "relative to the project root, such as charts/demo") in out
    assert "nothing was written" in out
    nothing_outside(tmp_path)
    assert not (root / "charts").exists() and not (root / "runbooks").exists()


def test_dotdot_inside_a_longer_chart_path_is_refused(tmp_path, capsys):
    root = make(tmp_path, "chart:\n  path: charts/../../outside\n")
    code, out = build(root, capsys)
    assert code == 1
    assert "rules/demo.yaml:3:9: error RG741 chart.path 'charts/../../outside' has a `..` segment" in out
    nothing_outside(tmp_path)


def test_absolute_chart_path_is_refused(tmp_path, capsys):
    outside = tmp_path / "outside"
    root = make(tmp_path, f"chart: {{path: {outside}}}\n")
    code, out = build(root, capsys)
    assert code == 1
    assert (f"rules/demo.yaml:2:15: error RG740 chart.path '{outside}' is an absolute path; rulegen reads "
            "and writes only inside the project: give a folder relative to the project root, such as "
            "charts/demo") in out
    nothing_outside(tmp_path)


def test_symlinked_chart_folder_leading_outside_is_refused(tmp_path, capsys):
    root = make(tmp_path)
    (root / "charts").mkdir()
    (root / "charts" / "demo").symlink_to(tmp_path / "outside")
    code, out = build(root, capsys)
    assert code == 1
    # no chart.path in the spec: the finding points at `app`
    assert (f"rules/demo.yaml:1:6: error RG742 chart folder charts/demo leads outside the project: "
            f"charts/demo is a symlink to {tmp_path / 'outside'}; make it a folder of the project (or "
            "point chart.path at one); nothing is read or written through it") in out
    nothing_outside(tmp_path)
    assert not (root / "runbooks").exists()  # nothing at all was written


def test_symlinked_templates_folder_inside_the_chart_is_refused(tmp_path, capsys):
    root = make(tmp_path, "chart: {path: charts/demo}\n")
    (root / "charts" / "demo").mkdir(parents=True)
    (root / "charts" / "demo" / "templates").symlink_to("../../../outside")
    code, out = build(root, capsys)
    assert code == 1
    assert ("rules/demo.yaml:2:15: error RG742 chart folder charts/demo leads outside the project: "
            "charts/demo/templates is a symlink to ../../../outside;") in out
    nothing_outside(tmp_path)


def test_symlink_inside_the_project_is_fine(tmp_path, capsys):
    root = make(tmp_path)
    (root / "charts" / "real").mkdir(parents=True)
    (root / "charts" / "demo").symlink_to("real")
    code, out = build(root, capsys)
    assert code == 0, out
    assert (root / "charts" / "real" / "templates" / "prometheusrule.yaml").is_file()
    nothing_outside(tmp_path)


def test_symlinked_runbooks_leading_outside_is_refused(tmp_path, capsys):
    root = make(tmp_path)
    (root / "runbooks").symlink_to(tmp_path / "outside")
    code, out = build(root, capsys)
    assert code == 1
    assert (f"runbooks:0:0: error RG744 runbooks is a symlink to {tmp_path / 'outside'}, outside the "
            "project; rulegen writes the runbook site there: make runbooks a folder or file of the "
            "project") in out
    nothing_outside(tmp_path)
    assert not (root / "charts").exists()
    # check and test stop at validation too, and read nothing through the link
    assert main(["-C", str(root), "check"]) == 1
    assert "RG744" in capsys.readouterr().out
    assert main(["-C", str(root), "test"]) == 1
    err = capsys.readouterr().err
    assert "RG744" in err and "validation failed; no test ran" in err
    nothing_outside(tmp_path)
    assert not (root / ".rulegen").exists()


def test_symlinked_sum_folder_leading_outside_is_refused(tmp_path, capsys):
    """The sum files (issue 29, rulegen.render.sums) are written like the site's files."""
    root = make(tmp_path)
    (root / ".rulegen-sums").symlink_to(tmp_path / "outside")
    code, out = build(root, capsys)
    assert code == 1
    assert (f".rulegen-sums:0:0: error RG744 .rulegen-sums is a symlink to {tmp_path / 'outside'}, outside the "
            "project; rulegen writes the sum files of the generated files there: make .rulegen-sums a folder or "
            "file of the project") in out
    nothing_outside(tmp_path)


def test_symlinked_runbook_page_leading_outside_is_refused(tmp_path, capsys):
    root = make(tmp_path)
    (root / "runbooks").mkdir()
    (tmp_path / "outside" / "demo.md").write_text("theirs\n")
    (root / "runbooks" / "demo.md").symlink_to(tmp_path / "outside" / "demo.md")
    code, out = build(root, capsys)
    assert code == 1
    assert "runbooks/demo.md:0:0: error RG744 runbooks/demo.md is a symlink to" in out
    assert (tmp_path / "outside" / "demo.md").read_text() == "theirs\n"


def test_link_made_after_validation_stops_the_write(tmp_path):
    """The writer checks again (RG747): a link that appears between validation and writing
    (or one validation does not know of) stops the build before its first write, named."""
    root = make(tmp_path)
    loaded = load_project(root)
    assert loaded.ok
    outputs, findings = plan_project(loaded)
    assert not findings
    status = write.compare(outputs, root)
    (root / "runbooks").symlink_to(tmp_path / "outside")
    with pytest.raises(RulegenError) as e:
        write.apply(outputs, root, status)
    assert str(e.value) == ("RG747 runbooks/alerts.md cannot be written: runbooks is a symlink to "
                            f"{tmp_path / 'outside'}, outside the project; rulegen writes only inside it. "
                            "Make it a folder of the project (nothing was written)")
    nothing_outside(tmp_path)
    assert not (root / "charts").exists()


def test_containment_codes_cannot_be_switched_off():
    with pytest.raises(RulegenError, match=r"checks.disable: RG741 keeps rulegen inside the project"):
        parse_config({"checks": {"disable": ["RG741"]}})
    with pytest.raises(RulegenError, match=r"checks.severity: RG742 keeps rulegen inside the project"):
        parse_config({"checks": {"severity": {"RG742": "warning"}}})


@pytest.mark.parametrize("out,code", [("../outside", "RG741"), ("/abs/rules", "RG740"), ("rules/../..", "RG741"),
                                      (".git/hooks", "RG743")])
def test_import_out_stays_inside(tmp_path, capsys, out, code):
    root = make(tmp_path)
    (root / "alerts.yml").write_text("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n")
    assert main(["-C", str(root), "import", "alerts.yml", "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"rulegen: {code} --out {out!r} ")
    assert err.rstrip().endswith("(nothing was written)")
    nothing_outside(tmp_path)


def test_import_out_through_a_symlink_is_refused(tmp_path, capsys):
    root = make(tmp_path)
    (root / "alerts.yml").write_text("groups:\n  - name: g\n    rules:\n      - alert: A\n        expr: up == 0\n")
    (root / "imported").symlink_to(tmp_path / "outside")
    assert main(["-C", str(root), "import", "alerts.yml", "--out", "imported"]) == 2
    assert capsys.readouterr().err == (
        f"rulegen: RG742 --out 'imported' leads outside the project through the symlink imported -> "
        f"{tmp_path / 'outside'}; replace the link with a folder (nothing was written)\n")
    nothing_outside(tmp_path)


@pytest.mark.parametrize("path,code", [
    ("/etc", "RG740"), ("\\\\server\\share", "RG740"), ("C:/charts", "RG740"), ("~/charts", "RG740"),
    ("..", "RG741"), ("charts/..", "RG741"), ("charts\\..\\..", "RG741"),
    ("", "RG743"), (".", "RG743"), ("./charts", "RG743"), ("charts//x", "RG743"), ("charts\\x", "RG743"),
    ("charts/.git", "RG743"), ("-x", "RG743"), ("my chart", "RG743"), ("charts/x`y", "RG743"),
    ("charts/<b>", "RG743"), ("charts/\x00", "RG743"), ("charts/é", "RG743"),
])
def test_lexical_problems(path, code):
    assert lexical_problem(path)[0] == code


@pytest.mark.parametrize("path", ["charts/shop", "charts/shop_v2.1", "a", "deploy/charts/x-y"])
def test_plain_relative_paths_pass(path):
    assert lexical_problem(path) is None


def test_escaping_link_follows_chains_and_dangling_links(tmp_path):
    root = tmp_path / "proj"
    (root / "a").mkdir(parents=True)
    (root / "a" / "in").symlink_to("../b")  # inside, dangling
    (root / "a" / "hop").symlink_to("in")  # inside -> inside
    (root / "a" / "gone").symlink_to(tmp_path / "nowhere")  # dangling, outside
    (root / "b").symlink_to(tmp_path)  # outside
    assert escaping_link(root, "a/x/y") is None
    assert escaping_link(root, "a/gone/x") == ("a/gone", str(tmp_path / "nowhere"))
    assert escaping_link(root, "b/x") == ("b", str(tmp_path))
    assert escaping_link(root, "a/hop/z") == ("a/hop", "in")
    with pytest.raises(RulegenError, match="RG742 x 'a/hop' leads outside the project through the symlink a/hop"):
        refuse_outside(root, "a/hop", "x")


# -- property test: whatever chart path validates resolves inside the project --------------------

SEGMENTS = ["charts", "demo", "in", "out", "up", "loop", "dangling", "..", ".", "", "~", "/", "\\", "a b",
            ".git", "-x", "C:", "x\x00", "é"]


def _validates(root: Path, path: str) -> bool:
    text = SPEC.format(chart=f"chart:\n  path: {json.dumps(path)}\n")
    res = validate([load_text(text, "rules/demo.yaml")], Context(root=root))
    return res.ok


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(parts=st.lists(st.one_of(st.sampled_from(SEGMENTS), st.text(max_size=4)), min_size=1, max_size=5),
       sep=st.sampled_from(["/", "\\", "//"]))
def test_any_chart_path_that_validates_resolves_inside_the_root(linked_root, parts, sep):
    path = sep.join(parts)
    if not _validates(linked_root, path):
        return
    top = Path(os.path.realpath(linked_root))
    chart = path.rstrip("/")
    for rel in (chart, f"{chart}/templates/prometheusrule.yaml", f"{chart}/values.yaml",
                f"{chart}/tests/demo.test.yaml"):
        assert Path(os.path.realpath(linked_root / rel)).is_relative_to(top), (path, rel)


@pytest.mark.parametrize("path", ["charts/demo", "charts/in", "charts/in/sub"])
def test_property_has_passing_cases(linked_root, path):
    """The property above is not vacuous: these chart paths validate."""
    assert _validates(linked_root, path)


@pytest.mark.parametrize("path", ["charts/out", "charts/up/..", "charts/upup", "charts/upup/x", "out/x",
                                  "charts/dangling", "charts/out/deeper"])
def test_property_refuses_the_links(linked_root, path):
    assert not _validates(linked_root, path)


def test_spec_file_name_cannot_carry_markup_into_generated_files(tmp_path, capsys):
    # regression: rules/x--><img src=x onerror=...>.yaml closed the notice comment at the top of
    # the runbook page and put a live <img onerror> on the site
    root = make(tmp_path)
    (root / "rules" / "demo.yaml").rename(root / "rules" / "x--><img src=x onerror=alert(5)>.yaml")
    code, out = build(root, capsys)
    assert code == 1
    assert ("rules/x--><img src=x onerror=alert(5)>.yaml:1:1: error RG743 spec file name 'rules/x--><img src=x "
            "onerror=alert(5)>.yaml' has the segment 'x--><img src=x onerror=alert(5)>.yaml': use letters, "
            "digits, `.`, `_` and `-` only, not starting with `-` or `.` (found '>'); rename the file (its "
            "name is written into the notice of every file made from it, pages included)") in out
    assert not (root / "runbooks").exists()


def test_a_symlink_loop_is_no_traceback(linked_root):
    # found by the property test: lstat under a link to itself raised ELOOP
    assert escaping_link(linked_root, "charts/loop/Chart.yaml") is None
    assert _validates(linked_root, "charts/loop")  # nothing outside; build then stops with exit 2, writing nothing
