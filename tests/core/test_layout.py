"""The package's shape (issue 24): commands on top print, libraries below return data, and the
import graph has no circles."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import rulegen
from rulegen.cli import COMMANDS, parser

PKG = Path(rulegen.__file__).parent

def _modules() -> dict[str, Path]:
    mods = {}
    for f in PKG.rglob("*.py"):
        rel = f.relative_to(PKG.parent).with_suffix("")
        mods[".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)] = f
    return mods


def _targets(mods: dict, cur: str, node) -> set[str]:
    """The package's modules an import statement in module ``cur`` loads (``from pkg import
    mod`` counts as mod; a name from a package's ``__init__`` as the package)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        base = node.module or ""
        if node.level:
            parts = cur.split(".")
            parent = parts if mods[cur].name == "__init__.py" else parts[:-1]
            parent = parent[:len(parent) - (node.level - 1)]
            base = ".".join(parent + ([node.module] if node.module else []))
        subs = [f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in mods]
        names = subs or [base]
    out = set()
    for n in names:
        while n and n not in mods:
            n = n.rpartition(".")[0]
        if n and n not in (cur, "rulegen"):
            out.add(n)
    return out


def import_graph() -> dict[str, set[str]]:
    """Module -> the package's modules it imports, imports inside functions included."""
    mods = _modules()
    graph = {m: set() for m in mods}
    for m, f in mods.items():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                graph[m] |= _targets(mods, m, node)
    return graph


def circles(graph: dict[str, set[str]]) -> set[frozenset]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    found: set = set()

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.add(frozenset(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_circles_finds_a_circle_and_only_one():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(graph) == {frozenset({"a", "b", "c"})}


def test_the_import_graph_has_no_circle():
    assert sorted(sorted(c) for c in circles(import_graph())) == []


def test_the_cut_circles_stay_cut():
    graph = import_graph()
    assert "rulegen.pipeline" not in graph["rulegen.baseline"]
    assert "rulegen.run.testing" in graph["rulegen.run.mutation"]
    assert "rulegen.run.mutation" not in graph["rulegen.run.testing"]
    assert "rulegen.importer" not in graph["rulegen.starter"]
    assert "rulegen.gitops.diff" not in graph["rulegen.gitops.policy"]
    # no library imports the command layer
    for m, targets in graph.items():
        if not m.startswith(("rulegen.commands", "rulegen.cli", "rulegen.__main__")):
            assert not {t for t in targets if t.startswith(("rulegen.commands", "rulegen.cli"))}, m


#: Writing to stdout or stderr: print(), or a write on sys.stdout / sys.stderr.
PRINTS = re.compile(r"\bprint\(|\bsys\.std(out|err)\.write\(")


def test_only_the_commands_and_cli_print():
    offenders = []
    for f in sorted(PKG.rglob("*.py")):
        rel = f.relative_to(PKG).as_posix()
        if rel.startswith("commands/") or rel == "cli.py":
            continue
        for i, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            if PRINTS.search(line.split("#")[0]):
                offenders.append(f"rulegen/{rel}:{i}: {line.strip()}")
    assert offenders == []


def test_every_command_has_its_module():
    sub = next(a for a in parser()._actions if a.dest == "command")
    assert list(sub.choices) == [c.NAME for c in COMMANDS]
    for command in COMMANDS:
        assert command.__name__.startswith("rulegen.commands.")
        assert sub.choices[command.NAME].get_default("func") is command.run
        assert command.__doc__ and command.EXAMPLE
    names = {p.stem for p in (PKG / "commands").glob("*.py")} - {"__init__"}
    assert names == {c.__name__.rpartition(".")[2] for c in COMMANDS}


def test_the_parser_loads_no_library():
    # `rulegen --help` and `--version` build the parser only: the command modules import their
    # libraries where they run, so these stay fast
    code = ("import sys, rulegen.cli; rulegen.cli.parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('rulegen.pipeline', 'rulegen.spec', "
            "'rulegen.validate', 'rulegen.render', 'rulegen.run', 'rulegen.importer'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_validate_loads_only_what_the_project_needs(tmp_path):
    # a spec without runbook markup, a project without routing: validate loads neither the
    # renderers (jinja2, Markdown, ruamel.yaml) nor the HTML check, the router or tar archives
    from helpers.samples import TWO_SEVERITIES
    (tmp_path / "rules").mkdir()
    (tmp_path / "rules" / "shop.yaml").write_text(TWO_SEVERITIES, encoding="utf-8")
    code = ("import io, sys, contextlib, rulegen.cli\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n"
            f"    code = rulegen.cli.main(['-C', {str(tmp_path)!r}, 'validate'])\n"
            "print(code, sorted(m for m in sys.modules if m.split('.')[0] in ('jinja2', 'markdown', 'pymdownx', "
            "'ruamel', 'tarfile', 'pygments') or m in ('html.parser', 'rulegen.render.safe', "
            "'rulegen.routing.project', 'rulegen.render.runbook', 'rulegen.render.values')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split(" ", 1) == ["1", "[]\n"]  # exit 1: TWO_SEVERITIES holds a severity error
