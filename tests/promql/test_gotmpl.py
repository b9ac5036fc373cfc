"""The Go text/template action lexer (rulegen.promql.gotmpl), shared by the alert template
check and the Helm importer."""

from __future__ import annotations

import pytest

from rulegen.importer.helmeval import UNKNOWN, Context, action_kind, evaluate, literal_value
from rulegen.promql.gotmpl import (Action, TemplateSyntaxError, action_end, body_tokens, lex_action, split,
                                   unquote)


def _types(text: str, strict: bool = True) -> list[tuple[str, str]]:
    toks, _ = lex_action(text, 0, strict)
    return [(t.typ, t.val) for t in toks if t.typ != "space"]


def test_tokens_of_an_action():
    assert _types('$labels.job | printf "%s" (len .Values) -}}') == [
        ("var", "$labels"), ("field", ".job"), ("pipe", "|"), ("ident", "printf"), ("string", '"%s"'),
        ("lparen", "("), ("ident", "len"), ("field", ".Values"), ("rparen", ")"), ("end", "-}}")]
    assert _types("$x := -3 }}") == [("var", "$x"), ("declare", ":="), ("number", "-3"), ("end", "}}")]
    assert _types('if eq . `a}}b` }}') == [("keyword", "if"), ("ident", "eq"), ("dot", "."), ("raw", "`a}}b`"),
                                          ("end", "}}")]


@pytest.mark.parametrize("text, message", [
    ('"a\nb" }}', "unterminated quoted string"),
    ('"\\q" }}', "invalid escape"),
    ("1x }}", "bad number syntax"),
    ("$x=1 }}", "bad character"),
    ("(x }}", "unclosed left paren"),
    ("x) }}", "unexpected right paren"),
    ("x : y }}", "expected :="),
    ("x", "unclosed action"),
])
def test_strict_lexing_rejects_what_go_rejects(text, message):
    with pytest.raises(TemplateSyntaxError, match=message):
        lex_action(text, 0)


def test_lenient_lexing_only_finds_the_end():
    assert lex_action('"a\nb" 1x $x=1 (x : }}', 0, strict=False)[1] == len('"a\nb" 1x $x=1 (x : }}')
    with pytest.raises(TemplateSyntaxError, match="unclosed action"):
        lex_action('"a }}', 0, strict=False)


def test_action_end_and_comments():
    assert action_end("{{ x }} y", 0) == 7
    assert action_end('{{ "}}" }}', 0) == 10
    assert action_end("{{/* a }} b */}}", 0) == 16
    assert action_end("{{- /* c */ -}}", 0) == 15
    assert action_end("{{ /* c */ }}", 0) == 13   # lenient: Go would reject the space before /*
    assert action_end("{{ x", 0) == -1
    assert action_end("{{/* c */ x }}", 0) == -1


def test_split_pieces_lines_and_trim_markers():
    pieces = list(split("a\n{{- if .x -}}\n b {{ \"}}\" }}{{ x"))
    assert pieces[0] == ("text", "a\n")
    assert pieces[1] == ("action", Action("{{- if .x -}}", "if .x", 2, True, True, 2))
    assert pieces[2] == ("text", "\n b ")
    assert pieces[3][1].body == '"}}"' and pieces[3][1].line == 3
    assert pieces[4] == ("text", "{{ x")   # not closed: text


def test_unquote_reads_go_escapes():
    assert unquote(r'"a\tb\"c\\"') == 'a\tb"c\\'
    assert unquote(r'"\x41\u00e9\U0001F600\101"') == "A\u00e9\U0001F600A"
    assert unquote("`raw \\n`") == "raw \\n"


def test_body_tokens():
    assert [t.typ for t in body_tokens(' .Values.a | default "x" ')] == ["field", "field", "pipe", "ident", "string"]
    assert body_tokens('"a') is None
    assert body_tokens("x }} y") is None


# --- the Helm importer reads actions through the same lexer -----------------------------------

