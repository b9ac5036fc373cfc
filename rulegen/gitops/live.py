"""The live series checks of ``rulegen check`` (:mod:`rulegen.live.series`, RG900-RG906) on
a loaded project: the specs' rules made into :class:`rulegen.live.series.LiveRule` (positions
through :func:`rulegen.validate.checks.positions.offset_position`, so a finding points at the
selector's character in the spec), the connection resolved from ``.rulegen.yaml`` and the
command line (:func:`rulegen.live.connect.resolve`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..findings import Finding
from ..live.connect import SKIPPED, resolve
from ..live.options import CliOptions
from ..spec.durations import DurationError, parse_ms

if TYPE_CHECKING:
    from ..live.series import LiveRule


def live_rules(specs) -> list[LiveRule]:
    """Every rule of ``specs`` (loaded :class:`rulegen.spec.Spec`) as a :class:`LiveRule`."""
    from ..live.series import LiveRule
    from ..validate.checks.positions import offset_position
    from ..validate.checks.promql import expr_position
    out = []
    for spec in specs:
        lf = spec.source
        for _, rule in spec.rules():
            path = rule.path + ("expr",)
            try:
                for_s = parse_ms(rule.for_) / 1000 if rule.is_alert and rule.for_ else 0.0
            except DurationError:
                for_s = 0.0

            def locate(offset, lf=lf, path=path):
                got = offset_position(lf, path, offset)
                return expr_position(lf, path) if offset == 0 or got == lf.pos(path) else got

            out.append(LiveRule(file=spec.file, name=rule.name, is_alert=rule.is_alert, expr=rule.expr,
                                for_s=for_s, locate=locate, for_pos=lf.pos(rule.path + ("for",)),
                                text=rule.expr_template))
    return out


def series_findings(root: Path, config, specs, cli: CliOptions | None = None,
                    now: float | None = None) -> tuple[list[Finding], str | None]:
    """The series checks of ``specs`` against the Prometheus that ``config`` (the project's
    :class:`rulegen.config.Config`) and ``cli`` name.

    Returns:
        ``(findings, note)``: the findings (``config.apply`` not yet applied); ``note`` is
        :data:`rulegen.live.connect.SKIPPED` when no Prometheus is configured, else None.

    Raises:
        rulegen.live.connect.LiveError: bad settings or a request that failed.
    """
    conn = resolve(root, config.prometheus, cli)
    if conn is None:
        return [], SKIPPED
    # the HTTP client and the series checks only when a Prometheus is configured
    from ..live.client import Client
    from ..live.series import check_series
    return check_series(Client(conn), live_rules(specs), now=now), None
