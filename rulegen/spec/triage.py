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
itself (``SERVER_NS=inference-cache``, ``for POD in ...``, ``read -p "Pod? " X``, ``mapfile
-t PODS``, ``printf -v X``) is the block's own, and so are the shell's and Kubernetes tools'
environment variables (:data:`ENVIRONMENT`). The text is read by bash's quoting rules
(:class:`_Reader`): what is quoted, commented or in a quoted here-document expands nothing.
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

#: Variables a shell or the programs it starts act on (compared without regard to case, so
#: zsh's lower-case ``path``/``prompt`` are covered): bash's and POSIX sh's shell variables, zsh's
#: and ksh's special parameters, and the environment the usual tools read. A page that set one of
#: them from a link (``PROMPT_COMMAND='...'``, ``PS1='$(...)'``, ``BASH_ENV``, ``IFS``, ``PATH``)
#: would run or redirect code once the line is pasted; see :func:`unplain_reason`.
SHELL_SPECIAL = frozenset(n.lower() for n in """
    BASH BASHOPTS BASHPID BASH_ALIASES BASH_ARGC BASH_ARGV BASH_ARGV0 BASH_CMDS BASH_COMMAND
    BASH_COMPAT BASH_ENV BASH_EXECUTION_STRING BASH_LINENO BASH_LOADABLES_PATH BASH_MONOSECONDS
    BASH_REMATCH BASH_SOURCE BASH_SUBSHELL BASH_TRAPSIG BASH_VERSINFO BASH_VERSION BASH_XTRACEFD
    CDPATH CHILD_MAX COLUMNS COMPREPLY COMP_CWORD COMP_KEY COMP_LINE COMP_POINT COMP_TYPE
    COMP_WORDBREAKS COMP_WORDS COPROC DIRSTACK EMACS ENV EPOCHREALTIME EPOCHSECONDS EUID
    EXECIGNORE FCEDIT FIGNORE FUNCNAME FUNCNEST GLOBIGNORE GLOBSORT GROUPS HISTCMD HISTCONTROL
    HISTFILE HISTFILESIZE HISTIGNORE HISTSIZE HISTTIMEFORMAT HOME HOSTFILE HOSTNAME HOSTTYPE IFS
    IGNOREEOF INPUTRC INSIDE_EMACS LANG LANGUAGE LINENO LINES MACHTYPE MAIL MAILCHECK MAILPATH
    MAPFILE OLDPWD OPTARG OPTERR OPTIND OSTYPE PATH PIPESTATUS POSIXLY_CORRECT PPID PROMPT_COMMAND
    PROMPT_DIRTRIM PS0 PS1 PS2 PS3 PS4 PWD RANDOM READLINE_ARGUMENT READLINE_LINE READLINE_MARK
    READLINE_POINT REPLY SECONDS SHELL SHELLOPTS SHLVL SRANDOM TIMEFORMAT TMOUT TMPDIR UID
    AUTO_RESUME HISTCHARS NLSPATH
    ARGV0 CPUTYPE FPATH KEYTIMEOUT LISTMAX LOGCHECK MANPATH MODULE_PATH NULLCMD POSTEDIT PROMPT
    PROMPT2 PROMPT3 PROMPT4 PSVAR READNULLCMD REPORTMEMORY REPORTTIME RPROMPT RPROMPT2 RPS1 RPS2
    SAVEHIST SPROMPT STTY TERMINFO TERMINFO_DIRS TIMEFMT TMPPREFIX TTY TTYIDLE USERNAME WATCH
    WATCHFMT WORDCHARS ZBEEP ZDOTDIR ZLE_LINE_ABORTED ZLE_REMOVE_SUFFIX_CHARS ZLE_RPROMPT_INDENT
    ZLE_SPACE_SUFFIX_CHARS ZSH_ARGZERO ZSH_EVAL_CONTEXT ZSH_NAME ZSH_PATCHLEVEL ZSH_SUBSHELL
    ZSH_VERSION CDPATH PATH ARGV STATUS PIPESTATUS SIGNALS OPTIONS PARAMETERS COMMANDS FUNCTIONS
    ALIASES BUILTINS HISTORY JOBTEXTS JOBSTATES JOBDIRS ERRNO TRY_BLOCK_ERROR FUNCSTACK
    FUNCFILETRACE FUNCSOURCETRACE FUNCTRACE MATCH MBEGIN MEND BUFFER LBUFFER RBUFFER CURSOR
    KEYMAP WIDGET NUMERIC PREBUFFER HISTNO REGION_ACTIVE ZFTP_TMOUT SECONDS FCEDIT
    EDITOR VISUAL PAGER MANPAGER GIT_PAGER BROWSER TERM TZ DISPLAY USER LOGNAME LESS LESSOPEN
    LESSCLOSE LESSKEY KUBECONFIG KUBE_EDITOR KUBECTL_EXTERNAL_DIFF HELM_NAMESPACE SUDO_ASKPASS
    SSH_ASKPASS SSH_AUTH_SOCK GNUPGHOME GPG_AGENT_INFO XDG_CONFIG_HOME XDG_DATA_HOME XDG_RUNTIME_DIR
    XDG_CACHE_HOME XDG_CONFIG_DIRS XDG_DATA_DIRS TEMP TMP GOPATH GOROOT GOFLAGS GOPROXY GOTOOLCHAIN
    GOPRIVATE GONOSUMDB GOINSECURE CLASSPATH PERL5LIB PERL5OPT PERLLIB RUBYLIB RUBYOPT NODE_OPTIONS
    NODE_PATH PYTHONPATH PYTHONSTARTUP PYTHONHOME PYTHONINSPECT PYTHONWARNINGS PIP_INDEX_URL
    JAVA_TOOL_OPTIONS JDK_JAVA_OPTIONS _JAVA_OPTIONS HOSTALIASES RESOLV_HOST_CONF LOCALDOMAIN
    RES_OPTIONS SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE REQUESTS_CA_BUNDLE NETRC CURL_HOME WGETRC
    VAULT_ADDR VAULT_TOKEN DOCKER_HOST DOCKER_CONFIG CONTAINER_HOST MANOPT MANWIDTH MANSECT
    LESSCHARSET LESSSECURE LESSEDIT TERMCAP SCREENDIR WGETRC GOENV GOBIN GOOS GOARCH GOCACHE
    GOMODCACHE GONOPROXY GOSUMDB GOEXPERIMENT GODEBUG GOTELEMETRY GOWORK GOAMD64 COLORTERM
    """.split())
