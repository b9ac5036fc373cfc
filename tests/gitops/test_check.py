"""``rulegen check`` and the ownership rules of ``rulegen build``, on a copy of the bundled project."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from rulegen.findings import Finding, Severity
from rulegen.gitops import write
from rulegen.render import ownership
from rulegen.gitops.check import unified_diff

from helpers.gitops import (GENERATED, HELM_TEMPLATE, HELPERS, LIBRARY_CHART, LINK, META, PAGE, SITE_SUM, SUM,  # noqa: F401
                             SUMS, TEMPLATE, project, run)  # (project: a fixture)


def snapshot(root: Path) -> dict:
    """Every file under root: relative path -> (bytes, mtime_ns)."""
    return {p.relative_to(root).as_posix(): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*")) if p.is_file()}


def edit_spec_for(project: Path, old: str = "for: 5m", new: str = "for: 7m") -> None:
    spec = project / "rules/llama-swap.yaml"
    text = spec.read_text(encoding="utf-8")
    assert text.count(old) == 1
    spec.write_text(text.replace(old, new), encoding="utf-8")


SUMMARY, EDITED_SUMMARY = "llama-swap has no available replica.", "llama-swap is down."


def line_with(text: str, needle: str) -> str:
    """The one line of ``text`` containing ``needle``."""
    found = [line for line in text.splitlines() if needle in line]
    assert len(found) == 1, (needle, found)
    return found[0]


def hand_edit_template(project: Path) -> tuple[str, str]:
    p = project / TEMPLATE
    before = p.read_text(encoding="utf-8")
    after = before.replace(SUMMARY, EDITED_SUMMARY)
    assert after.count(EDITED_SUMMARY) == 1
    p.write_text(after, encoding="utf-8")
    return before, after


def test_clean_project_passes(project, capsys):
    code, out, err = run(capsys, "-C", str(project), "check")
    # stderr: the one line saying the live Prometheus checks were skipped (none configured)
    from rulegen.live.connect import SKIPPED
    assert (code, out, err) == (0, "check: 18 generated file(s) up to date\n", f"rulegen: note: {SKIPPED}\n")


def test_spec_edited_without_rebuild_is_drift_with_a_diff_then_build_fixes_it(project, capsys):
    old_line = line_with((project / TEMPLATE).read_text(encoding="utf-8"), 'for: 5m')
    edit_spec_for(project)
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1
    lines = out.splitlines()
    assert f"--- a/{TEMPLATE}" in lines and f"+++ b/{TEMPLATE}" in lines
    assert "-" + old_line in lines
    assert "+" + old_line.replace('5m', '7m') in lines
    # a spec edit is not a hand edit of the generated file
    assert not any(line.startswith("hand-edited:") for line in lines)
    assert lines[-1].startswith("check: ") and " file(s) differ, 0 stale, 0 edited by hand, 0 leftover" in lines[-1]

    assert run(capsys, "-C", str(project), "build")[0] == 0
    assert run(capsys, "-C", str(project), "check")[:2] == (0, "check: 18 generated file(s) up to date\n")


def test_check_writes_nothing(project, capsys):
    edit_spec_for(project)
    before = snapshot(project)
    assert run(capsys, "-C", str(project), "check")[0] == 1
    assert snapshot(project) == before


#: Why a hand edit of a file of llama-swap's is refused (see rulegen.gitops.write.compare).
NO_MATCH = f"the files made from rules/llama-swap.yaml no longer match what rulegen wrote, recorded in {SUM}"


def test_hand_edited_file_fails_check_naming_it(project, capsys):
    before, _ = hand_edit_template(project)
    line = line_with(before, SUMMARY)
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1
    assert (f"hand-edited: {TEMPLATE}: differs from what rulegen wrote, so it may have been changed by hand ({NO_MATCH}); move the change "
            "into the spec (or a runbook notes slot) and run `rulegen build`, or run "
            "`rulegen build --force` to discard it") in out.splitlines()
    assert "-" + line.replace(SUMMARY, EDITED_SUMMARY) in out.splitlines()
    assert "+" + line in out.splitlines()
    assert out.splitlines()[-1].startswith("check: 1 file(s) differ, 0 stale, 1 edited by hand,")


def test_build_refuses_hand_edited_file_and_writes_nothing_at_all(project, capsys):
    hand_edit_template(project)
    edit_spec_for(project)  # other outputs would change too: none of them may be written
    before = snapshot(project)
    code, out, err = run(capsys, "-C", str(project), "build")
    assert code == 1
    assert out == ""
    assert (f"rulegen: {TEMPLATE}: differs from what rulegen wrote, so it may have been edited by hand; refusing to overwrite ({NO_MATCH}). "
            "Move the change into the spec (or a notes slot) and rerun, or rerun with --force to "
            "discard it") in err.splitlines()
    # one digest for the app's files: rulegen cannot tell which of them was edited, so the page,
    # which the spec edit changes too, is refused with the rules file; the test file is not
    # (the spec edit leaves it as it is)
    refused = [ln.split(": ", 2)[1] for ln in err.splitlines() if "refusing to overwrite" in ln]
    assert refused == [TEMPLATE, PAGE]
    assert err.splitlines()[-1] == "rulegen: nothing was written"
    assert snapshot(project) == before


TEST_FILE = "charts/llama-swap/tests/llama-swap.test.yaml"


@pytest.mark.parametrize("path, old, new", [
    (TEST_FILE, "fires after 5m of zero available replicas, not before", "fires after 5m of no replica, not before"),
    (PAGE, "Init container `hydrate-models` failing", "Init container `hydrate-models` fails"),
])
def test_hand_edit_moved_into_the_spec_lets_build_run_without_force(project, capsys, path, old, new):
    # regression: after moving a hand edit into the spec, as check and build ask, build still
    # refused (the file's checksum line was stale), so --force "to discard it" was the only way.
    # Here the spec edit changes that one file of the app (see the next test for more)
    spec = project / "rules/llama-swap.yaml"
    original = spec.read_text(encoding="utf-8")
    generated = project / path
    assert original.count(old) == 1
    spec.write_text(original.replace(old, new), encoding="utf-8")
    assert run(capsys, "-C", str(project), "build")[0] == 0
    wanted = generated.read_text(encoding="utf-8")
    spec.write_text(original, encoding="utf-8")
    assert run(capsys, "-C", str(project), "build")[0] == 0
    generated.write_text(wanted, encoding="utf-8")  # the hand edit: the file as the changed spec makes it
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1 and f"hand-edited: {path}: differs from what rulegen wrote, so it may have been changed by hand ({NO_MATCH})" in out
    spec.write_text(original.replace(old, new), encoding="utf-8")  # moved into the spec
    code, out, err = run(capsys, "-C", str(project), "build")
    assert (code, err) == (0, "") and out.splitlines()[0] == f"wrote {SUM}" and f"wrote {path}" not in out
    assert generated.read_text(encoding="utf-8") == wanted
    assert run(capsys, "-C", str(project), "check")[0] == 0


def test_hand_edit_moved_into_a_spec_edit_that_changes_other_files_too_needs_force(project, capsys):
    """One digest per spec: when the spec edit that takes a hand edit over changes other files
    of the app too, rulegen cannot tell those from hand edits; build names them and says
    that --force loses nothing once every hand edit is in the spec."""
    spec = project / "rules/llama-swap.yaml"
    original = spec.read_text(encoding="utf-8")
    spec.write_text(original.replace(SUMMARY, EDITED_SUMMARY), encoding="utf-8")
    assert run(capsys, "-C", str(project), "build")[0] == 0
    wanted = {p: (project / p).read_text(encoding="utf-8") for p in (TEMPLATE, PAGE)}
    spec.write_text(original, encoding="utf-8")
    assert run(capsys, "-C", str(project), "build")[0] == 0
    (project / TEMPLATE).write_text(wanted[TEMPLATE], encoding="utf-8")  # the hand edit
    spec.write_text(original.replace(SUMMARY, EDITED_SUMMARY), encoding="utf-8")  # moved into the spec
    code, out, err = run(capsys, "-C", str(project), "build")
    assert code == 1 and [ln.split(": ", 2)[1] for ln in err.splitlines() if "refusing" in ln] == [PAGE]
    assert err.splitlines()[-2] == (
        "rulegen: a sum file records one digest for all the files made from a spec, so rulegen cannot tell which "
        "of them was edited: look at them (git diff); once every hand edit is in the spec or undone, `rulegen "
        "build --force` loses nothing")
    assert run(capsys, "-C", str(project), "build", "--force")[0] == 0
    assert {p: (project / p).read_text(encoding="utf-8") for p in (TEMPLATE, PAGE)} == wanted
    assert run(capsys, "-C", str(project), "check")[0] == 0


def test_build_force_overwrites_hand_edit(project, capsys):
    original, _ = hand_edit_template(project)
    code, out, _ = run(capsys, "-C", str(project), "build", "--force")
    assert code == 0
    assert f"wrote {TEMPLATE}" in out.splitlines()
    assert (project / TEMPLATE).read_text(encoding="utf-8") == original
    assert run(capsys, "-C", str(project), "check")[0] == 0


def test_team_notes_in_runbook_page_are_not_drift(project, capsys):
    page = project / PAGE
    text = page.read_text(encoding="utf-8")
    slot = "<!-- notes:LlamaSwapDown -->\n"
    assert slot in text
    page.write_text(text.replace(slot, slot + "Seen 2024-05-01: MinIO was down.\n"), encoding="utf-8")
    assert run(capsys, "-C", str(project), "check")[:2] == (0, "check: 18 generated file(s) up to date\n")


def _stale_page(project: Path) -> Path:
    """A page of a removed spec, rules/gone.yaml, with its sum file, as rulegen wrote them."""
    from rulegen.render import sums
    text = "\n".join([ownership.comment("markdown", ownership.notice("rules/gone.yaml")), "# gone", ""])
    p = project / "runbooks/gone.md"
    p.write_text(text, encoding="utf-8")
    (project / ".rulegen-sums/gone.sum.yaml").write_text(sums.render("rules/gone.yaml", {"runbooks/gone.md": text}),
                                                         encoding="utf-8")
    return p


def test_stale_generated_file_is_reported_and_removed_by_build(project, capsys):
    stale = _stale_page(project)
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1
    assert out.splitlines() == [
        "stale: .rulegen-sums/gone.sum.yaml: generated from rules/gone.yaml, which no longer produces it; "
        "`rulegen build` removes it",
        "stale: runbooks/gone.md: generated from rules/gone.yaml, which no longer produces it; "
        "`rulegen build` removes it",
        "check: 0 file(s) differ, 2 stale, 0 edited by hand, 0 leftover temp file(s); "
        "run `rulegen build` and commit the result",
    ]
    code, out, _ = run(capsys, "-C", str(project), "build")
    assert code == 0 and "removed runbooks/gone.md" in out.splitlines()
    assert "removed .rulegen-sums/gone.sum.yaml" in out.splitlines()
    assert not stale.exists()


def test_hand_edited_stale_file_is_refused(project, capsys):
    """A stale file has no planned content: when its spec's sum no longer matches, every file
    the sum lists is refused, as rulegen cannot tell which was edited."""
    stale = _stale_page(project)
    stale.write_text(stale.read_text(encoding="utf-8") + "A person's line.\n", encoding="utf-8")
    code, out, err = run(capsys, "-C", str(project), "build")
    assert code == 1 and (f"rulegen: runbooks/gone.md: differs from what rulegen wrote, so it may have been edited by hand; refusing to "
                          "overwrite (the files made from rules/gone.yaml no longer match what rulegen wrote, "
                          "recorded in .rulegen-sums/gone.sum.yaml)") in err
    assert stale.exists()


def test_stale_file_of_an_older_rulegen_is_judged_by_its_checksum_line(project, capsys):
    """Migration: a stale page carrying the checksum line of an older rulegen (no sum file) is
    removed when the line matches, refused when not."""
    body = "\n".join([ownership.comment("markdown", ownership.notice("rules/gone.yaml")), "# gone", ""])
    first, rest = body.split("\n", 1)
    line = ownership.comment("markdown", f"rulegen-checksum: sha256:{ownership.digest(body)}")
    p = project / "runbooks/gone.md"
    p.write_text(f"{first}\n{line}\n{rest}".replace("# gone", "# gone, edited"), encoding="utf-8")
    code, _, err = run(capsys, "-C", str(project), "build")
    assert code == 1 and "runbooks/gone.md: edited by hand since rulegen generated it; refusing to overwrite (its " \
        "body no longer matches the rulegen-checksum line an older rulegen wrote into it)" in err
    p.write_text(f"{first}\n{line}\n{rest}", encoding="utf-8")
    code, out, _ = run(capsys, "-C", str(project), "build")
    assert code == 0 and "removed runbooks/gone.md" in out.splitlines()


def test_partial_check_and_build_leave_other_specs_files_alone(project, capsys):
    """Regression: ``build rules/x.yaml`` took every other app's files for stale and removed
    them, and rewrote the home page and the alert index with that app only."""
    stale = _stale_page(project)
    before = snapshot(project)
    code, out, _ = run(capsys, "-C", str(project), "check", "rules/llama-swap.yaml")
    assert (code, out) == (0, "check: 12 generated file(s) up to date\n")
    code, out, _ = run(capsys, "-C", str(project), "build", "rules/llama-swap.yaml")
    assert (code, out) == (0, "1 spec(s): 0 file(s) written, 12 unchanged\noutputs: 1 chart rules file(s), "
                              "1 promtool test file(s), 1 runbook page(s); run `rulegen test` to run the promtool tests\n")
    assert stale.exists()
    assert snapshot(project) == before


def test_validation_error_fails_without_drift_check(project, capsys):
    spec_lines = (project / "rules/llama-swap.yaml").read_text(encoding="utf-8").splitlines()
    lineno = [i for i, line in enumerate(spec_lines, 1) if "for: 5m" in line][0]
    edit_spec_for(project, "for: 5m", "for: 1.5m")
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1
    assert out.splitlines()[-1] == ("check: validation failed; fix the errors above, then run "
                                    "`rulegen build` (drift was not checked)")
    assert f"rules/llama-swap.yaml:{lineno}:" in out and "--- a/" not in out


def test_no_rules_folder_is_usage_error(tmp_path, capsys):
    """Run from the repo (which has rules/): -C DIR without rules/ must not fall back to ./rules."""
    code, out, err = run(capsys, "-C", str(tmp_path), "check")
    assert (code, out) == (2, "")
    assert err.startswith("rulegen: no rules/ folder here")


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_leftover_temp_file_is_reported_and_build_removes_it(project, capsys):
    name = f".prometheusrule.yaml.{_dead_pid()}.abc123.rulegen-tmp"
    tmp = project / "charts/llama-swap/templates" / name
    tmp.write_text("apiVersion: v1\nkind: Trunc", encoding="utf-8")
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1
    assert (f"leftover: charts/llama-swap/templates/{name}: temp file of an interrupted build; "
            "`rulegen build` removes it") in out.splitlines()
    code, out, _ = run(capsys, "-C", str(project), "build")
    assert code == 0
    assert out.splitlines()[:2] == [f"removed leftover charts/llama-swap/templates/{name}",
                                    "1 spec(s): 0 file(s) written, 18 unchanged"]
    assert not tmp.exists()


def test_temp_file_of_a_live_build_is_kept(project):
    live = project / "runbooks" / f".index.md.{__import__('os').getpid()}.xyz.rulegen-tmp"
    live.write_text("half", encoding="utf-8")
    assert write.clean_temp_files(project) == []
    assert live.exists()


def test_link_findings_are_reported_by_check(project, capsys, monkeypatch):
    calls = []

    def check_links(outputs, specs, root):
        calls.append((sorted(o.path for o in outputs), [s.app for s in specs], root))
        return [Finding(PAGE, 3, 1, "RG799", Severity.ERROR, "broken link to #nowhere")]

    from rulegen.outputs import links
    monkeypatch.setattr(links, "check_links", check_links)
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1
    assert out.splitlines() == [f"{PAGE}:3:1: error RG799 broken link to #nowhere",
                                "1 error(s), 0 warning(s)",
                                "check: 18 generated file(s) up to date"]
    assert calls == [(sorted(GENERATED + SUMS + [LINK]), ["llama-swap"], project)]


def test_unified_diff_format():
    assert unified_diff("x.yaml", "a\nb\n", "a\nc\n") == (
        "--- a/x.yaml\n+++ b/x.yaml\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n")
    assert unified_diff("x.yaml", None, "a\n") == "--- /dev/null\n+++ b/x.yaml\n@@ -0,0 +1 @@\n+a\n"
    assert unified_diff("x.yaml", "a", "a\n") == (
        "--- a/x.yaml\n+++ b/x.yaml\n@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n")
    assert unified_diff("x.yaml", "same", "same") == ""


def test_source_of_reads_the_notice():
    assert ownership.source_of("# Code generated by rulegen from rules/a.b.yaml. DO NOT EDIT.\n") == "rules/a.b.yaml"
    assert ownership.source_of("# hand written\n") is None


@pytest.mark.parametrize("path", GENERATED[:1] + GENERATED[3:4] + GENERATED[5:-4] + GENERATED[-1:])
def test_every_owned_output_starts_with_the_notice_and_its_sum_lists_it(project, path):
    """Issue 29: the notice, no checksum line (what rulegen wrote is in the app's or the site's
    sum file)."""
    from rulegen.render import sums
    text = (project / path).read_text(encoding="utf-8")
    first, second = text.splitlines()[:2]
    assert "Code generated by rulegen from rules/" in first and first.rstrip(" -*/}>").endswith("DO NOT EDIT.")
    assert "checksum" not in text and ownership.stored_checksum(text) is None
    assert ownership.is_generated(text)
    listed = sums.parse((project / (SUM if "llama-swap" in path else SITE_SUM)).read_text(encoding="utf-8")).files
    assert path in listed


@pytest.mark.parametrize("path", [HELM_TEMPLATE, HELPERS, LIBRARY_CHART])
def test_copied_chart_templates_carry_the_notice_and_a_hand_edit_is_refused(project, capsys, path):
    """The template and the chart library are copied from rulegen's package: their notice
    names the package file, and a hand edit is detected like any other generated file's."""
    text = (project / path).read_text(encoding="utf-8")
    first = text.splitlines()[0]
    name = path.rsplit("/", 1)[1]
    if name == "Chart.yaml":
        assert first == "# Code generated by rulegen from rulegen's templates/helm/Chart.yaml. DO NOT EDIT."
    else:
        assert first == "{{- /* Code generated by rulegen from rulegen's templates/helm/" + name + ". DO NOT EDIT. */}}"
    assert "checksum" not in text and ownership.is_generated(text)
    edit = {"Chart.yaml": ("version: 3.0.0", "version: 3.0.1"),
            "prometheusrule.yaml": ("{{- include ", "{{- include  ")}.get(name, ("{{- end }}", "{{- end}}"))
    (project / path).write_text(text.replace(*edit, 1), encoding="utf-8")
    code, out, _ = run(capsys, "-C", str(project), "check")
    source, listing = ("rules/llama-swap.yaml", SUM) if "llama-swap" in path else \
        ("rulegen's templates/helm/", ".rulegen-sums/_library.sum.yaml")
    assert code == 1 and (f"hand-edited: {path}: differs from what rulegen wrote, so it may have been changed by hand (the files made from "
                          f"{source} no longer match what rulegen wrote, recorded in {listing}); move the change ") in out


