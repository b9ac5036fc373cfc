"""SLOs: an ``slos:`` entry of a spec expanded into ordinary rules, tests and page facts.

An SLO becomes one rule group, ``<app>-slo-<name>``, of plain :class:`~rulegen.spec.model.Rule`
objects with their promtool tests (:class:`~rulegen.spec.model.Test`), so the rest of the
pipeline (validation, the chart and its knobs, promtool tests, runbook pages) treats them like
rules written by hand. The method is the Google SRE workbook's, chapter "Alerting on SLOs"
(multiwindow, multi-burn-rate alerts):

* **SLI recording rules** ``slo:sli_error:ratio_rate<window>``: the share of bad events over
  each window the alerts read, from counters (``events``: bad/total or good/total) or from a
  histogram (``latency``: requests slower than the bucket ``le`` over all requests, i.e.
  ``1 - bucket{le}/count``);
* **burn-rate alerts**: a window pair fires when the error ratio over *both* its long and its
  short window is above ``factor x error budget`` (the recorded budget series, so the
  objective is written in one rule only: :mod:`.texts`). For a 30-day period the pairs are the
  workbook's, and equal Sloth's default 30d set (slok/sloth,
  ``internal/alert/windows/google-30d.yaml``): page at 14.4x over 1h and 5m or 6x over 6h
  and 30m; ticket at 3x over 1d and 2h or 1x over 3d and 6h (:data:`WORKBOOK_30D`);
* **other periods** keep the factors and scale every window by ``period / 30d``, rounded to
  the minute (at least 1m): Pyrra's rule (pyrra-dev/pyrra, ``slo/rules.go`` ``Windows``,
  which scales a 28-day base the same way). A factor is a multiple of the budget's own
  pace, so the pair still fires when the same share of the period's budget
  (``factor x long / period``: 2%, 5%, 10%, 10%) has been spent, and a steady burn at the
  factor still exhausts the budget in ``period / factor``;
* **metadata recording rules**: ``slo:error_budget:ratio`` (the one rule that holds the
  objective, as the budget: ``vector(0.005)``), ``slo:objective:ratio`` (``1 - budget``), the
  error ratio over the whole period ``slo:sli_error:ratio_rate<period>`` (the SLI over the
  period's window, request-weighted, as Pyrra computes it; Sloth averages the 5m ratio
  instead) and
  ``slo:period_error_budget_remaining:ratio`` (``1 - period ratio / budget``; negative once
  the budget is spent).

Each window pair is its own alert rule carrying ``long`` and ``short`` labels (Pyrra's
shape); the two page pairs share the page alert's name and the two ticket pairs the ticket
alert's. The chart values have a knob per SLO (``slos.<name>``): ``enabled: false`` drops the
whole SLO, ``ticket: false`` its ticket alert, and ``objective`` replaces the budget in the one rule
that holds it (:func:`objective_template`; the generated tests and the runbook page keep the
spec's).


One module per job: :mod:`.windows` (window pairs and burn-rate arithmetic), :mod:`.reading`
(what is wrong with an entry, RG350-RG362, and the :class:`SLO` of a valid one),
:mod:`.texts` and :mod:`.expand` (the rule group and the chart's objective templates),
:mod:`.scenario` and :mod:`.testgen` (the generated promtool tests). Durations are Prometheus
duration strings; the package works in milliseconds internally.
"""

from __future__ import annotations

from ...promql.series import decimal_text, exact_number, series_text  # noqa: F401  (used as slo.decimal_text)
from ..durations import DurationError, format_ms, parse_ms  # noqa: F401
from .expand import expand, objective_template, remaining_expr  # noqa: F401
from .reading import (COUNTER_SUFFIXES, NOT_COUNTER_SUFFIXES, RESERVED_LABELS, SLO, Selector,  # noqa: F401
                      le_text, objective_decimal, parse_selector, problems, read)
from .scenario import COUNTER_START, EVENTS_PER_MIN, MARGIN, Scenario, matchers, sample_labels, selects  # noqa: F401
from .testgen import make_tests, tests, with_tests  # noqa: F401
from .texts import BUDGET_PLACEHOLDER, alert_expr, budget_text, section_id, threshold_text  # noqa: F401
from .windows import (BASE_PERIOD_MS, BUDGET_RECORD, DAY_MS, DEFAULT_PERIOD, MAX_PERIOD_MS,  # noqa: F401
                      MIN_PERIOD_MS, MIN_WINDOW_MS, MINUTE_MS, OBJECTIVE_RECORD, REMAINING_RECORD, SLI_RECORD,
                      WORKBOOK_30D, BurnWindow, camel, exhaustion_ms, human, percent, window_text, windows)
