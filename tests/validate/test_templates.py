"""Prometheus templates (RG305-RG308): the Go template parser, and findings at the exact
character inside the value."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from rulegen.validate import validate_texts
from rulegen.promql import gotmpl
from rulegen.validate.checks import gotemplate
from rulegen.validate.checks.gotemplate import parse


def run(text):
    res = validate_texts({"a.yaml": textwrap.dedent(text)})
    return [(f.code, f.line, f.col) for f in res.findings], res


def spec(summary='"{{ $labels.instance }} is down"', labels="{}", description="Demo is down."):
    return f"""\
app: demo
groups:
  - name: demo
    rules:
      - alert: DemoDown
        expr: up == 0
        severity: warning
        labels: {labels}
        summary: {summary}
        description: {description}
"""


def test_valid_templates_pass():
    found, _ = run(spec(
        summary='"{{ $labels.instance }} of {{ $externalLabels.cluster }}: {{ $value | humanize }}"',
        labels='{route: "{{ $labels.team }}"}',
        description='"{{- if gt $value 90.0 -}} high {{- else -}} low {{- end }} at {{ $externalURL }}"'))
    assert found == []


def test_undefined_variable_plain_scalar_exact_column():
    found, res = run(spec(summary="instance {{ $label.instance }} is down"))
    assert found == [("RG306", 9, 30)]
    assert "did you mean $labels?" in res.findings[0].message
    assert res.findings[0].rule == "DemoDown"


def test_undefined_variable_double_quoted_with_escapes_before_it():
    # "\t" is two source characters for one value character
    found, _ = run(spec(summary='"a\\tb {{ $label.x }}"'))
    assert found == [("RG306", 9, 27)]


def test_undefined_variable_single_quoted():
    found, _ = run(spec(summary="'it''s {{ $lables.x }}'"))
    assert found == [("RG306", 9, 28)]


def test_literal_block_scalar_exact_line_and_column():
    text = spec(summary="|\n          line one\n          {{ $label.x }}")
    found, _ = run(text)
    assert found == [("RG306", 11, 14)]


def test_folded_block_scalar_exact_line_and_column():
    text = spec(description=">-\n          Deployment {{ $labels.namespace }}/{{ $labels.deployment }} has\n"
                            "          had 0 replicas on {{ $lables.node }}.")
    found, _ = run(text)
    assert found == [("RG306", 12, 32)]


def test_multi_line_plain_scalar_exact_line_and_column():
    text = spec(description="Deployment has\n          no replica on {{ $lables.node }}.")
    found, _ = run(text)
    assert found == [("RG306", 11, 28)]


def test_multi_line_double_quoted_reports_the_value_start():
    text = spec(description='"Deployment has\n          no replica on {{ $lables.node }}."')
    found, _ = run(text)
    assert found == [("RG306", 10, 22)]


def test_syntax_error_unclosed_if():
    found, res = run(spec(summary='"{{ if gt $value 1.0 }}high"'))
    assert found == [("RG305", 9, 19)]
    assert res.findings[0].message == ("annotation template does not parse: {{if}} is never "
                                       "closed: add {{end}}")


def test_syntax_error_unclosed_action():
    found, res = run(spec(summary='"{{ $labels.instance is down"'))
    assert found == [("RG305", 9, 46)]
    assert "unclosed action" in res.findings[0].message


def test_unknown_function_with_suggestion():
    found, res = run(spec(summary='"{{ $value | humanise }}"'))
    assert found == [("RG308", 9, 31)]
    assert "did you mean humanize?" in res.findings[0].message


def test_value_in_label_is_a_warning():
    found, res = run(spec(labels='{current: "{{ $value }}"}'))
    assert found == [("RG307", 8, 31)]
    assert not res.findings[0].is_error


def test_dot_value_in_label_is_a_warning_but_not_inside_range():
    found, _ = run(spec(labels='{current: "{{ .Value }}"}'))
    assert found == [("RG307", 8, 31)]
    found, _ = run(spec(labels='{x: "{{ range query \\"up\\" }}{{ .Value }}{{ end }}"}'))
    assert found == []


def test_value_in_annotation_is_fine():
    found, _ = run(spec(summary='"now {{ $value }}"'))
    assert found == []


def test_group_and_app_labels_are_checked_recording_rule_labels_are_not():
    text = """\
