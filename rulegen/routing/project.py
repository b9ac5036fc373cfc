"""Every alert of a project routed through the project's Alertmanager configuration.

The configuration is the file ``alertmanager.config`` of ``.rulegen.yaml`` names (a path inside
the project; a symlink leading out is refused). Alertmanager's own code loads and validates it
and routes the label sets (:func:`rulegen.tools.amroute.route`); one run serves the whole
project and is remembered for the same configuration text and label sets, so validation,
the pages and ``rulegen diff`` share it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..findings import RulegenError
from ..fs import read as fs_read
from ..fs.containment import first_problem, lexical_problem
from ..promql import labelflow
from ..tools import amroute
from .labelsets import alert_label_set, chart_values


class ConfigProblem(RulegenError):
    """The Alertmanager configuration cannot be used: missing, outside the project, not UTF-8,
    or refused by Alertmanager (``message``: its own error text). ``path``: the file."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path, self.message = path, message


@dataclass(frozen=True)
class AlertRoute:
    """Where one alerting rule's notifications go.

    Attributes:
        app, alert, file, path: the spec's app, the alert name, the spec file and the rule's
            position in its data (for findings).
        severity: the rendered ``severity`` label, or None.
        labels: the label set routed (:func:`rulegen.routing.labelsets.alert_label_set`).
        open: labels the alert carries with values unknown here (routed as absent).
        receivers: the receivers reached, in notification order, each once.
        notifying: those of ``receivers`` that notify someone (not null, see
            :attr:`ProjectRouting.null`).
    """

    app: str
    alert: str
    file: str
    path: tuple
    severity: str | None
    labels: dict
    open: tuple
    receivers: tuple
    notifying: tuple


@dataclass(frozen=True)
class ProjectRouting:
    """The routing of every alert of the specs routed.

    Attributes:
        config: project-relative path of the Alertmanager configuration.
        default: the root route's receiver.
        receivers: receiver name -> number of notifier configurations.
        null: receivers that notify nobody: no notifier configuration, or named in
            ``alertmanager.null_receivers``.
        alerts: one :class:`AlertRoute` per alerting rule, in spec order.
    """

    config: str
    default: str
    receivers: dict
    null: frozenset
    alerts: tuple

    def by_alert(self) -> dict:
        """Alert name -> the receivers its rules reach (rules sharing a name: all of theirs)."""
        out: dict = {}
        for a in self.alerts:
            got = out.setdefault(a.alert, [])
            got.extend(r for r in a.receivers if r not in got)
        return {k: tuple(v) for k, v in out.items()}

    def pages(self, a: AlertRoute, paging_severities) -> bool:
        """Does ``a`` reach someone: a receiver that notifies, other than the default one for
        an alert of ``paging_severities`` (which must page; RG953)."""
        skip = self.null | ({self.default} if a.severity in paging_severities else set())
        return any(r not in skip for r in a.receivers)


def read_config(root: Path, rel: str) -> str:
    """The text of the Alertmanager configuration ``rel`` of the project at ``root``.

    Raises:
        ConfigProblem: missing, not a plain path inside the project, a symlink leading out,
            not a regular file or not UTF-8.
    """
    problem = lexical_problem(rel)
    if problem is not None:
        raise ConfigProblem(rel, f"{problem[0]} it {problem[1]}")
    refused = first_problem(root, rel)  # a link out, or into .git (the CI's credentials)
    if refused is not None:
        raise ConfigProblem(rel, f"{refused}; it was not read")
    try:
        return fs_read.read_text(root / rel, rel)
    except FileNotFoundError:
        raise ConfigProblem(rel, "no such file (alertmanager.config of .rulegen.yaml names it)") from None
    except UnicodeDecodeError:
        raise ConfigProblem(rel, "not UTF-8 text") from None
    except (OSError, fs_read.InputRefused) as e:
        raise ConfigProblem(rel, str(e)) from None


def recording_rules(specs) -> dict:
    """Recording rules of ``specs`` for the label flow: name -> [(expr, the labels it adds)]."""
    out: dict = {}
    for spec in specs:
        for g, r in spec.rules():
            if not r.is_alert:
                out.setdefault(r.name, []).append((r.expr, r.all_labels(spec.labels, g.labels)))
    return out


def label_sets(specs, root: Path, reference=(), read=None) -> list[tuple]:
    """``(spec, group, rule, labels, open)`` for every alerting rule of ``specs``, in spec
    order; ``reference``: other specs of the project whose recording rules the exprs may read;
    ``read``: see :func:`rulegen.routing.labelsets.chart_values`."""
    flows = labelflow.Analyzer(recording_rules(list(specs) + list(reference)))
    out = []
    for spec in specs:
        knobs = chart_values(root, spec, read)
        for g, r in spec.rules():
            if r.is_alert:
                labels, open_ = alert_label_set(spec, g, r, knobs, flows.flow(r.expr))
                out.append((spec, g, r, labels, open_))
    return out


_CACHE: dict = {}


def _route(text: str, sets: list[dict], root: Path) -> amroute.Routing:
    key = (text, tuple(tuple(sorted(s.items())) for s in sets))
    if key not in _CACHE:
        if len(_CACHE) > 8:
            _CACHE.clear()
        _CACHE[key] = amroute.route(text, sets, root)
    return _CACHE[key]


def route_project(specs, root: Path, config, reference=(), config_text: str | None = None,
                  read=None) -> ProjectRouting | None:
    """Route every alert of ``specs`` through the configuration that ``config``
    (:class:`rulegen.config.Config`) names; None when it names none. ``config_text`` and
    ``read`` (a function giving a project file's text): use these instead of the disk
    (``rulegen diff`` reads the base ref's files from Git).

    Raises:
        ConfigProblem: the configuration cannot be read, or Alertmanager refuses it.
        RulegenError: ``rulegen-amroute`` is not installed or failed.
    """
    rel = config.alertmanager_config
    if not rel:
        return None
    text = read_config(root, rel) if config_text is None else config_text
    sets = label_sets(specs, root, reference, read)
    try:
        got = _route(text, [s[3] for s in sets], root)
    except amroute.InvalidConfig as e:
        raise ConfigProblem(rel, f"Alertmanager refuses it: {e}") from None
    null = frozenset(n for n, k in got.receivers.items() if k == 0) | frozenset(config.null_receivers)
    alerts = []
    for (spec, _g, r, labels, open_), matches in zip(sets, got.results):
        receivers = tuple(dict.fromkeys(m.receiver for m in matches))
        alerts.append(AlertRoute(spec.app, r.name, spec.file, r.path, labels.get("severity"), labels, open_,
                                 receivers, tuple(x for x in receivers if x not in null)))
    return ProjectRouting(rel, got.default, dict(got.receivers), null, tuple(alerts))
