"""Spec text written and re-read with ruamel.yaml's round trip (comments and key order
kept), as ``rulegen import`` writes specs: used by the importer and by :mod:`.tests` when it
attaches promtool tests to imported specs."""

from __future__ import annotations

from io import StringIO

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString


def _yaml() -> YAML:
    y = YAML(typ="rt")
    y.width = 1_000_000
    y.indent(mapping=2, sequence=4, offset=2)
    return y


def reload_text(text: str) -> CommentedMap:
    """A spec text read back with ruamel.yaml's round trip (comments kept), to change and
    write again with :func:`dump_text`."""
    return _yaml().load(text)


def dump_text(data: CommentedMap) -> str:
    """``data`` written as :func:`dump_spec` writes a spec (after :func:`reload_text`)."""
    buf = StringIO()
    _yaml().dump(data, buf)
    return buf.getvalue()


def _plain(node):
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    if isinstance(node, bool) or node is None:
        return node
    if isinstance(node, int):
        return int(node)
    return str(node)


def _unliteral(node):
    """Replace literal blocks with double-quoted strings (fallback when a block is not exact)."""
    if isinstance(node, CommentedMap):
        for k, v in list(node.items()):
            if isinstance(v, LiteralScalarString):
                node[k] = DoubleQuotedScalarString(str(v))
            else:
                _unliteral(v)
    elif isinstance(node, CommentedSeq):
        for v in node:
            _unliteral(v)


def dump_spec(data: CommentedMap, ref: str, sources: list[str], top: list[str]) -> str:
    """The spec text: the ``yaml-language-server`` line, where it came from, the source's
    top comments, then ``data`` written by ruamel.yaml."""
    header = [f"yaml-language-server: $schema={ref}",
              "Imported by `rulegen import` from " + ", ".join(sources) + "."] + top
    data.yaml_set_start_comment("\n".join(header))
    buf = StringIO()
    _yaml().dump(data, buf)
    return buf.getvalue()
