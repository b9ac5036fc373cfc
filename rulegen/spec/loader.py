"""Load spec files: YAML text in, plain data plus source positions out.

Specs are parsed by libyaml (PyYAML's C parser and composer; PyYAML's pure-Python one when
libyaml is missing) into a node graph that keeps every value's line and column and quoting
style. rulegen then builds plain Python data (dict, list, str, int, float, bool, None) itself,
resolving plain scalars with the YAML 1.2 core schema (``yes``, ``off`` and ``1:20`` stay
strings; ``0x15`` is the number 21; ``true``/``false`` are booleans), and a position table keyed
by the value's path, e.g. ``("groups", 0, "rules", 1, "expr")``. Problems become findings,
never tracebacks:

* ``RG101`` YAML syntax error, ``RG102`` duplicate key, ``RG103`` tab used for indentation,
* ``RG104`` self-referencing anchor, ``RG105`` too large (alias expansion, node count, nesting),
* ``RG106`` file too big, not UTF-8 or binary, ``RG107`` empty spec or not a mapping.

Hostile input is bounded: files larger than :data:`MAX_FILE_BYTES` are not parsed, flow
collections nested deeper than :data:`MAX_DEPTH` are refused before parsing (libyaml itself
stops at 1000 levels), and the composed node graph is walked once, without recursion, before
any Python object is built, so an alias inside its own anchor (``&a [*a]``) is RG104 and
aliases that expand past :data:`MAX_NODES` values ("billion laughs") are RG105. Merge keys
(``<<: *base``) are applied; explicit tags (``!!str 5``) are honoured for scalars.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode
from yaml.resolver import BaseResolver

from ..findings import Finding, Severity
from ..fs import read as fs_read
from ..fs.yamlbound import ANCHOR, check_graph, mark as _mark
from ..fs.yamlbound import Recursive as _Recursive
from ..fs.yamlbound import TooLarge as _TooLarge
from .testvalues import as_promtool_reads, scalar_text
from .yamlnodes import _PLAIN, _key_text, _merged_pairs, _scalar, plain_token, without_comment

try:  # libyaml: about 20x faster than the pure-Python parser
    from yaml.cyaml import CParser as _Parser
except ImportError:  # pragma: no cover - PyYAML built without libyaml
    _Parser = None

#: Largest spec file read, in bytes (a spec is one app; the bundled one is 13 kB, the largest
#: app of the awesome-prometheus-alerts corpus about 60 kB).
MAX_FILE_BYTES = 512 * 1024
#: Largest number of values a spec may hold or expand to (guards against "billion laughs").
#: The bundled llama-swap spec, two alerts with rich runbooks and six tests, has about 300.
MAX_NODES = 50_000
#: Deepest nesting of flow collections (``[``/``{``) accepted; a spec needs about 10.
MAX_DEPTH = 100

Path_ = tuple  # a value's path: keys (str) and list indexes (int)


@dataclass
class LoadedFile:
    """One spec file as loaded.

    Attributes:
        path: the file path as displayed in findings.
        text: the file's text.
        data: the plain data (a dict for a valid spec), or None when loading failed.
        positions: path -> (line, col) of each value, 1-based.
        key_positions: path -> (line, col) of each mapping key, 1-based.
        plain: paths of string values written as plain (unquoted) YAML scalars, plain
            timestamps included (their data is the text of the date).
        findings: loading problems (RG1xx).
    """

    path: str
    text: str
    # a factory, not a class-level default: an instance that travelled without its data (see
    # __getstate__) must reach __getattr__, not a class attribute None
    data: object = field(default_factory=lambda: None)
    positions: dict = field(default_factory=dict)
    key_positions: dict = field(default_factory=dict)
    plain: set = field(default_factory=set)
    findings: list = field(default_factory=list)

    def __getstate__(self):
        # What travels between processes (rulegen.parallel). The lines cache never does; for
        # a file made by load_text, neither do data, positions, key_positions and plain: they
        # are remade from the text on first use (most of a project's files never need them
        # again once validated), which keeps the pickle a third of the size.
        skip = _REMADE if self.__dict__.get("_from_text") else ()
        state = {k: v for k, v in self.__dict__.items() if k != "_lines" and k not in skip}
        if skip:
            state["_remake"] = True
        return state

    def __getattr__(self, name):
        # called only for an attribute that is not there: one dropped by __getstate__
        if name in _REMADE and self.__dict__.pop("_remake", False):
            fresh = load_text(self.text, self.path)
            for k in _REMADE:
                self.__dict__[k] = fresh.__dict__[k]
            return self.__dict__[name]
        raise AttributeError(name)

    def pos(self, path: Path_, key: bool = False) -> tuple[int, int]:
        """Best known (line, col) for ``path``: the value, else its key, else the nearest parent."""
        p = tuple(path)
        while True:
            table = (self.key_positions, self.positions) if key else (self.positions, self.key_positions)
            for t in table:
                if p in t:
                    return t[p]
            if not p:
                return (1, 1)
            p = p[:-1]

    def lines(self) -> list[str]:
        """The text's lines (``str.splitlines``), split once per file and shared by every
        reader of positions; treat the list as read-only."""
        lines = self.__dict__.get("_lines")
        if lines is None:
            lines = self.__dict__["_lines"] = self.text.splitlines()
        return lines

    def source_token(self, path: Path_) -> str | None:
        """The text of a plain scalar as written at ``path`` (e.g. ``0x15``, which YAML reads
        as the number 21), or None when unknown."""
        if tuple(path) not in self.positions:
            return None
        line, col = self.positions[tuple(path)]
        lines = self.lines()
        if not 0 < line <= len(lines):
            return None
        rest = lines[line - 1][col - 1:]
        tok = plain_token(rest)
        return tok or None

    def finding(self, path: Path_, code: str, message: str, rule: str = "",
                severity: Severity = Severity.ERROR, key: bool = False) -> Finding:
        """A finding located at ``path`` in this file."""
        line, col = self.pos(path, key=key)
        return Finding(self.path, line, col, code, severity, message, rule)


#: LoadedFile attributes that load_text makes from the text alone (see __getstate__).
_REMADE = ("data", "positions", "key_positions", "plain")


class _Duplicate(Exception):
    def __init__(self, key: str, node):
        self.key = key
        self.node = node


_DEFAULT_TAGS = {ScalarNode: BaseResolver.DEFAULT_SCALAR_TAG, SequenceNode: BaseResolver.DEFAULT_SEQUENCE_TAG,
                 MappingNode: BaseResolver.DEFAULT_MAPPING_TAG}


class _Resolver(BaseResolver):
    """Leaves every implicitly typed plain scalar as :data:`_PLAIN` for
    :func:`rulegen.spec.yamlnodes.resolve_plain` (YAML 1.2 core schema) instead of PyYAML's
    YAML 1.1 rules; explicit tags are kept."""

    def resolve(self, kind, value, implicit):
        # libyaml asks only for nodes without an explicit tag; rulegen adds no path resolvers,
        # so the answer is BaseResolver's default tag for the kind (a table, not its method)
        if kind is ScalarNode and implicit[0]:
            return _PLAIN
        return _DEFAULT_TAGS[kind]


if _Parser is not None:
    class _Composer(_Parser, _Resolver):
        def __init__(self, stream):
            _Parser.__init__(self, stream)
            _Resolver.__init__(self)
else:  # pragma: no cover
    from yaml.composer import Composer as _PyComposer
    from yaml.parser import Parser as _PyParser
    from yaml.reader import Reader as _PyReader
    from yaml.scanner import Scanner as _PyScanner

    class _Composer(_PyReader, _PyScanner, _PyParser, _PyComposer, _Resolver):
        def __init__(self, stream):
            _PyReader.__init__(self, stream)
            _PyScanner.__init__(self)
            _PyParser.__init__(self)
            _PyComposer.__init__(self)
            _Resolver.__init__(self)


def _compose(text: str):
    """The single document's root node, or None for an empty stream. Raises PyYAML errors."""
    loader = _Composer(text)
    try:
        return loader.get_single_node()
    finally:
        loader.dispose()


