"""The command layer: one module per ``rulegen`` command, the top floor of the package.

Each module has ``NAME`` (the command as typed), ``EXAMPLE`` (shown in its ``--help``),
``add_parser(sub, common)`` (its argparse wiring: adds the subparser to ``sub``, an
``add_subparsers`` object, with ``common`` as parent for ``-C``; the subparser's ``func`` is
the module's ``run``) and ``run(args) -> int`` (loads, calls the libraries, prints, returns the
exit code). Only these modules and :mod:`rulegen.cli` print or choose exit codes; the
libraries below return data (results, findings, text) and raise
:class:`rulegen.findings.RulegenError` for usage errors, which ``cli`` prints (exit 2).

A command module imports its libraries inside ``run``: ``rulegen --help``, ``--version``,
``schema`` and ``checks`` then do not load the pipeline (about 1.5 s of imports on a busy
machine).

Exit codes (all commands): 0 success, 1 findings/drift/test failures, 2 usage or internal fault.
"""

from __future__ import annotations

import sys

from ..formatters import render

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def err(msg: str) -> None:
    """Print ``rulegen: msg`` on stderr."""
    print(f"rulegen: {msg}", file=sys.stderr)


def print_findings(findings, fmt: str = "text", stream=None) -> None:
    """Print ``findings`` in ``fmt`` (see :mod:`rulegen.formatters`) on ``stream`` (default
    stdout); nothing when there are none, except the empty document of ``json``."""
    if findings or fmt == "json":
        print(render(findings, fmt), file=stream or sys.stdout)
