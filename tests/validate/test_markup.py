"""Nothing in a spec runs in the reader's browser: every kind of runbook field, built for real.

A spec puts a ``<script>``, an ``onerror=`` attribute and a ``javascript:`` link into every
kind of runbook field (app intro, context block title/markdown/after, table columns and cells,
facts, section blocks, alert explanation, causes, resolution, diagnosis title/markdown/after,
related-alert notes). The site is built with ``mkdocs build --strict`` and the built HTML is
parsed: no script element holds a payload, no element has an ``on*`` attribute, no link or
image leads to a ``javascript:`` (or any non-http) URL, and each payload is on the page as
text, so every field was really rendered.
"""

from __future__ import annotations

import html
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from rulegen.cli import main
from rulegen.gitops import write
from rulegen.pipeline import load_project, plan_project
from rulegen.render import safe

from helpers import REPO, flat
from helpers.site import mkdocs_build

FIELDS = ("intro", "ctx-title", "ctx-markdown", "ctx-after", "table-column", "table-cell", "fact-name",
          "fact-value", "section-markdown", "explanation", "cause", "resolution", "diag-title",
          "diag-markdown", "diag-after", "related-note")

SPEC = """\
app: demo
runbook:
  intro: {intro}
  context:
    - title: {ctx-title}
      markdown: {ctx-markdown}
      after: {ctx-after}
    - table:
        columns: [{table-column}]
        rows: [[{table-cell}]]
  facts:
    - name: {fact-name}
      value: {fact-value}
  sections:
    - title: More
      blocks:
        - markdown: {section-markdown}
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        severity: critical
        summary: Down.
        description: Down.
        runbook:
          explanation: {explanation}
          causes: [{cause}]
          resolution: [{resolution}]
          diagnosis:
            - title: {diag-title}
              markdown: {diag-markdown}
              after: {diag-after}
          related:
            - alert: DemoDown
              note: {related-note}
"""


def script(f: str) -> str:
    return f'{f} <script>alert("{f}")</script> <img src=x onerror=alert("{f}-img")>'


def js_link(f: str) -> str:
    return f'[{f}](javascript:alert("{f}"))'


def spec_text(payload) -> str:
    text = SPEC
    for f in FIELDS:
        text = text.replace("{" + f + "}", json.dumps(payload(f)))
    return text


def make(tmp_path: Path, payload) -> Path:
    root = tmp_path / "proj"
    (root / "rules").mkdir(parents=True)
    shutil.copy(REPO / "mkdocs.yml", root / "mkdocs.yml")
    (root / "rules" / "demo.yaml").write_text(spec_text(payload), encoding="utf-8")
    return root


