"""Hostile and careless inputs against the sum files (issue 29, rulegen.render.sums and
rulegen.gitops.write.compare): what a pull request can plant in ``.rulegen-sums/``, and what
an editor can do to a generated file. The guarantees: nothing outside the project is read; a
sum file costs time in proportion to its size; a hand edit is never overwritten silently."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from rulegen.fs import read as fs_read
from rulegen.render import sums

from helpers.gitops import PAGE, SUM, project, run  # noqa: F401  (project: a fixture)

SECRET = "SECRET-TOKEN-4f1c9"
JOURNAL_TEMP = ".rulegen-sums/.build-journal.1.abcdef.rulegen-tmp"


def snapshot(root: Path) -> dict:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and not p.is_symlink()}


# -- nothing outside the project is read ----------------------------------------------------


@pytest.fixture
def secret(tmp_path_factory) -> Path:
    """A file outside the project, as a CI job's credentials file would be."""
    p = tmp_path_factory.mktemp("outside") / "token"
    p.write_text(SECRET + "\n", encoding="utf-8")
    return p


def _plant_link(project: Path, rel: str, target: Path) -> None:
    p = project / rel
    if p.exists() or p.is_symlink():
        p.unlink()
    p.symlink_to(target)


@pytest.mark.parametrize("rel", [SUM, ".rulegen-sums/zz.sum.yaml", JOURNAL_TEMP])
def test_a_link_out_in_the_sum_folder_is_refused_before_anything_is_read(project, capsys, secret, monkeypatch, rel):
    """A pull request commits a sum file (planned, or one no spec makes) or a build journal as
    a symlink to a file outside the project: `check` printed the outside file in its diff of
    the planned sum file (into the CI log). Now validation refuses the link (RG742, as for a
    page linked out) and no command reads the file."""
    _plant_link(project, rel, secret)
    opened = []
    real_read = fs_read.read_bytes
    monkeypatch.setattr(fs_read, "read_bytes", lambda p, *a, **k: (opened.append(os.path.realpath(p)),
                                                                    real_read(p, *a, **k))[1])
    for argv in (["check"], ["build"], ["build", "--force"], ["build", "rules/llama-swap.yaml"]):
        code, out, err = run(capsys, "-C", str(project), *argv)
        assert code == 1, argv
        assert SECRET not in out + err
        assert f"{rel}:0:0: error RG742 {rel} is a symlink to {secret}, outside the project" in out + err, argv
    assert str(secret) not in opened
    assert (project / rel).is_symlink() and secret.read_text(encoding="utf-8") == SECRET + "\n"


def test_compare_reads_no_sum_file_or_journal_through_a_link_out(project, secret, monkeypatch):
    """The last guard, for a caller that skips validation: write.compare reads nothing through
    a link in the sum folder that leads out of the project."""
    from rulegen.gitops import write
    from rulegen.pipeline import load_project, plan_project
    outputs, _ = plan_project(load_project(project), "helm")
    for rel in (SUM, ".rulegen-sums/zz.sum.yaml", JOURNAL_TEMP):
        _plant_link(project, rel, secret)
    opened = []
    real_read = fs_read.read_bytes
    monkeypatch.setattr(fs_read, "read_bytes", lambda p, *a, **k: (opened.append(os.path.realpath(p)),
                                                                    real_read(p, *a, **k))[1])
    write.compare(outputs, project)
    assert opened and str(secret) not in opened


def test_a_fifo_in_the_sum_folder_is_refused(project, capsys):
    os.mkfifo(project / ".rulegen-sums/zz.sum.yaml")
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1 and ".rulegen-sums/zz.sum.yaml:0:0: error RG760 .rulegen-sums/zz.sum.yaml is a FIFO" in out


# -- a sum file costs time in proportion to its size ----------------------------------------


def test_aliases_cannot_amplify_a_sum_file(monkeypatch):
    """YAML aliases: a short text naming one long path thousands of times (each copy was
    checked as a path: minutes of CPU for 1 MB), or a "billion laughs" in `digest` (turned
    into a string: 48 s for 522 bytes). Such a text is no sum file rulegen wrote."""
    monkeypatch.setenv("RULEGEN_MAX_YAML_VALUES", "1000")
    laughs = ['a0: &a0 ["xxxxxxxxxxxxxxxx"]'] + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]"
                                                  for i in range(1, 5)]
    assert sums.parse("\n".join(laughs) + "\ndigest: *a4\nfiles: []\n") is None
    repeated = "x: &s " + "a" * 5000 + "\ndigest: sha256:" + "0" * 64 + "\nfiles: [" + ", ".join(["*s"] * 100) + "]\n"
    assert sums.parse(repeated) is None
    # the same paths written out are read
    plain = "digest: sha256:" + "0" * 64 + "\nfiles: [" + ", ".join(["b" * 50] * 3) + "]\n"
    assert sums.parse(plain) == sums.Recorded("0" * 64, ("b" * 50,) * 3)


