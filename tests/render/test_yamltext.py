"""rulegen.render.yamltext without helm: every scalar and key reads back exactly in YAML 1.1
(PyYAML) and YAML 1.2 (ruamel), and Helm escaping only touches ``{{``."""

from __future__ import annotations

import ast
import re

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from rulegen.render.yamltext import _UNSAFE, double_quoted, go_string, helm_literal, yaml_key, yaml_string

from helpers.samples import NASTY

texts = st.one_of(st.text(), st.lists(st.sampled_from(NASTY), max_size=8).map("".join))


def _both(doc: str):
    return yaml.safe_load(doc), YAML(typ="safe", pure=True).load(doc)


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(s=texts, key=texts)
def test_scalars_and_keys_read_back_exactly(s, key):
    doc = f"{yaml_key(key)}:\n  v: {yaml_string(s, 4)}\n"
    for parsed in _both(doc):
        assert parsed == {key: {"v": s}}


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(s=texts)
def test_go_string_is_a_go_literal_of_printable_characters(s):
    lit = go_string(s)
    # Go's interpreted string escapes used here (\\ \" \n \t \xNN \uNNNN \UNNNNNNNN) mean the
    # same in Python string literals.
    assert ast.literal_eval(lit) == s
    assert not _UNSAFE.search(lit)  # no control, NEL, U+2028/9, BOM or non-character


def test_block_literals_only_when_exact():
    assert yaml_string("up\n  == 0", 4) == "|-\n    up\n      == 0"
    assert yaml_string("a\nb\n", 2) == "|\n  a\n  b"
    assert yaml_string(" lead\nx", 2) == '" lead\\nx"'
    assert yaml_string("a  \nb", 2) == '"a  \\nb"'
    assert yaml_string("a\n\n", 2) == '"a\\n\\n"'
    assert yaml_string("a\u2028b\nc", 2) == '"a\\u2028b\\nc"'


def test_double_quoted_escapes_what_yaml_1_1_reads_differently():
    assert double_quoted("off") == '"off"'
    assert double_quoted("\x85\u2028\ufeff\x7f\t") == '"\\x85\\u2028\\ufeff\\x7f\\t"'


def test_helm_literal_escapes_only_left_delimiters():
    assert helm_literal("{{ $labels.x }} }}") == "{{`{{`}} $labels.x }} }}"
    assert helm_literal("{{{") == "{{`{{`}}{"
    assert helm_literal("{}}`") == "{}}`"


def test_yaml_key_plain_only_for_safe_identifiers():
    assert [yaml_key(k) for k in ["team", "llama-swap", "on", "Null", "y", "~", "a.b", "1x", ""]] == [
        "team", "llama-swap", '"on"', '"Null"', '"y"', '"~"', '"a.b"', '"1x"', '""']


# --- long lines of text over several lines (the rules file, issue 29) -------------------------

words = st.lists(st.one_of(st.sampled_from(["a", "b:", "#c", "{{ $labels.x }}", "\"q\"", "\\", "é", "\t", "x" * 30,
                                            "- d", ": e", "", " ", "ü\u2028", "%", "50%", "'s"]),
                           st.text(max_size=12)), min_size=1, max_size=40).map(" ".join)


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(s=words, first=st.integers(min_value=4, max_value=40))
def test_folded_scalars_read_back_exactly_and_fit(s, first):
    """A long string written over several lines (plain folded, or double-quoted with escaped
    line breaks) reads back as exactly that string in YAML 1.1 and 1.2; every line fits in 120
    characters unless one word alone is longer."""
    from rulegen.render.yamltext import folded_plain, folded_quoted
    for fold in (folded_plain, folded_quoted):
        text = fold(s, first, 4)
        if text is None:
            continue
        doc = "k" * (first - 2) + ": " + text + "\n"
        for parsed in _both(doc):
            assert parsed == {"k" * (first - 2): s}
        longest = max(len(double_quoted(w)) for w in s.split(" ")) + 8
        assert all(len(line) <= max(120, longest) for line in doc.splitlines())


def test_folding_is_used_only_for_long_text():
    from rulegen.render.yamltext import folded_plain, folded_quoted
    assert folded_plain("short text", 10, 4) is None and folded_quoted("a: b", 10, 4) is None
    assert folded_plain("a: b " * 40, 10, 4) is None  # not plain: quoted instead
    assert folded_quoted("x" * 200, 10, 4) is None  # nowhere to cut: one long line
    assert folded_quoted("line one\nline two " + "y " * 80 + "end", 10, 4) is None  # a literal block
    text = folded_quoted("The share: " + "word " * 40 + "end", 10, 4)
    assert text.splitlines()[0].endswith(" \\") and text.splitlines()[1].startswith("    word")


def test_unsafe_is_every_code_point_outside_the_safe_ranges():
    from rulegen.render.yamltext import SAFE_RANGES
    every = "".join(map(chr, range(0x110000)))  # lone surrogates included
    safe = set()
    for lo, hi in SAFE_RANGES:
        safe.update(range(lo, hi + 1))
    assert [m.start() for m in _UNSAFE.finditer(every)] == [c for c in range(0x110000) if c not in safe]
    assert [m.start() for m in re.finditer("[^" + "".join(f"{chr(lo)}-{chr(hi)}" for lo, hi in SAFE_RANGES) + "]",
                                            every)] == [m.start() for m in _UNSAFE.finditer(every)]
