"""Issue 23, what a PR can put on the runbook site and in a reader's terminal (classes 4, 5, 8):

* class 4: markup in a page's hand-written team notes is escaped as spec Markdown is (RG721),
  and an alert name holding ``<!--``, ``-->``, ``--`` or a line break keeps its notes slot;
* class 5: a triage variable the page fills from its link must be a plain name (RG514), and
  values from the URL lose their control characters (rulegen.js, run by node);
* class 8: whatever fails ``mkdocs build --strict`` fails ``rulegen check`` first (RG715,
  RG719), proven against mkdocs itself.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.gitops import ownership
from rulegen.render import safe
from rulegen.spec import triage
from rulegen.validate import validate_texts

from helpers import REPO
from helpers.site import mkdocs_build

TOKEN = "rgxss"  # in every attack below, so the built HTML can be searched for it

ATTACKS = (
    f"<script>alert('{TOKEN}1')</script>",
    f"<img src=x onerror=alert('{TOKEN}2')>",
    f"[click](javascript:alert('{TOKEN}3'))",
    f"[entity](&#106;avascript:alert('{TOKEN}4'))",
    f"<iframe src=\"https://evil.example.com/{TOKEN}5\"></iframe>",
    f"<a href=\"vbscript:msgbox('{TOKEN}6')\">x</a>",
    f"[data](data:text/html;base64,{TOKEN}7)",
    f"<style>body {{ background: url(https://evil.example.com/{TOKEN}8) }}</style>",
    f"<!-- hidden {TOKEN}9 -->",
    f"Paragraph {{ onclick=alert('{TOKEN}10') }}",
    f"[ref][r{TOKEN}]\n\n[r{TOKEN}]: javascript:alert('{TOKEN}11')",
    f"<details open ontoggle=alert('{TOKEN}12')><summary>x</summary></details>",
)


def _set_notes(page: Path, slot: str, text: str) -> None:
    s = page.read_text()
    marker = f"<!-- notes:{ownership.slot_marker(slot)} -->\n"
    assert marker in s, marker
    i = s.index(marker) + len(marker)
    j = s.index("<!-- /notes -->", i)
    page.write_text(s[:i] + text + s[j:])


def _check(project, capsys) -> tuple[int, str]:
    capsys.readouterr()
    rc = main(["-C", str(project), "check"])
    return rc, capsys.readouterr().out


class _Live(HTMLParser):
    """What in an HTML page could run or lead the browser astray, among elements and attributes
    that carry :data:`TOKEN`: script-like elements, ``on*`` attributes, URLs with a scheme other
    than http(s)/mailto; plus every ``on*`` attribute and non-http(s) URL of the page at all."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.live: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.live.append(f"{name} on <{tag}>")
            if name in ("href", "src", "action", "formaction", "data") and not safe.link_ok(value):
                self.live.append(f"{name}={value!r} on <{tag}>")
            if TOKEN in value and tag in ("iframe", "script", "style", "object", "embed"):
                self.live.append(f"<{tag}> with {value!r}")
        self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in self.stack:
            del self.stack[len(self.stack) - 1 - self.stack[::-1].index(tag):]

    def handle_data(self, data):
        if TOKEN in data and self.stack and self.stack[-1] in ("script", "style", "iframe", "noscript"):
            self.live.append(f"{TOKEN} inside <{self.stack[-1]}>")

    def handle_comment(self, data):
        if TOKEN in data:
            self.live.append(f"{TOKEN} hidden in a comment")


def live_markup(html_text: str) -> list[str]:
    p = _Live()
    p.feed(html_text)
    p.close()
    return p.live


# --- class 4: team notes ------------------------------------------------------------------------

def test_notes_with_script_are_reported_escaped_by_build_and_inert_on_the_site(project, tmp_path, capsys):
    page = project / "runbooks/llama-swap.md"
    notes = "\n\n".join(ATTACKS) + "\n"
    _set_notes(page, "LlamaSwapDown", notes)
    _set_notes(page, "page", f"<img src=x onerror=alert('{TOKEN}13')>\n")
    _set_notes(project / "runbooks/index.md", "home", f"<script>alert('{TOKEN}14')</script>\n")
    line = page.read_text().split("\n").index(ATTACKS[0]) + 1

    rc, out = _check(project, capsys)
    assert rc == 1, out
    assert f"runbooks/llama-swap.md:{line}:1: warning RG721 team notes of alert 'LlamaSwapDown' hold markup" in out
    assert "<script> element" in out and "the note's markup will be escaped" in out
    assert re.search(r"runbooks/llama-swap\.md:\d+:1: warning RG721 team notes 'page'", out)
    assert re.search(r"runbooks/index\.md:\d+:1: warning RG721 team notes 'home'", out)
    assert "check: 2 file(s) differ" in out  # the pages build would write, escaped

    assert main(["-C", str(project), "build"]) == 0
    text = page.read_text()
    assert "&lt;script>alert('rgxss1')&lt;/script>" in text
    assert "[click]\\(javascript:alert('rgxss3'))" in text
    assert "<script" not in text and "<img" not in text and "<iframe" not in text
    rc, out = _check(project, capsys)
    assert rc == 0 and "RG721" not in out, out  # escaped notes are kept as they are

    site = tmp_path / "site"
    r = mkdocs_build(project, site)
    assert r.returncode == 0, r.stderr
    for html_file in (site / "llama-swap/index.html", site / "index.html"):
        html_text = html_file.read_text()
        assert TOKEN in html_text  # the notes are on the page, as text
        assert live_markup(html_text) == [], html_file


