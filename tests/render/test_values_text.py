"""values.yaml, values.schema.json and mkdocs.yml keep their bytes: no character of a person's
text is a line break to rulegen except ``\\n`` (U+2028, U+2029, U+0085 stay as written), and
a CRLF file stays CRLF through ``rulegen build`` (the merge reads it without newline
translation and adds its lines with the file's own ending)."""

from __future__ import annotations

import json

import pytest
from ruamel.yaml import YAML

from rulegen.cli import main
from rulegen.render.values import line_ending, render_values, render_values_schema

from helpers.helm import SITE, make_spec

SPEC = {"app": "vals", "groups": [{"name": "main", "rules": [{"alert": "A", "expr": "up == 0"}]}]}

GATE = ("enabled: false  # rulegen gate: the PrometheusRule renders only when all of enabled, "
        "monitoring.enabled are true")

# Every character str.splitlines() cuts at besides \n and \r that YAML 1.2 accepts in a
# quoted scalar as content.
SEPARATORS = ["\u2028", "\u2029", "\x85"]


def _knob_lines(nl: str) -> str:
    """The lines rulegen appends for SPEC's knobs (made from a file that has only the gates)."""
    base = f"enabled: true{nl}monitoring:{nl}  enabled: true{nl}"
    return render_values(make_spec(SPEC), base, SITE)[len(base):]


@pytest.mark.parametrize("sep", SEPARATORS)
@pytest.mark.parametrize("nl", ["\n", "\r\n"])
def test_unicode_line_separators_in_values_are_kept(sep, nl):
    old = (f'note: "a{sep}b"{nl}'
           f"monitoring:{nl}"
           f'  text: "x{sep}y"   # a comment{nl}'
           f"  other: 'p{sep}q'{nl}"
           f"enabled: true{nl}")
    new = render_values(make_spec(SPEC), old, SITE)
    # the gate goes inside monitoring, after its last line (not after a "line" that ends at sep)
    want = (f'note: "a{sep}b"{nl}'
            f"monitoring:{nl}"
            f'  text: "x{sep}y"   # a comment{nl}'
            f"  other: 'p{sep}q'{nl}"
            f"  {GATE}{nl}"
            f"enabled: true{nl}") + _knob_lines(nl)
    assert new == want
    assert render_values(make_spec(SPEC), new, SITE) == new
    doc = YAML(typ="rt").load(new)
    assert doc["monitoring"]["enabled"] is False and list(doc) == ["note", "monitoring", "enabled", "prometheusRule"]


def test_tester_repro_text_is_a_prefix():
    old = 'note: "a\u2028b"\nother: "x\x85y"\nenabled: true\n'
    new = render_values(make_spec(SPEC), old, SITE)
    assert new.startswith(old)
    assert new[len(old):].startswith("monitoring:\n  " + GATE + "\n")
    assert "\\n" not in new[:len(old)]


def test_crlf_values_get_crlf_lines_and_keep_every_byte():
    old = "a: 1\r\nmonitoring:\r\n  x: 2\r\n\r\n# end\r\n"
    new = render_values(make_spec(SPEC), old, SITE)
    assert new == ("a: 1\r\nmonitoring:\r\n  x: 2\r\n  " + GATE + "\r\n\r\n# end\r\n"
                   + "enabled: false  # rulegen gate: the PrometheusRule renders only when all of "
                     "enabled, monitoring.enabled are true\r\n"
                   + _knob_lines("\r\n"))
    assert "\n" not in new.replace("\r\n", "")


def test_bare_cr_before_a_block_rulegen_extends_is_refused_not_mangled():
    with pytest.raises(ValueError, match="bare carriage return"):
        render_values(make_spec(SPEC), "a: 1\rmonitoring:\r  x: 2\r", SITE)


def test_line_ending():
    assert [line_ending(t) for t in (None, "", "a", "a\n", "a\r\nb\n", "a\nb\r\n")] == [
        "\n", "\n", "\n", "\n", "\r\n", "\n"]


def test_crlf_schema_stays_crlf():
    lf = json.dumps({"type": "object", "properties": {"x": {"type": "string"}}}, indent=2) + "\n"
    new = render_values_schema(make_spec(SPEC), lf.replace("\n", "\r\n"))
    assert new == render_values_schema(make_spec(SPEC), lf).replace("\n", "\r\n")
    assert "\n" not in new.replace("\r\n", "") and new.endswith("}\r\n")
    assert json.loads(new)["properties"]["x"] == {"type": "string"}
    assert render_values_schema(make_spec(SPEC), new) == new


