"""rulegen.codecache: compiled schema validator and templates kept like Python's bytecode."""

from __future__ import annotations

import json
import sys

import fastjsonschema
import jinja2
import pytest

from rulegen import codecache
from rulegen.validate.checks import schema

DEFINITION = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object", "required": ["app"],
    "properties": {"app": {"type": "string", "pattern": "^[a-z][a-z0-9-]*$"}},
}


@pytest.fixture
def prefix(tmp_path, monkeypatch):
    """A pycache prefix of this test's own, with bytecode writing on."""
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "pyc"))
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    return tmp_path / "pyc" / "rulegen-codecache"


def entries(folder):
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def judge(validate, data) -> bool:
    try:
        validate(data)
    except fastjsonschema.JsonSchemaException:
        return False
    return True


def test_schema_validator_is_compiled_once_then_read_back(prefix, monkeypatch):
    first = schema._compiled(DEFINITION)
    [name] = entries(prefix)
    assert name.startswith("schema-") and len(name) == len("schema-") + 64

    def no_generation(*_a, **_k):
        raise AssertionError("the kept code should have been used")

    monkeypatch.setattr(fastjsonschema, "compile_to_code", no_generation)
    again = schema._compiled(DEFINITION)
    for data, ok in (({"app": "web"}, True), ({"app": "Web"}, False), ({}, False), ({"app": 3}, False)):
        assert judge(first, data) is judge(again, data) is ok


def test_another_schema_gets_another_entry(prefix):
    schema._compiled(DEFINITION)
    changed = dict(DEFINITION, required=[])
    assert judge(schema._compiled(changed), {}) is True
    assert len(entries(prefix)) == 2


def test_an_entry_under_another_name_is_a_miss(prefix):
    # a validator kept for one schema, copied over another's entry, is never used for it
    schema._compiled(DEFINITION)
    lax = {"$schema": "http://json-schema.org/draft-07/schema#"}
    schema._compiled(lax)

    def name_of(definition):
        return "schema-" + codecache.key("fastjsonschema", fastjsonschema.VERSION, schema._own_source(),
                                         json.dumps(definition, sort_keys=True))

    strict_name, lax_name = name_of(DEFINITION), name_of(lax)
    assert sorted(entries(prefix)) == sorted([strict_name, lax_name])
    (prefix / strict_name).write_bytes((prefix / lax_name).read_bytes())
    assert codecache.read_bytes(strict_name) is None
    assert judge(schema._compiled(DEFINITION), {"app": "Web"}) is False


def test_an_entry_that_is_not_a_regular_file_is_a_miss(prefix):
    import os
    schema._compiled(DEFINITION)
    [name] = entries(prefix)
    (prefix / name).unlink()
    os.mkfifo(prefix / name)  # reading it would wait forever for a writer
    assert codecache.read_bytes(name) is None
    assert judge(schema._compiled(DEFINITION), {"app": "Web"}) is False


def test_a_change_to_the_code_that_makes_the_validator_is_a_new_entry(prefix, monkeypatch):
    schema._compiled(DEFINITION)
    monkeypatch.setattr(schema, "_own_source", lambda: b"schema.py, edited")
    schema._compiled(DEFINITION)
    assert len(entries(prefix)) == 2


def test_a_damaged_entry_is_made_again(prefix):
    schema._compiled(DEFINITION)
    [name] = entries(prefix)
    good = (prefix / name).read_bytes()
    (prefix / name).write_bytes(b"\x00not marshal data")
    assert judge(schema._compiled(DEFINITION), {"app": "Web"}) is False
    assert codecache.read_bytes(name) is not None  # rewritten whole
    # a flipped bit anywhere (marshal may crash the interpreter on corrupt data) is caught
    # by the entry's checksum before it is unmarshalled
    for at in range(0, len(good), max(1, len(good) // 97)):
        bad = bytearray(good)
        bad[at] ^= 0x10
        (prefix / name).write_bytes(bytes(bad))
        assert codecache.read_bytes(name) is None, at
    assert judge(schema._compiled(DEFINITION), {"app": "web"}) is True
    assert codecache.read_bytes(name) is not None


def test_nothing_is_written_when_python_writes_no_bytecode(prefix, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    assert judge(schema._compiled(DEFINITION), {"app": "web"}) is True
    assert not prefix.exists()
    env = jinja2.Environment(loader=jinja2.DictLoader({"t": "[[ x ]]"}), variable_start_string="[[",
                             variable_end_string="]]", bytecode_cache=codecache.jinja_bytecode_cache("s"))
    assert env.get_template("t").render(x=1) == "1"
    assert not prefix.exists()


def test_templates_are_kept_and_a_changed_template_is_compiled_again(prefix, tmp_path):
    tdir = tmp_path / "t"
    tdir.mkdir()
    (tdir / "a.j2").write_text("one [[ x ]]")

    def render(settings="s"):
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(tdir)), variable_start_string="[[",
                                 variable_end_string="]]", bytecode_cache=codecache.jinja_bytecode_cache(settings))
        return env.get_template("a.j2").render(x=1)

    assert render() == "one 1"
    [entry] = entries(prefix)
    assert entry.startswith("jinja-")
    assert render() == "one 1"
    (tdir / "a.j2").write_text("two [[ x ]]")
    assert render() == "two 1"  # Jinja2 checks the source checksum of a kept template
    render("other settings")  # other delimiters or options: another entry
    assert len(entries(prefix)) == 2
    # a damaged entry is not used, and is made again
    kept = (prefix / entry).read_bytes()
    (prefix / entry).write_bytes(kept[:-40] + bytes(40))
    assert codecache.read_bytes(entry) is None
    assert render() == "two 1"
    assert codecache.read_bytes(entry) is not None  # made again
    assert oct((prefix / entry).stat().st_mode & 0o777) == "0o644"  # shared like a .pyc


def test_rulegen_templates_render_the_same_with_and_without_kept_code(prefix, project):
    from rulegen.pipeline import load_project
    from rulegen.render import helm, jinja, runbook

    specs = load_project(project).specs

    def outputs():
        jinja.environment.cache_clear()
        return [helm.render_template(s, project, "https://rb.example/", "notice", "sum") for s in specs] + \
               [runbook.render_page(s, specs, ["h"], False, "") for s in specs]

    cold = outputs()
    assert any(e.startswith("jinja-") for e in entries(prefix))  # templates were kept
    assert outputs() == cold
    jinja.environment.cache_clear()
