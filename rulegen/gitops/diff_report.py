"""``rulegen diff``'s output: the :class:`~rulegen.gitops.diff.Summary` as ``text`` for a terminal or
``markdown`` for a pull-request comment (policy changes first, then the summary line, the rule
table, the old and new expressions of changed rules, and the values' effects; see
:mod:`rulegen.gitops.diff` for what is compared).
"""

from __future__ import annotations

from .diff import Change, RuleView, Summary, _dict_delta
from .policy import SHOWN, finding_phrase, plain


def _kind_word(kind: str, n: int = 1) -> str:
    word = "alert" if kind == "alert" else "recording rule"
    return word if n == 1 else word + "s"


def _headline(s: Summary) -> str:
    parts = []
    for kind in ("alert", "record"):
        a, r, c = s.count(kind)
        parts.append(f"{_kind_word(kind, 2)}: {a} added, {r} removed, {c} changed")
    return "; ".join(parts)



def describe(c: Change) -> list[str]:
    """One short phrase per changed field of ``c`` (``for 5m -> 7m``, ``labels (+team=ai)``)."""
    a, b = c.old, c.new
    out = []
    for f in c.fields:
        if f in ("for", "keep_firing_for", "severity", "group"):
            old = {"for": a.for_, "keep_firing_for": a.keep_firing_for, "severity": a.severity, "group": a.group}[f]
            new = {"for": b.for_, "keep_firing_for": b.keep_firing_for, "severity": b.severity, "group": b.group}[f]
            out.append(f"{f} {old or '(none)'} -> {new or '(none)'}")
        elif f == "labels":
            out.append(f"labels ({_dict_delta(a.labels, b.labels)})")
        elif f == "annotations":
            out.append(f"annotations ({_dict_delta(a.annotations, b.annotations)})")
        elif f == "runbook":
            keys = sorted(k for k in a.runbook.keys() | b.runbook.keys() if a.runbook.get(k) != b.runbook.get(k))
            out.append(f"runbook ({', '.join(keys)})")
        elif f == "tests":
            out.append(f"tests ({len(a.tests)} -> {len(b.tests)})" if len(a.tests) != len(b.tests) else "tests")
        else:
            out.append(f)
    return out


def _added_detail(r: RuleView) -> str:
    bits = [f"group {r.group}"]
    if r.severity:
        bits.append(f"severity {r.severity}")
    if r.for_:
        bits.append(f"for {r.for_}")
    return ", ".join(bits)


def _policy_headline(s: Summary) -> str:
    weak = sum(c.weakens for c in s.policy)
    return (f"{len(s.policy)} change(s) of the baseline or the check configuration"
            + (f", {weak} of them weaken what rulegen checks" if weak else ""))


def _policy_text(s: Summary) -> list[str]:
    """The policy changes for a terminal: ``!`` weakens (with its code and what it hides),
    ``.`` tightens."""
    if not s.policy:
        return []
    lines = [f"POLICY CHANGES: {_policy_headline(s)}"]
    for c in s.policy:
        if c.weakens:
            lines.append(f"! {c.code} {c.file}:{c.line}: {plain(c.what)}")
            lines += [f"    hides {finding_phrase(f)}" for f in c.hides[:SHOWN]]
            if len(c.hides) > SHOWN:
                lines.append(f"    hides {len(c.hides) - SHOWN} more finding(s)")
            if not c.hides:
                lines.append("    hides no finding today")
        else:
            lines.append(f". {c.file}: {plain(c.what)}")
    return lines


def _stops_paging(s: Summary) -> str:
    """The headline for alerts that stop paging (:mod:`rulegen.gitops.routing_diff`), or ""."""
    stop = [c for c in s.routing if c.stops_paging]
    if not stop:
        return ""
    return (f"{len(stop)} alert{'s' if len(stop) != 1 else ''} stop{'s' if len(stop) == 1 else ''} paging: "
            + ", ".join(f"{c.alert} ({c.app}: {', '.join(c.old) or 'nothing'} -> {', '.join(c.new) or 'nothing'})"
                        for c in stop))


def _route_line(c) -> str:
    return f"{c.alert} ({c.app}): {', '.join(c.old) or 'nothing'} -> {', '.join(c.new) or 'nothing'}"


def render_text(s: Summary, base: str) -> str:
    """The summary for a terminal: alerts that stop paging first, then the policy changes
    (see :func:`_policy_text`), then one line per rule, ``+`` added, ``-`` removed, ``~``
    changed, then routing changes."""
    stop = _stops_paging(s)
    lines = ([f"STOPS PAGING: {stop}"] if stop else []) + [f"rulegen diff {base} -> working tree: {_headline(s)}"]
    lines += _policy_text(s)
    for r in s.added:
        lines.append(f"+ {_kind_word(r.kind)} {r.name} ({r.app}): {_added_detail(r)}")
    for r in s.removed:
        lines.append(f"- {_kind_word(r.kind)} {r.name} ({r.app})")
    for c in s.changed:
        lines.append(f"~ {_kind_word(c.new.kind)} {c.new.name} ({c.new.app}): {'; '.join(describe(c))}")
        if "expr" in c.fields:
            lines.append(f"    expr was: {' '.join(c.old.expr.split())}")
            lines.append(f"    expr now: {' '.join(c.new.expr.split())}")
    if s.values:
        lines.append("values and gates (helm template of the changed charts):")
        lines += [f"  {chart}: {effect}" for chart, effect in s.values]
    if s.routing:
        lines.append("routing (Alertmanager's own routing of each side's configuration):")
        lines += [f"  {_route_line(c)}" for c in s.routing]
    for n in s.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def _code(text: str) -> str:
    return "`" + text.replace("`", "'") + "`"