def test_notes_sanitiser_is_the_spec_markdown_one_and_idempotent():
    for attack in ATTACKS:
        once = safe.notes_markdown("\n" + attack + "\n")
        assert once.strip() == safe.spec_markdown(attack)
        assert safe.notes_markdown(once) == once
        assert safe.html_problems(safe.to_html(once)) == []
    assert safe.notes_markdown("Call the **on-call** lead, see [wiki](https://wiki.example.com).\n") == \
        "Call the **on-call** lead, see [wiki](https://wiki.example.com).\n"
    with safe.html_policy(True):  # a project that allows HTML: nh3 cleans notes as it cleans specs
        assert safe.notes_markdown("<b>bold</b> <script>x</script>\n") == "<b>bold</b> \n"


ODD_NAMES = ("Odd<!--Name", "X(>85%)", "A--B -- C", "Dash-", "A--B --> C", "Line\u2028Break", "Tab\tName")
#: what a spec may name an alert (``-->`` in a name is RG749 in validation; the marker is safe anyway)
SPEC_NAMES = ODD_NAMES[:4]


@pytest.mark.parametrize("name", ODD_NAMES)
def test_slot_marker_is_safe_for_every_name(name):
    marker = ownership.slot_marker(name)
    assert ownership.slot_name(marker) == name
    assert not re.search(r"--|<|>|[\x00-\x1f\x7f-\x9f\u2028\u2029]", marker)
    page = f"<!-- notes:{marker} -->\nkept\n<!-- /notes -->\n"
    assert ownership.notes(page) == {name: "kept\n"}
    # each marker is one HTML comment to Python-Markdown, and the notes between them a paragraph
    assert safe.to_html(page) == f"<!-- notes:{marker} -->\n<p>kept</p>\n<!-- /notes -->"


def test_an_alert_name_with_comment_markers_keeps_its_notes_across_builds(project, tmp_path, capsys):
    spec = project / "rules/llama-swap.yaml"
    extra = "".join(f"""      - alert: {json.dumps(name)}
        expr: up{{job="odd{i}"}} == 0
        for: 5m
        severity: warning
        summary: odd {i}
        description: odd {i}
""" for i, name in enumerate(SPEC_NAMES))
    text = spec.read_text()
    at = text.index("    rules:\n", text.index("- name: llama-swap")) + len("    rules:\n")
    spec.write_text(text[:at] + extra + text[at:])
    assert main(["-C", str(project), "build"]) == 0
    page = project / "runbooks/llama-swap.md"
    for i, name in enumerate(SPEC_NAMES):
        _set_notes(page, name, f"note {i} of the odd alert\n")
    assert main(["-C", str(project), "build"]) == 0
    assert main(["-C", str(project), "build"]) == 0
    kept = ownership.notes(page.read_text())
    for i, name in enumerate(SPEC_NAMES):
        assert kept[name] == f"note {i} of the odd alert\n"
    rc, out = _check(project, capsys)
    assert rc == 0 and "RG720" not in out, out
    site = tmp_path / "site"
    r = mkdocs_build(project, site)
    assert r.returncode == 0, r.stderr
    html_text = (site / "llama-swap/index.html").read_text()
    for i in range(4):
        assert f"note {i} of the odd alert" in html_text  # no marker swallowed its notes
    assert 'id="llamaswapdown"' in html_text


# --- class 5: code that runs after paste ----------------------------------------------------------

_SPEC = """\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: max by (namespace, pod) (up{job="demo"}) == 0
        for: 5m
        severity: critical
        summary: down
        description: down
        runbook:
@RUNBOOK@
"""


def _rg514(runbook: str) -> list[tuple[int, int, str]]:
    text = _SPEC.replace("@RUNBOOK@\n", "".join(f"          {x}\n" for x in runbook.splitlines()))
    r = validate_texts({"rules/demo.yaml": text})
    return [(f.line, f.col, f.message) for f in r.findings if f.code == "RG514"]


