"""The chart's metadata file: ``rules/<app>.meta.yaml``, beside the rules file.

Everything the chart template (``templates/prometheusrule.yaml`` and the chart library) needs
besides the rules themselves, as plain, commented YAML that the template reads with
``.Files.Get | fromYaml`` (no comment lines parsed with regular expressions):

* the settings (:func:`rulegen.render.helm.chart_settings`): template, rules file, app,
  values key, gates, runbook base, name, namespace, the chart's fullname/labels helpers;
* ``params``: alerts with parameters, by group name then alert name, each with its expr as the
  spec wrote it (``[[name]]`` placeholders) and the defaults;
* ``slos``: SLOs by name, each with its rule group, its ticket alert, and the name and expr
  (written with ``[[budget]]``) of the one rule that holds the objective, as the error budget
  (:func:`rulegen.spec.slo.objective_template`).

Rules are found by name, never by position, so inserting an alert changes only the lines of
that alert. A name that occurs more than once in a group (a warning and a critical alert of
one name) is keyed ``<name>`` for its first rule and ``<name>#2``, ``<name>#3``... for the
later ones (:func:`rule_keys`; the template counts the same way).

No line is longer than :data:`WIDTH` characters: a string that would not fit is written as a
list of double-quoted pieces that the template joins (``rulegen.v3.text``), cut after a
space or a line break where possible. Changing one parameter default, one SLO objective
(nothing here holds it) or one alert's ``for`` or label changes at most one line.
"""

from __future__ import annotations

from ..spec import Spec
from .yamltext import double_quoted, readable_string, yaml_key

#: The longest line the file holds (characters).
WIDTH = 120


def meta_file_path(spec: Spec) -> str:
    """Where a spec's metadata file is written: ``<chart>/rules/<app>.meta.yaml``."""
    return f"{spec.chart.path}/rules/{spec.app}.meta.yaml"


def rule_keys(names: list[str]) -> list[str]:
    """The key of each rule of a group by its name (alert or record), in order: the name,
    or ``<name>#<n>`` for its n-th occurrence from the second on."""
    seen: dict[str, int] = {}
    out = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        out.append(name if seen[name] == 1 else f"{name}#{seen[name]}")
    return out


def _pieces(s: str, room: int) -> list[str]:
    """``s`` cut into pieces whose double-quoted form is at most ``room`` characters, each
    ending after a line break or a space where one is in reach (joined, they give ``s``)."""
    out: list[str] = []
    rest = s
    while rest:
        n = min(len(rest), room - 2)
        while n > 1 and len(double_quoted(rest[:n])) > room:
            n -= 1
        if n < len(rest):
            cut = max(rest.rfind("\n", 0, n), rest.rfind(" ", 0, n))
            if cut >= n // 3:
                n = cut + 1
        out.append(rest[:n])
        rest = rest[n:]
    return out


def _value(key: str, s: str, indent: int) -> list[str]:
    """The lines of ``key: <s>`` at column ``indent``: a readable scalar when every line fits
    in :data:`WIDTH`, else a list of pieces (:func:`_pieces`)."""
    pad = " " * indent
    text = f"{pad}{yaml_key(key)}: {readable_string(s, indent + 2)}"
    if all(len(line) <= WIDTH for line in text.split("\n")):
        return text.split("\n")
    return [f"{pad}{yaml_key(key)}:"] + [f"{pad}  - {double_quoted(p)}"
                                         for p in _pieces(s, WIDTH - indent - 4)]


def _settings_lines(settings: dict) -> list[str]:
    lines = ["# The template that reads this file (under templates/), the rules file (under rules/) and the",
             "# app. The knobs are read under .Values.<valuesKey>; every gate must be true in the values.",
             *_value("template", settings["template"], 0),
             *_value("rules", settings["rules"], 0),
             *_value("app", settings["app"], 0),
             *_value("valuesKey", settings["valuesKey"], 0)]
    if settings["gates"]:
        lines += ["gates:"] + [ln for g in settings["gates"] for ln in _item(g, 2)]
    else:
        lines.append("gates: []")
    if "runbookBase" in settings:
        lines += ["# Where the rules file's runbook_urls start (<runbookBase>/<app>/#<anchor>); the knob",
                  "# runbookUrl replaces it.", *_value("runbookBase", settings["runbookBase"], 0)]
    named = [k for k in ("name", "fullname", "nameSuffix", "namespace", "labelsHelper") if k in settings]
    if named:
        lines.append("# The PrometheusRule's name and namespace, or the chart's helpers that make its name and labels.")
        for k in named:
            lines += _value(k, settings[k], 0)
    return lines


def _item(s: str, indent: int) -> list[str]:
    pad = " " * indent
    text = f"{pad}- {readable_string(s, indent + 2)}"
    if all(len(line) <= WIDTH for line in text.split("\n")):
        return text.split("\n")
    return [f"{pad}- {double_quoted(s)}"]


def _params_lines(spec: Spec) -> list[str]:
    lines: list[str] = []
    for g in spec.groups:
        keyed = [(k, r) for k, r in zip(rule_keys([r.name for r in g.rules]), g.rules) if r.params]
        if not keyed:
            continue
        lines.append(f"  {yaml_key(g.name)}:")
        for key, r in keyed:
            lines.append(f"    {yaml_key(key)}:")
            lines += _value("expr", r.expr_template, 6)
            lines.append("      defaults:")
            for p in r.params.values():
                lines += _value(p.name, p.default, 8)
    if not lines:
        return []
    return ["# Alerts with parameters, by group and alert name: the expr as the spec wrote it ([[name]])",
            "# and each parameter's default. The template writes this expr only when",
            "# customRules.<Alert>.params sets a parameter; else the rules file's expr stands.",
            "params:", *lines]


def _slo_lines(spec: Spec) -> list[str]:
    from ..spec import slo as slo_mod
    groups = {g.name for g in spec.groups}
    lines: list[str] = []
    for s in spec.slos:
        if s.group_name not in groups:
            continue
        rule, expr = slo_mod.objective_template(s)
        lines.append(f"  {yaml_key(s.name)}:")
        lines += _value("group", s.group_name, 4)
        lines += _value("ticket", s.alert_name("ticket"), 4)
        lines += _value("budgetRule", rule, 4)
        lines += _value("budgetExpr", expr, 4)
    if not lines:
        return []
    return ["# SLOs by name: their rule group, their ticket alert, and the one rule that holds the objective",
            "# (as the error budget; the SLO's other rules read its series) with its expr written with",
            "# [[budget]]. Used only when slos.<name>.objective is set in the values.",
            "slos:", *lines]


def meta_text(spec: Spec, settings: dict, header_lines: list[str]) -> str:
    """The text of ``rules/<app>.meta.yaml`` (see the module docstring): ``header_lines``
    (the generated-file notice), a note, then ``settings`` (those of
    :func:`rulegen.render.helm.chart_settings` with ``rules``, the rules file's name, after
    ``template``), ``params`` and ``slos``. Every line at most :data:`WIDTH` characters
    (but for a word longer than that)."""
    lines = [*header_lines,
             f"# What templates/{spec.chart.template} needs besides the rules (rules/{settings['rules']}) to write",
             "# the PrometheusRule; it reads this file with .Files.Get and fromYaml. Rules are found by name.",
             *_settings_lines(settings), *_params_lines(spec), *_slo_lines(spec)]
    return "\n".join(lines) + "\n"