#: Prefixes of families of such variables (compared without regard to case): the dynamic
#: loaders', locales, bash's, completion, prompts, history, and tool families that pick hosts,
#: credentials, configuration or programs to run from the environment.
SHELL_SPECIAL_PREFIXES = ("bash_", "ld_", "dyld_", "lc_", "comp_", "readline_", "hist", "ps", "zsh_",
                          "zle_", "prompt", "git_", "ssh_", "gpg", "gnupg", "kube", "helm_", "docker_",
                          "aws_", "azure_", "google_", "gcloud_", "cloudsdk_", "vault_", "consul_",
                          "nomad_", "tf_", "ansible_", "npm_", "yarn_", "pip_", "python", "perl",
                          "ruby", "gem_", "bundle_", "node_", "java_", "jdk_", "_java", "maven_",
                          "gradle_", "curl_", "wget", "xdg_", "gconv", "malloc_", "glibc_", "sudo_",
                          "systemd_", "dbus_", "krb5", "openssl_", "ssl_", "gio_", "gtk_", "qt_",
                          "tmux")
#: Suffixes of such variables (compared without regard to case): search paths, proxies, options
#: and flags read by a program, commands and programs to run, configuration and home folders,
#: sockets and addresses.
SHELL_SPECIAL_SUFFIXES = ("path", "_proxy", "_options", "_opts", "flags", "_command", "_cmd", "_home",
                          "config", "_rc", "_env", "_preload", "_addr", "_host", "_sock", "_socket",
                          "_editor", "_pager", "_shell", "_askpass", "_program", "_exec", "_hook",
                          "_file", "_dir", "_token", "_url", "_endpoint", "_server")

_PLAIN_VAR = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,63}")


def unplain_reason(name: str) -> str | None:
    """Why the page must not set shell variable ``name`` from a link, or None when it is plain.

    A plain name is a letter then letters, digits or ``_`` (at most 64) that no shell, dynamic
    loader or common tool reads: not in :data:`SHELL_SPECIAL`, and not starting with one of
    :data:`SHELL_SPECIAL_PREFIXES` nor ending with one of :data:`SHELL_SPECIAL_SUFFIXES`
    (all compared without regard to case). The preamble a page shows sets each label variable
    to a value the page's URL may supply (``?namespace=...``); pasted into a shell, a special
    name would act on that value: ``PROMPT_COMMAND`` and ``PS1`` run it at the next prompt,
    ``BASH_ENV``/``ENV`` name a script every later ``bash``/``sh`` runs, ``LD_PRELOAD`` loads
    a library into every program, ``PATH``/``IFS``/``CDPATH`` change what commands mean, and an
    exported ``KUBECONFIG``, ``HTTPS_PROXY`` or ``VAULT_ADDR`` sends the next command (and its
    credentials) elsewhere."""
    if not _PLAIN_VAR.fullmatch(name):
        return "it is not a letter followed by letters, digits or _ (at most 64)"
    low = name.lower()
    if low in SHELL_SPECIAL:
        return f"{name} is a variable the shell or common tools act on"
    for p in SHELL_SPECIAL_PREFIXES:
        if low.startswith(p):
            return f"names starting with {p.upper()} belong to the shell, the loader or a tool that reads them"
    for s in SHELL_SPECIAL_SUFFIXES:
        if low.endswith(s):
            return f"names ending with {s.upper()} are what tools read a path, proxy, option or program from"
    return None


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