# -- a hand edit is never overwritten silently ----------------------------------------------


@pytest.mark.parametrize("added", [b"Caf\xe9 (saved as Latin-1 by an editor)\n", b"\xff\xfe"])
def test_a_hand_edit_that_is_not_utf8_is_refused(project, capsys, added):
    """An editor saves a generated page in Latin-1 (or a stray byte): the file could not be
    read as text and was taken for missing, so `build` overwrote the edit without a word."""
    p = project / PAGE
    p.write_bytes(p.read_bytes() + added)
    before = snapshot(project)
    code, _, err = run(capsys, "-C", str(project), "build")
    assert code == 1 and f"rulegen: {PAGE}: edited by hand since rulegen generated it; refusing to overwrite" in err
    assert "it is not UTF-8 text" in err
    assert snapshot(project) == before
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1 and f"hand-edited: {PAGE}:" in out
    assert run(capsys, "-C", str(project), "build", "--force")[0] == 0
    assert run(capsys, "-C", str(project), "check")[0] == 0


# -- two teams' pull requests merged --------------------------------------------------------


@pytest.mark.parametrize("order", ["noctaya first", "llama-swap first"])
def test_two_teams_pull_requests_merge_without_conflict(tmp_path, capsys, order):
    """Two teams each change a summary (which the alert index shows): git merged the index and
    each app's files cleanly, but both pull requests changed the one digest line of the site's
    sum file, a conflict in a shared file for every second pull request. The site's sum file
    records a digest per line of each page, so it merges exactly when the pages do."""
    import shutil
    import subprocess

    from helpers import REPO
    root = tmp_path / "b"
    for name in ("rules", "charts", "runbooks", "deploy", ".rulegen-sums"):
        shutil.copytree(REPO / name, root / name, symlinks=True)
    for name in ("mkdocs.yml", ".rulegen.yaml"):
        shutil.copy(REPO / name, root / name)
    assert run(capsys, "-C", str(root), "build")[0] == 0

    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args], cwd=root,
                              capture_output=True, text=True)
    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "base")
    edits = {"noctaya": ("is Degraded ({{", "is degraded ({{"), "llama-swap": ("has no available replica.",
                                                                                  "is down.")}
    for app, (old, new) in edits.items():
        git("checkout", "-q", "-b", app, "main")
        spec = root / f"rules/{app}.yaml"
        spec.write_text(spec.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
        code, out, _ = run(capsys, "-C", str(root), "build")
        assert code == 0 and "wrote runbooks/alerts.md" in out.splitlines()
        git("add", "-A")
        git("commit", "-qm", app)
    first, second = ["noctaya", "llama-swap"] if order == "noctaya first" else ["llama-swap", "noctaya"]
    git("checkout", "-q", "main")
    assert git("merge", "-q", first).returncode == 0
    merged = git("merge", "-q", "-m", "merge", second)
    assert merged.returncode == 0, merged.stdout + merged.stderr
    code, out, _ = run(capsys, "-C", str(root), "check")
    assert code == 0, out


# -- what no spec makes has no place among the sum files --------------------------------------


def test_a_sum_file_no_spec_makes_fails_check(project, capsys):
    """A pull request adds `.rulegen-sums/zz.sum.yaml` without the notice, vouching for another
    app's page as it is (or as a person will edit it): `check` passed, and every build read it
    and trusted it. Now it fails `check`, `build` refuses it, `build --force` removes it."""
    page = (project / PAGE).read_text(encoding="utf-8")
    junk = project / ".rulegen-sums/zz.sum.yaml"
    junk.write_text(sums.render("rules/zz.yaml", {PAGE: page}).split("\n", 1)[1], encoding="utf-8")
    assert "Code generated" not in junk.read_text(encoding="utf-8")
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1 and "hand-edited: .rulegen-sums/zz.sum.yaml:" in out
    code, _, err = run(capsys, "-C", str(project), "build")
    assert code == 1 and "rulegen: .rulegen-sums/zz.sum.yaml: edited by hand" in err and junk.exists()
    code, out, _ = run(capsys, "-C", str(project), "build", "--force")
    assert code == 0 and "removed .rulegen-sums/zz.sum.yaml" in out.splitlines() and not junk.exists()
    assert run(capsys, "-C", str(project), "check")[0] == 0
    # a build of some specs leaves other files there alone (it does not know every spec)
    junk.write_text("files: []\n", encoding="utf-8")
    assert run(capsys, "-C", str(project), "build", "rules/llama-swap.yaml")[0] == 0 and junk.exists()


def test_the_sum_folder_as_a_link_to_another_folder_of_the_project_is_refused(project, capsys):
    """`.rulegen-sums` committed as a symlink to `charts/llama-swap/templates`: `build` wrote
    the sum files into the chart's templates, which Helm then rendered as manifests. The link
    stays inside the project, so RG744 let it through; RG777 refuses any link there."""
    import shutil
    shutil.rmtree(project / ".rulegen-sums")
    (project / ".rulegen-sums").symlink_to("charts/llama-swap/templates")
    before = sorted(p.name for p in (project / "charts/llama-swap/templates").iterdir())
    for argv in (["check"], ["build"], ["build", "--force"], ["build", "rules/llama-swap.yaml"]):
        code, out, err = run(capsys, "-C", str(project), *argv)
        assert code == 1 and ".rulegen-sums:0:0: error RG777 .rulegen-sums is a symlink" in out + err, argv
    assert sorted(p.name for p in (project / "charts/llama-swap/templates").iterdir()) == before


# -- a hand edit with a sum to match still fails check ----------------------------------------


@pytest.mark.parametrize("rel", [PAGE, "runbooks/alerts.md"])
def test_a_hand_edit_with_its_sum_updated_to_match_still_fails_check(project, capsys, rel):
    """The pull request edits a generated file (an app's page, the site's index: recorded by
    line) and writes the sum file that vouches for the edit: `check` compares every file with
    what the specs make, so it still fails, naming both."""
    from rulegen.gitops import write
    from rulegen.pipeline import load_project, plan_project
    outputs, _ = plan_project(load_project(project), "helm")
    p = project / rel
    p.write_text(p.read_text(encoding="utf-8").replace("\n", "\nA person's line.\n", 3), encoding="utf-8")
    sum_path = sums.path_for(next(o.source for o in outputs if o.path == rel), "llama-swap")
    listed = sums.parse((project / sum_path).read_text(encoding="utf-8")).files
    (project / sum_path).write_text(sums.render(next(o.source for o in outputs if o.path == rel),
                                                {f: (project / f).read_text(encoding="utf-8") for f in listed}),
                                    encoding="utf-8")
    assert write.compare(outputs, project).hand_edited == []  # the sum vouches for the edit...
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1 and f"+++ b/{rel}" in out and f"+++ b/{sum_path}" in out  # ...check does not


def test_team_notes_in_the_home_page_are_no_hand_edit_of_the_site(project, capsys):
    """The site's sum is by line with the notes left out: notes in the home page's slot and a
    spec edit that changes the alert index build without --force, and the notes stay."""
    p = project / "runbooks/index.md"
    text = p.read_text(encoding="utf-8")
    assert "<!-- notes:home -->\n" in text
    p.write_text(text.replace("<!-- notes:home -->\n", "<!-- notes:home -->\nOn-call: #team-ml.\n\nTwo lines.\n"),
                 encoding="utf-8")
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("has no available replica.", "is down.", 1),
                    encoding="utf-8")
    code, out, err = run(capsys, "-C", str(project), "build")
    assert (code, err) == (0, "") and "wrote runbooks/alerts.md" in out.splitlines()
    assert "On-call: #team-ml.\n\nTwo lines.\n" in p.read_text(encoding="utf-8")
    assert run(capsys, "-C", str(project), "check")[0] == 0


