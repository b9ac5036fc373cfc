"""Running a program with an environment reduced to what it needs.

rulegen runs in CI on pull requests, where the environment holds tokens and credentials. A
chart's template can print anything Helm can read (``.Files.Get`` of a link to
``/proc/self/environ`` once did), and every program inherits its parent's environment, so no
program rulegen starts gets that environment: :func:`run` passes only :data:`KEPT` (locale,
time zone, ``PATH``, ``TMPDIR``) and points ``HOME`` and Helm's cache, config and data homes at a
fresh private folder that is removed afterwards, so no user plugin, repository, kubeconfig or
git configuration is read either.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from pathlib import Path

#: Variables passed through from rulegen's own environment when set; nothing else is.
KEPT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TMPDIR")

#: Variables pointed into the private home by :func:`environment`.
HOMES = ("HOME", "HELM_CACHE_HOME", "HELM_CONFIG_HOME", "HELM_DATA_HOME", "XDG_CACHE_HOME",
         "XDG_CONFIG_HOME", "XDG_DATA_HOME")

TimeoutExpired = subprocess.TimeoutExpired


def environment(home: str | os.PathLike) -> dict[str, str]:
    """The environment of a program rulegen starts: :data:`KEPT` variables of ``os.environ``
    (those set), ``PATH`` without its relative entries and defaulting to ``/usr/bin:/bin``, and each of :data:`HOMES` set to a
    folder under ``home`` (a fresh private folder, created by the caller)."""
    env = {k: os.environ[k] for k in KEPT if k in os.environ}
    # only absolute PATH entries: a relative one (".", "") is the child's working folder,
    # often the checkout a pull request wrote (see rulegen.tools.find.search_path)
    path = [d for d in env.get("PATH", "").split(os.pathsep) if os.path.isabs(d)]
    env["PATH"] = os.pathsep.join(path) or "/usr/bin:/bin"
    for k in HOMES:
        env[k] = str(Path(home) if k == "HOME" else Path(home) / k.lower())
    return env


def run(args: list, *, cwd: str | os.PathLike | None = None, timeout: float, text: bool = True,
        set_env: dict[str, str] | None = None, input: str | bytes | None = None) -> subprocess.CompletedProcess:
    """Run ``args`` (program and arguments; never through a shell) to completion with stdin
    empty and stdout and stderr captured, in ``cwd``, with :func:`environment` (plus
    ``set_env``: fixed values the caller chooses, such as ``LC_ALL=C``, never copied from
    rulegen's environment) and a fresh private home that is removed when the program ends.

    ``text``: decode the output as UTF-8 (undecodable bytes replaced), else bytes.
    ``input``: written to the program's stdin instead (str when ``text``, else bytes).

    Raises:
        FileNotFoundError: the program does not exist.
        subprocess.TimeoutExpired: it ran longer than ``timeout`` seconds (it is killed).
    """
    with tempfile.TemporaryDirectory(prefix="rulegen-home-") as home:
        kw = {"encoding": "utf-8", "errors": "replace"} if text else {}
        env = {**environment(home), **(set_env or {})}
        return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, timeout=timeout,
                              env=env, **({"input": input} if input is not None else {"stdin": subprocess.DEVNULL}),
                              **kw)


class Started:
    """A program :func:`start` started: :meth:`wait` for its outcome, :meth:`close` to stop it
    (when still running) and remove its private home and files."""

    def __init__(self, args: list, timeout: float, input: str, set_env: dict[str, str] | None):
        self._timeout = timeout
        self._tmp = tempfile.TemporaryDirectory(prefix="rulegen-home-")
        home = Path(self._tmp.name)
        (home / "home").mkdir()
        # stdin and stdout are files, not pipes: the program never waits for rulegen to read
        (home / "stdin").write_text(input, encoding="utf-8")
        self._out = open(home / "stdout", "w+b")  # noqa: SIM115 (closed in close())
        self._err = open(home / "stderr", "w+b")  # noqa: SIM115
        self._args = [str(a) for a in args]
        env = {**environment(home / "home"), **(set_env or {})}
        try:
            with open(home / "stdin", "rb") as stdin:
                self._proc = subprocess.Popen(self._args, stdin=stdin, stdout=self._out, stderr=self._err, env=env)
        except BaseException:
            self._proc = None
            self.close()
            raise
        self._started = time.monotonic()

    def wait(self) -> subprocess.CompletedProcess:
        """Wait for the program (at most the rest of its ``timeout``) and return what it did as
        :func:`run` does (text output).

        Raises:
            subprocess.TimeoutExpired: it ran longer than ``timeout`` seconds (it is killed).
        """
        left = max(0.0, self._timeout - (time.monotonic() - self._started))
        try:
            code = self._proc.wait(timeout=left)
        except subprocess.TimeoutExpired:
            self.close()
            raise
        text = []
        for f in (self._out, self._err):
            f.seek(0)
            text.append(f.read().decode("utf-8", errors="replace"))
        return subprocess.CompletedProcess(self._args, code, text[0], text[1])

    def close(self) -> None:
        """Kill the program if it still runs; remove its files and private home."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        self._out.close()
        self._err.close()
        self._tmp.cleanup()


def start(args: list, *, timeout: float, input: str, set_env: dict[str, str] | None = None) -> Started:
    """Start ``args`` as :func:`run` would run it (same environment, a fresh private home, no
    shell), with ``input`` (text) on stdin, and return at once: the caller does other work
    while it runs, then calls :meth:`Started.wait` (and always :meth:`Started.close`).

    Raises:
        FileNotFoundError: the program does not exist.
    """
    return Started(args, timeout, input, set_env)