class _Reader:
    """One pass over shell text by bash's quoting rules (bash manual, "Quoting", "Shell
    Expansions", "Here Documents"): which parameters it expands and which characters it reads
    as shell syntax rather than as quoted text, a comment or a here-document body.

    * ``'...'``: nothing expands; ``$'...'``: nothing expands, ``\\'`` does not end it;
    * ``"..."`` (and ``$"..."``): ``$`` and backquotes expand, ``\\`` escapes only
      ``$ ` " \\`` and a newline, a ``'`` is an ordinary character;
    * ``\\x`` outside quotes: ``x`` is literal (``\\$POD`` expands nothing);
    * ``$NAME``, ``${NAME}``, ``${NAME:-word}`` (the word is read too, in the quoting it is
      in: inside double quotes a ``'`` there is literal), ``${#NAME}``, ``${!NAME}``;
      ``$1``, ``$?`` and the other special parameters are not names;
    * ``$(...)`` and backquotes: shell text, read the same way (quotes inside start afresh,
      even within double quotes); ``$((...))``, ``((...))`` and ``$[...]``: arithmetic, where
      a bare name is a variable too;
    * ``#`` at the start of a word: a comment to the end of the line;
    * ``<<WORD`` / ``<<-WORD``: the body, the lines after the command's line up to the line
      that is exactly ``WORD`` (``<<-``: after leading tabs), expands like double-quoted
      text, except that ``"`` is literal; when any part of ``WORD`` is quoted (``'EOF'``,
      ``"EOF"``, ``\\EOF``) nothing in the body expands. ``<<<`` is a here-string (a plain word).

    Known simplification: a ``)`` of a ``case`` pattern inside ``$(...)`` ends the command
    substitution early (bash parses the ``case``).
    """

    def __init__(self, text: str):
        self.t = text
        self.end = len(text)
        self.code = bytearray(len(text))  # 1 where bash reads the character as shell syntax
        self.uses: list[tuple[str, int]] = []
        self.pending: list[tuple[str, bool, bool]] = []  # here-documents whose body follows the line
        self.cmd(0, None)

    def masked(self) -> str:
        """The text with every character that is not shell syntax as ``\\0`` (newlines kept),
        same length, so offsets hold."""
        return "".join(c if k or c == "\n" else "\0" for c, k in zip(self.t, self.code))

    def _close(self, ch: str, i: int) -> int:
        """Index after the next ``ch`` from ``i`` (the end when there is none)."""
        j = self.t.find(ch, i, self.end)
        return self.end if j < 0 else j + 1

    def cmd(self, i: int, stop: str | None) -> int:
        """Shell text from ``i`` to ``stop`` (``)`` of ``$(``, a backquote, None: the end);
        returns the index after ``stop``."""
        t = self.t
        depth = 0
        word_start = True
        while i < self.end:
            c = t[i]
            if c == "\\":
                i += 2
                word_start = False
                continue
            if c == "`" and stop == "`":
                return i + 1
            if c == "'":
                i = self._close("'", i + 1)
            elif c == '"':
                i = self.dquote(i + 1)
            elif c == "$" and t.startswith("$'", i):
                i = self.ansi_c(i + 2)
            elif c == "$" and t.startswith('$"', i):
                i = self.dquote(i + 2)
            elif c == "$":
                i = self.dollar(i, quoted=False)
            elif c == "`":
                i = self.cmd(i + 1, "`")
            elif c == "#" and word_start:
                j = t.find("\n", i, self.end)
                i = self.end if j < 0 else j
                continue
            elif c == "(" and word_start and t.startswith("((", i):
                i = self.arith(i + 2, "))")
            elif c == "<" and t.startswith("<<<", i):  # a here-string: its word is read as usual
                self.code[i:i + 3] = b"\1\1\1"
                i += 3
                word_start = True
                continue
            elif c == "<" and t.startswith("<<", i):
                i = self.heredoc(i + 2)
                word_start = True
                continue
            else:
                if c == ")" and stop == ")":
                    if depth == 0:
                        return i + 1
                    depth -= 1
                elif c == "(":
                    depth += 1
                self.code[i] = 1
                i += 1
                word_start = c in " \t\n;|&()<>"
                if c == "\n" and self.pending:
                    i = self.bodies(i)
                continue
            word_start = False
        return i

    def dquote(self, i: int, close: str | None = '"') -> int:
        """Double-quoted text from ``i``; returns the index after the closing quote. With
        ``close`` None, an unquoted here-document body up to ``self.end``: the same
        expansions, but ``"`` is an ordinary character there, and ``\\"`` too."""
        t = self.t
        escapable = "$`\"\\\n" if close else "$`\\\n"
        while i < self.end:
            c = t[i]
            if c == "\\":
                i += 2 if i + 1 < self.end and t[i + 1] in escapable else 1
            elif c == close:
                return i + 1
            elif c == "$":
                i = self.dollar(i, quoted=True)
            elif c == "`":
                i = self.cmd(i + 1, "`")
            else:
                i += 1
        return i

    def ansi_c(self, i: int) -> int:
        """``$'...'`` text from ``i`` (after the quote); returns the index after its end."""
        t = self.t
        while i < self.end:
            if t[i] == "\\":
                i += 2
            elif t[i] == "'":
                return i + 1
            else:
                i += 1
        return i

    def dollar(self, i: int, quoted: bool) -> int:
        """The expansion starting with the ``$`` at ``i``; returns the index after it."""
        t = self.t
        j = i + 1
        if t.startswith("((", j):
            return self.arith(j + 2, "))")
        if t.startswith("(", j):
            return self.cmd(j + 1, ")")
        if t.startswith("[", j):
            return self.arith(j + 1, "]")
        if t.startswith("{", j):
            k = j + 1
            if k < self.end and t[k] in "#!" and _NAME.match(t, k + 1, self.end):
                k += 1  # ${#NAME} (length), ${!NAME} (indirection)
            m = _NAME.match(t, k, self.end)
            if m:
                self.uses.append((m.group(), i))
                k = m.end()
            return self.brace_word(k, quoted)
        m = _NAME.match(t, j, self.end)
        if m:
            self.uses.append((m.group(), i))
            return m.end()
        return j + 1 if j < self.end and t[j] in _SPECIAL else j

    def brace_word(self, k: int, quoted: bool) -> int:
        """The rest of a ``${...}`` (operator and word) from ``k``; returns the index after ``}``."""
        t = self.t
        depth = 0
        while k < self.end:
            c = t[k]
            if c == "\\":
                k += 2
                continue
            if c == "}":
                if depth == 0:
                    return k + 1
                depth -= 1
            elif c == "{":
                depth += 1
            elif c == "'" and not quoted:
                k = self._close("'", k + 1)
                continue
            elif c == '"':
                k = self.dquote(k + 1)
                continue
            elif c == "$":
                k = self.ansi_c(k + 2) if not quoted and t.startswith("$'", k) else self.dollar(k, quoted)
                continue
            elif c == "`":
                k = self.cmd(k + 1, "`")
                continue
            k += 1
        return k

    def arith(self, i: int, close: str) -> int:
        """Arithmetic text from ``i`` up to ``close``; a bare name is a variable."""
        t = self.t
        depth = 0
        while i < self.end:
            if depth == 0 and t.startswith(close, i):
                return i + len(close)
            c = t[i]
            if c == "$":
                i = self.dollar(i, quoted=True)
                continue
            if c == '"':
                i = self.dquote(i + 1)
                continue
            if c == "\\":
                i += 2
                continue
            m = _NAME.match(t, i, self.end)
            if m and not (i and (t[i - 1].isalnum() or t[i - 1] in "_#.")):  # not 0x1f, 16#ff
                self.uses.append((m.group(), i))
                i = m.end()
                continue
            depth += c in "(["
            depth -= c in ")]" and depth > 0
            i += 1
        return i

    def heredoc(self, i: int) -> int:
        """A ``<<`` operator's delimiter word from ``i`` (after ``<<``); its body is read after
        the line (:meth:`bodies`)."""
        t = self.t
        strip = t.startswith("-", i)
        i += strip
        while i < self.end and t[i] in " \t":
            i += 1
        word, quoted, start = [], False, i
        while i < self.end and t[i] not in " \t\n;|&<>()":
            c = t[i]
            if c == "\\":
                quoted = True
                word.append(t[i + 1:i + 2])
                i += 2
            elif c in "'\"":
                quoted = True
                j = self._close(c, i + 1)
                word.append(t[i + 1:j - 1])
                i = j
            else:
                word.append(c)
                i += 1
        if i > start:
            self.pending.append(("".join(word), quoted, strip))
        return i

    def bodies(self, i: int) -> int:
        """The bodies of the pending here-documents, from ``i`` (a line start); returns the
        index after the last delimiter line."""
        t = self.t
        pending, self.pending = self.pending, []
        for delim, quoted, strip in pending:
            start = body_end = i
            while i < self.end:
                nl = t.find("\n", i, self.end)
                line_end = self.end if nl < 0 else nl
                line = t[i:line_end]
                if (line.lstrip("\t") if strip else line) == delim:
                    body_end, i = i, min(line_end + 1, self.end)
                    break
                i = body_end = min(line_end + 1, self.end)
            if not quoted:
                self.heredoc_body(start, body_end)
        return i

    def heredoc_body(self, i: int, stop: int) -> None:
        """An unquoted here-document body from ``i`` to ``stop``."""
        saved, self.end = self.end, stop
        self.dquote(i, None)
        self.end = saved


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPECIAL = frozenset("0123456789@*#?-$!")
_ASSIGN = re.compile(r"(?:^|[\s;&|(])(?:export\s+|local\s+|readonly\s+)?([A-Za-z_][A-Za-z0-9_]*)\+?=")
#: Names a command assigns (in the text with quoted parts masked, so a quoted prompt is one
#: opaque word): ``for``/``select NAME in``; ``read [options] NAME...`` (``-d -i -n -N -p -t
#: -u`` take an argument, ``-a NAME`` names an array); ``mapfile``/``readarray [options]
#: NAME``; ``printf -v NAME``.
_LOOP = re.compile(
    r"\b(?:for|select)\s+([A-Za-z_][A-Za-z0-9_]*)\s+in\b"
    r"|\bread\s+(?:-[ers]*[dinNptu][ \t]*[^\s;&|]+[ \t]+|-[ers]+[ \t]+)*(?:-[ers]*a[ \t]*)?([A-Za-z_][A-Za-z0-9_ \t]*)"
    r"|\b(?:mapfile|readarray)\b[^;&|<\n]*?([A-Za-z_][A-Za-z0-9_]*)[ \t]*(?=$|[;&|<\n])"
    r"|\bprintf\s+-v[ \t]*([A-Za-z_][A-Za-z0-9_]*)", re.M)