def _code_names(effect: str) -> str:
    """An effect with its leading rule name (or group name) as code: ``RedisDown`` disabled."""
    if effect.startswith("gates "):
        return effect
    if effect.startswith("group "):
        name, _, rest = effect[len("group "):].partition(" ")
        return f"group {_code(name)} {rest}"
    name, _, rest = effect.partition(" ")
    return f"{_code(name)} {rest}"


def _md_code(text: str) -> str:
    """``text`` (hostile: names and messages from the pull request) as an inline code span in
    a table cell: one line, no control characters, backquotes made quotes, pipes escaped;
    inside a code span Markdown and HTML are shown as they are, never rendered."""
    return "`" + plain(text).replace("`", "'").replace("|", "\\|") + "`"


def _policy_markdown(s: Summary, base: str) -> list[str]:
    """The policy changes as a section of their own: a heading, what it means, and a table of
    the changes with the findings each hides."""
    if not s.policy:
        return []
    weak = sum(c.weakens for c in s.policy)
    out = [f"#### :warning: Policy changes since `{base}`: {_policy_headline(s)}", ""]
    if weak:
        out += ["**These change what rulegen reports, not the alerts: the findings below no longer fail "
                "`rulegen check`. Approve them only on purpose.**", ""]
    out += ["| effect | change | where | hides |", "|---|---|---|---|"]
    for c in s.policy:
        effect = f"**weakens** ({c.code})" if c.weakens else "tightens"
        if c.weakens:
            hides = "<br>".join(_md_code(finding_phrase(f)) for f in c.hides[:SHOWN])
            if len(c.hides) > SHOWN:
                hides += f"<br>and {len(c.hides) - SHOWN} more"
            hides = hides or "no finding today"
        else:
            hides = ""
        where = f"{c.file}:{c.line}" if c.weakens else c.file
        out.append(f"| {effect} | {_md_code(c.what)} | {_md_code(where)} | {hides} |")
    out.append("")
    return out


def render_markdown(s: Summary, base: str) -> str:
    """The summary as GitHub/GitLab-flavoured Markdown for a pull-request comment: the policy
    changes first (:func:`_policy_markdown`), then the alert changes."""
    out = [f"### Alert changes since `{base}`", ""]
    stop = _stops_paging(s)
    if stop:
        out += [f"> [!CAUTION]\n> **{_cell(stop)}**", ""]
    out += _policy_markdown(s, base)
    if not (s.added or s.removed or s.changed):
        out += ["No alert or recording rule changed" + (" in the specs." if s.values else "."), ""]
    else:
        out += [f"**{_headline(s)}**", "", "| change | rule | app | what |", "|---|---|---|---|"]
        for r in s.added:
            out.append(f"| added | {_kind_word(r.kind)} {_code(r.name)} | {r.app} | {_cell(_added_detail(r))} |")
        for r in s.removed:
            out.append(f"| removed | {_kind_word(r.kind)} {_code(r.name)} | {r.app} | |")
        for c in s.changed:
            what = ", ".join(_cell(d) for d in describe(c))
            out.append(f"| changed | {_kind_word(c.new.kind)} {_code(c.new.name)} | {c.new.app} | {what} |")
        out.append("")
        exprs = [c for c in s.changed if "expr" in c.fields]
        if exprs:
            out += ["<details><summary>Expressions changed</summary>", ""]
            for c in exprs:
                out += [f"**{c.new.name}** ({c.new.app})", "", "```diff",
                        *("- " + line for line in c.old.expr.rstrip("\n").splitlines()),
                        *("+ " + line for line in c.new.expr.rstrip("\n").splitlines()), "```", ""]
            out += ["</details>", ""]
    if s.values:
        out += ["#### What the charts render (values and gates)", "", "| chart | effect |", "|---|---|"]
        out += [f"| {_cell(chart)} | {_cell(_code_names(effect))} |" for chart, effect in s.values]
        out.append("")
    if s.routing:
        out += ["#### Who is notified (Alertmanager routing)", "", "| alert | app | before | now |", "|---|---|---|---|"]
        out += [f"| {_code(c.alert)} | {_cell(c.app)} | {_cell(', '.join(c.old) or 'nothing')} | "
                f"{_cell(', '.join(c.new) or 'nothing')}{' **(stops paging)**' if c.stops_paging else ''} |"
                for c in s.routing]
        out.append("")
    for n in s.notes:
        out += [f"> **Note:** {n}", ""]
    return "\n".join(out)
