"""Line endings of generated files are compared as bytes (see rulegen.gitops.write.read): a
CRLF copy of a generated file is drift in ``rulegen check`` — Helm, Argo CD and promtool would
get other bytes than rulegen made — and ``rulegen build`` rewrites it with ``\\n`` without
``--force`` (a line-ending conversion is not a hand edit). Shared files keep their own endings."""

from __future__ import annotations

from rulegen.cli import main
from rulegen.gitops import write

from helpers.gitops import GENERATED, PAGE, TEMPLATE, project, run  # noqa: F401  (fixture)


def _to_crlf(path):
    data = path.read_bytes()
    assert b"\r\n" not in data
    path.write_bytes(data.replace(b"\n", b"\r\n"))
    return data


def test_crlf_checkout_of_a_generated_file_is_drift_and_build_restores_lf(project, capsys):
    lf_template = _to_crlf(project / TEMPLATE)
    lf_page = _to_crlf(project / PAGE)
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1
    lines = out.splitlines()
    assert f"--- a/{TEMPLATE}" in lines and f"--- a/{PAGE}" in lines
    assert not any(line.startswith("hand-edited:") for line in lines)
    assert lines[-1] == ("check: 2 file(s) differ, 0 stale, 0 edited by hand, 0 leftover temp "
                         "file(s); run `rulegen build` and commit the result")
    st = write.compare(*_plan(project), root=project)
    assert (sorted(st.changed), st.hand_edited) == (sorted([TEMPLATE, PAGE]), [])

    assert run(capsys, "-C", str(project), "build")[0] == 0  # no --force needed
    assert (project / TEMPLATE).read_bytes() == lf_template
    assert (project / PAGE).read_bytes() == lf_page
    assert run(capsys, "-C", str(project), "check")[:2] == (0, "check: 18 generated file(s) up to date\n")


def test_crlf_generated_file_with_a_real_hand_edit_is_still_refused(project, capsys):
    p = project / TEMPLATE
    _to_crlf(p)
    p.write_bytes(p.read_bytes().replace(b"llama-swap has no available replica.", b"edited."))
    code, out, _ = run(capsys, "-C", str(project), "check")
    assert code == 1 and f"hand-edited: {TEMPLATE}: differs from what rulegen wrote, so it may have been changed by hand" in out
    assert run(capsys, "-C", str(project), "build")[0] == 1


def test_crlf_shared_files_are_up_to_date(project, capsys):
    for rel in ("charts/llama-swap/values.yaml", "charts/llama-swap/values.schema.json", "mkdocs.yml"):
        _to_crlf(project / rel)
    assert run(capsys, "-C", str(project), "check")[:2] == (0, "check: 18 generated file(s) up to date\n")
    before = {rel: (project / rel).read_bytes() for rel in GENERATED}
    assert run(capsys, "-C", str(project), "build")[0] == 0
    assert {rel: (project / rel).read_bytes() for rel in GENERATED} == before


def test_read_keeps_line_endings(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"a\r\nb\rc\n")
    assert write.read(p) == "a\r\nb\rc\n"
    assert write.read(tmp_path / "missing") is None


def _plan(project):
    from rulegen.pipeline import load_project, plan_project
    loaded = load_project(project, None)
    outputs, _ = plan_project(loaded, "helm")
    return (outputs,)
