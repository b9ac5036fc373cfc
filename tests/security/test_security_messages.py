"""Adversarial review of the RG202/RG204 messages that offer a concrete fix built from the bad
value (a spec of a pull request): what they compute from the spec's text stays linear in it."""

from __future__ import annotations

import subprocess
import sys
import time

from helpers import REPO

SPEC = """\
app: shop
groups:
  - name: shop
    rules:
      - alert: ShopDown
        expr: up{job="shop"} == 0
        severity: warning
        summary: Shop is down
        description: No shop target is up.
        runbook:
          resolution:
            - If a release started it: roll it back%s
"""


def test_long_runs_of_spaces_are_reported_in_seconds(tmp_path):
    """Reading the text of a value for a message cut a trailing comment with ``\\s+#``, which
    backtracks over each run of spaces: quadratic in it. RG202 names the ``: `` that made YAML
    read a mapping and quotes the line (a 200 KB line took 36 s of CPU), RG302 quotes a
    number written for a duration (``for: 5`` and 100 KB of spaces: 10 s); a spec may have
    512 KB, every spec of a pull request as much."""
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "shop.yaml").write_text(SPEC % (" " * 500_000 + "x  # a note"), encoding="utf-8")
    duration = SPEC.replace("app: shop", "app: cart").replace("Shop", "Cart") % ""
    duration = duration.replace("        severity:", "        for: 5" + " " * 500_000 + "\n        severity:")
    (tmp_path / "rules" / "cart.yaml").write_text(duration, encoding="utf-8")
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "rulegen", "-C", str(tmp_path), "validate"], capture_output=True,
                          text=True, timeout=900, cwd=REPO, stdin=subprocess.DEVNULL)
    took = time.monotonic() - start
    assert proc.returncode == 1, proc.stderr[-2000:]
    assert "shop.yaml:12:" in proc.stdout and "RG202" in proc.stdout, proc.stdout[:2000]
    assert "the `: ` after `it` makes YAML read a mapping" in proc.stdout
    assert "cart.yaml:7:" in proc.stdout and "RG302 [CartDown] `for`: 5 is a number" in proc.stdout, proc.stdout[:2000]
    assert took < 60, took


def test_the_trap_message_cuts_the_comment_as_before():
    """The comment after the value is left out of the line to quote, as the pattern did: from
    the first run of white space before a ``#``."""
    from rulegen.spec.yamlnodes import without_comment as _without_comment
    for text in ["wait: 5m  # a note", "wait: 5m", "a#b: c # d # e", "x:  \t# c", "  # only", "a: 'b # c'"]:
        import re
        assert _without_comment(text) == re.sub(r"\s+#.*$", "", text).rstrip(), text


def test_json_findings_carry_no_character_a_terminal_acts_on(tmp_path, capsys):
    """RG204's fix for a URL echoes the value with its spaces encoded and everything else as
    written: the text and GitHub formats escape what a terminal acts on, but ``-o json``
    (``ensure_ascii=False``) wrote a right-to-left override and the C1 control U+009B (a
    one-byte CSI: ``\\x9b31m`` colours what follows) as they are, for a CI log that prints it."""
    import json

    from rulegen.cli import main
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "shop.yaml").write_text(
        SPEC.split("        runbook:")[0] + '        runbook:\n          links:\n'
        '            - {title: t, url: "https://a b\\u202e\\u009b31m\\U000e0041"}\n', encoding="utf-8")
    assert main(["-C", str(tmp_path), "validate", "-o", "json"]) == 1
    out = capsys.readouterr().out
    hidden = [c for c in out if not (c.isprintable() or c == "\n")]
    assert not hidden, hidden
    messages = [f["message"] for f in json.loads(out)["findings"] if f["code"] == "RG204"]
    assert messages and "\u202e\x9b31m\U000e0041" in messages[0]  # the same text, escaped in the JSON


def test_json_escapes_exactly_the_characters_a_terminal_acts_on_line_by_line():
    """The JSON format escapes each non-printable character where it stands, whatever line of
    the document it is on, and leaves printable non-ASCII text and the other lines as they
    are (it decides line by line: most lines of a large report have nothing to escape)."""
    import json

    from rulegen.findings import Finding, Severity
    from rulegen.formatters.json_format import render
    plain = Finding("rules/a.yaml", 1, 2, "RG204", Severity.ERROR, "é 漢字 fine", "A")
    odd = Finding("rules/b.yaml", 3, 4, "RG204", Severity.WARNING, "x\u2028y\x85z\u202e\x9b\U000e0041!", "B")
    text = render([plain, odd, plain])
    assert '"message": "x\\u2028y\\u0085z\\u202e\\u009b\\udb40\\udc41!"' in text
    assert text.count('"message": "é 漢字 fine"') == 2
    assert all(line.isprintable() for line in text.split("\n"))
    assert [f["message"] for f in json.loads(text)["findings"]] == [plain.message, odd.message, plain.message]
