"""Conventions that make alerts routable and actionable. Each is on by default and can be
switched off or tuned in ``.rulegen.yaml`` (see :mod:`rulegen.config`)::

    conventions:
      severities: [critical, warning, info]   # [] switches RG501 off
      require_summary: true                   # RG502
      require_description: true               # RG503
      require_runbook_for: [critical]         # RG504; [] switches it off

Codes:

* ``RG501`` an alert has no ``severity``, or one outside the allowed set (default
  ``critical``, ``warning``, ``info``). Alertmanager routes on it. The severity may also come
  from ``labels`` (app, group or alert). A misspelt one gets "did you mean" (``critcal``:
  did you mean critical?). Bad: ``severity: page``; good: ``severity: critical``.
* ``RG502`` an alert has no ``summary`` (or a blank one). Bad: an alert without ``summary:``;
  good: ``summary: llama-swap has no available replica.``
* ``RG503`` an alert has no ``description`` (or a blank one).
  Bad: an alert without ``description:``; good: ``description: No replica of llama-swap has been
  available for 5 minutes.``
* ``RG504`` an alert whose severity is in ``require_runbook_for`` (default ``critical``) has
  no runbook content: none of ``runbook.causes``, ``runbook.diagnosis``,
  ``runbook.resolution``, and no ``runbook_url`` annotation of its own pointing at an
  existing runbook. Whoever is paged needs to know what to do. Bad: a ``critical`` alert
  without ``runbook:``; good: ``runbook: {causes: [...], resolution: [...]}``.
* ``RG505`` (warning) a ``runbook.diagnosis`` command changes something: the page calls that
  section "Diagnose (all read-only)", and whoever is paged at 3 a.m. runs it as such. Each
  simple command is judged (lines, backslash continuations, ``;``, ``&``, ``&&``, ``||``, pipes;
  quotes, comments and heredoc bodies respected; ``sudo``, ``xargs``, ``timeout``, ``watch``,
  variable assignments and shell keywords skipped). Flagged: ``kubectl``/``oc`` with delete,
  apply, create, edit, patch, replace, scale, drain, cordon, uncordon, taint, label,
  annotate, set, autoscale, expose, run, ``rollout`` restart/undo/pause/resume/latest/retry,
  ``oc adm`` drain/cordon/uncordon/taint, ``exec -- <a flagged command>``; ``helm`` install,
  upgrade, uninstall, delete, rollback; ``rm``; ``systemctl`` start, stop, restart, reload,
  daemon-reload, enable, disable...; ``curl`` with a POST, PUT, PATCH or DELETE method or
  with data, except to read APIs (Prometheus ``/api/v1/query``..., Elasticsearch
  ``_search``). Not flagged: ``--dry-run``, ``apply view-last-applied``, ``label --list``.
  Bad: ``kubectl -n ai delete pod llama-swap-0``; good: move it to ``runbook.resolution``.
"""

from __future__ import annotations

import re
import shlex

from ...findings import Finding, Severity
from ...hints import closest
from .positions import offset_position

ID = "conventions"


_KUBECTL_WRITES = {"delete", "apply", "create", "edit", "patch", "replace", "scale", "drain",
                   "cordon", "uncordon", "taint", "label", "annotate", "set", "autoscale",
                   "expose", "run"}
_ROLLOUT_WRITES = {"restart", "undo", "pause", "resume", "latest", "retry"}
_OC_ADM_WRITES = {"drain", "cordon", "uncordon", "taint"}
_HELM_WRITES = {"install", "upgrade", "uninstall", "delete", "rollback"}
_SYSTEMCTL_WRITES = {"start", "stop", "restart", "reload", "kill", "daemon-reload", "enable",
                     "disable", "mask", "unmask", "try-restart", "reload-or-restart", "isolate",
                     "set-property"}
_HTTP_WRITES = {"POST", "PUT", "PATCH", "DELETE"}
#: Read APIs that take POST too: Prometheus' query endpoints, Elasticsearch's searches.
_READ_POSTS = ("/api/v1/query", "/api/v1/series", "/api/v1/labels", "/api/v1/label/", "/_search",
               "/_msearch", "/_count")
