"""Parameters of an alert's expr (``params:``, written ``[[name]]`` in the expr).

A parameter is a default (a number such as a threshold, or a duration such as a range) that
the chart's values can override per alert (``customRules.<Alert>.params.<name>``); the rules
file and every check see the expr with the defaults filled in.

Codes:

* ``RG731`` the expr holds ``[[name]]`` but the alert declares no parameter ``name`` (or the
  rule is a recording rule, which takes none). Bad: ``expr: x > [[treshold]]`` with
  ``params: {threshold: 0.9}``; good: ``expr: x > [[threshold]]``. Reported at the
  placeholder; the expr is not also reported as unparsable PromQL (RG301) while it holds one.
* ``RG732`` (warning) a declared parameter the expr never uses: a values override of it
  would change nothing. Bad: ``params: {window: 5m}`` with ``expr: rate(x[5m]) > 1``;
  good: ``expr: rate(x[[[window]]]) > 1``.
"""

from __future__ import annotations

import difflib

from ...findings import Finding, Severity
from ...spec.model import PARAM_RE
from .positions import offset_position

ID = "params"


def check_spec(spec, ctx):
    lf = spec.source
    for _, r in spec.rules():
        written = r.expr_template if r.expr_template is not None else r.expr
        used = PARAM_RE.findall(written)
        for name in dict.fromkeys(used):
            if name in r.params:
                continue
            if not r.is_alert:
                msg = f"`[[{name}]]` in the expr of a recording rule: only alerts take parameters"
            else:
                near = difflib.get_close_matches(name, sorted(r.params), n=1, cutoff=0.6)
                msg = (f"`[[{name}]]` in the expr names no parameter of this alert"
                       + (f"; did you mean {near[0]}?" if near else f"; declare it under `params:` "
                          f"(params: {{{name}: <default>}})"))
            # at the placeholder: two unknown names are two findings, not one at the expr's start
            line, col = offset_position(lf, r.path + ("expr",), written.index(f"[[{name}]]"))
            yield Finding(lf.path, line, col, "RG731", Severity.ERROR, msg, r.name)
        for name in r.params:
            if name not in used:
                yield lf.finding(r.path + ("params", name), "RG732",
                                 f"parameter `{name}` is not used in the expr (write `[[{name}]]` where "
                                 "its value goes); a values override of it would change nothing",
                                 rule=r.name, severity=Severity.WARNING, key=True)