@pytest.mark.parametrize("existing, where", [
    ('{"properties": 5}', "the top level"),
    ('{"properties": {"monitoring": []}}', "monitoring"),
    ('{"properties": {"monitoring": {"properties": "x"}}}', "monitoring"),
])
def test_schema_of_the_wrong_shape_is_refused_with_a_reason(existing, where):
    # regression: a TypeError escaped instead of the ValueError the caller reports as RG701
    with pytest.raises(ValueError, match=where):
        render_values_schema(make_spec(SPEC), existing)


@pytest.mark.parametrize("existing, reason", [
    ('{"properties": {"monitoring": {"type": "string"}}}', 'has type "string"'),
    ('{"properties": {"monitoring": {"$ref": "#/definitions/m"}}, "definitions": {"m": {}}}', 'uses "\\$ref"'),
    ('{"properties": {"monitoring": {"enum": [null]}}}', 'uses "enum"'),
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"description": "\\ud800"}', "lone surrogate"),
])
def test_schema_rulegen_cannot_extend_safely_is_refused(existing, reason):
    # a string-typed parent would make the chart's own values fail the schema; the others
    # were tracebacks
    with pytest.raises(ValueError, match=reason):
        render_values_schema(make_spec(SPEC), existing)


def test_a_gates_own_description_and_default_are_kept_and_true_parents_allowed():
    existing = json.dumps({"properties": {"enabled": {"type": "string", "default": True, "enum": ["on", "off"],
                                                      "description": "Render the chart."},
                                          "monitoring": True}})
    doc = json.loads(render_values_schema(make_spec(SPEC), existing))
    assert doc["properties"]["enabled"] == {"type": ["boolean", "null"], "default": True,
                                            "description": "Render the chart."}
    assert doc["properties"]["monitoring"] == {"properties": {"enabled": {"type": ["boolean", "null"]}}}


def test_one_specs_gates_never_change_the_schema_of_another():
    # regression: the gate leaf was a shared dict, so a gate under another gate made it refer
    # to itself, and every later chart's schema failed with "Circular reference detected"
    from rulegen.render import values as values_mod
    before = json.dumps(values_mod.GATE_SCHEMA)
    odd = make_spec(dict(SPEC, chart={"gates": ["monitoring", "monitoring.enabled"]}))
    with pytest.raises(ValueError, match="monitoring.enabled needs it to be an object"):
        render_values_schema(odd, None)
    assert json.dumps(values_mod.GATE_SCHEMA) == before
    fine = json.loads(render_values_schema(make_spec(dict(SPEC, app="other")), None))
    assert fine["properties"]["enabled"] == {"type": ["boolean", "null"]}


def test_build_reports_a_schema_of_the_wrong_shape_as_rg701(nasty, capsys):
    schema = nasty / "charts/nasty/values.schema.json"
    schema.parent.mkdir(parents=True, exist_ok=True)
    schema.write_text('{"properties": 5}\n')
    assert main(["-C", str(nasty), "build"]) == 1
    err = capsys.readouterr().err
    assert "RG701" in err and "values.schema.json" in err and "Traceback" not in err
    assert schema.read_text() == '{"properties": 5}\n'  # nothing was written


@pytest.mark.parametrize("name", ["values.yaml", "values.schema.json"])
def test_a_shared_file_that_is_not_utf8_is_reported_not_overwritten(nasty, capsys, name):
    # regression: it was taken for missing, and the team's keys were overwritten
    f = nasty / "charts/nasty" / name
    old = b'{"description": "caf\xe9"}\n' if name.endswith(".json") else b"note: caf\xe9\nenabled: true\n"
    f.write_bytes(old)
    for cmd in ("build", "check"):
        assert main(["-C", str(nasty), cmd]) == 1
        out = capsys.readouterr()
        assert "RG701" in out.out + out.err and "is not UTF-8 text (byte 0xe9" in out.out + out.err
    assert f.read_bytes() == old


def test_mkdocs_yml_that_is_not_utf8_is_a_clean_error(project, capsys):
    (project / "mkdocs.yml").write_bytes(b"site_name: caf\xe9\n")
    for cmd in ("build", "check"):
        assert main(["-C", str(project), cmd]) == 2
        err = capsys.readouterr().err
        assert "mkdocs.yml is not UTF-8 text" in err and "Traceback" not in err


# --- through rulegen build / check --------------------------------------------------------

NASTY_SPEC = """\
app: nasty
chart: {path: charts/nasty}
groups:
  - name: nasty
    rules:
      - alert: NastyDown
        expr: up{job="nasty"} == 0
        for: 5m
        severity: warning
        summary: Nasty is down.
        description: Nasty is down.
"""


