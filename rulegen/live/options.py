"""The command-line options of a live Prometheus, shared by every command that reads one
(``check``, ``backtest``, ``diff``): :func:`add_options` adds them to a parser as one group,
:func:`from_args` reads them back. Only the standard library is imported here (the parser of
every command is built on each run)."""

from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass(frozen=True)
class CliOptions:
    """The live options as given (unchecked; :func:`rulegen.live.connect.resolve` checks them).

    Attributes:
        url: ``--prometheus URL`` or None.
        bearer_token_file: ``--prometheus-bearer-token-file PATH`` (any path: the CI names it).
        headers: ``--prometheus-header NAME=VALUE`` each, as ``(name, value)``, in order.
        ca_file: ``--prometheus-ca-file PATH`` or None.
        timeout: ``--prometheus-timeout`` text (a Prometheus duration such as ``30s``) or None.
    """

    url: str | None = None
    bearer_token_file: str | None = None
    headers: tuple = ()
    ca_file: str | None = None
    timeout: str | None = None

    @property
    def secrets(self) -> bool:
        """True when a token or headers come from the command line (they are sent only to a
        URL that comes from the command line too)."""
        return bool(self.bearer_token_file or self.headers)


def _header(text: str) -> tuple[str, str]:
    name, eq, value = text.partition("=")
    if not eq or not name.strip():
        raise argparse.ArgumentTypeError("give NAME=VALUE, e.g. X-Scope-OrgID=team-a")
    return name.strip(), value


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add the ``prometheus`` option group to ``parser`` (a command's sub-parser)."""
    g = parser.add_argument_group("live Prometheus (docs/live.md; default: prometheus: in .rulegen.yaml)")
    g.add_argument("--prometheus", metavar="URL", default=None,
                   help="base URL of the Prometheus to read (http or https), e.g. https://prometheus.example.com")
    g.add_argument("--prometheus-bearer-token-file", metavar="PATH", default=None,
                   help="file holding a bearer token (a CI secret; never printed); used only with --prometheus")
    g.add_argument("--prometheus-header", metavar="NAME=VALUE", action="append", type=_header, default=[],
                   help="extra HTTP header for every request (repeatable); used only with --prometheus")
    g.add_argument("--prometheus-ca-file", metavar="PATH", default=None,
                   help="PEM CA bundle to verify an https Prometheus with")
    g.add_argument("--prometheus-timeout", metavar="DURATION", default=None,
                   help="time one request may take (a Prometheus duration; default 30s)")


def from_args(args) -> CliOptions:
    """The options :func:`add_options` added, read from parsed ``args`` (missing ones unset)."""
    return CliOptions(url=getattr(args, "prometheus", None),
                      bearer_token_file=getattr(args, "prometheus_bearer_token_file", None),
                      headers=tuple(getattr(args, "prometheus_header", None) or ()),
                      ca_file=getattr(args, "prometheus_ca_file", None),
                      timeout=getattr(args, "prometheus_timeout", None))
