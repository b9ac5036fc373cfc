"""Bounded YAML: every YAML text rulegen parses has its alias expansion checked first.

A YAML alias (``*a``) repeats the node its anchor (``&a``) names; ten levels of ten aliases
each ("billion laughs") are a few hundred bytes of text that expand to 10^10 values, and any
code that walks, copies, validates or dumps the loaded data then runs for minutes and fills
memory. Before a text with anchors is parsed, its node graph is composed (libyaml when
PyYAML has it: aliases stay shared nodes, so this is linear in the text) and walked once,
without recursion, sizing every node once; when the whole expands to more than the limit,
the text is refused with ``RG105`` (the same walk the spec loader uses for specs, whose
tighter limit is :data:`rulegen.spec.loader.MAX_NODES`).

The limit for other YAML (plain rule files, test files and chart templates given to
``rulegen import``, ``values.yaml``, the baseline, ``.rulegen.yaml``...) is
:data:`DEFAULT_MAX_VALUES`, raised with the environment variable ``RULEGEN_MAX_YAML_VALUES``.
A text with no anchor has no aliases and costs one regex search. Text that does not compose
(a syntax error) is left to the real parser, which reports it.
"""

from __future__ import annotations

import re

import yaml
from yaml.nodes import MappingNode, SequenceNode

from .read import InputRefused, positive_env

#: Values a YAML text other than a spec may expand to through aliases, by default.
DEFAULT_MAX_VALUES = 1_000_000
#: The environment variable that sets :data:`DEFAULT_MAX_VALUES` otherwise.
LIMIT_ENV = "RULEGEN_MAX_YAML_VALUES"

#: An anchor: without one a YAML text has no aliases.
ANCHOR = re.compile(r"&[^\s,\[\]{}]")

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class TooLarge(Exception):
    """The node graph expands to more values than allowed."""


class Recursive(Exception):
    """A node contains itself through an alias; ``where`` is its (line, col), 1-based."""

    def __init__(self, where):
        super().__init__(where)
        self.where = where


def children(node) -> list:
    """The child nodes of a composed YAML node (keys and values of a mapping)."""
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [x for kv in node.value for x in kv]
    return []


def mark(node) -> tuple[int, int]:
    """(line, col), 1-based, where ``node`` starts; (1, 1) when unknown."""
    m = getattr(node, "start_mark", None)
    return (m.line + 1, m.column + 1) if m is not None else (1, 1)


def check_graph(root, limit: int, cycles_ok: bool = False) -> int:
    """Walk the node graph from ``root`` iteratively and return how many values it expands
    to. Shared nodes are sized once (memoized), so the walk is linear in the number of
    distinct nodes.

    Raises:
        TooLarge: the graph expands to more than ``limit`` values.
        Recursive: a node contains itself through an alias (unless ``cycles_ok``: the alias
            back to an enclosing node then counts as one value).
    """
    size: dict[int, int] = {}
    on_stack: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        kids = children(node)
        if done:
            on_stack.discard(nid)
            total = 1 + sum(size.get(id(c), 1) for c in kids)
            if total > limit:
                raise TooLarge()
            size[nid] = total
            continue
        if nid in size:
            continue
        on_stack.add(nid)
        stack.append((node, True))
        for c in kids:
            cid = id(c)
            if cid in on_stack:
                if cycles_ok:
                    continue
                raise Recursive(mark(c))
            if cid not in size:
                stack.append((c, False))
    return size.get(id(root), 1)


def max_values() -> int:
    """The alias expansion limit: ``RULEGEN_MAX_YAML_VALUES`` when set to a positive whole
    number, else :data:`DEFAULT_MAX_VALUES`.

    Raises:
        rulegen.findings.RulegenError: the variable is set to something else.
    """
    return positive_env(LIMIT_ENV, DEFAULT_MAX_VALUES)


def problem(text: str, limit: int | None = None) -> str | None:
    """Why ``text`` may not be parsed (a sentence naming the limit and how to raise it), or
    None: it has no anchor, does not compose (the parser reports that), or stays within
    ``limit`` values (default :func:`max_values`). Every document of a stream counts."""
    if not isinstance(text, str) or not ANCHOR.search(text):
        return None
    limit = max_values() if limit is None else limit
    try:
        loader = _LOADER(text)
        try:
            while loader.check_node():
                node = loader.get_node()
                if node is not None:
                    check_graph(node, limit, cycles_ok=True)
        finally:
            loader.dispose()
    except TooLarge:
        return (f"the YAML expands to more than {limit} values through aliases (aliases repeated inside "
                "aliases, a \"billion laughs\"); write the values out or use one level of anchors, or, "
                f"when it really is that big, raise the limit with {LIMIT_ENV}=<values>")
    except RecursionError:
        return TOO_DEEP
    except (yaml.YAMLError, ValueError, TypeError, UnicodeError):
        return None
    return None


def check_text(text: str, shown: str, limit: int | None = None) -> None:
    """Raise :class:`rulegen.fs.read.InputRefused` (``RG105``) when :func:`problem` finds one
    in ``text`` (the content of ``shown``); for every YAML parser, ruamel.yaml's included."""
    why = problem(text, limit)
    if why is not None:
        raise InputRefused("RG105", shown, why)


TOO_DEEP = "the YAML is nested too deeply to be read"


def _parse(text: str, shown: str, parse):
    """``parse()`` after :func:`check_text`; a text nested deeper than Python's recursion
    limit (``[[[[...`` with no anchor at all, which :func:`problem` does not walk) is
    ``RG105``, not a traceback."""
    check_text(text, shown)
    try:
        return parse()
    except RecursionError:
        raise InputRefused("RG105", shown, TOO_DEEP) from None


def safe_load(text: str, shown: str = "<yaml>"):
    """``yaml.safe_load`` after :func:`check_text`.

    Raises:
        InputRefused: ``RG105`` (aliases expand too far, or nested too deeply). yaml.YAMLError: not YAML.
    """
    return _parse(text, shown, lambda: yaml.safe_load(text))


def load_all(text: str, loader, shown: str = "<yaml>") -> list:
    """Every document of ``text`` (``yaml.load_all`` with ``loader``), after :func:`check_text`."""
    return _parse(text, shown, lambda: list(yaml.load_all(text, Loader=loader)))


def load(text: str, loader, shown: str = "<yaml>"):
    """``yaml.load(text, Loader=loader)`` after :func:`check_text` (a loader of the caller's,
    e.g. one that keeps duplicate keys as errors)."""
    return _parse(text, shown, lambda: yaml.load(text, Loader=loader))


def compose(text: str, shown: str = "<yaml>", loader=None):
    """``yaml.compose`` (the single document's node graph) after :func:`check_text`; the
    graph itself shares aliased nodes, the check bounds what walking it costs."""
    return _parse(text, shown, lambda: yaml.compose(text, Loader=loader or yaml.SafeLoader))