# -- outputs and shared files that are not regular files ------------------------------------

def test_a_generated_path_that_is_a_folder_stops_build_before_it_writes_anything(project, capsys):
    # regression: build wrote the outputs before it, then failed on the folder
    edit_spec_for(project)  # the template and others change too
    test_file = project / "charts/llama-swap/tests/llama-swap.test.yaml"
    test_file.unlink()
    test_file.mkdir()
    before = snapshot(project)
    # the test file is missing, so the app's other files cannot be checked against their sum:
    # the ones the spec edit changes are refused, the message naming the missing file
    code, out, err = run(capsys, "-C", str(project), "build")
    assert code == 1 and out == ""
    assert (f"rulegen: {TEMPLATE}: edited by hand since rulegen generated it; refusing to overwrite "
            f"(charts/llama-swap/tests/llama-swap.test.yaml, listed in {SUM}, is missing (deleted by hand?), "
            "so the files made from rules/llama-swap.yaml cannot be checked against what rulegen wrote; restore "
            "it)") in err.splitlines()[0]
    code, out, err = run(capsys, "-C", str(project), "build", "--force")
    assert code == 2 and out == ""
    assert ("charts/llama-swap/tests/llama-swap.test.yaml cannot be written: it, or a folder on its "
            "path, exists as something else (a folder, a FIFO, a dangling symlink...); remove or rename "
            "that (nothing was written)") in err
    assert snapshot(project) == before