#: kubectl/oc/helm global flags that take no value (every other ``--flag`` before the verb
#: written without ``=`` takes the next word)
_BOOL_FLAGS = {"--insecure-skip-tls-verify", "--match-server-version", "--warnings-as-errors",
               "--disable-compression", "--debug", "--help", "-h"}
_SHORT_FLAGS_WITH_VALUE = {"-n", "-s", "-l", "-v", "-o", "-c"}
#: Words that start a command without being it: shell keywords and wrappers.
_SHELL_WORDS = {"if", "then", "else", "elif", "do", "while", "until", "!", "{", "}", "time",
                "nohup", "env", "exec", "command", "builtin"}
#: Wrapper commands and their options that take a value.
_WRAPPERS = {"sudo": {"-u", "-g", "-C", "-h", "-p"}, "xargs": {"-I", "-n", "-L", "-P", "-d", "-E", "-s"},
             "timeout": {"-s", "-k", "--signal", "--kill-after"}, "watch": {"-n", "-d"}}
_OPERATOR = re.compile(r"[;&|()<>]+")
_HEREDOC = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")


def _simple_commands(text: str):
    """The simple commands of a shell ``text`` as word lists: backslash continuations joined,
    heredoc bodies skipped, each line split by shlex (quotes and ``#`` comments respected)
    and cut at ``;``, ``&``, ``&&``, ``||``, pipes, parentheses and redirections."""
    heredoc = None
    for line in text.replace("\\\n", " ").split("\n"):
        if heredoc is not None:
            if line.strip() == heredoc:
                heredoc = None
            continue
        m = _HEREDOC.search(line)
        if m:
            heredoc = m.group(1)
        try:
            lex = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
            lex.whitespace_split = True
            lex.commenters = "#"
            tokens = list(lex)
        except ValueError:
            tokens = line.split()
        cmd: list[str] = []
        for t in tokens:
            if t and _OPERATOR.fullmatch(t):
                if cmd:
                    yield cmd
                cmd = []
            else:
                cmd.append(t)
        if cmd:
            yield cmd


def _command_words(words: list[str]) -> list[str]:
    """``words`` without leading variable assignments, shell keywords and wrappers (``sudo``,
    ``xargs``, ``timeout``, ``watch`` with their options)."""
    i = 0
    while i < len(words):
        w = words[i]
        if w in _SHELL_WORDS or re.fullmatch(r"[A-Za-z_]\w*=.*", w):
            i += 1
        elif w in _WRAPPERS:
            takes = _WRAPPERS[w]
            i += 1
            while i < len(words) and words[i].startswith("-"):
                i += 2 if words[i] in takes else 1
            if w == "timeout" and i < len(words):
                i += 1  # the duration
        else:
            break
    return words[i:]


def _writes(words: list[str]) -> bool:
    """True when the simple command ``words`` changes something (see RG505)."""
    words = _command_words(words)
    while len(words) > 2 and words[0].rsplit("/", 1)[-1] in ("kubectl", "oc") \
            and "exec" in words and "--" in words[words.index("exec"):]:
        # kubectl exec ... -- <command>: the command run in the container is what counts
        # (a loop, not recursion: exec -- exec -- ... may nest any number of times)
        inner = _command_words(words[words.index("--", words.index("exec")) + 1:])
        if not inner or inner == words:
            break
        words = inner
    if not words:
        return False
    tool = words[0].rsplit("/", 1)[-1]
    args = words[1:]
    if tool in ("kubectl", "oc", "helm"):
        if any(a.startswith("--dry-run") and a != "--dry-run=none" for a in args):
            return False
        rest, i = [], 0
        while i < len(args):
            a = args[i]
            if a == "--":
                break
            if a.startswith("-") and not rest:  # a global flag before the verb
                takes = (a.startswith("--") and "=" not in a and a not in _BOOL_FLAGS) \
                    or a in _SHORT_FLAGS_WITH_VALUE
                i += 2 if takes else 1
                continue
            if not a.startswith("-"):
                rest.append(a)
            i += 1
        if not rest:
            return False
        verb = rest[0]
        if tool == "helm":
            return verb in _HELM_WRITES
        if verb == "apply" and len(rest) > 1 and rest[1] == "view-last-applied":
            return False
        if verb in ("label", "annotate") and "--list" in args:
            return False
        if verb == "rollout":
            return len(rest) > 1 and rest[1] in _ROLLOUT_WRITES
        if verb == "adm":
            return len(rest) > 1 and rest[1] in _OC_ADM_WRITES
        return verb in _KUBECTL_WRITES
    if tool in ("rm", "rmdir"):
        return True
    if tool == "systemctl":
        return any(a in _SYSTEMCTL_WRITES for a in args)
    if tool == "curl":
        method = None
        data = False
        for i, a in enumerate(args):
            if a.startswith("--request"):
                method = a.split("=", 1)[1] if "=" in a else (args[i + 1] if i + 1 < len(args) else None)
            elif a.startswith("-") and not a.startswith("--") and "X" in a:
                after = a[a.index("X") + 1:]
                method = after or (args[i + 1] if i + 1 < len(args) else None)
            elif a in ("-d", "-F", "-T", "--form", "--upload-file") or a.startswith(("--data", "-d")):
                data = True
        write = method.upper() in _HTTP_WRITES if method else data
        return write and not any(r in a for a in args for r in _READ_POSTS)
    return False


