"""`rulegen new APP`: a starter that validates, builds and tests green as written, with tests
strong enough that a changed threshold, comparison, `for`, range or matcher fails them: a fresh
project passes `rulegen test --min-mutation-score 100`."""

from __future__ import annotations

import pytest
import yaml

from rulegen.cli import main

MUTATIONS = [  # (what, old text, new text): each must fail `rulegen test --app demo`
    ("threshold lower", "> 0.05", "> 0.04"),
    ("threshold higher", "> 0.05", "> 0.06"),
    ("comparison", "> 0.05", ">= 0.05"),
    ("for shorter", "for: 10m", "for: 9m"),
    ("for longer", "for: 10m", "for: 11m"),
    ("range longer", '"5.."}[5m]))', '"5.."}[10m]))'),
    ("range shorter", '"5.."}[5m]))', '"5.."}[2m30s]))'),
    ("total range shorter", '{job="demo"}[5m]))', '{job="demo"}[2m30s]))'),
    ("alert without its job matcher", 'ratio_rate5m{job="demo"} > 0.05', "ratio_rate5m > 0.05"),
    ("error codes", 'code=~"5.."', 'code=~"4.."'),
    ("aggregation", "sum by (job) (rate(http_requests_total{job=\"demo\", code", "sum (rate(http_requests_total{job=\"demo\", code"),
]


def test_new_validate_build_test_pass_on_a_clean_project(project, helm_bin, promtool_bin, capsys):
    assert not (project / "charts" / "demo").exists()
    assert main(["-C", str(project), "new", "demo"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "wrote rules/demo.yaml"
    assert "wrote charts/demo/Chart.yaml" in out  # the chart was missing
    spec = yaml.safe_load((project / "rules" / "demo.yaml").read_text())
    rules = spec["groups"][0]["rules"]
    assert [("record" in r, "alert" in r) for r in rules] == [(True, False), (False, True)]
    assert {"causes", "diagnosis", "resolution", "explanation"} <= set(rules[1]["runbook"])
    assert main(["-C", str(project), "validate"]) == 0
    assert "no findings" in capsys.readouterr().out
    assert main(["-C", str(project), "build"]) == 0
    # the new app's tests (the bundled apps' are test_llama_swap.py's)
    assert main(["-C", str(project), "test", "--app", "demo", "--min-coverage", "100"]) == 0
    out = capsys.readouterr().out
    assert "0 failed" in out.splitlines()[-1]
    assert main(["-C", str(project), "check"]) == 0


def test_a_fresh_project_kills_every_mutant(tmp_path, helm_bin, promtool_bin, capsys):
    """`rulegen new` then `rulegen test --min-mutation-score 100` passes: every mutant of the
    starter is killed, but the two declared equivalent (a `job` matcher on one side of a
    division that matches on `job`)."""
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    capsys.readouterr()
    assert main(["-C", str(tmp_path), "test", "--min-mutation-score", "100"]) == 0
    out = capsys.readouterr().out
    assert "SURVIVED" not in out
    assert "mutation score: 20/20 mutants killed (100%), 2 declared equivalent\n" in out
    # the two mutants no test can see (test_unseen.py proves that dropping them changes no
    # verdict) are the declared equivalents: none is counted or run
    # regression (trial): the line said "counted as before" beside a 100% score; it says where they went
    assert ("skipped: cannot change a test: 2 mutant(s) not run, since no test of their rule can tell them "
            "from it, as proved before promtool starts; they survive, as they would have if run: 2 declared "
            "equivalent\n") in out


@pytest.fixture(scope="module")
def demo_project(tmp_path_factory, helm_bin, promtool_bin):
    """The starter `demo`, whose tests pass as written (so a failure below is the change's)."""
    root = tmp_path_factory.mktemp("starter")
    assert main(["-C", str(root), "new", "demo"]) == 0
    assert main(["-C", str(root), "test", "--app", "demo", "--min-coverage", "100"]) == 0
    return root


@pytest.mark.parametrize("what,old,new", MUTATIONS, ids=[m[0] for m in MUTATIONS])
def test_the_starter_tests_catch_a_changed_rule(demo_project, helm_bin, promtool_bin, capsys, what, old, new):
    spec = demo_project / "rules" / "demo.yaml"
    original = spec.read_text()
    assert original.count(old) >= 1, old
    before = _files(demo_project)
    try:
        spec.write_text(original.replace(old, new, 1))
        assert main(["-C", str(demo_project), "test", "--app", "demo", "--min-coverage", "100"]) == 1, what
    finally:
        spec.write_text(original)
    # the project is again the one the fixture saw pass (`rulegen test` works in a fresh
    # .rulegen/test/<app> each run), so the next case's failure is its own change's
    assert _files(demo_project) == before


def _files(root) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".rulegen" not in p.relative_to(root).parts}


def test_new_refuses_a_name_that_is_not_a_dns_label_and_suggests_one(tmp_path, capsys):
    assert main(["-C", str(tmp_path), "new", "CI Build"]) == 2
    err = capsys.readouterr().err
    assert ("'CI Build' is not an app name (a DNS label: lowercase letters, digits and '-', at most "
            "53 characters); run `rulegen new ci-build --title \"CI Build\"` to show it as 'CI Build'") in err
    assert not (tmp_path / "rules").exists()


def test_new_never_overwrites_a_spec(tmp_path, capsys):
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "demo.yaml").write_text("app: demo\n")
    assert main(["-C", str(tmp_path), "new", "demo"]) == 2
    assert "rules/demo.yaml exists already" in capsys.readouterr().err
    assert (tmp_path / "rules" / "demo.yaml").read_text() == "app: demo\n"
    (tmp_path / "rules" / "demo.yaml").rename(tmp_path / "rules" / "old.yaml")
    assert main(["-C", str(tmp_path), "new", "demo"]) == 2  # the app is taken by another file
    assert "rules/old.yaml already defines app demo" in capsys.readouterr().err
    assert not (tmp_path / "rules" / "demo.yaml").exists()


