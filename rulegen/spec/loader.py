"""Load spec files: YAML text in, plain data plus source positions out.

Specs are read with ruamel.yaml's round-trip loader (YAML 1.2, quotes preserved) so that every
value keeps its line and column. The result is converted to plain Python data (dict, list,
str, int, float, bool, None) and a position table keyed by the value's path, e.g.
``("groups", 0, "rules", 1, "expr")``. Problems become findings, never tracebacks:

* ``RG101`` YAML syntax error, ``RG102`` duplicate key, ``RG103`` tab used for indentation,
* ``RG104`` self-referencing anchor, ``RG105`` too large (alias expansion or node count),
* ``RG106`` file too big, not UTF-8 or binary, ``RG107`` empty spec or not a mapping.

Hostile input is bounded before and while it is parsed: files larger than
:data:`MAX_FILE_BYTES` are not parsed, flow collections nested deeper than :data:`MAX_DEPTH`
are refused before ruamel sees them (its scanner is quadratic in the nesting depth), and the
composer counts nodes as it reads them, the composed node graph is walked once, without recursion, before any Python object is built, so
an alias inside its own anchor (``&a [*a]``, which ruamel would silently turn into ``[None]``)
is RG104 and aliases that expand past :data:`MAX_NODES` values ("billion laughs") are RG105.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml as pyyaml
from ruamel.yaml import YAML
from ruamel.yaml.composer import Composer
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.constructor import DuplicateKeyError, RoundTripConstructor
from ruamel.yaml.error import MarkedYAMLError, YAMLError
from ruamel.yaml.nodes import MappingNode, SequenceNode
from ruamel.yaml.scalarstring import ScalarString

from ..findings import Finding, Severity

#: Largest spec file read, in bytes (a spec is one app; the bundled one is 13 kB, the largest
#: app of the awesome-prometheus-alerts corpus about 60 kB). ruamel reads 100-200 kB/s, so
#: this also bounds the parse time to a few seconds.
MAX_FILE_BYTES = 512 * 1024
#: Largest number of nodes a spec may hold or expand to (guards against "billion laughs"
#: aliases and against huge flat lists, which ruamel reads at roughly 10-20k nodes a second).
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
    data: object = None
    positions: dict = field(default_factory=dict)
    key_positions: dict = field(default_factory=dict)
    plain: set = field(default_factory=set)
    findings: list = field(default_factory=list)

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

    def source_token(self, path: Path_) -> str | None:
        """The text of a plain scalar as written at ``path`` (e.g. ``0x15``, which YAML reads
        as the number 21), or None when unknown."""
        if tuple(path) not in self.positions:
            return None
        line, col = self.positions[tuple(path)]
        lines = self.text.splitlines()
        if not 0 < line <= len(lines):
            return None
        rest = lines[line - 1][col - 1:]
        tok = re.split(r"\s+#|,\s|[,}\]]", rest, maxsplit=1)[0].strip()
        return tok or None

    def finding(self, path: Path_, code: str, message: str, rule: str = "",
                severity: Severity = Severity.ERROR, key: bool = False) -> Finding:
        """A finding located at ``path`` in this file."""
        line, col = self.pos(path, key=key)
        return Finding(self.path, line, col, code, severity, message, rule)


class _TooLarge(Exception):
    pass


class _Recursive(Exception):
    def __init__(self, path, where=None):
        self.path = path
        self.where = where


class _CountingComposer(Composer):
    """Composer that stops with :class:`_TooLarge` after :data:`MAX_NODES` nodes, so a huge
    document is abandoned while it is being read rather than after."""

    def compose_node(self, parent, index):
        self._rg_count = getattr(self, "_rg_count", 0) + 1
        if self._rg_count > MAX_NODES:
            raise _TooLarge()
        return super().compose_node(parent, index)


class _GuardedConstructor(RoundTripConstructor):
    """Round-trip constructor that checks the composed node graph (:func:`_check_graph`)
    before building any Python object from it."""

    def get_single_data(self):
        node = self.composer.get_single_node()
        if node is None:
            return None
        _check_graph(node)
        return self.construct_document(node)


def _check_graph(root) -> None:
    """Walk the node graph iteratively: raise :class:`_Recursive` (with the node's (line, col),
    1-based) when a node contains itself through an alias, :class:`_TooLarge` when the graph
    expands to more than :data:`MAX_NODES` values. Shared nodes are sized once (memoized), so
    the walk is linear in the number of distinct nodes."""
    size: dict[int, int] = {}
    on_stack: set[int] = set()
    stack = [(root, False)]
    while stack:
        node, done = stack.pop()
        nid = id(node)
        children = _children(node)
        if done:
            on_stack.discard(nid)
            total = 1 + sum(size[id(c)] for c in children)
            if total > MAX_NODES:
                raise _TooLarge()
            size[nid] = total
            continue
        if nid in size:
            continue
        if nid in on_stack:
            mark = getattr(node, "start_mark", None)
            raise _Recursive(None, (mark.line + 1, mark.column + 1) if mark is not None else (1, 1))
        on_stack.add(nid)
        stack.append((node, True))
        for c in children:
            cid = id(c)
            if cid in on_stack:
                mark = getattr(c, "start_mark", None)
                raise _Recursive(None, (mark.line + 1, mark.column + 1) if mark is not None else (1, 1))
            if cid not in size:
                stack.append((c, False))


def _children(node) -> list:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [x for kv in node.value for x in kv]
    return []


_BRACKETS = re.compile(r"[\[\]{}]")


def _flow_depth_exceeded(text: str):
    """(line, col) where flow brackets first nest deeper than :data:`MAX_DEPTH`, or None.
    Brackets are counted naively (also inside strings), which only matters for text with
    more than :data:`MAX_DEPTH` unclosed brackets."""
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


def _prescan_too_many_nodes(text: str) -> bool:
    """True when libyaml's event parser (fast, C) sees more than :data:`MAX_NODES` nodes
    before ruamel (pure Python, slow) reads the text. Any libyaml error or absence means
    "no verdict": ruamel then reads the text and reports its own findings."""
    if not getattr(pyyaml, "__with_libyaml__", False):
        return False
    count = 0
    try:
        for ev in pyyaml.parse(text, Loader=pyyaml.CSafeLoader):
            if isinstance(ev, (pyyaml.ScalarEvent, pyyaml.SequenceStartEvent,
                               pyyaml.MappingStartEvent, pyyaml.AliasEvent)):
                count += 1
                if count > MAX_NODES:
                    return True
    except Exception:  # noqa: BLE001 - only a guard; ruamel gives the real diagnosis
        return False
    return False


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.Constructor = _GuardedConstructor
    y.Composer = _CountingComposer
    y.preserve_quotes = True
    y.allow_duplicate_keys = False
    return y


def load_text(text: str, path: str) -> LoadedFile:
    """Parse ``text`` (the content of ``path``) into a :class:`LoadedFile`. Never raises."""
    lf = LoadedFile(path=path, text=text)
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
    if _prescan_too_many_nodes(text):
        lf.findings.append(_too_large(path))
        return lf
    try:
        root = _yaml().load(text)
    except _TooLarge:
        lf.findings.append(_too_large(path))
        return lf
    except _Recursive as r:
        lf.findings.append(_recursive(path, *r.where))
        return lf
    except DuplicateKeyError as e:
        mark = e.problem_mark or e.context_mark
        key = re.search(r'found duplicate key "([^"]*)"', str(e))
        what = f'key "{key.group(1)}"' if key else "a key"
        lf.findings.append(_at(path, mark, "RG102",
                               f"{what} appears twice in the same mapping; YAML keeps only one, so "
                               "remove or rename the duplicate"))
        return lf
    except MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        problem = (e.problem or e.context or "invalid YAML").strip()
        line_text = _line(text, mark.line + 1) if mark is not None else ""
        if "\t" in problem or "'\\t'" in problem or (mark is not None and "\t" in line_text[: mark.column + 1]):
            lf.findings.append(_at(path, mark, "RG103",
                                   "tab character used for indentation; YAML indents with spaces only"))
        else:
            lf.findings.append(_at(path, mark, "RG101", f"YAML syntax error: {problem}"))
        return lf
    except RecursionError:
        lf.findings.append(Finding(path, 1, 1, "RG105", Severity.ERROR,
                                   "the spec is nested too deeply to be a rule spec"))
        return lf
    except (YAMLError, ValueError, TypeError, AttributeError) as e:
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        lf.findings.append(Finding(path, 1, 1, "RG101", Severity.ERROR, f"YAML could not be read: {msg}"))
        return lf
    if root is None:
        lf.findings.append(Finding(path, 1, 1, "RG107", Severity.ERROR,
                                   "the spec is empty; start it with `app: <name>` and a `groups:` list"))
        return lf
    if not isinstance(root, CommentedMap):
        lf.findings.append(Finding(path, 1, 1, "RG107", Severity.ERROR,
                                   f"a spec must be a YAML mapping (app:, groups:, ...), not a {_kind(root)}"))
        return lf
    counter = [0]
    try:
        lf.data = _plain(root, (), lf, counter, set())
    except _TooLarge:
        lf.data = None
        lf.findings.append(_too_large(path))
    except _Recursive as r:
        lf.data = None
        lf.findings.append(_recursive(path, *lf.pos(r.path)))
    except RecursionError:
        lf.data = None
        lf.findings.append(Finding(path, 1, 1, "RG105", Severity.ERROR,
                                   "the spec is nested too deeply to be a rule spec"))
    return lf


def load_file(path: Path, display: str | None = None) -> LoadedFile:
    """Read and parse one spec file. Never raises for bad content; see :func:`load_text`."""
    shown = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as e:
        return LoadedFile(path=shown, text="", findings=[
            Finding(shown, 0, 0, "RG106", Severity.ERROR, f"cannot read the file: {e.strerror or e}")])
    if len(raw) > MAX_FILE_BYTES:
        return LoadedFile(path=shown, text="", findings=[
            Finding(shown, 0, 0, "RG106", Severity.ERROR,
                    f"file is {len(raw)} bytes, more than the {MAX_FILE_BYTES} a spec may have; split it by app")])
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


def _kind(v) -> str:
    if isinstance(v, list):
        return "list"
    if isinstance(v, str):
        return "string"
    return type(v).__name__


def _plain(node, path: tuple, lf: LoadedFile, counter: list, stack: set):
    counter[0] += 1
    if counter[0] > MAX_NODES:
        raise _TooLarge()
    if isinstance(node, (CommentedMap, CommentedSeq, dict, list)):
        if id(node) in stack:
            raise _Recursive(path)
        stack = stack | {id(node)}
    if isinstance(node, CommentedMap):
        out = {}
        for i, (k, v) in enumerate(node.items()):
            key = k if isinstance(k, str) else _scalar(k)
            if not isinstance(key, str):
                key = str(key)
            sub = path + (key,)
            try:
                kl, kc = node.lc.key(k)
                lf.key_positions[sub] = (kl + 1, kc + 1)
                vl, vc = node.lc.value(k)
                lf.positions[sub] = (vl + 1, vc + 1)
            except (KeyError, TypeError, AttributeError):
                pass
            out[key] = _plain(v, sub, lf, counter, stack)
            if _is_plain(v):
                lf.plain.add(sub)
        return out
    if isinstance(node, CommentedSeq):
        out = []
        for i, v in enumerate(node):
            sub = path + (i,)
            try:
                il, ic = node.lc.item(i)
                lf.positions[sub] = (il + 1, ic + 1)
            except (KeyError, TypeError, AttributeError, IndexError):
                pass
            out.append(_plain(v, sub, lf, counter, stack))
            if _is_plain(v):
                lf.plain.add(sub)
        return out
    return _scalar(node)


def _is_plain(v) -> bool:
    """True for a string written as a plain scalar, and for a plain timestamp (``2024-01-31``),
    which ruamel reads as a date but the data holds as text."""
    if isinstance(v, str):
        return not isinstance(v, ScalarString)
    return isinstance(v, datetime.date)


def _scalar(v):
    if isinstance(v, bool):
        return bool(v)
    if isinstance(v, int):
        return int(v)
    if isinstance(v, float):
        return float(v)
    if isinstance(v, str):
        return str(v)
    if v is None:
        return None
    # timestamps, sets, tagged values: keep their text so the schema says what is wrong
    return str(v)
