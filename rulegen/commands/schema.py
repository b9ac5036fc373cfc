"""``rulegen schema``: print the spec JSON Schema."""

from __future__ import annotations

import sys

from . import EXIT_OK

NAME = "schema"
EXAMPLE = "rulegen schema > spec.schema.json"


def add_parser(sub, common) -> None:
    s = sub.add_parser("schema", parents=[common], help="print the spec JSON Schema")
    s.set_defaults(func=run)


def run(args) -> int:
    from ..spec import SCHEMA_PATH
    sys.stdout.write(SCHEMA_PATH.read_text(encoding="utf-8"))
    return EXIT_OK