def test_a_dangling_symlink_in_place_of_a_folder_stops_build_before_it_writes_anything(project, capsys):
    edit_spec_for(project)
    tests_dir = project / "charts/llama-swap/tests"
    for f in tests_dir.iterdir():
        f.unlink()
    tests_dir.rmdir()
    tests_dir.symlink_to(project / "nowhere")
    before = snapshot(project)
    assert run(capsys, "-C", str(project), "build")[0] == 1  # the test file is missing: see above
    code, _, err = run(capsys, "-C", str(project), "build", "--force")
    assert code == 2 and "charts/llama-swap/tests/llama-swap.test.yaml cannot be written" in err
    assert snapshot(project) == before


@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_a_shared_file_that_is_not_a_regular_file_is_rg701(project, capsys, kind):
    import os
    values = project / "charts/llama-swap/values.yaml"
    values.unlink()
    if kind == "folder":
        values.mkdir()
    else:
        os.mkfifo(values)  # opening it would wait for a writer forever
    before = snapshot(project)
    for cmd in ("check", "build"):
        code, out, err = run(capsys, "-C", str(project), cmd)
        assert code == 1, cmd
        if kind == "fifo":  # validation refuses special files in a chart first (RG760, issue 23)
            assert "charts/llama-swap/values.yaml:0:0: error RG760 charts/llama-swap/values.yaml is a FIFO" in out + err
        else:
            assert "RG701" in out + err and "values.yaml exists but is not a regular file" in out + err
    assert snapshot(project) == before