class Page(HTMLParser):
    """What in a built page could run: script elements, on* attributes, URLs; and its text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[dict, str]] = []
        self.handlers: list[tuple[str, str]] = []
        self.urls: list[tuple[str, str]] = []
        self.frames: list[str] = []
        self.text: list[str] = []
        self._in_script = None
        self._article = 0
        self.article_scripts = 0
        self.articles = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "article":
            self._article += 1
            self.articles += 1
        if tag == "script":
            self._in_script = (a, [])
            self.article_scripts += self._article > 0
        if tag in ("iframe", "object", "embed", "frame"):
            self.frames.append(tag)
        for name, value in attrs:
            if name.startswith("on"):
                self.handlers.append((tag, name))
            if name in ("href", "src", "action", "formaction", "xlink:href"):
                self.urls.append((tag, value or ""))

    def handle_endtag(self, tag):
        if tag == "article":
            self._article -= 1
        if tag == "script" and self._in_script is not None:
            self.scripts.append((self._in_script[0], "".join(self._in_script[1])))
            self._in_script = None

    def handle_data(self, data):
        if self._in_script is not None:
            self._in_script[1].append(data)
        else:
            self.text.append(data)


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    p.close()
    return p


def assert_nothing_runs(page: Page) -> None:
    for attrs, body in page.scripts:  # mkdocs-material's own scripts only: around the page content
        assert "alert(" not in body, body
    assert page.articles == 1 and page.article_scripts == 0
    assert page.handlers == []
    assert page.frames == []
    for tag, url in page.urls:
        assert safe.link_ok(url), (tag, url)


def test_script_and_onerror_in_every_field_are_text_on_the_built_site(tmp_path, capsys):
    root = make(tmp_path, script)
    assert main(["-C", str(root), "build"]) == 0, capsys.readouterr()
    r = mkdocs_build(root, tmp_path / "site")
    assert r.returncode == 0, r.stderr
    page = parse(tmp_path / "site" / "demo" / "index.html")
    assert_nothing_runs(page)
    shown = html.unescape("".join(page.text))
    for f in FIELDS:  # every field reached the page, as the text it is
        assert f'<script>alert("{f}")</script>' in shown, f
        # (pages wrap at 120 characters: a text may go on over lines, read as one space)
        assert f'<img src=x onerror=alert("{f}-img")>' in flat(shown), f
    for other in ("index.html", "alerts/index.html", "search/search_index.json"):
        text = (tmp_path / "site" / other).read_text(encoding="utf-8")
        assert "<script>alert(" not in text and "onerror=alert" not in text.replace("onerror=alert(\\\"", "")


def test_javascript_links_in_every_field_are_refused_with_their_positions(tmp_path, capsys):
    root = make(tmp_path, js_link)
    lines = spec_text(js_link).splitlines()
    assert main(["-C", str(root), "build"]) == 1
    err = capsys.readouterr().err
    message = ("error RG746 {rule}Markdown link uses the javascript: scheme; runbook pages link only to "
               "http, https, mailto and relative addresses, so it would be shown as text, not a link: link "
               "to a web page instead")
    for f in FIELDS:
        n = next(i for i, line in enumerate(lines) if f'"[{f}](javascript' in line)
        col = lines[n].index(f'[{f}](javascript') + len(f"[{f}](") + 1
        rule = "" if FIELDS.index(f) < FIELDS.index("explanation") else "[DemoDown] "
        assert f"rules/demo.yaml:{n + 1}:{col}: " + message.format(rule=rule) in err, f
    assert err.count("RG746") == len(FIELDS)
    assert "nothing was written" in err
    assert not (root / "runbooks").exists()


def test_javascript_links_that_got_past_validation_are_text_on_the_built_site(tmp_path):
    """The renderer defuses them on its own: pages planned from the specs validation refused."""
    root = make(tmp_path, js_link)
    loaded = load_project(root)
    assert {f.code for f in loaded.findings} == {"RG746"}
    outputs, _ = plan_project(loaded)
    write.apply(outputs, root, write.compare(outputs, root))
    r = mkdocs_build(root, tmp_path / "site")
    assert r.returncode == 0, r.stderr
    page = parse(tmp_path / "site" / "demo" / "index.html")
    assert_nothing_runs(page)
    shown = html.unescape("".join(page.text))
    for f in FIELDS:
        assert f'[{f}](javascript:alert("{f}"))' in shown, f


@pytest.mark.parametrize("payload", [
    '<iframe src="https://evil.example"></iframe>', "<svg onload=alert(1)>", "x\n{: onclick=\"alert(1)\" }",
    "[a](https://x.example){ onclick=alert(1) }", "```{.sh onclick=alert(1)}\nls\n```",
    "[a](&#106;avascript:alert(1))", "[a](java\nscript:alert(1))", "[a](<javascript:alert(1)>)",
    "[a]: javascript:alert(1)\n\n[x][a]", "<javascript://%0aalert(1)>", "![x](data:text/html,hi)",
    "`a` <b onmouseover=alert(1)>x</b> \\`<i onclick=alert(1)>y</i>`", "```\n<script>alert(1)</script>",
    "<!-- notes:DemoDown -->", "<style>body{display:none}</style>",
])
@pytest.mark.parametrize("allow_html", [False, True])
def test_each_trick_renders_nothing_unsafe(payload, allow_html):
    with safe.html_policy(allow_html):
        for block in (True, False):
            out = safe.spec_markdown(payload, block=block)
            assert safe.html_problems(safe.to_html(out)) == [], out
            assert "<!--" not in out
        cell = safe.spec_cell(payload)
        assert safe.html_problems(safe.to_html("| a |\n|---|\n| " + cell + " |")) == []


def test_allowed_html_is_kept_when_the_project_allows_it(tmp_path, capsys):
    text = "<b>bold</b>, <kbd>Ctrl</kbd>, <a href=\"https://x.example\" onclick=\"x()\">x</a><script>alert(1)</script>"
    with safe.html_policy(True):
        out = safe.spec_markdown(text)
    assert out == ('<b>bold</b>, <kbd>Ctrl</kbd>, <a href="https://x.example" rel="noopener noreferrer">x</a>')
    with safe.html_policy(False):
        assert safe.spec_markdown(text).startswith("&lt;b>bold&lt;/b>")
    # and through the project config
    root = make(tmp_path, lambda f: f"<b>{f}</b><script>alert(1)</script>")
    (root / ".rulegen.yaml").write_text("runbooks:\n  allow_html: true\n")
    assert main(["-C", str(root), "build"]) == 0, capsys.readouterr()
    page = (root / "runbooks" / "demo.md").read_text()
    assert "<b>intro</b>" in page and "<script>" not in page and "alert(1)" not in page


def test_markdown_and_code_stay_as_written():
    text = ("Run `kubectl get pods -l app=<name>` and see <https://x.example/a>, <ops@example.com>,\n"
            "[the guide](https://wiki.example/a?b=1&c=2) and [a page](other.md#x); `{{ $labels.pod }}` < 5.\n\n"
            "```bash\nkubectl logs <pod> | grep '{x}'\n```")
    out = safe.spec_markdown(text)
    assert out == ("Run `kubectl get pods -l app=<name>` and see <https://x.example/a>, <ops@example.com>,\n"
                   "[the guide](https://wiki.example/a?b=1&c=2) and [a page](other.md#x); `{{ $labels.pod }}` &lt; 5."
                   "\n\n```bash\nkubectl logs <pod> | grep '{x}'\n```")


def test_declared_links_must_be_http(tmp_path):
    assert safe.declared_url_ok("https://grafana.example.com/d/x?a=1")
    for bad in ("javascript:alert(1)", "grafana.example.com/d/x", "https://", "http://a b", " https://x",
                "data:text/html,x", "//x.example", "https://user@x.example"):
        assert not safe.declared_url_ok(bad), bad
    assert safe.link("Grafana <b>", "https://g.example/d/x") == "[Grafana &lt;b&gt;](<https://g.example/d/x>)"
    assert safe.link("x", "javascript:alert(1)") == "x"


def test_a_backtick_cannot_pair_across_table_cells_or_fields():
    # regression: fact name "`a" and value "` <script>...` `": the table splitter paired the
    # first cell's backtick with the second's, and the script was left outside the code span
    row = f"| Fact | Value |\n|---|---|\n| {safe.spec_cell('`a')} | {safe.spec_cell('` <script>alert(1)</script> `')} |\n"
    assert safe.html_problems(safe.to_html(row)) == []
    assert safe.spec_cell("`a") == "\\`a"
    items = "".join(f"1. {safe.spec_markdown(t, block=False)}\n" for t in ("a `", "b ` <script>x</script> `"))
    assert safe.html_problems(safe.to_html(items)) == []


def test_a_fence_left_open_is_closed_so_the_next_field_reads_as_written():
    first, second = safe.spec_markdown("```"), safe.spec_markdown("```\n<script>alert(1)</script>\n```")
    assert first == "```\n```"
    assert safe.html_problems(safe.to_html(first + "\n\n" + second)) == []


def test_app_title_cannot_hold_markup(tmp_path, capsys):
    # regression: mkdocs-material fills <title> with the nav title through striptags, which
    # decodes entities: a title "X </title><script>..." (raw or escaped) ran on every page
    root = make(tmp_path, lambda f: f)
    spec = root / "rules" / "demo.yaml"
    spec.write_text(spec.read_text().replace("app: demo\n", 'app: demo\ntitle: "X &lt;/title&gt;<b>"\n'))
    assert main(["-C", str(root), "validate"]) == 1
    assert capsys.readouterr().out.splitlines()[0] == (
        "rules/demo.yaml:2:8: error RG749 title 'X &lt;/title&gt;<b>' holds <, > or &: it names the app in "
        "the site's navigation and page titles, where mkdocs writes it as HTML; use plain words")
    from rulegen.render.site import nav_title
    assert nav_title("X &lt;/title&gt;<script>") == "X lt;/titlegt;script"


def test_declared_links_in_runbook_fields_are_checked():
    """RG745 on the link fields issue 19 adds (dashboards, links): checked by key, so they are
    covered as soon as the schema has them (the check is run here on a spec built directly)."""
    from rulegen.spec import build_spec, load_text
    from rulegen.validate import Context
    from rulegen.validate.checks import markup
    text = SPEC.replace("{intro}", '"x"').replace("related:\n", (
        "dashboards: [\"javascript:alert(1)\", \"https://grafana.example.com/d/x\"]\n"
        "          links:\n"
        "            - {title: Wiki, url: \"data:text/html,hi\"}\n"
        "          related:\n"))
    for f in FIELDS:
        text = text.replace("{" + f + "}", '"x"')
    lf = load_text(text, "rules/demo.yaml")
    found = [(f.line, f.col, f.code, f.message) for f in markup.check_spec(build_spec(lf), Context())]
    assert found == [
        (34, 24, "RG745", "link 'javascript:alert(1)' is not an http:// or https:// URL with a host; the site "
                          "links only to web pages (write the full https:// address)"),
        (36, 34, "RG745", "link 'data:text/html,hi' is not an http:// or https:// URL with a host; the site "
                          "links only to web pages (write the full https:// address)"),
    ]


def test_alert_name_cannot_close_the_notes_comment():
    # an alert name reaches the page raw inside <!-- notes:NAME -->; Prometheus 3 accepts any
    # UTF-8 alert name, and the naming checks are being made warnings
    from rulegen.validate import validate_texts
    text = spec_text(lambda f: f).replace("alert: DemoDown", 'alert: "X--><img src=x onerror=alert(1)>"')
    text = text.replace("- alert: DemoDown", '- alert: "X--><img src=x onerror=alert(1)>"')
    res = validate_texts({"rules/demo.yaml": text})
    found = [(f.line, f.col, f.message) for f in res.findings if f.code == "RG749"]
    assert found == [(21, 16, "alert name 'X--><img src=x onerror=alert(1)>' holds -->: the runbook page marks "
                              "the alert's team-notes slot with an HTML comment naming it, which --> would end; "
                              "rename the alert")]
    # upstream names with a lone > (awesome-prometheus-alerts: `OracleDbSessionsReachingLimit(>85%)`) are fine
    ok = validate_texts({"rules/demo.yaml": spec_text(lambda f: f).replace(
        "alert: DemoDown", 'alert: "OracleDbSessionsReachingLimit(>85%)"')})
    assert [f for f in ok.findings if f.code == "RG749"] == []


def test_text_the_rewrite_cannot_make_safe_is_plain_text_and_a_warning():
    # with HTML allowed, an autolink inside a tag's attribute renders a broken <a> with a stray
    # attribute: the check refuses it, the page shows the text, validation warns (RG748)
    from rulegen.config import Config
    from rulegen.spec import build_spec, load_text
    from rulegen.validate import Context
    from rulegen.validate.checks import markup
    text = '<a href=<x@y.z>>y</a>'
    with safe.html_policy(True):
        assert safe.spec_markdown(text) == safe.inert(text) == "&lt;a href=&lt;x@y.z&gt;&gt;y&lt;/a&gt;"
    spec = spec_text(lambda f: f).replace('intro: "intro"', "intro: " + json.dumps(text))
    found = list(markup.check_spec(build_spec(load_text(spec, "rules/demo.yaml")), Context(config=Config(allow_html=True))))
    assert [(f.line, f.col, f.code, f.severity.value) for f in found] == [(3, 10, "RG748", "warning")]
    assert found[0].message.startswith("this Markdown would render ") and "attribute on <a>" in found[0].message


def test_with_html_allowed_the_built_site_still_runs_nothing(tmp_path, capsys):
    root = make(tmp_path, lambda f: f"<b>{f}</b> " + script(f) + ' <a href="javascript:alert(1)">x</a><iframe src=x>')
    (root / ".rulegen.yaml").write_text("runbooks:\n  allow_html: true\n")
    assert main(["-C", str(root), "build"]) == 0, capsys.readouterr()
    r = mkdocs_build(root, tmp_path / "site")
    assert r.returncode == 0, r.stderr
    built = tmp_path / "site" / "demo" / "index.html"
    assert_nothing_runs(parse(built))
    text = built.read_text(encoding="utf-8")
    for f in FIELDS:  # the allowed formatting survives
        assert f"<b>{f}</b>" in text, f


def test_dashboard_variable_cannot_add_an_attribute():
    # regression (after issue 19): dashboard variables are written into
    # { data-rg-labels="label=var-NAME" }; a name with a quote added onclick to the link
    from rulegen.render.runbook import dashboard_md
    from rulegen.validate import validate_texts
    bad = 'x" onclick="alert(1)'
    text = spec_text(lambda f: f).replace("        runbook:\n", (
        "        runbook:\n          dashboards:\n            - title: Grafana\n"
        "              url: https://g.example/d/x\n              variables: {pod: " + json.dumps(bad) + "}\n"), 1)
    res = validate_texts({"rules/demo.yaml": text})
    assert [(f.code, f.message) for f in res.findings if f.code == "RG749"] == [
        ("RG749", "dashboard variable 'x\" onclick=\"alert(1)' is not a plain name (letters, digits, `_`, `.`, `-`): "
                  "the page writes it into an HTML attribute; use the variable's name as Grafana has it")]
    md = dashboard_md({"title": "Grafana", "url": "https://g.example/d/x", "variables": {"pod": bad}}, "up == 0")
    assert md == "[Grafana](https://g.example/d/x)"
    assert safe.html_problems(safe.to_html(md)) == []


def test_the_check_renders_as_python_markdown_does_without_reading_entry_points(monkeypatch):
    """safe.new_markdown makes the Markdown the site's extension names make, without
    Python-Markdown's scan of every installed package's entry points (importlib.metadata),
    also for the extension superfences loads itself: same HTML for every construct."""
    import markdown
    import markdown.util

    from rulegen.render import safe
    text = ("# Title {#t}\n\n!!! note \"N\"\n    body\n\n| a | b |\n|:--|--:|\n| 1 | 2 |\n\n"
            "```yaml\nkind: X\nspec: {a: b}\n```\n\n    indented\n\n- item `code <x>`\n\n  ```{.python}\n  x = 1\n  ```\n\n"
            "<div markdown>\n*in html*\n</div>\n\npara {: .c }\n\n[link](https://example.com){ rel=x }\n")
    expected = markdown.Markdown(extensions=list(safe.EXTENSIONS)).convert(text)
    monkeypatch.setattr(markdown.util, "get_installed_extensions",
                        lambda: pytest.fail("entry points were read"))
    monkeypatch.setattr(safe, "_MD", None)
    assert safe.to_html(text) == expected
    assert "<table>" in expected and 'class="admonition note"' in expected and 'class="highlight"' in expected


def test_problems_is_html_problems_of_the_site_rendering():
    """safe.problems leaves code uncoloured only where that gives html_problems(to_html(text))
    exactly: bare-language fences; a fence with attributes or options, where the two renderings
    differ, is rendered as the site renders it."""
    import glob
    plain_fences = ["```bash\nrm -rf <x> & echo \"a\" <script>\n```", "~~~yaml\n<script>\n~~~",
                    "    indented <b onclick=x>\n", "- item\n\n    ```bash\n    ls <a>\n    ```\n",
                    "> ```sh\n> x <y>\n> ```", "````md\n```bash\n<x>\n```\n````", "```c#\nint x;\n```",
                    "<div markdown>\n```text\n<a href=\"javascript:x\">\n```\n</div>", "[x](javascript:y)",
                    # class names only: rulegen's marks of the PromQL it links
                    "```promql { .rg-promql }\nsum(x) <script>\n```", "```promql {.a .b-c}\nx\n```",
                    "```{ .rg-promql-lines }\n<b onclick=x>\n```"]
    with_info = ["```{.yaml onclick=\"x\"}\nx\n```", "```{.yaml data-x='\"><script>'}\nx\n```",
                 "```yaml title=\"<i>t</i>\"\nx\n```", "```python linenums=\"1\"\nx\n```"]
    pages = [Path(p).read_text(encoding="utf-8") for p in sorted(glob.glob(str(REPO / "runbooks" / "*.md")))]
    for text in plain_fences + with_info + pages + ["\n\n".join(plain_fences + with_info)]:
        assert safe.problems(text) == safe.html_problems(safe.to_html(text)), text[:200]
    # the renderings differ where an info string has attributes: there the site's is used
    plain = safe.new_markdown(safe.EXTENSIONS, {"pymdownx.highlight": {"use_pygments": False}})
    text = with_info[0]
    assert safe.html_problems(plain.convert(text)) == ["onclick attribute on <code>"]
    assert safe.problems(text) == safe.html_problems(safe.to_html(text)) == []
    assert any("```bash" in p for p in pages)  # the pages' command blocks take the cheap path


def test_the_pages_are_checked_without_colouring_their_code(monkeypatch):
    """Every generated page, PromQL blocks marked ``{ .rg-promql }`` included, takes the cheap
    path of safe.problems (code left uncoloured): marking the blocks had sent every page
    through Pygments, a third of a ``check`` of the bundled project."""
    import glob

    from rulegen.render import safe
    pages = [Path(p).read_text(encoding="utf-8") for p in sorted(glob.glob(str(REPO / "runbooks" / "*.md")))]
    assert any("```promql { .rg-promql }" in p for p in pages)
    monkeypatch.setattr(safe, "to_html", lambda text: pytest.fail("a page was rendered with colouring"))
    for page in pages:
        assert safe.problems(page) == []
    # an attribute other than a class still takes the site's rendering
    with pytest.raises(pytest.fail.Exception):
        safe.problems("```promql { .rg-promql onclick=x }\nx\n```")