def _check_graph(root) -> None:
    """Raise :class:`_Recursive` (with the node's (line, col), 1-based) when a node contains
    itself through an alias, :class:`_TooLarge` when the graph expands to more than
    :data:`MAX_NODES` values (:func:`rulegen.fs.yamlbound.check_graph`, the walk every YAML
    read shares)."""
    check_graph(root, MAX_NODES)


_BRACKETS = re.compile(r"[\[\]{}]")


_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")


def _flow_depth_exceeded(text: str):
    """(line, col) where flow brackets first nest deeper than :data:`MAX_DEPTH`, or None.
    Brackets are counted naively (also inside strings), which only matters for text with
    more than :data:`MAX_DEPTH` unclosed brackets."""
    brackets = _NOT_BRACKETS.sub("", text)  # the same walk over the brackets alone, first
    depth = 0
    for c in brackets:
        if c in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                break
        elif depth:
            depth -= 1
    else:
        return None
    depth = 0
    for m in _BRACKETS.finditer(text):
        if m.group() in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
                return line, col
        elif depth:
            depth -= 1
    return None


def load_text(text: str, path: str) -> LoadedFile:
    """Parse ``text`` (the content of ``path``) into a :class:`LoadedFile`. Never raises."""
    lf = LoadedFile(path=path, text=text)
    lf.__dict__["_from_text"] = True  # what load_text makes of the text, it can make again
    if "\x00" in text:
        lf.findings.append(Finding(path, 1, 1, "RG106", Severity.ERROR,
                                   "file holds binary data (NUL bytes); a spec is a YAML text file"))
        return lf
    if len(text) > MAX_FILE_BYTES or len(text.encode("utf-8", "surrogatepass")) > MAX_FILE_BYTES:
        lf.findings.append(Finding(path, 0, 0, "RG106", Severity.ERROR,
                                   f"file is more than the {MAX_FILE_BYTES} bytes a spec may have; "
                                   "split it by app"))
        return lf
    deep = _flow_depth_exceeded(text)
    if deep is not None:
        lf.findings.append(Finding(path, deep[0], deep[1], "RG105", Severity.ERROR,
                                   f"flow collections ([ or {{) nested more than {MAX_DEPTH} deep; "
                                   "a spec needs a handful of levels, so close the brackets"))
        return lf
    try:
        root = _compose(text)
        if root is not None and ANCHOR.search(text):  # without anchors there are no aliases
            _check_graph(root)
    except _TooLarge:
        lf.findings.append(_too_large(path))
        return lf
    except _Recursive as r:
        lf.findings.append(_recursive(path, *r.where))
        return lf
    except yaml.MarkedYAMLError as e:
        lf.findings.append(_syntax(path, text, e))
        return lf
    except RecursionError:
        lf.findings.append(Finding(path, 1, 1, "RG105", Severity.ERROR,
                                   "the spec is nested too deeply to be a rule spec"))
        return lf
    except (yaml.YAMLError, ValueError, TypeError, AttributeError, UnicodeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        lf.findings.append(Finding(path, 1, 1, "RG101", Severity.ERROR, f"YAML could not be read: {msg}"))
        return lf
    if root is None:
        lf.findings.append(Finding(path, 1, 1, "RG107", Severity.ERROR,
                                   "the spec is empty; start it with `app: <name>` and a `groups:` list"))
        return lf
    if not isinstance(root, MappingNode):
        lf.findings.append(Finding(path, 1, 1, "RG107", Severity.ERROR,
                                   f"a spec must be a YAML mapping (app:, groups:, ...), not a {_kind(root)}; "
                                   "start it with `app: <name>` at the left margin"))
        return lf
    try:
        lf.data = _build(root, (), lf, [0])
        if isinstance(lf.data, dict) and "tests" in text:
            _tests_as_promtool_reads(lf)
    except _Duplicate as d:
        lf.data = None
        lf.positions.clear()
        lf.key_positions.clear()
        lf.plain.clear()
        line, col = _mark(d.node)
        lf.findings.append(Finding(path, line, col, "RG102", Severity.ERROR,
                                   f'key "{d.key}" appears twice in the same mapping; YAML keeps only '
                                   "one, so remove or rename the duplicate"))
    except _TooLarge:
        lf.data = None
        lf.findings.append(_too_large(path))
    except yaml.MarkedYAMLError as e:  # a merge key (<<) whose value is not a mapping
        lf.data = None
        lf.positions.clear()
        lf.key_positions.clear()
        lf.plain.clear()
        lf.findings.append(_syntax(path, text, e))
    except RecursionError:
        lf.data = None
        lf.findings.append(Finding(path, 1, 1, "RG105", Severity.ERROR,
                                   "the spec is nested too deeply to be a rule spec"))
    return lf


_TAG = re.compile(r"^!\S*\s+")


def _tests_as_promtool_reads(lf: LoadedFile) -> None:
    """Each rule's ``tests`` as promtool reads a test file (:mod:`rulegen.spec.testvalues`): a
    boolean, number, date or null where promtool wants a string is the scalar's text as
    written (``condition: true`` is ``"true"``), a null list or mapping an empty one."""
    def as_text(container, key, path):
        v = container[key]
        if v is None:
            return ""
        tok = lf.source_token(path)
        return _TAG.sub("", tok) if tok else scalar_text(v)

    groups = lf.data.get("groups")
    for gi, g in enumerate(groups if isinstance(groups, list) else ()):
        rules = g.get("rules") if isinstance(g, dict) else None
        for ri, r in enumerate(rules if isinstance(rules, list) else ()):
            tests = r.get("tests") if isinstance(r, dict) else None
            for ti, t in enumerate(tests if isinstance(tests, list) else ()):
                as_promtool_reads(t, ("groups", gi, "rules", ri, "tests", ti), as_text)


def _syntax(path: str, text: str, e) -> Finding:
    mark = e.problem_mark or e.context_mark
    problem = (e.problem or e.context or "invalid YAML").strip()
    line_text = _line(text, mark.line + 1) if mark is not None else ""
    if "\t" in problem or "'\\t'" in problem or (mark is not None and "\t" in line_text[: mark.column + 1]
                                                  and not line_text[: mark.column].strip(" \t-")):
        return _at(path, mark, "RG103", "tab character used for indentation; YAML indents with spaces only")
    if "nesting depth" in problem:
        return _at(path, mark, "RG105", "the spec is nested too deeply to be a rule spec")
    return _at(path, mark, "RG101", f"YAML syntax error: {problem}{_syntax_hint(problem, line_text, mark)}")


def _syntax_hint(problem: str, line_text: str, mark) -> str:
    """How to fix the YAML errors people meet in prose values: the character that changed the
    meaning and "quote it" with the value quoted (YAML 1.2: a plain scalar cannot hold ``: ``
    in a mapping value, and cannot start with a reserved indicator such as a backquote or ``@``).
    ``""`` when there is nothing specific to say."""
    if mark is None:
        return ""

    def quote(v: str) -> str:
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'

    if "cannot start any token" in problem and mark.column < len(line_text):
        ch = line_text[mark.column]
        value = without_comment(line_text[mark.column:]).strip()
        lead = line_text[:mark.column].strip()
        what = "a backquote (`` ` ``)" if ch == "`" else f"`{ch}`"
        return (f"; YAML reserves {what} at the start of a plain value; quote it: "
                f"{lead + ' ' if lead else ''}{quote(value)}")
    lead, item = re.match(r"(\s*(?:- )?(?:[^\s:\[{][^:]*: )?)(.*)", line_text).groups()
    item = without_comment(item).strip()
    if item[:1] in ("[", "{") and not item.endswith(("]", "}")) and mark.column >= len(lead):
        kind = "list" if item[0] == "[" else "mapping"
        return (f"; the `{item[0]}` at the start of the value makes YAML read a {kind}; quote it: "
                f"{lead.strip()} {quote(item)}")
    key, sep, value = line_text.partition(": ")
    value = without_comment(value).strip()
    if "mapping values are not allowed" in problem and sep and ": " in value \
            and value[0] not in "\"'|>[{":
        return (f"; the `: ` after `{value.split(': ', 1)[0].split()[-1]}` makes YAML read a mapping "
                f"inside the value; quote it: {key.strip()}: {quote(value)}")
    return ""


def load_file(path: Path, display: str | None = None) -> LoadedFile:
    """Read and parse one spec file. Never raises for bad content; see :func:`load_text`."""
    shown = display or str(path)
    try:
        raw = fs_read.read_bytes(path, shown, limit=MAX_FILE_BYTES)
    except fs_read.InputRefused as e:
        if e.code == "RG756":  # a spec's own limit, RG106 as before
            size = f"{e.size} bytes" if e.size is not None else "growing"
            return LoadedFile(path=shown, text="", findings=[
                Finding(shown, 0, 0, "RG106", Severity.ERROR,
                        f"file is {size}, more than the {MAX_FILE_BYTES} a spec may have; split it by app")])
        return LoadedFile(path=shown, text="", findings=[Finding(shown, 0, 0, e.code, Severity.ERROR, e.reason)])
    except OSError as e:
        return LoadedFile(path=shown, text="", findings=[
            Finding(shown, 0, 0, "RG106", Severity.ERROR, f"cannot read the file: {e.strerror or e}")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        return LoadedFile(path=shown, text="", findings=[
            Finding(shown, line, 1, "RG106", Severity.ERROR, "file is not UTF-8 text; save it as UTF-8")])
    if text.startswith("\ufeff"):
        text = text[1:]
    return load_text(text, shown)


def _too_large(path: str) -> Finding:
    return Finding(path, 1, 1, "RG105", Severity.ERROR,
                   f"the spec expands to more than {MAX_NODES} values (aliases repeated inside "
                   "aliases?); split it or drop the aliases")


def _recursive(path: str, line: int, col: int) -> Finding:
    return Finding(path, line, col, "RG104", Severity.ERROR,
                   "an anchor refers to itself (a YAML alias inside its own anchor); "
                   "write the value out instead")


def _at(path: str, mark, code: str, message: str) -> Finding:
    line = mark.line + 1 if mark is not None else 1
    col = mark.column + 1 if mark is not None else 1
    return Finding(path, line, col, code, Severity.ERROR, message)


def _line(text: str, n: int) -> str:
    lines = text.splitlines()
    return lines[n - 1] if 0 < n <= len(lines) else ""


def _kind(node) -> str:
    if isinstance(node, SequenceNode):
        return "list"
    if isinstance(node, ScalarNode):
        v = _scalar(node)
        return "string" if isinstance(v, str) else type(v).__name__
    return "mapping"


# -- building plain data (values of single nodes: :mod:`rulegen.spec.yamlnodes`) ----------


def _value_mark(node, lf: LoadedFile) -> tuple[int, int]:
    """(line, col) of a value. For a block sequence libyaml marks the end of the previous
    token when the ``-`` items are not indented under their key (``rules:`` then ``- alert``
    at the same column); the value's position is then its first ``-``."""
    if isinstance(node, SequenceNode) and not node.flow_style and node.value:
        line, col = _mark(node.value[0])
        text = _line_cached(lf, line)
        dash = text.rfind("-", 0, col - 1)
        if dash >= 0 and not text[dash + 1:col - 1].strip():
            return line, dash + 1
        return line, col
    return _mark(node)


def _line_cached(lf: LoadedFile, n: int) -> str:
    lines = lf.lines()
    return lines[n - 1] if 0 < n <= len(lines) else ""


def _build(node, path: tuple, lf: LoadedFile, counter: list):
    counter[0] += 1
    if counter[0] > MAX_NODES:
        raise _TooLarge()
    if isinstance(node, MappingNode):
        out = {}
        key_positions = lf.key_positions
        keys = [k.value if type(k) is ScalarNode else _key_text(k) for k, _ in node.value]
        if "<<" not in keys and len(set(keys)) == len(keys):  # the common case, in one pass
            for (k, v), key in zip(node.value, keys):
                sub = path + (key,)
                m = k.start_mark
                key_positions[sub] = (m.line + 1, m.column + 1)
                out[key] = _child(v, sub, lf, counter)
            return out
        own_keys = set()
        names = []
        merges = False
        for k, v in node.value:
            if isinstance(k, ScalarNode) and k.value == "<<" and k.tag in (_PLAIN, "tag:yaml.org,2002:merge"):
                merges = True
                continue
            name = _key_text(k)
            if name in own_keys:
                raise _Duplicate(name, k)
            own_keys.add(name)
            names.append(name)
        # without merge keys the pairs are the node's own, in order, and their names are known
        pairs = zip(node.value, names) if not merges else ((kv, _key_text(kv[0])) for kv in _merged_pairs(node))
        for (k, v), key in pairs:
            sub = path + (key,)
            key_positions[sub] = _mark(k)
            out[key] = _child(v, sub, lf, counter)
        return out
    if isinstance(node, SequenceNode):
        out = []
        for i, v in enumerate(node.value):
            out.append(_child(v, path + (i,), lf, counter))
        return out
    return _scalar(node)


def _child(v, sub: tuple, lf: LoadedFile, counter: list):
    """Value of a mapping or sequence member ``v`` at ``sub``, with its position recorded and
    ``sub`` added to ``lf.plain`` for a plain string (a scalar is resolved once, not twice)."""
    if type(v) is ScalarNode:
        m = v.start_mark
        lf.positions[sub] = (m.line + 1, m.column + 1)
        counter[0] += 1
        if counter[0] > MAX_NODES:
            raise _TooLarge()
        value = _scalar(v)
        if v.tag == _PLAIN and isinstance(value, str):  # _is_plain(v), from the value just made
            lf.plain.add(sub)
        return value
    lf.positions[sub] = _value_mark(v, lf)
    return _build(v, sub, lf, counter)