def test_mkdocs_yml_that_is_a_folder_is_a_usage_error(project, capsys):
    (project / "mkdocs.yml").unlink()
    (project / "mkdocs.yml").mkdir()
    for cmd in ("check", "build"):
        code, _, err = run(capsys, "-C", str(project), cmd)
        assert code == 2 and "mkdocs.yml exists but is not a regular file" in err


def test_a_write_that_fails_half_way_leaves_everything_as_it_was(project, capsys, monkeypatch):
    # regression: a permission error or full disk on one output left the earlier ones written
    import errno

    from rulegen.fs import write
    edit_spec_for(project)  # several outputs change
    (project / "rules/newapp.yaml").write_text(
        (project / "rules/llama-swap.yaml").read_text().replace("app: llama-swap", "app: newapp")
        .replace("LlamaSwap", "NewApp").replace("path: charts/llama-swap", "path: charts/newapp")
        .replace("name: llama-swap", "name: newapp"), encoding="utf-8")
    before = snapshot(project)
    real, calls = write._stage, []

    def stage(path, content):
        calls.append(path)
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, content)

    monkeypatch.setattr(write, "_stage", stage)
    code, out, err = run(capsys, "-C", str(project), "build")
    assert len(calls) == 4 and code == 2
    assert "No space left on device (nothing was written)" in err
    assert snapshot(project) == before  # no file changed, no temp file, no new chart folder
    assert not (project / "charts/newapp").exists()


def test_an_output_folder_that_cannot_be_made_stops_build_before_it_writes_anything(project, capsys):
    # a chart path through a symlink to /proc: the folder cannot be made, even by root. The
    # link leads outside the project, so validation stops the build (RG742) before any write,
    # and the writer alone would refuse it too (RG747, tests/validate/test_paths.py)
    (project / "zz").symlink_to("/proc/self")
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text().replace("path: charts/llama-swap", "path: zz/chart"), encoding="utf-8")
    edit_spec_for(project)
    before = snapshot(project)
    code, _, err = run(capsys, "-C", str(project), "build")
    assert code == 1 and "error RG742 chart folder zz/chart leads outside the project: zz is a symlink to " \
        "/proc/self" in err and "nothing was written" in err
    assert snapshot(project) == before