@pytest.mark.parametrize("var", ["PROMPT_COMMAND", "PS1", "PS4", "BASH_ENV", "LD_PRELOAD", "LD_AUDIT",
                                 "HISTFILE", "HTTPS_PROXY", "GIT_SSH_COMMAND"])
def test_a_special_variable_in_a_command_is_rg514(var):
    found = _rg514(f"diagnosis:\n  - commands: |\n      kubectl logs -n \"$NAMESPACE\" \"${var}\"")
    assert len(found) == 1, found
    line, col, msg = found[0]
    assert (line, col) == (14, 47)  # the $ of the variable
    assert msg.startswith(f"${var} is filled by the runbook page from its link (?{var.lower()}=...)")
    assert "name the variable plainly" in msg


@pytest.mark.parametrize("var", ["IFS", "PATH", "ENV", "CDPATH", "PS1", "LD_PRELOAD"])
def test_a_special_declared_variable_is_rg514(var):
    found = _rg514(f"variables: {{{var}: pod}}\ndiagnosis:\n  - commands: kubectl logs \"$POD\"")
    assert [(line, m.split(" is filled")[0]) for line, _, m in found] == [(12, f"${var}")]
    assert f"(?pod=...)" in found[0][2]


def test_a_special_silence_matcher_variable_is_rg514():
    found = _rg514("variables: {BASH_ENV: pod}\nsilence: {when: x, matchers: {pod: $BASH_ENV}}")
    assert sorted(line for line, _, _ in found) == [12, 13]


def test_plain_variables_pass():
    assert _rg514("variables: {ALERT_POD: pod}\ndiagnosis:\n  - commands: |\n"
                  "      kubectl logs -n \"$NAMESPACE\" \"$ALERT_POD\" \"$POD\"") == []
    for name in ("NAMESPACE", "POD", "NAME", "DEPLOYMENT", "CONTROLLER_NS", "ENGINE_POD", "LLMSERVICE"):
        assert triage.unplain_reason(name) is None, name
    for name in ("path", "PROMPT_COMMAND", "ps4", "Bash_Env", "ld_library_path", "http_proxy", "_X", "A-B",
                 "ZDOTDIR", "PYTHONSTARTUP", "NODE_OPTIONS", "X" * 65):
        assert triage.unplain_reason(name) is not None, name


def _node_js():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    script = (REPO / "templates/rulegen.js").read_text()
    harness = ("const m = {exports: {}};\n"
               "new Function('module', 'window', 'document', require('fs').readFileSync(0, 'utf8'))(m, {}, {});\n"
               "const v = JSON.parse(process.argv[1]);\n"
               "process.stdout.write(JSON.stringify(v.map(x => m.exports.quote(m.exports.clean(x)))));\n")
    return node, script, harness


def test_values_from_the_url_lose_control_characters():
    node, script, harness = _node_js()
    values = ["ai\x1b[201~\nid", "a\x9b31mb", "x\ry\tz\x00\x7f", "p\u2028q\u2029r", "it's", "\u202eevil", "ok-1"]
    r = subprocess.run([node, "-e", harness, json.dumps(values)], input=script, capture_output=True,
                       text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ["'ai[201~id'", "'a31mb'", "'xyz'", "'pqr'", "'it'\\''s'", "'evil'", "'ok-1'"]
    for quoted in json.loads(r.stdout):  # one shell word each, nothing that runs
        out = subprocess.run(["bash", "--norc", "-c", f"printf %s {quoted}"], capture_output=True, text=True,
                             env={"PATH": "/usr/bin:/bin"})
        assert out.returncode == 0 and "\n" not in out.stdout


# --- class 8: a broken image stops the site's deploy, so it stops check -----------------------------

def test_a_broken_image_in_notes_fails_check_as_it_fails_mkdocs(project, tmp_path, capsys):
    """The full differential (every kind of link mkdocs --strict fails on) is in
    tests/gitops/test_links_differential.py; this is the issue's example."""
    assert main(["-C", str(project), "build"]) == 0
    page = project / "runbooks/llama-swap.md"
    _set_notes(page, "LlamaSwapDown", "Latency: ![graph](img/latency.png)\n")
    line = page.read_text().split("\n").index("Latency: ![graph](img/latency.png)") + 1
    r = mkdocs_build(project, tmp_path / "site")
    assert r.returncode != 0 and "img/latency.png" in r.stderr
    rc, out = _check(project, capsys)
    assert rc == 1
    assert (f"runbooks/llama-swap.md:{line}:19: error RG719 image img/latency.png shows a file the site does not "
            "have (runbooks/img/latency.png)") in out, out
    (project / "runbooks/img").mkdir()
    (project / "runbooks/img/latency.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    rc, out = _check(project, capsys)
    assert rc == 0, out
    assert mkdocs_build(project, tmp_path / "site2").returncode == 0
