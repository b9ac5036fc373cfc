"""Loader findings (RG101-RG107): each with its exact code and line:col."""

from __future__ import annotations

import textwrap

import pytest

from rulegen.spec import loader
from rulegen.spec.loader import MAX_DEPTH, MAX_FILE_BYTES, load_file, load_text
from rulegen.validate import validate_texts

from helpers import REPO

BUNDLED_TEXTS = [p.read_text(encoding="utf-8")
                 for p in sorted((REPO / "rules").glob("*.yaml"))]


def where(lf):
    return [(f.code, f.line, f.col) for f in lf.findings]


def test_duplicate_key_points_at_the_second_key():
    text = textwrap.dedent("""\
        app: demo
        groups:
          - name: demo
            rules:
              - alert: DemoDown
                expr: up == 0
                expr: up == 1
        """)
    lf = load_text(text, "a.yaml")
    assert where(lf) == [("RG102", 7, 9)]
    assert 'key "expr" appears twice' in lf.findings[0].message
    assert lf.data is None


def test_tab_indentation_points_at_the_tab():
    text = "app: demo\ngroups:\n\t- name: demo\n"
    lf = load_text(text, "a.yaml")
    assert where(lf) == [("RG103", 3, 1)]


def test_tab_inside_a_value_is_not_indentation():
    lf = load_text("app: demo\ntitle: \"a\\tb\"\n", "a.yaml")
    assert where(lf) == []
    assert lf.data["title"] == "a\tb"


def test_syntax_error_position():
    lf = load_text("app: demo\ngroups: [a, b\n", "a.yaml")
    assert [f.code for f in lf.findings] == ["RG101"]
    assert (lf.findings[0].line, lf.findings[0].col) == (3, 1)


def test_self_referencing_anchor_is_rg104_at_the_anchor():
    # ruamel turns the inner alias into None silently; the loader must not.
    lf = load_text("app: demo\ngroups: &g [*g]\n", "a.yaml")
    assert where(lf) == [("RG104", 2, 9)]
    assert lf.data is None


def test_self_referencing_mapping_anchor():
    lf = load_text("app: demo\nlabels: &l {x: *l}\n", "a.yaml")
    assert where(lf) == [("RG104", 2, 9)]


def test_shared_aliases_are_fine():
    text = "app: demo\nlabels: &l {team: ai}\ngroups: [{name: g, labels: *l, rules: [{record: a:b:c, expr: up}]}]\n"
    lf = load_text(text, "a.yaml")
    assert where(lf) == []
    assert lf.data["groups"][0]["labels"] == {"team": "ai"}


def test_billion_laughs_is_rg105_and_fast():
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 9):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 10)}]")
    lf = load_text("\n".join(lines) + "\n", "a.yaml")
    assert where(lf) == [("RG105", 1, 1)]


def test_deep_flow_nesting_is_rg105_at_the_bracket_too_deep():
    text = "app: " + "[" * (MAX_DEPTH + 5) + "]" * (MAX_DEPTH + 5) + "\n"
    lf = load_text(text, "a.yaml")
    assert where(lf) == [("RG105", 1, 6 + MAX_DEPTH)]


def test_deep_block_nesting_is_rg105_where_libyaml_stops():
    # compact nested block sequences: libyaml refuses more than 1000 levels
    lf = load_text("- " * 1100 + "a\n", "a.yaml")
    assert where(lf) == [("RG105", 1, 1999)]


def test_moderate_block_nesting_loads():
    text = "".join("  " * i + "a:\n" for i in range(300))
    lf = load_text(text, "a.yaml")
    assert where(lf) == []


def test_binary_and_non_utf8(tmp_path):
    assert where(load_text("app: \x00", "a.yaml")) == [("RG106", 1, 1)]
    p = tmp_path / "b.yaml"
    p.write_bytes(b"app: demo\ntitle: \xff\n")
    assert where(load_file(p, "b.yaml")) == [("RG106", 2, 1)]


def test_too_big(tmp_path):
    p = tmp_path / "big.yaml"
    p.write_text("# " + "x" * MAX_FILE_BYTES + "\n")
    assert where(load_file(p, "big.yaml")) == [("RG106", 0, 0)]
    assert where(load_text("# " + "x" * MAX_FILE_BYTES, "big.yaml")) == [("RG106", 0, 0)]


def test_empty_and_not_a_mapping():
    assert where(load_text("", "a.yaml")) == [("RG107", 1, 1)]
    assert where(load_text("# only a comment\n", "a.yaml")) == [("RG107", 1, 1)]
    lf = load_text("- app: demo\n", "a.yaml")
    assert where(lf) == [("RG107", 1, 1)]
    assert "not a list" in lf.findings[0].message


def test_plain_records_unquoted_strings_and_dates():
    lf = load_text("a: x\nb: \"y\"\nc: 'z'\nd: 2024-01-31\ne: |\n  w\n", "a.yaml")
    assert lf.plain == {("a",), ("d",)}
    assert lf.data["d"] == "2024-01-31"


