"""Team notes of a renamed or removed alert are never dropped (regression: they were lost)."""

from __future__ import annotations

from rulegen.cli import main
from rulegen.render import ownership


def test_notes_of_a_renamed_alert_move_to_the_page_slot(project, capsys):
    assert main(["-C", str(project), "build"]) == 0
    page = project / "runbooks/llama-swap.md"
    text = page.read_text()
    note = "IMPORTANT TEAM NOTE: call Bob.\n"
    page.write_text(text.replace("<!-- notes:LlamaSwapNoMetrics -->\n",
                                 "<!-- notes:LlamaSwapNoMetrics -->\n" + note, 1))
    spec = project / "rules/llama-swap.yaml"
    spec.write_text(spec.read_text().replace("LlamaSwapNoMetrics", "LlamaSwapMetricsMissing"))
    capsys.readouterr()
    assert main(["-C", str(project), "build"]) == 0
    err = capsys.readouterr().err
    assert ("runbooks/llama-swap.md:1:1: warning RG720 team notes of `LlamaSwapNoMetrics`, which the "
            "page no longer has") in err
    after = page.read_text()
    assert ("<!-- notes:page -->\n**Notes kept from `LlamaSwapNoMetrics`, which this page no longer has:**"
            "\n\nIMPORTANT TEAM NOTE: call Bob.\n\n<!-- /notes -->") in after
    assert ownership.stored_checksum(after) is None and ownership.is_generated(after)
    # the next build finds the note in the page slot: nothing moves again, nothing is written
    capsys.readouterr()
    assert main(["-C", str(project), "build"]) == 0
    out = capsys.readouterr()
    assert "RG720" not in out.err and "0 file(s) written" in out.out
    assert page.read_text() == after


def test_fill_notes_without_a_catch_all_slot_appends_one():
    text = "<!-- notes:A -->\n<!-- /notes -->\n"
    out, moved = ownership.fill_notes(text, {"B": "keep me\n", "C": "  \n"})
    assert moved == ["B"]
    assert out == ("<!-- notes:A -->\n<!-- /notes -->\n\n<!-- notes:page -->\n"
                   "**Notes kept from `B`, which this page no longer has:**\n\nkeep me\n\n<!-- /notes -->\n")