app: demo
labels: {a: "{{ $labl }}"}
groups:
  - name: demo
    labels: {b: "{{ $valu }}"}
    rules:
      - alert: DemoDown
        expr: up == 0
        severity: warning
        summary: Demo is down.
        description: Demo is down.
      - record: job:up:sum
        expr: sum by (job) (up)
        labels: {c: "{{ $nope }}"}
"""
    found, res = run(text)
    assert found == [("RG306", 2, 17), ("RG306", 5, 21)]
    assert [f.rule for f in res.findings] == ["", "demo"]


# -- the parser itself ------------------------------------------------------------------

def issues(text):
    return [(i.kind, i.offset) for i in parse(text).issues]


@pytest.mark.parametrize("text", [
    "no template at all",
    "{{ $labels.instance }}",
    "{{- $labels.instance -}}",
    "{{/* a comment */}}x",
    "{{- /* a comment */ -}}x",
    "{{ printf \"%.2f\" $value }}",
    "{{ printf `raw\nstring` }}",
    "{{ 'c' }} {{ 1e3 }} {{ 0x1F }} {{ -3 }} {{ .5 }}",
    "{{-3}}",
    "{{ range $k, $v := $labels }}{{ $k }}={{ $v }}{{ end }}",
    "{{ range $labels }}{{ if . }}{{ break }}{{ end }}{{ continue }}{{ end }}",
    "{{ $x := 1 }}{{ $x = 2 }}{{ $x }}",
    "{{ if true }}a{{ else if false }}b{{ else }}c{{ end }}",
    "{{ with $labels.x }}{{ . }}{{ else with $labels.y }}{{ . }}{{ end }}",
    "{{ with query \"up\" }}{{ . | first | value | humanize }}{{ end }}",
    "{{ (index $labels \"a\") | toUpper }}",
    "{{ .Labels.instance }} {{ $.Labels.job }}",
    "{{ define \"t\" }}{{ . }}{{ end }}{{ template \"t\" $labels }}",
    "}} alone is text",
    "{{ $labels.instance\n}}",
])
def test_parser_accepts(text):
    assert issues(text) == []


@pytest.mark.parametrize("text,expected", [
    ("{{ $labels.x", [("syntax", 12)]),
    ("{{ if true }}", [("syntax", 0)]),
    ("{{ end }}", [("syntax", 0)]),
    ("{{ else }}", [("syntax", 0)]),
    ("{{ if true }}{{ else }}{{ else }}{{ end }}", [("syntax", 23)]),
    ("{{ break }}", [("syntax", 0)]),
    ("{{/* open", [("syntax", 0)]),
    ("{{/* c */ }}", [("syntax", 9)]),
    ("{{ \"open }}", [("syntax", 3)]),
    ("{{ \"bad \\q\" }}", [("syntax", 8)]),
    ("{{ `open }}", [("syntax", 3)]),
    ("{{ (len $labels }}", [("syntax", 16)]),
    ("{{ len $labels) }}", [("syntax", 14)]),
    ("{{ 3x }}", [("syntax", 3)]),
    ("{{ $x=1 }}", [("syntax", 5)]),
    ("{{ printf \"%s\"$value }}", [("syntax", 14)]),
    ("{{ $labels | \"s\" }}", [("syntax", 13)]),
    ("{{ nil }}", [("syntax", 3)]),
    ("{{ }}", [("syntax", 3)]),
    ("{{ if }}{{ end }}", [("syntax", 6)]),
    ("{{ \"s\".x }}", [("syntax", 6)]),
    ("{{ $label.x }}", [("variable", 3)]),
    ("{{ $x }}", [("variable", 3)]),
    ("{{ range $k, $v := $labels }}{{ end }}{{ $k }}", [("variable", 41)]),
    ("{{ if true }}{{ $y := 1 }}{{ end }}{{ $y }}", [("variable", 38)]),
    ("{{ define \"t\" }}{{ $labels }}{{ end }}", [("variable", 19)]),
    ("{{ humanise 1 }}", [("function", 3)]),
    ("{{ 1 | tmpl }}", [("function", 7)]),
])
def test_parser_rejects(text, expected):
    assert issues(text) == expected


def test_value_uses():
    assert parse("{{ $value }} {{ .Value }} {{ $.Value }}").value_uses == [3, 16, 29]
    assert parse("{{ with $labels }}{{ .Value }}{{ end }}").value_uses == []


from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_BITS = st.sampled_from(["{{", "}}", "{{- ", " -}}", " ", "$labels", "$value", ".Value", "$", ":=",
                         "=", "|", "(", ")", '"', "`", "'", "/*", "*/", "if", "else", "end",
                         "range", "with", "define", "break", "humanize", "nil", "1", "-", ".x", ",",
                         "\\", "\n", "x"])


@settings(max_examples=500, deadline=None, derandomize=True)
@given(st.one_of(st.text(max_size=60), st.lists(_BITS, max_size=20).map("".join)))
def test_parser_never_raises_and_offsets_are_inside(text):
    t = parse(text)
    for i in t.issues:
        assert 0 <= i.offset <= len(text)
        assert i.kind in ("syntax", "variable", "function")
    assert sum(i.kind == "syntax" for i in t.issues) <= 1


# -- the lexer's memo of action texts gives what lexing again gives -----------------------------

_MEMO_CASES = [
    "{{ $labels.instance }} is down ({{ $value | humanize }})",
    '{{ "}}" }} then {{ $labels.job }}',               # a }} inside a string: not the key's end
    "{{- $labels.job -}} and {{ $labels.job -}}",
    "{{ $labels.job }}{{ $labels.job }} {{ $labels.job",  # repeated, then unclosed
    "{{ $undefined }} {{ $undefined }}",
    "{{ if gt $value 1.0 }}high{{ else }}low{{ end }} {{ if gt $value 1.0 }}",
    "{{ (index $labels \"a\" }} {{ $value }}",
    "{{ `raw }} text` }} {{ printf \"%.2f\" $value }}",
    "{{/* a comment */}}{{ $labels.job }}",
]


def _corpus_annotations(shared: Path) -> list[str]:
    import yaml
    out = []
    for f in sorted((shared / "corpus").rglob("*.y*ml")):
        try:
            doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        except Exception:
            continue
        for g in (doc or {}).get("groups") or [] if isinstance(doc, dict) else []:
            for r in g.get("rules") or []:
                for v in list((r.get("annotations") or {}).values()) + list((r.get("labels") or {}).values()):
                    if isinstance(v, str) and "{{" in v:
                        out.append(v)
    return out


def test_lexed_action_memo_changes_no_result(shared_dir):
    texts = _MEMO_CASES + _corpus_annotations(shared_dir)
    assert len(texts) > 500
    gotmpl._LEXED.clear()
    saved = gotmpl._LEXED_MAX
    try:
        gotmpl._LEXED_MAX = 0  # nothing kept: every action lexed
        gotemplate.parse.cache_clear()
        cold = [gotemplate.parse.__wrapped__(t) for t in texts]
        gotmpl._LEXED_MAX = saved
        first = [gotemplate.parse.__wrapped__(t) for t in texts]   # filling the memo
        again = [gotemplate.parse.__wrapped__(t) for t in texts]   # from the memo
        cached = [gotemplate.parse(t) for t in texts] + [gotemplate.parse(t) for t in texts]
    finally:
        gotmpl._LEXED_MAX = saved
    assert gotmpl._LEXED  # it was used
    assert first == cold and again == cold
    assert cached == cold + cold  # and the per-text cache of parse() too
    # every kept action ends at its first }} (so `{{ "}}" }}` was lexed, never kept)
    assert all(k.find("}}") == len(k) - 2 for k in gotmpl._LEXED)