def test_loader_findings_stop_the_file_but_not_the_others():
    res = validate_texts({"a.yaml": "app: demo\napp: again\n", "b.yaml": "app: [\n"})
    assert [(f.file, f.code) for f in res.findings] == [("a.yaml", "RG102"), ("b.yaml", "RG101")]
    assert res.specs == []


# -- the loader's data and positions against a plain reference walk ----------------------------

def _reference(text: str):
    """(data, positions, key_positions, plain) by the simplest walk of the composed nodes,
    using the loader's own scalar and merge rules (what the loader's fast paths must equal)."""
    from rulegen.spec import loader as L
    from rulegen.spec import yamlnodes as N
    positions, key_positions, plain = {}, {}, set()

    def mark(n):
        return n.start_mark.line + 1, n.start_mark.column + 1

    def walk(node, path):
        if isinstance(node, L.MappingNode):
            out = {}
            for k, v in N._merged_pairs(node):
                key = N._key_text(k)
                sub = path + (key,)
                key_positions[sub] = mark(k)
                positions[sub] = mark(v) if isinstance(v, L.ScalarNode) else L._value_mark(v, lf)
                if N._is_plain(v):
                    plain.add(sub)
                out[key] = walk(v, sub)
            return out
        if isinstance(node, L.SequenceNode):
            out = []
            for i, v in enumerate(node.value):
                sub = path + (i,)
                positions[sub] = mark(v) if isinstance(v, L.ScalarNode) else L._value_mark(v, lf)
                if N._is_plain(v):
                    plain.add(sub)
                out.append(walk(v, sub))
            return out
        return N._scalar(node)

    lf = loader.LoadedFile(path="x", text=text)
    return walk(loader._compose(text), ()), positions, key_positions, plain


_DOCS = [
    "a: 1\nb: [x, 'y', \"z\", 0x1F, 1_000, .5, .inf, ~, null, true, yes, 2024-01-02]\n",
    "base: &b {x: 1, y: two}\nother:\n  <<: *b\n  y: three\n  z: [*b]\n",
    "m:\n  <<: [{p: 1}, {p: 2, q: 3}]\n  '<<': quoted is a key\n",
    "rules:\n- alert: A\n  expr: |\n    up == 0\n- record: b\n  expr: x\n",
    "? [complex, key]\n: v\nk: !!str 5\nn: !!int '7'\ne: ''\n",
    "nested:\n  - - 1\n    - {deep: [a, {b: c}]}\n  - plain text here\n",
]


@pytest.mark.parametrize("text", _DOCS + BUNDLED_TEXTS, ids=range(len(_DOCS) + len(BUNDLED_TEXTS)))
def test_loader_matches_the_reference_walk(text):
    lf = loader.load_text(text, "x.yaml")
    assert not lf.findings
    assert (lf.data, lf.positions, lf.key_positions, lf.plain) == _reference(text)


def test_loader_matches_the_reference_walk_on_the_corpus(shared_dir):
    files = sorted((shared_dir / "corpus").rglob("*.y*ml"))
    assert len(files) > 100
    for f in files:
        text = f.read_text(encoding="utf-8")
        lf = loader.load_text(text, str(f))
        if lf.findings:
            continue
        assert (lf.data, lf.positions, lf.key_positions, lf.plain) == _reference(text), f


def test_duplicate_key_of_the_outer_mapping_is_found_before_one_inside():
    # the mapping's own keys are checked before its values are built, as before the one-pass path
    lf = loader.load_text("a:\n  x: 1\n  x: 2\na: 3\n", "x.yaml")
    assert [(f.code, f.line, f.col) for f in lf.findings] == [("RG102", 4, 1)]


def test_merge_key_with_a_scalar_value_is_a_finding_not_a_traceback():
    # regression: `<<: 5` raised ConstructorError out of load_text, which never raises
    lf = load_text("app: x\nbase:\n  <<: 5\n", "x.yaml")
    assert where(lf) == [("RG101", 3, 3)]
    assert "expected a mapping or list of mappings for merging" in lf.findings[0].message
    assert lf.data is None and not lf.positions
    lf = load_text("app: x\nbase:\n  <<: [{a: 1}, [2]]\n", "x.yaml")
    assert [f.code for f in lf.findings] == ["RG101"]


def test_huge_hex_and_binary_integers_stay_text_python_could_not_print():
    # regression: int("f"*6000, 16) is fine, but printing it in decimal raises ValueError
    # (sys.get_int_max_str_digits), which escaped load_text and validate as a traceback
    big = "0x" + "f" * 6000
    lf = load_text(f"? [{big}]\n: x\nn: 0b{'1' * 20000}\nsmall: 0x1F\n", "x.yaml")
    assert not lf.findings
    assert len(lf.data) == 3 and lf.data["n"] == "0b" + "1" * 20000 and lf.data["small"] == 31
    result = validate_texts({"rules/a.yaml": "app: a\ngroups:\n  - name: g\n    rules:\n"
                                            "      - alert: A\n        expr: up == 0\n"
                                            f"        for: {big}\n        severity: critical\n"})
    assert any(f.code.startswith(("RG2", "RG3")) for f in result.findings)
