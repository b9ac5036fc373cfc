"""The output stage (rulegen.outputs): render returns outputs only, each output check emits and
documents its own codes (issue 24)."""

from __future__ import annotations

import ast
import importlib
import re

import pytest

import rulegen.config
from rulegen import checkdocs
from rulegen.outputs import check_plan
from rulegen.pipeline import load_project
from rulegen.render import plan


def _codes_emitted(module) -> set[str]:
    """Codes written as string literals in ``module``'s code (its docstrings left out)."""
    tree = ast.parse(open(module.__file__, encoding="utf-8").read())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            out.update(re.findall(r"\bRG\d{3}\b", n.value))
    return out


@pytest.mark.parametrize("module", sorted({m for parts in checkdocs.PARTS.values() for m in parts}))
def test_each_part_documents_only_codes_it_emits(module):
    mod = importlib.import_module(module)
    documented = {c.code for c in checkdocs.parse(module, "Codes.\n\n" + checkdocs._codes_of(mod.__doc__ or "")).codes}
    assert documented, f"{module} documents no code"
    assert documented <= _codes_emitted(mod), f"{module} documents codes another module emits"


def test_the_output_codes_moved_to_their_emitters_keep_their_text():
    codes = checkdocs.codes()
    assert codes["RG730"].family == "outputs" and codes["RG363"].family == "outputs"
    assert codes["RG512"].family == "links" and codes["RG717"].family == "links"
    # the families of several modules sort by their first module's code, as before
    names = [f.name for f in sorted(checkdocs.families(), key=lambda f: f.order or min(c.code for c in f.codes))]
    assert names.index("outputs") == names.index("links") - 1
    assert names.index("slos") < names.index("names") < names.index("outputs")


def test_plan_uses_the_config_it_is_given_and_reads_none(project, monkeypatch):
    loaded = load_project(project)
    monkeypatch.setattr(rulegen.config, "load_config", lambda root: pytest.fail("config loaded again"))
    monkeypatch.setattr("rulegen.render.load_config", lambda root: pytest.fail("config loaded again"))
    outputs, findings = plan(loaded.specs, project, "helm", loaded.config)
    assert outputs and not findings


def test_a_stale_knob_is_found_by_the_output_stage_not_by_render(project):
    values = project / "charts/llama-swap/values.yaml"
    text = values.read_text()
    assert text.count("  disabled: {}\n") == 1
    values.write_text(text.replace("  disabled: {}\n", "  disabled:\n    Gone: true\n"))
    loaded = load_project(project)
    outputs, findings = plan(loaded.specs, project, "helm", loaded.config)
    assert [f.code for f in findings] == []
    found = check_plan(outputs, loaded.specs, project)
    assert [(f.file, f.code) for f in found] == [("charts/llama-swap/values.yaml", "RG730")]
    assert found[0].message.startswith("prometheusRule.disabled.Gone names no rule of this chart (renamed or removed?)")
