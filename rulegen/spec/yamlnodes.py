"""Values of PyYAML nodes as the spec loader reads them: plain scalars under the YAML 1.2 core
schema (``yes``/``on`` stay strings; ``0o17``, ``1_000``, ``.inf`` are numbers), quoted and block
scalars as strings, explicit core tags converted, and YAML merge keys (``<<``) applied. Used by
:mod:`rulegen.spec.loader`, whose resolver tags every implicitly typed plain scalar
:data:`_PLAIN`.
"""

from __future__ import annotations

import re
import sys

import yaml
from yaml.nodes import MappingNode, ScalarNode, SequenceNode

#: Tag given to plain scalars whose type is not fixed by an explicit tag (resolved by rulegen).
_PLAIN = "!rulegen/plain"
_STR = "tag:yaml.org,2002:str"

_NULL = re.compile(r"~|null|Null|NULL|")
_BOOL = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_INT = re.compile(r"[-+]?(?:0b[01_]*[01][01_]*|0o[0-7_]*[0-7][0-7_]*|0x[0-9a-fA-F_]*[0-9a-fA-F][0-9a-fA-F_]*"
                  r"|[0-9][0-9_]*)")
_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?(?:[0-9][0-9_]*)(?:[eE][-+]?[0-9]+)"
                    r"|[-+]?\.[0-9_]+(?:[eE][-+]?[0-9]+)?"
                    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)")


#: Largest integer (in bits) whose decimal text Python prints: sys.get_int_max_str_digits()
#: digits (0: no limit) hold about 3.32 bits each. Longer hex/octal/binary integers stay text.
_MAX_INT_BITS = int((getattr(sys, "get_int_max_str_digits", lambda: 0)() or 10 ** 9) * 3.32) - 8

#: First characters of every core-schema null, bool, int and float (see the patterns above).
_SPECIAL_FIRST = frozenset("~nNtTfF0123456789+-.")


#: White space and then ``#``: where a YAML comment begins on a line (its first such place).
_COMMENT_START = re.compile(r"\s#")
#: Where a plain scalar written on a line ends: a comment, ``, `` or a flow collection's end.
_TOKEN_END = re.compile(r"\s#|,\s|[,}\]]")


def without_comment(line: str) -> str:
    """``line`` (one line of YAML) without the comment at its end and the white space before,
    right-stripped: ``wait: 5m  # a note`` -> ``wait: 5m``. A fixed-width search: the pattern
    it replaces, ``re.sub(r"\\s+#.*$", "", line)``, tried every start in a run of spaces and
    backtracked over the rest of it (quadratic: a long line of spaces in a spec took minutes)."""
    m = _COMMENT_START.search(line)
    return (line[:m.start()] if m else line).rstrip()


def plain_token(rest: str) -> str:
    """The plain scalar at the start of ``rest`` (a line from a value's column) as written, up
    to a comment, ``, `` or ``}``/``]``, stripped (linear: see :func:`without_comment`)."""
    return _TOKEN_END.split(rest, maxsplit=1)[0].strip()


def resolve_plain(text: str):
    """A plain scalar's value under the YAML 1.2 core schema (null, bool, int, float, else
    the string). Integers may use ``_`` separators and ``0b``/``0o``/``0x`` prefixes."""
    if text and text[0] not in _SPECIAL_FIRST:
        return text  # no null, bool, int or float starts with this character
    if _NULL.fullmatch(text):
        return None
    if text in _BOOL:
        return _BOOL[text]
    if _INT.fullmatch(text):
        t = text.replace("_", "")
        sign = -1 if t.startswith("-") else 1
        t = t.lstrip("+-")
        base = {"0b": 2, "0o": 8, "0x": 16}.get(t[:2], 10)
        try:
            value = sign * int(t[2:] if base != 10 else t, base)
        except ValueError:  # more digits than Python converts
            return text
        if base != 10 and value.bit_length() > _MAX_INT_BITS:
            return text  # Python converts it, but could not print it in decimal
        return value
    if _FLOAT.fullmatch(text):
        t = text.replace("_", "").lower()
        if t.endswith(".inf"):
            return float("-inf") if t.startswith("-") else float("inf")
        if t.endswith(".nan"):
            return float("nan")
        try:
            return float(t)
        except ValueError:
            return text
    return text


def _scalar(node: ScalarNode):
    """The value of a scalar node: plain ones per :func:`resolve_plain`, quoted and block
    ones as strings, explicitly tagged ones converted when the tag is a core type."""
    text = node.value
    tag = node.tag
    if tag == _PLAIN:
        return resolve_plain(text)
    if tag == _STR or node.style is not None and tag in (_PLAIN, None):
        return text
    if tag == "tag:yaml.org,2002:null":
        return None
    if tag == "tag:yaml.org,2002:bool":
        return _BOOL.get(text, text)
    if tag in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float"):
        v = resolve_plain(text)
        return v if isinstance(v, (int, float)) and not isinstance(v, bool) else text
    return text  # timestamps, binary, custom tags: their text, so the schema says what is wrong


def _is_plain(node) -> bool:
    """True for a string written as a plain (unquoted, untagged) scalar, timestamps included."""
    return isinstance(node, ScalarNode) and node.tag == _PLAIN and isinstance(resolve_plain(node.value), str)


def _key_text(node) -> str:
    if isinstance(node, ScalarNode):
        return node.value
    return yaml.safe_dump(_plain_value(node), default_flow_style=True, width=10_000).strip()


def _plain_value(node):
    """Plain data of a (small) node without positions: used for complex keys only."""
    if isinstance(node, ScalarNode):
        return _scalar(node)
    if isinstance(node, SequenceNode):
        return [_plain_value(v) for v in node.value]
    return {_key_text(k): _plain_value(v) for k, v in node.value}


def _merged_pairs(node: MappingNode) -> list:
    """(key node, value node) pairs of a mapping with YAML merge keys (``<<``) applied: the
    mapping's own keys win over merged ones, earlier merged mappings over later ones."""
    own, merged = [], []
    for k, v in node.value:
        is_merge = isinstance(k, ScalarNode) and k.value == "<<" and k.tag in (_PLAIN, "tag:yaml.org,2002:merge")
        if not is_merge:
            own.append((k, v))
            continue
        sources = [v] if isinstance(v, MappingNode) else (v.value if isinstance(v, SequenceNode) else None)
        if sources is None or not all(isinstance(s, MappingNode) for s in sources):
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping", node.start_mark,
                "expected a mapping or list of mappings for merging", k.start_mark)
        for src in sources:
            merged.extend(_merged_pairs(src))
    if not merged:
        return own
    names = {_key_text(k) for k, _ in own}
    out, seen = list(own), set(names)
    for k, v in merged:
        name = _key_text(k)
        if name not in seen:
            seen.add(name)
            out.append((k, v))
    return out
