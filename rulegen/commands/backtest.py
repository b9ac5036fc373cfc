"""``rulegen backtest``: how often would each alert have fired over the last days of a live
Prometheus (see :mod:`rulegen.gitops.backtest` and :mod:`rulegen.live.backtest`)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..findings import RulegenError
from ..formatters import render as render_findings
from ..live.options import add_options, from_args
from . import EXIT_FAIL, EXIT_OK

NAME = "backtest"
EXAMPLE = ("rulegen backtest --since 7d --app shop --prometheus https://prometheus.example.com\n"
           "rulegen backtest --alert ShopErrorsHigh --step 30s -o json > backtest.json")


def _duration(text: str) -> float:
    """A positive Prometheus duration in seconds (argparse type)."""
    from ..spec.durations import DurationError, parse_ms
    try:
        ms = parse_ms(text)
    except DurationError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a duration such as 7d or 1m") from None
    if ms <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive duration")
    return ms / 1000


def add_parser(sub, common) -> None:
    s = sub.add_parser("backtest", parents=[common],
                       help="replay alerts over the last days of a live Prometheus: how often would they have fired",
                       description="Render each chart like `rulegen test` does, replay its alerting rules with "
                                   "Prometheus' own rule evaluation (for, keep_firing_for, templated labels) at "
                                   "every step of the window, reading the data from a live Prometheus, and print "
                                   "per alert: firing episodes, total firing time, longest episode, distinct label "
                                   "sets and the first episodes. See docs/live.md.")
    s.add_argument("--since", type=_duration, default=7 * 86400.0, metavar="DURATION",
                   help="length of the window, ending now (default 7d)")
    s.add_argument("--step", type=_duration, default=None, metavar="DURATION",
                   help="evaluation step (default: each group's interval, else 1m)")
    s.add_argument("--alert", action="append", default=[], help="only this alert (repeatable)")
    s.add_argument("--app", action="append", default=[], help="only this app (repeatable)")
    s.add_argument("-o", "--output", choices=("text", "json"), default="text")
    add_options(s)
    s.set_defaults(func=run)


def run(args) -> int:
    """The ``rulegen backtest`` command: 0, 1 when the specs do not validate, 2 on usage or
    connection errors (raised as RulegenError)."""
    from ..gitops.backtest import backtest_specs, report_text
    from ..hints import unknown_apps, unknown_names
    from ..live.backtest import window
    from ..live.connect import SKIPPED, resolve
    from ..pipeline import load_project, plan_project
    root = Path(args.root)
    loaded = load_project(root)
    conn = resolve(root, loaded.config.prometheus, from_args(args))
    if conn is None:
        print(f"rulegen: note: {SKIPPED}", file=sys.stderr)
        return EXIT_OK
    if loaded.findings:
        print(render_findings(loaded.findings), file=sys.stderr)
    if not loaded.ok:
        print("rulegen: validation failed; nothing was replayed", file=sys.stderr)
        return EXIT_FAIL
    apps = {s.app for s in loaded.specs}
    unknown = set(args.app) - apps
    if unknown:
        raise RulegenError(unknown_apps(unknown, apps))
    names = {r.name for s in loaded.specs for _, r in s.rules() if r.is_alert}
    if set(args.alert) - names:
        raise RulegenError(unknown_names(set(args.alert) - names, names, "alert"))
    outputs, findings = plan_project(loaded)
    if any(f.is_error for f in findings):
        print(render_findings(findings), file=sys.stderr)
        return EXIT_FAIL
    start, end = window(args.since, args.step or 60)
    results = backtest_specs(loaded, outputs, root, conn, start, end, step=args.step, alerts=args.alert,
                             apps=args.app)
    if args.output == "json":
        import dataclasses
        import json
        doc = {"url": conn.url, "start": start, "end": end,
               "apps": [{"app": app, "alerts": [dataclasses.asdict(a) for a in b.alerts]} for app, b in results]}
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
    else:
        sys.stdout.write(report_text(results, start, end, conn.url))
    return EXIT_OK
