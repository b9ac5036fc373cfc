"""rulegen.render.yamltext without helm: every scalar and key reads back exactly in YAML 1.1
(PyYAML) and YAML 1.2 (ruamel), and Helm escaping only touches ``{{``."""

from __future__ import annotations

import ast

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