def mutating(command: str) -> str | None:
    """The first simple command of the shell text ``command`` that changes something (see
    RG505 in the module docstring), as its words joined by spaces, or None."""
    for words in _simple_commands(command):
        if _writes(words):
            return " ".join(words)
    return None


def check_spec(spec, ctx):
    """Yield RG501-RG505 findings for the alerts of ``spec`` per ``ctx.config``."""
    cfg = ctx.config
    lf = spec.source
    for g, r in spec.rules():
        if not r.is_alert:
            continue
        name_path = r.path + ("alert",)
        labels = r.all_labels(spec.labels, g.labels)
        severity = labels.get("severity")
        if cfg.severities:
            allowed = ", ".join(cfg.severities)
            if severity is None:
                yield lf.finding(name_path, "RG501", f"alert has no severity; add `severity:` "
                                 f"with one of {allowed}", rule=r.name)
            elif severity not in cfg.severities:
                # where the severity is written: the alert's `severity:`, else the `severity`
                # label of the alert, its group or the app (a flow mapping too: its value)
                path = (r.path + ("severity",) if r.severity is not None
                        else r.path + ("labels", "severity") if "severity" in r.labels
                        else g.path + ("labels", "severity") if "severity" in g.labels
                        else ("labels", "severity") if "severity" in spec.labels else name_path)
                near = closest(str(severity), cfg.severities)
                fix = f"did you mean {near}?" if near else "use one of them"
                yield lf.finding(path, "RG501", f"severity {severity!r} is not one of {allowed} "
                                 f"(conventions.severities in .rulegen.yaml); {fix}", rule=r.name)
        for key, required, code in (("summary", cfg.require_summary, "RG502"),
                                    ("description", cfg.require_description, "RG503")):
            if required and not str(r.annotations.get(key) or "").strip():
                yield lf.finding(name_path, code, f"alert has no {key}; add `{key}:` saying "
                                 + ("what is wrong in one line" if key == "summary"
                                    else "what fires, where and what it means"), rule=r.name)
        if severity in cfg.require_runbook_for and not r.annotations.get("runbook_url") and not any(
                r.runbook.get(k) for k in ("causes", "diagnosis", "resolution")):
            yield lf.finding(name_path, "RG504", f"{severity} alert has no runbook content; add "
                             "runbook.causes, runbook.diagnosis or runbook.resolution so whoever "
                             "is paged knows what to do", rule=r.name)
        for i, block in enumerate(r.runbook.get("diagnosis") or []):
            commands = block.get("commands") if isinstance(block, dict) else None
            found = mutating(commands) if isinstance(commands, str) else None
            if found is not None:
                path = r.path + ("runbook", "diagnosis", i, "commands")
                at = commands.find(found)
                if at < 0:  # written over several lines or with quotes: its first word
                    at = commands.find(found.split()[0])
                line, col = offset_position(lf, path, max(at, 0))
                yield Finding(lf.path, line, col, "RG505", Severity.WARNING,
                              f"diagnosis command `{found}` changes something, but the page lists "
                              "diagnosis as read-only commands; move it to runbook.resolution, written as a step "
                              f"(e.g. \"If it is stuck, run `{found}`.\")", r.name)