def _ctx() -> Context:
    return Context(values={"a": {"b": "x"}}, chart={"Name": "c"}, release={"Name": "r", "Namespace": "n"})


def test_helm_strings_use_go_escapes():
    # the evaluator unquoted strings as JSON: `\x41` and octal escapes came out as written
    assert evaluate(r'"\x41\101"', _ctx()) == "AA"
    assert literal_value(r'"\x41"') == "A"
    # an escape Go rejects makes the action unknown, not the text as written
    assert evaluate(r'"bad \q"', _ctx()) is UNKNOWN


def test_helm_name_dot_field_is_not_a_field_of_dot():
    # `labels.pod` (a `$` forgotten) was read as the field `abels.pod` of `.`, printing nil
    c = _ctx()
    assert evaluate("labels.pod", c, c.root()) is UNKNOWN
    assert evaluate(".Values.a.b", c, c.root()) == "x"
    assert evaluate("$.Values.a.b", c, c.root()) == "x"


@pytest.mark.parametrize("body, kind", [
    ("if .Values.x", "if"), ("else if .x", "else"), ("end", "end"), ("$x := 1", "assign"), ("$x = 1", "assign"),
    ("/* c */", "comment"), ('"{{"', "literal"), ('printf "%s" "a"', "literal"), ("$labels.x", "prometheus"),
    (".Values.x", "value"),
    ("if1rue", "value"),   # one identifier, not the keyword `if` (the importer read it as `if`)
    ("end2", "value"),
])
def test_action_kinds(body, kind):
    assert action_kind(Action("{{ %s }}" % body, body, 1, False, False)) == kind


# --- expected alerts and runbook pages read actions through the same lexer ---------------------

def test_expected_alert_expansion_lexes_actions_as_go():
    from rulegen.render.promtool_tests import NotExpandable, expand
    # a `}}` inside a string or a comment does not end the action (a regex cut it there)
    assert expand('{{ index $labels "}}a" }}', {"}}a": "v"}) == "v"
    assert expand("{{/* }} */}}x", {}) == "x"
    # `{{-3}}` is the number -3, not a trim marker (so not expandable)
    with pytest.raises(NotExpandable, match="-3"):
        expand("a {{-3}}", {})
    # an action never closed is a template error, not text
    with pytest.raises(NotExpandable):
        expand("{{ $labels.a", {"a": "A"})
    # `{{-` trims the text before it, never the previous action's output
    assert expand("a {{- $labels.a }}{{- $labels.b }} -}}", {"a": "A ", "b": "B"}) == "aA B -}}"
    assert expand("x {{ $labels.a -}}\n  y", {"a": "A"}) == "x Ay"


def test_readable_template_text():
    from rulegen.render.runbook import readable
    assert readable("{{/* }} */}}{{ $labels.pod }} at {{ $value }}") == "‹…›‹pod› at ‹value›"
    assert readable("no {{ action") == "no {{ action"


def test_defined_names():
    from rulegen.promql.gotmpl import defined_names
    text = ('{{/* {{ define "in.comment" }} */}}{{- define "a.name" -}}x{{ end }}'
            '{{ define `raw` }}{{ end }}{{ define "b" . }}{{ end }}{{ define "\\x41" }}{{ end }}')
    # a define inside a comment is none (the chart-helper regex found it); `define "b" .` is
    # not Go syntax; escapes are read
    assert defined_names(text) == ["a.name", "raw", "A"]


def test_word_characters_are_ascii_word_characters_and_all_non_ascii():
    # the lexer's word class, written as a negated ASCII class for a fast compile, is exactly
    # [A-Za-z0-9_\u0080-\U0010ffff] on every code point
    import re

    from rulegen.promql.gotmpl import _ALNUM
    plain = re.compile(r"[A-Za-z0-9_\u0080-\U0010ffff]")
    fast = re.compile(_ALNUM.pattern.rstrip("*"))
    assert all(bool(plain.fullmatch(chr(c))) == bool(fast.fullmatch(chr(c))) for c in range(0x110000))