def test_new_with_a_title_and_an_existing_chart(tmp_path, capsys):
    (tmp_path / "charts" / "ci-build").mkdir(parents=True)
    assert main(["-C", str(tmp_path), "new", "ci-build", "--title", 'CI "Build"']) == 0
    out = capsys.readouterr().out
    assert "charts/ci-build/" not in out  # an existing chart is left for `rulegen build`
    text = (tmp_path / "rules" / "ci-build.yaml").read_text()
    assert 'title: "CI \\"Build\\""\n' in text
    assert yaml.safe_load(text)["title"] == 'CI "Build"'
    assert "alert: CiBuildHighErrorRate" in text
    assert main(["-C", str(tmp_path), "validate"]) == 0


def test_new_lists_the_app_on_the_site_at_once(project, capsys):
    """The site's home page, alert index and nav list the new app right away (they were left
    stale until the next build, and `rulegen check` failed on them); other apps' files are
    not touched."""
    before = {p: (project / p).read_bytes() for p in ("runbooks/llama-swap.md", "charts/llama-swap/values.yaml")}
    assert main(["-C", str(project), "new", "demo"]) == 0
    out = capsys.readouterr().out
    for path in ("runbooks/index.md", "runbooks/alerts.md", "mkdocs.yml", "runbooks/demo.md"):
        assert f"wrote {path}\n" in out
    assert "demo.md" in (project / "mkdocs.yml").read_text(encoding="utf-8")
    assert "DemoHighErrorRate" in (project / "runbooks/alerts.md").read_text(encoding="utf-8")
    assert {p: (project / p).read_bytes() for p in before} == before
    assert main(["-C", str(project), "check"]) == 0


def test_new_says_when_another_specs_errors_keep_the_site_as_it_was(project, capsys):
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("for: 5m", "for: 1.5m", 1), encoding="utf-8")
    site = {p: (project / p).read_bytes() for p in ("runbooks/index.md", "runbooks/alerts.md", "mkdocs.yml")}
    assert main(["-C", str(project), "new", "demo"]) == 0
    out = capsys.readouterr().out
    assert "wrote runbooks/demo.md" in out
    assert ("note: other specs have errors, so the site's home page, alert index and nav (runbooks/index.md, "
            "runbooks/alerts.md, mkdocs.yml) do not list demo yet; `rulegen build` adds it once they validate") in out
    assert {p: (project / p).read_bytes() for p in site} == site


