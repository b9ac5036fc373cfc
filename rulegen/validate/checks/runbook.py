"""Runbook content that whoever is paged copies and follows: commands that paste into a shell,
variables the alert can fill, triage fields the project requires.

Codes:

* ``RG506`` a runbook ``commands`` block (diagnosis, context or a section) is not valid shell:
  ``bash -n`` (parse only, nothing runs) rejects it, so it fails when pasted. The position is
  the line bash names. Needs ``bash`` on the PATH (silent without it). A warning of ``bash
  -n`` is a finding too: an unterminated here-document (``cat <<EOF`` without its ``EOF``
  line) parses, with a warning, and swallows the rest of the block; the position is then the
  line of the ``<<``. An angle-bracket placeholder (``<pod>``, ``<pod-name>``, ``<pod
  name>``) anywhere in shell syntax is a finding without asking bash
  (:func:`rulegen.spec.triage.placeholders`): in the middle of a line, ``kubectl logs <pod>
  -n ns`` parses (``< pod`` reads a file, ``>`` truncates the file named
  ``-n``) and fails at 3 a.m. with "No such file or directory", or worse empties a file. One
  finding per line, at its first placeholder (bash's own error on that line is not repeated);
  the fix names the variable the page fills from the alert (``<pod-name>``: ``"$POD_NAME"``).
  Not reported: angle brackets inside quotes, comments and here-document bodies, and real
  redirections (``< file.json``, ``2>/dev/null``, ``<(cmd)``); ``sort <in>out`` is, write
  ``sort < in > out``. Bad: ``kubectl logs <pod> -n ns``, ``kubectl get cachebackend <name>
  -n <ns>``, ``custom-columns=A:.x[?(@.type=="Ready")]`` unquoted (``(`` is shell syntax), or
  ``cat <<EOF`` with no ``EOF`` line; good: ``kubectl logs "$POD" -n ns``, ``kubectl get
  cachebackend "$NAME" -n "$NAMESPACE"``, ``'custom-columns=A:.x[?(@.type=="Ready")]'``, and
  the ``EOF`` line, alone and unindented.
* ``RG507`` a diagnosis command uses a variable that stands for an alert label (``$POD``
  for ``pod``, or a name declared in ``runbook.variables``) which the alert can never carry:
  its ``expr`` drops the label (``max by (namespace, name) (...)`` has no ``pod``;
  ``absent(...)`` keeps only equality matchers of a plain selector) and the alert's own
  labels do not set it. The preamble could never be filled from the alert. Judged by
  :func:`rulegen.promql.labelflow.can_carry`; unknown is silent. Variables are found by
  bash's quoting rules (:class:`rulegen.spec.triage._Reader`): in double quotes after an
  apostrophe (``echo "it's $POD"``), in ``${POD:-x}``, ``$(...)``, arithmetic and unquoted
  here-document bodies; not in single quotes, ``$'...'``, after ``\\$``, in comments or in
  the body of a quoted here-document (``<<'EOF'``), which bash does not expand. Fix: use a
  label the alert keeps, or assign the variable in the block (``POD=...``) when it is not a
  label. Bad: ``kubectl logs "$POD"`` for ``max by (namespace) (...) > 0``; good: ``kubectl get
  pods -n "$NAMESPACE"``.
* ``RG508`` a dashboard maps a label the alert can never carry to a dashboard variable
  (``dashboards[].variables``); same judgement as RG507. Bad: ``variables: {pod: var-pod}`` for
  ``count(up == 0) > 0``; good: a label the alert keeps, e.g. ``{namespace: var-ns}`` for ``max by
  (namespace) (...)``.
* ``RG509`` a silence matcher (``silence.matchers``) names a label the alert can never carry:
  the silence would match nothing. Same judgement as RG507. Bad: ``matchers: {pod: x}`` for
  ``sum by (job) (...)``; good: ``matchers: {job: x}``.
* ``RG511`` an alert's ``runbook.context`` names a section the app's runbook does not have
  (``runbook.sections[].title``, exactly), so the page cannot show it in the alert's section.
  Bad: ``context: [Reason tabel]``; good: ``context: [Reason table]``, the section's title.
* ``RG513`` two alerts of one app have different names that make the same heading id
  (:func:`rulegen.render.slug.anchor` lower-cases, drops punctuation and joins words with
  ``-``: ``FooDown`` and ``Foodown``, ``Foo-Bar`` and ``foo bar``), so the ``runbook_url`` of
  both opens the first one's section on the app's page. Reported at the second alert, as an
  error, rather than given distinct ids: an id that depends on which other alerts exist
  (``foodown_1``) would move when one of them is renamed or removed, and links in
  notifications already sent would open the wrong alert; and while Prometheus and
  Alertmanager keep the two names apart, a person reading ``FooDown`` and ``Foodown`` in a
  notification does not. (The link check's ``RG716``, two headings of a page with one id,
  is the same problem seen on the page; this finding names the spec line.) Alerts with the same name share one section on purpose and are not reported.
  Bad: ``FooDown`` and ``Foodown`` in one app; good: ``FooDown`` and ``FooDegraded``.
* ``RG514`` a variable the runbook page fills from its link (an upper-case label variable such
  as ``$NAMESPACE`` in a ``commands`` block, a name declared in ``runbook.variables``, a
  silence matcher's ``$VAR``) is not a plain name: the shell, the dynamic loader or a common
  tool acts on it (:func:`rulegen.spec.triage.unplain_reason`: ``PROMPT_COMMAND``, ``PS1``-``PS4``,
  ``BASH_ENV``, ``ENV``, ``IFS``, ``PATH``, ``CDPATH``, ``HISTFILE``, ``LD_*``, ``*_PROXY``,
  ``KUBECONFIG``, zsh's ``path``...). The page's preamble sets it to a value from the URL's
  query string, so a crafted link made the pasted line run code (``PROMPT_COMMAND`` runs at the
  next prompt) or send the next command elsewhere. Not switchable off. Bad: ``kubectl logs
  "$PROMPT_COMMAND"``, ``variables: {LD_PRELOAD: pod}``; good: ``variables: {ALERT_POD: pod}``
  with ``kubectl logs "$ALERT_POD"``, or ``"$POD"``.
* ``RG519`` a query of a runbook ``promql`` block (diagnosis, context or a section) does not
  parse as PromQL (the parser of ``expr``, promql-parser, with RG301's positions and promtool's
  where it places the error better): whoever is paged copies it, or opens it with the page's
  "Open in Prometheus" link, and gets a parse error. Reported at the character at fault, else at
  the query. A query holding a placeholder the reader fills in, outside quotes (``<window>``,
  ``‹namespace›``, ``{{ $labels.pod }}``, ``$NAMESPACE``, ``[[name]]``), is reported only when
  no name, number, duration or string in its place would make it parse; placeholders inside a
  matcher's quotes (``{namespace="<ns>"}``) are PromQL strings already. Bad: ``sum by (code)
  (rate(x[5m])``; good: ``sum by (code) (rate(x[5m]))``.
* ``RG510`` an alert lacks a triage field the project requires for its severity
  (``conventions.require_triage`` in ``.rulegen.yaml``, e.g. ``{critical: [impact, owner,
  do_not]}``; off by default). The field may be set at app level or on the alert. Bad: a
  critical alert without ``runbook.impact`` under ``require_triage: {critical: [impact]}``; good:
  ``impact:`` set on the alert or the app. An ``owner`` or ``escalation`` default of the
  project (``owners:`` in ``.rulegen.yaml``) counts as set.
"""