def test_rulegen_test_does_not_name_the_sum_files_as_drift(project, capsys):
    """`rulegen test` notes which files on disk differ from what it tests (the rules and tests);
    a sum file is no input of promtool's and was named there after every spec edit."""
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text(encoding="utf-8").replace("has no available replica.", "is down.", 1),
                    encoding="utf-8")
    _, _, err = run(capsys, "-C", str(project), "test")
    note = [ln for ln in err.splitlines() if "on disk these differ" in ln]
    assert note == [f"note: testing what `rulegen build` would write; on disk these differ: "
                    f"charts/llama-swap/rules/llama-swap.rules.yaml"]


def test_the_by_line_sum_reads_the_same_line_by_line_and_as_yaml():
    """The site's sum (`lines`) is read by the line reader; a copy reformatted by a YAML tool
    is read the same; a `lines` path that is not listed in `files` matches nothing."""
    import yaml
    files = {"runbooks/alerts.md": "# A\n\nx\n", "runbooks/index.md": "# I\n<!-- notes:home -->\nn\n<!-- /notes -->\n"}
    text = sums.render("", files)
    rec = sums.parse(text)
    assert rec.lines == {p: sums.line_digests(t) for p, t in files.items()}
    assert rec.lines["runbooks/index.md"] == sums.line_digests("# I\n<!-- notes:home -->\n<!-- /notes -->\n")
    assert sums.parse(yaml.safe_dump(yaml.safe_load(text))) == rec
    assert rec.matches({}, dict(rec.lines))
    assert not rec.matches({}, {**rec.lines, "runbooks/alerts.md": sums.line_digests("# A\n\ny\n")})
    extra = sums.Recorded(rec.digest, rec.files, {**rec.lines, "charts/x.yaml": ()})
    assert not extra.matches({}, {**rec.lines, "charts/x.yaml": ()})