@pytest.fixture
def nasty(project, capsys):
    """The bundled project plus a spec whose chart starts with only a values.yaml."""
    (project / "rules/nasty.yaml").write_text(NASTY_SPEC, encoding="utf-8")
    (project / "charts/nasty").mkdir()
    return project


def test_build_keeps_unicode_separators_in_values_byte_for_byte(nasty, capsys):
    old = 'note: "a\u2028b"\nother: "x\x85y"\nsep: "p\u2029q"\nenabled: true\n'.encode()
    (nasty / "charts/nasty/values.yaml").write_bytes(old)
    assert main(["-C", str(nasty), "build"]) == 0
    new = (nasty / "charts/nasty/values.yaml").read_bytes()
    assert new.startswith(old)
    assert new[len(old):].startswith(b"monitoring:\n  enabled: false  # rulegen gate")
    capsys.readouterr()
    assert main(["-C", str(nasty), "check"]) == 0


def test_build_keeps_crlf_shared_files_crlf_and_check_agrees(nasty, capsys):
    values = "# team values\r\nenabled: true\r\nmonitoring:\r\n  enabled: true\r\n"
    (nasty / "charts/nasty/values.yaml").write_bytes(values.encode())
    schema = '{\r\n  "type": "object"\r\n}\r\n'
    (nasty / "charts/nasty/values.schema.json").write_bytes(schema.encode())
    mk = (nasty / "mkdocs.yml").read_bytes()
    assert b"\r\n" not in mk
    (nasty / "mkdocs.yml").write_bytes(mk.replace(b"\n", b"\r\n"))
    assert main(["-C", str(nasty), "build"]) == 0
    for rel in ("charts/nasty/values.yaml", "charts/nasty/values.schema.json", "mkdocs.yml"):
        data = (nasty / rel).read_bytes()
        assert b"\n" not in data.replace(b"\r\n", b""), rel
    new_values = (nasty / "charts/nasty/values.yaml").read_bytes()
    assert new_values.startswith(values.encode())
    assert new_values[len(values):].startswith(
        b"# Knobs of the PrometheusRule generated by rulegen (templates/prometheusrule.yaml).\r\n"
        b"prometheusRule:\r\n")
    assert (nasty / "charts/nasty/values.schema.json").read_bytes().startswith(b'{\r\n  "type": "object",\r\n')
    capsys.readouterr()
    assert main(["-C", str(nasty), "check"]) == 0
    out = capsys.readouterr().out
    assert out.endswith("generated file(s) up to date\n")
    # a second build changes nothing
    before = {p: (nasty / p).read_bytes() for p in ("charts/nasty/values.yaml", "mkdocs.yml")}
    assert main(["-C", str(nasty), "build"]) == 0
    assert {p: (nasty / p).read_bytes() for p in before} == before


def test_broken_values_yaml_is_rg701_at_the_parsers_position(nasty, capsys):
    # regression: it was reported at 1:1 whatever the YAML error's position
    (nasty / "charts/nasty/values.yaml").write_text("enabled: true\nmonitoring:\n  enabled: true\nfoo: bar: baz\n")
    assert main(["-C", str(nasty), "build"]) == 1
    err = capsys.readouterr().err
    assert "charts/nasty/values.yaml:4:9: error RG701 cannot update values.yaml" in err


# -- compact JSON: values.schema.json a reviewer reads (issue 29: a new chart's schema was 294 lines) --

def test_compact_json_keeps_small_members_on_one_line_and_the_same_data():
    import json
    from rulegen.render.values_schema import compact_json
    doc = {"enabled": {"type": ["boolean", "null"]},
           "long": {"properties": {f"Alert{i}": {"type": "boolean"} for i in range(8)}}}
    text = compact_json(doc)
    assert json.loads(text) == doc
    assert '  "enabled": {"type": ["boolean", "null"]},' in text.splitlines()
    # a member too wide for one line opens, one member per line, and closes at its own indent
    assert '  "long": {' in text.splitlines() and '      "Alert7": {"type": "boolean"}' in text.splitlines()
    assert all(len(line) <= 100 for line in text.splitlines())
    assert compact_json([]) == "[]" and compact_json({}) == "{}" and compact_json("é") == '"é"'


def test_bundled_values_schemas_are_compact_and_read_back_equal():
    import json
    from helpers import REPO
    from rulegen.render.values_schema import compact_json
    for path in sorted((REPO / "charts").glob("*/values.schema.json")):
        text = path.read_text(encoding="utf-8")
        assert compact_json(json.loads(text)) + "\n" == text, path
        assert max(len(line) for line in text.splitlines()) <= 120, path