from __future__ import annotations

import functools
import json
import os
import re

from ...findings import Finding, Severity
from ...render.slug import anchor
from ...spec.owners import resolve
from ...spec.triage import effective, label_of, placeholders, unplain_reason, variables_used
from ...promql.labelflow import can_carry
from ...tools.find import system_program
from .positions import offset_position

ID = "runbook"

_BASH_LINE = re.compile(r"line (\d+): (.*)")
#: bash's warning for a here-document that runs to the end of the text, and the line of its ``<<``.
_HEREDOC_AT = re.compile(r"here-document at line (\d+)")


#: Text made only of these characters has no quoting, grouping, redirection or expansion:
#: bash reads it as simple commands, valid unless a line starts with a reserved word.
_PLAIN = re.compile(r"[A-Za-z0-9 _.,:/=@%+^~\n-]*")
_RESERVED = {"case", "coproc", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if",
             "in", "select", "then", "until", "while", "time"}


def plainly_valid(text: str) -> bool:
    """True when shell ``text`` certainly parses without asking bash (see :data:`_PLAIN`): the
    common ``kubectl -n ai get pods`` lines cost no process."""
    return _PLAIN.fullmatch(text) is not None and not any(
        line.split()[0] in _RESERVED for line in text.split("\n") if line.split())


