"""The triage fields of a runbook and the variables of its commands (shared by the runbook
checks and the page renderer).

Triage fields (``impact``, ``owner``, ``escalation``, ``silence``, ``dashboards``, ``links``,
``do_not``) may be written at app level (``runbook:`` of the spec) and per alert
(``runbook:`` of the alert). :func:`effective` merges them: an alert's value replaces the
app's, except ``dashboards`` and ``links``, where the app's entries come first and the
alert's follow.

Command variables: a diagnosis command may use the alert's labels as shell variables, in the
upper-case form of the label (``$NAMESPACE`` is the label ``namespace``) or under a name the
alert declares in ``runbook.variables`` (``{NS: namespace}``). A variable the block assigns
itself (``SERVER_NS=inference-cache``, ``for POD in ...``, ``read X``) is the block's own,
and so are the shell's and Kubernetes tools' environment variables (:data:`ENVIRONMENT`).
The page shows a one-line preamble that sets the label variables
(``NAMESPACE='ai' DEPLOYMENT='llama-swap'  # alert labels: namespace deployment``), with values
from the alert's equality matchers when they fix them, else a readable placeholder
(``'‹namespace›'``).
"""

from __future__ import annotations

import functools
import re

TRIAGE_FIELDS = ("impact", "owner", "escalation", "silence", "dashboards", "links", "do_not")
_LISTS = ("dashboards", "links")

#: Environment variables a command may use without them being alert labels.
ENVIRONMENT = frozenset({
    "HOME", "PATH", "USER", "PWD", "OLDPWD", "SHELL", "TERM", "LANG", "TMPDIR", "HOSTNAME",
    "KUBECONFIG", "KUBE_EDITOR", "HELM_NAMESPACE", "EDITOR", "PAGER", "RANDOM", "SECONDS",
    "LINENO", "BASH", "BASH_VERSION", "IFS", "PPID", "UID", "EUID", "REPLY", "OPTARG", "OPTIND",
})

#: The comment that ends a preamble line (the page's script finds the line by it).
PREAMBLE_MARK = "# alert labels:"


def effective(spec, rule) -> dict:
    """The triage fields of ``rule`` (an alert of ``spec``) after merging the app's: a dict
    with the keys of :data:`TRIAGE_FIELDS` that are set."""
    app = spec.runbook or {}
    own = rule.runbook or {}
    out = {}
    for k in TRIAGE_FIELDS:
        if k in _LISTS:
            items = list(app.get(k) or []) + list(own.get(k) or [])
            if items:
                out[k] = items
        elif own.get(k) is not None:
            out[k] = own[k]
        elif app.get(k) is not None:
            out[k] = app[k]
    return out


def _unquoted(text: str) -> list[tuple[int, str]]:
    """(offset, text) pieces of shell ``text`` outside single quotes and ``#`` comments
    (double-quoted text is kept: variables expand there)."""
    out, i, start, n = [], 0, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            out.append((start, text[start:i]))
            end = text.find("'", i + 1)
            i = n if end < 0 else end + 1
            start = i
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n;|&("):
            out.append((start, text[start:i]))
            end = text.find("\n", i)
            i = n if end < 0 else end
            start = i
            continue
        i += 1
    out.append((start, text[start:]))
    return out


_USE = re.compile(r"\$\{?([A-Za-z_][A-Za-z0-9_]*)")
_ASSIGN = re.compile(r"(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)=")
_LOOP = re.compile(r"\b(?:for|select)\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b|\bread\s+(?:-\w+\s+)*([A-Za-z_][A-Za-z0-9_ ]*)")


@functools.lru_cache(maxsize=4096)  # the same blocks repeat across alerts
def variables_used(text: str) -> tuple[tuple[str, int], ...]:
    """Variables shell ``text`` expands, as (name, offset of the ``$``), in order, without
    those it assigns itself and the environment's (see the module docstring)."""
    own = set()
    uses = []
    for off, piece in _unquoted(text):
        own.update(m.group(1) for m in _ASSIGN.finditer(piece))
        for m in _LOOP.finditer(piece):
            own.update((m.group(1) or m.group(2) or "").split())
        uses.extend((m.group(1), off + m.start()) for m in _USE.finditer(piece))
    return tuple((name, at) for name, at in uses if name not in own and name not in ENVIRONMENT)


def label_of(var: str, declared: dict | None) -> str | None:
    """The alert label shell variable ``var`` holds: the declared one, else the lower-case
    form of an upper-case name, else None (a lower-case variable is the command's own)."""
    if declared and var in declared:
        return declared[var]
    if re.fullmatch(r"[A-Z][A-Z0-9_]*", var):
        return var.lower()
    return None


def label_variables(text: str, declared: dict | None) -> list[tuple[str, str]]:
    """(variable, label) pairs shell ``text`` uses, first use first, each once."""
    out: dict[str, str] = {}
    for var, _ in variables_used(text):
        label = label_of(var, declared)
        if label is not None and var not in out:
            out[var] = label
    return list(out.items())


@functools.lru_cache(maxsize=4096)
def fixed_value(expr: str, label: str) -> str | None:
    """The value ``expr`` fixes for ``label`` by equality matchers (``label="v"``), when every
    such matcher agrees; else None."""
    vals = set(re.findall(r'(?<![A-Za-z0-9_])%s\s*=\s*"((?:[^"\\]|\\.)*)"' % re.escape(label), expr))
    return vals.pop() if len(vals) == 1 else None


def shell_quote(value: str) -> str:
    """``value`` in single quotes for a POSIX shell."""
    return "'" + value.replace("'", "'\\''") + "'"


def preamble(pairs: list[tuple[str, str]], expr: str) -> str:
    """The one-line preamble setting the label variables ``pairs`` (see the module docstring)."""
    sets = " ".join(f"{var}={shell_quote(fixed_value(expr, label) or f'‹{label}›')}" for var, label in pairs)
    return f"{sets}  {PREAMBLE_MARK} {' '.join(label for _, label in pairs)}"