def test_the_starter_page_names_no_owner_twice(tmp_path, capsys):
    """The starter's facts said "Owner: the team that runs shop" while its triage box said the
    owner is not recorded: one page, two owners. The spec now says where the owner goes."""
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    spec = (tmp_path / "rules/shop.yaml").read_text(encoding="utf-8")
    assert "owner: {team:" in spec and "name: Owner" not in spec
    page = (tmp_path / "runbooks/shop.md").read_text(encoding="utf-8")
    assert page.count("Owner") == 1, page


def test_the_starter_names_a_schema_inside_the_project(tmp_path, capsys):
    """`rulegen new` outside rulegen's repository wrote `$schema=../../<path to the installed
    package>`: a path of one machine, committed. Now the copy `rulegen import` writes too."""
    from rulegen.spec import SCHEMA_PATH
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    assert "wrote .rulegen/schema.json" in capsys.readouterr().out
    first = (tmp_path / "rules/shop.yaml").read_text(encoding="utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../.rulegen/schema.json"
    assert (tmp_path / ".rulegen/schema.json").read_text(encoding="utf-8") == SCHEMA_PATH.read_text(encoding="utf-8")
    assert main(["-C", str(tmp_path), "new", "cart"]) == 0
    assert ".rulegen/schema.json" not in capsys.readouterr().out      # current: not written again


def test_the_config_files_rulegen_writes_name_a_page_that_exists():
    """The comment heading the `.rulegen.yaml` that `rulegen new` and `rulegen import` write
    names where its keys are documented; it named a README section that does not exist (found
    by a new-user trial)."""
    import re
    from pathlib import Path

    from rulegen import starter
    from rulegen.importer import conventions
    repo = Path(__file__).resolve().parents[2]
    texts = [starter.PROJECT_CONFIG, Path(conventions.__file__).read_text(encoding="utf-8")]
    for text in texts:
        (head,) = re.findall(r"rulegen project configuration \(([^)]*)\)", text)
        (doc,) = re.findall(r"docs/[a-z-]+\.md", head)
        assert (repo / doc).is_file() and "README" not in head, head


def test_new_in_an_empty_folder_writes_the_site_settings_and_a_gitignore(tmp_path, capsys):
    """`rulegen new` in an empty repository wrote no mkdocs.yml (so no runbook site to build)
    and no .gitignore (so `git add -A` committed rulegen's work files); a new-user trial."""
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    out = capsys.readouterr().out
    assert "wrote mkdocs.yml (the runbook site: set its site_url)" in out and "wrote .gitignore" in out
    # regression (trial): the build that follows rewrote its nav and said "wrote mkdocs.yml" again
    assert [line for line in out.splitlines() if "mkdocs.yml" in line] == [
        "wrote mkdocs.yml (the runbook site: set its site_url)"]
    assert "1 spec(s): 19 file(s) written, 0 unchanged" in out  # it still counts among the build's files
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8").splitlines()[1:3] == [
        ".rulegen/*", "!.rulegen/schema.json"]
    site = yaml.safe_load((tmp_path / "mkdocs.yml").read_text(encoding="utf-8"))
    assert site["nav"] == [{"Home": "index.md"}, {"Alert index": "alerts.md"}, {"Apps": [{"shop": "shop.md"}]}]
    # the starter's settings are the bundled site's, but the nav
    from helpers import REPO
    bundled = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    assert {k: v for k, v in site.items() if k != "nav"} == {k: v for k, v in bundled.items() if k != "nav"}
    assert main(["-C", str(tmp_path), "check"]) == 0


def test_new_leaves_a_site_and_a_gitignore_that_exist(tmp_path, capsys):
    (tmp_path / ".gitignore").write_text("node_modules/\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("site_name: Ours\nsite_url: https://ours.example.com/\n", encoding="utf-8")
    assert main(["-C", str(tmp_path), "new", "shop"]) == 0
    assert (tmp_path / ".gitignore").read_text(encoding="utf-8") == "node_modules/\n"
    assert (tmp_path / "mkdocs.yml").read_text(encoding="utf-8").startswith("site_name: Ours\n")
    out = capsys.readouterr().out
    assert "wrote .gitignore" not in out
    # the site is the team's: the build adds the new app to its nav and says so, without the note
    assert [line for line in out.splitlines() if "mkdocs.yml" in line] == ["wrote mkdocs.yml"]