@functools.lru_cache(maxsize=4096)  # the same block repeats across alerts and apps
def shell_error(text: str) -> tuple[int, str] | None:
    """``bash -n``'s verdict on shell ``text``: None when it parses without a warning (or bash
    is missing), else (0-based character offset of the line bash names, bash's message; for
    an unterminated here-document the line of its ``<<``). About 5 ms a block
    (one process) the first time, except for text :func:`plainly_valid` clears; then kept."""
    if plainly_valid(text):
        return None
    bash = _bash(os.getcwd(), os.environ.get("PATH"))
    if bash is None:
        return None
    # bash's verdict is kept between runs like Python's bytecode (rulegen.codecache), keyed by
    # the text and the bash binary: an unchanged project asks bash nothing on the next run
    from ... import codecache
    try:
        st = os.stat(bash)
    except OSError:
        return None
    name = codecache.key("bash -n verdict v2", bash, str(st.st_mtime_ns), str(st.st_size), text)
    kept = codecache.read_bytes(name)
    if kept is not None:
        try:
            v = json.loads(kept)
            return None if v is None else (int(v[0]), str(v[1]))
        except (ValueError, TypeError, IndexError):
            pass
    verdict = _ask_bash(bash, text)
    codecache.write_bytes(name, json.dumps(verdict).encode())
    return verdict


@functools.lru_cache(maxsize=8)
def _bash(cwd: str, path: str | None) -> str | None:
    """:func:`rulegen.tools.find.system_program` ``bash`` for working folder ``cwd`` (never one
    the checkout, the working folder, holds) and ``PATH`` value ``path``: looked up once a run,
    not once a block (each look-up resolves every ``PATH`` entry)."""
    return system_program("bash", cwd)


def _ask_bash(bash: str, text: str) -> tuple[int, str] | None:
    """:func:`shell_error` from one ``bash -n`` process."""
    from ...tools import process  # (subprocess: imported only by the runs that start one)
    r = process.run([bash, "-n", "-c", "--", text], timeout=30, set_env={"LC_ALL": "C"})
    if r.returncode == 0 and not r.stderr.strip():
        return None
    first = (r.stderr.strip().splitlines() or ["syntax error"])[0]
    m = _BASH_LINE.search(first)
    line = int(m.group(1)) if m else 1
    message = m.group(2) if m else re.sub(r"^[^:]*bash: (?:-c: )?", "", first)
    h = _HEREDOC_AT.search(message)
    if h:
        line = int(h.group(1))
    lines = text.split("\n")
    line = min(max(line, 1), len(lines))
    return sum(len(x) + 1 for x in lines[:line - 1]), message


def _blocks(spec, rule=None):
    """(path, block) of every runbook block with commands: the app's context and sections,
    or with ``rule`` that alert's diagnosis."""
    if rule is None:
        rb = spec.runbook or {}
        for i, b in enumerate(rb.get("context") or []):
            yield ("runbook", "context", i), b
        for si, s in enumerate(rb.get("sections") or []):
            for i, b in enumerate(s.get("blocks") or []):
                yield ("runbook", "sections", si, "blocks", i), b
    else:
        for i, b in enumerate(rule.runbook.get("diagnosis") or []):
            yield rule.path + ("runbook", "diagnosis", i), b


def _never(expr: str, label: str, static: dict, records: dict) -> bool:
    """True when the alert (``expr``, its own labels ``static``) certainly never carries
    ``label``; ``records``: the spec's recording rules, name -> expr, for the label flow."""
    return label != "alertname" and label not in static and can_carry(expr, label, records) is False


def _unplain_message(var: str, why: str, label: str) -> str:
    return (f"${var} is filled by the runbook page from its link (?{label}=...), but {why}: a crafted "
            f"link would make the pasted line run or redirect code; name the variable plainly, e.g. "
            f"ALERT_{var.strip('_').upper()[:40] or 'VALUE'} (declare it in runbook.variables: "
            f"{{ALERT_{var.strip('_').upper()[:40] or 'VALUE'}: <label>}}) and use that in the commands")