#: An angle-bracket placeholder in shell syntax: ``<pod>``, ``<pod-name>``, ``<ns/name>``,
#: ``<pod name>`` (words joined by single spaces, none right inside the brackets).
_PLACEHOLDER = re.compile(r"(?<![<>&])<([A-Za-z_][A-Za-z0-9_.:/-]*(?: [A-Za-z_][A-Za-z0-9_.:/-]*)*)>")


@functools.lru_cache(maxsize=4096)  # the same blocks repeat across alerts
def _read(text: str) -> _Reader:
    return _Reader(text)


@functools.lru_cache(maxsize=4096)
def variables_used(text: str) -> tuple[tuple[str, int], ...]:
    """Variables shell ``text`` expands, as (name, offset of the ``$``, or of a bare name in
    arithmetic), in order, without those it assigns itself and the environment's (see the
    module docstring). Quoting, comments and here-documents as bash reads them (:class:`_Reader`)."""
    r = _read(text)
    code = r.masked()
    own = {m.group(1) for m in _ASSIGN.finditer(code)}
    for m in _LOOP.finditer(code):
        own.update(" ".join(g for g in m.groups() if g).split())
    return tuple((name, at) for name, at in r.uses if name not in own and name not in ENVIRONMENT)


@functools.lru_cache(maxsize=4096)
def placeholders(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, text) of every angle-bracket placeholder (``<pod>``) that bash reads as shell
    syntax in ``text``: two redirections (``< pod`` reads a file named ``pod``, ``>`` truncates
    the file the next word names), not a value. Inside quotes, comments and here-document
    bodies the text is literal and not reported; a real redirection (``< file.json``,
    ``2>/dev/null``, ``<(cmd)``, ``sort <in >out``) does not look like ``<name>``. Written
    without spaces, ``sort <in>out`` is reported too: write ``sort < in > out``."""
    return tuple((m.start(), m.group()) for m in _PLACEHOLDER.finditer(_read(text).masked()))


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