def _declared_variables(spec):
    """RG514 for each name declared in ``runbook.variables`` (app or alert) or used as a
    silence matcher's ``$VAR`` that is not plain (:func:`rulegen.spec.triage.unplain_reason`)."""
    lf = spec.source
    places = [(("runbook",), spec.runbook or {}, "")]
    places += [(r.path + ("runbook",), r.runbook or {}, r.name) for _, r in spec.rules() if r.is_alert]
    for base, rb, rule in places:
        declared = rb.get("variables") if isinstance(rb, dict) else None
        for var in (declared if isinstance(declared, dict) else {}):
            why = unplain_reason(str(var))
            if why is not None:
                yield lf.finding(base + ("variables", var), "RG514", _unplain_message(str(var), why, str(declared[var])), rule=rule)
        silence = rb.get("silence") if isinstance(rb, dict) else None
        matchers = silence.get("matchers") if isinstance(silence, dict) else None
        for label, value in (matchers if isinstance(matchers, dict) else {}).items():
            m = re.fullmatch(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", value) if isinstance(value, str) else None
            # every $VAR: the silence's preamble sets it, a lower-case one too (zsh's prompt, path)
            if m:
                why = unplain_reason(m.group(1))
                if why is not None:
                    yield lf.finding(base + ("silence", "matchers", label), "RG514",
                                     _unplain_message(m.group(1), why, label_of(
                                         m.group(1), declared if isinstance(declared, dict) else None) or label),
                                     rule=rule)


def _shared_anchors(spec):
    """RG513: an alert whose name differs from an earlier alert's of the app but makes the
    same heading id (see the module docstring)."""
    lf = spec.source
    first: dict[str, object] = {}  # heading id -> the first alert with it
    for _, r in spec.rules():
        if not r.is_alert:
            continue
        a = anchor(r.name)
        other = first.setdefault(a, r)
        if other.name != r.name:
            line = lf.pos(other.path)[0]
            yield lf.finding(r.path + ("alert",), "RG513",
                             f"alerts {r.name!r} and {other.name!r} (line {line}) make the same runbook "
                             f"anchor #{a}, so both runbook_urls open the section of {other.name!r}; rename "
                             "one so the names differ in more than case and punctuation", rule=r.name)


def _command_block(spec, records: dict, path: tuple, block, owner):
    """RG506, RG514 and RG507 findings for one runbook block at ``path`` (``owner``: its (group,
    alert), or None for an app-level block); nothing when the block has no ``commands``."""
    lf = spec.source
    text = block.get("commands") if isinstance(block, dict) else None
    if not isinstance(text, str):
        return
    path = path + ("commands",)
    rule_name = owner[1].name if owner else ""
    by_line: dict[int, list[tuple[int, str]]] = {}
    for at, ph in placeholders(text):
        by_line.setdefault(text.count("\n", 0, at), []).append((at, ph))
    for found in by_line.values():
        at, ph = found[0]
        var = re.sub(r"[^A-Za-z0-9_]", "_", ph[1:-1]).upper()
        names = ", ".join(p for _, p in found)
        line, col = offset_position(lf, path, at)
        yield Finding(lf.path, line, col, "RG506", Severity.ERROR,
                      f"{names} in a command is not a placeholder to bash but redirections (< reads a "
                      "file, > truncates the file the next word names), so the pasted command fails or "
                      f"empties a file; write the value as a variable the page fills from the alert, "
                      f"\"${var}\" (the label {var.lower()}; another label: runbook.variables "
                      f"{{{var}: <label>}}), or quote the text", rule_name)
    err = shell_error(text)
    if err is not None and text.count("\n", 0, err[0]) not in by_line:
        line, col = offset_position(lf, path, err[0])
        if "here-document" in err[1]:
            fix = "end it with a line holding only the delimiter word (no spaces; <<- allows leading tabs)"
        else:
            fix = "quote arguments holding ( ) < > | & ; and write alert labels as \"$NAMESPACE\", not <ns>"
        yield Finding(lf.path, line, col, "RG506", Severity.ERROR,
                      f"command block is not valid shell (bash -n: {err[1]}); {fix}", rule_name)
    declared = (owner[1].runbook.get("variables") or {}) if owner else {}
    plain_seen = set()
    for var, at in variables_used(text):
        if var in plain_seen or label_of(var, declared) is None:
            continue
        plain_seen.add(var)
        why = unplain_reason(var)
        if why is not None:
            line, col = offset_position(lf, path, at)
            yield Finding(lf.path, line, col, "RG514", Severity.ERROR,
                          _unplain_message(var, why, label_of(var, declared)), rule_name)
    if owner is None:
        return
    g, r = owner
    static = r.all_labels(spec.labels, g.labels)
    seen = set()
    for var, at in variables_used(text):
        label = label_of(var, declared)
        if label is None or var in seen:
            continue
        seen.add(var)
        if _never(r.expr, label, static, records):
            line, col = offset_position(lf, path, at)
            yield Finding(lf.path, line, col, "RG507", Severity.ERROR,
                          f"${var} stands for the label {label!r}, which this alert never carries "
                          "(its expr drops it); use a label the alert keeps, or assign "
                          f"{var}=... in the block if it is not a label", r.name)


#: A placeholder the reader fills in (RG519): ``<name>``, ``‹name›``, a Go template action, a
#: shell variable (the page fills commands' variables), a ``[[param]]``.
_QUERY_PLACEHOLDER = re.compile(r"<[A-Za-z_][\w.:/-]*(?: [A-Za-z_][\w.:/-]*)*>|‹[^›\n]*›|\{\{.*?\}\}|\$\{?[A-Za-z_]\w*\}?"
                                r"|\[\[\s*[A-Za-z_]\w*\s*\]\]")
#: What a placeholder may stand for, each padded to the placeholder's length (a name always
#: fits, so the offsets of the text with names in place are the query's).
_FILLS = ("x", "1", "5m", '"x"')


def _placeholder_spans(query: str) -> list[tuple[int, int]]:
    """(start, end) of each placeholder of ``query`` outside string literals and comments."""
    from ...promql.pieces import code_only
    return [m.span() for m in _QUERY_PLACEHOLDER.finditer(code_only(query))]


def _query_fills(query: str, spans: list[tuple[int, int]]):
    """``query`` with its placeholders (``spans``) replaced by each mix of :data:`_FILLS`, the
    first every placeholder as a name, all offsets kept. At most 4**3 texts: past three
    placeholders each fill is tried for all at once."""
    import itertools
    mixes = itertools.product(_FILLS, repeat=len(spans)) if len(spans) <= 3 else ((f,) * len(spans) for f in _FILLS)
    for mix in mixes:
        out, at = [], 0
        for (a, b), fill in zip(spans, mix):
            out += [query[at:a], fill.ljust(b - a)]  # the names (first) keep every offset
            at = b
        yield "".join(out) + query[at:]


def _query_error(query: str) -> tuple[int | None, str] | None:
    """(offset of the character at fault or None, parser message) when ``query`` does not
    parse as PromQL, also with any fill of its placeholders (:func:`_query_fills`); None when
    it parses."""
    from ...promql.syntax import parse
    from .promql import _clearer, locate_error
    _, err = parse(query)
    if err is None:
        return None
    spans = _placeholder_spans(query)
    found = []
    for filled in _query_fills(query, spans) if spans else (query,):
        got = parse(filled)[1]
        if got is None:
            return None
        at = locate_error(filled, got)
        found.append((at, _clearer(filled, got, at)))
    # the error of a fill that is not about a placeholder (`sum(x[<w>]`: the `(`, not the
    # name in brackets), else that of the names
    return next((f for f in found if f[0] is not None and not any(a <= f[0] < b for a, b in spans)), found[0])


def _promql_blocks(spec, ctx, blocks):
    """RG519 for the queries of the ``promql`` blocks among ``blocks`` ((path, block, owner)
    as for commands), each query once (an SLO's alert repeats its runbook on each of its rules)."""
    from .promql import MAX_ASK, _parse_fix, promtool_errors
    lf = spec.source
    bad, seen = [], set()
    for path, block, owner in blocks:
        q = block.get("promql") if isinstance(block, dict) else None
        queries = [(path + ("promql",), q)] if isinstance(q, str) else \
            [(path + ("promql", i), x) for i, x in enumerate(q) if isinstance(x, str)] if isinstance(q, list) else []
        for qpath, query in queries:
            if (qpath, query) in seen:
                continue
            seen.add((qpath, query))
            err = _query_error(query)
            if err is not None:
                bad.append((qpath, query, err, owner[1].name if owner else ""))
    unplaced = tuple(query for _, query, (at, _), _ in bad
                     if at is None and len(query) <= MAX_ASK and not _QUERY_PLACEHOLDER.search(query))
    told = promtool_errors(unplaced, ctx.root) if unplaced else {}
    for qpath, query, (at, err), rule in bad:
        if at is None and query in told:
            at, err = told[query]
        line, col = offset_position(lf, qpath, at if at is not None else len(query) - len(query.lstrip()))
        yield Finding(lf.path, line, col, "RG519", Severity.ERROR,
                      f"runbook query does not parse as PromQL: {err}; {_parse_fix(err)} (whoever is paged "
                      "runs it, and the page links it with \"Open in Prometheus\")", rule)


def _alert_fields(spec, ctx, g, r, records: dict):
    """RG508-RG511 findings for the triage fields and ``runbook.context`` of alert ``r``."""
    lf = spec.source
    static = r.all_labels(spec.labels, g.labels)
    fields = effective(spec, r)
    res = resolve(spec, g, r, ctx.config.owners)  # the project's default owners count (RG510)
    fields.update({k: v for k, v in (("owner", res.owner), ("escalation", res.escalation)) if v})
    own = r.runbook or {}
    base = r.path + ("runbook",)
    for di, d in enumerate(fields.get("dashboards") or []):
        for label in (d.get("variables") or {}):
            if _never(r.expr, label, static, records):
                n_app = len((spec.runbook or {}).get("dashboards") or [])
                path = (base + ("dashboards", di - n_app, "variables", label)) if di >= n_app \
                    else ("runbook", "dashboards", di, "variables", label)
                yield lf.finding(path, "RG508", f"dashboard {d.get('title')!r} maps the label {label!r}, "
                                 "which this alert never carries; map a label the alert keeps",
                                 rule=r.name, key=True)
    silence = fields.get("silence") or {}
    for label in silence.get("matchers") or {}:
        if _never(r.expr, label, static, records):
            where = base if "silence" in own else ("runbook",)
            yield lf.finding(where + ("silence", "matchers", label), "RG509",
                             f"silence matcher {label!r} names a label this alert never carries, so "
                             "the silence would match nothing; use a label the alert keeps",
                             rule=r.name, key=True)
    titles = {sec.get("title") for sec in (spec.runbook or {}).get("sections") or []}
    for ci, title in enumerate(own.get("context") or []):
        if title not in titles:
            known = ", ".join(sorted(t for t in titles if t)) or "none"
            yield lf.finding(base + ("context", ci), "RG511",
                             f"runbook.context names the section {title!r}, which the app's runbook "
                             f"does not have (sections: {known})", rule=r.name)
    severity = static.get("severity")
    for name in ctx.config.require_triage.get(severity, ()):
        if not fields.get(name):
            yield lf.finding(r.path + ("alert",), "RG510",
                             f"{severity} alert has no runbook.{name} (conventions.require_triage); "
                             "set it on the alert or once for the app under runbook:", rule=r.name)


def check_spec(spec, ctx):
    """Yield RG506-RG511, RG513, RG514 and RG519 findings for the runbook content of ``spec``."""
    records = {r.name: r.expr for _, r in spec.rules() if not r.is_alert}
    cmd_blocks = [(p, b, None) for p, b in _blocks(spec)]
    for g, r in spec.rules():
        if r.is_alert:
            cmd_blocks.extend((p, b, (g, r)) for p, b in _blocks(spec, r))
    for path, block, owner in cmd_blocks:
        yield from _command_block(spec, records, path, block, owner)
    yield from _promql_blocks(spec, ctx, cmd_blocks)
    yield from _shared_anchors(spec)
    yield from _declared_variables(spec)
    for g, r in spec.rules():
        if r.is_alert:
            yield from _alert_fields(spec, ctx, g, r, records)
