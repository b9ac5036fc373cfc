"""Input files are read within a size limit, and never from a FIFO or device.

Every file a pull request can put in front of rulegen (specs, ``values.yaml``, chart
templates and ``Chart.yaml``, rule and test files given to ``rulegen import``, the baseline,
``.rulegen.yaml``, ``mkdocs.yml``, runbook pages with team notes, generated files ``check``
compares) is read through :func:`read_bytes` or :func:`read_text`. A FIFO, device or socket
is refused without being read (it could block or never end); the size is checked before
anything is read, and at most the limit plus one byte is ever read. The limit is 32 MiB,
set in the CI job with the environment variable ``RULEGEN_MAX_INPUT_BYTES`` (a whole number
of bytes), which a pull request cannot change; a spec keeps its own 512 KiB (``RG106``). YAML
from any of these files has its alias expansion bounded before it is parsed (``RG105``).

Codes:

* ``RG756`` an input file is larger than the input size limit (32 MiB unless the environment
  variable ``RULEGEN_MAX_INPUT_BYTES`` says otherwise); it is refused before it is read. Make
  the file smaller (split it), or, when it really is that big, raise the limit in the CI job:
  ``RULEGEN_MAX_INPUT_BYTES=100000000``. Bad: a 2 GB ``values.yaml`` in a chart; good: a
  ``values.yaml`` of a few kilobytes.
A FIFO, device or socket is refused with the code the chart and spec checks use for a special
file, RG760 (documented in :mod:`rulegen.validate.checks.paths`).
"""

from __future__ import annotations

import os
import stat

from ..findings import RulegenError

#: Input size limit, in bytes, when ``RULEGEN_MAX_INPUT_BYTES`` is not set.
DEFAULT_MAX_BYTES = 32 * 1024 * 1024
#: The environment variable that sets the input size limit (a whole number of bytes).
LIMIT_ENV = "RULEGEN_MAX_INPUT_BYTES"

_OPEN = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


class InputRefused(RulegenError):
    """An input file rulegen will not read: ``code`` (``RG756`` too large, ``RG760`` not a
    regular file, ``RG105`` YAML expanding too far), ``path`` (as shown), ``reason`` (the
    message after the path) and, for ``RG756``, ``size`` (bytes, None when the file grew while
    it was read). ``str()`` starts with the code and the path."""

    def __init__(self, code: str, path: str, message: str, size: int | None = None):
        super().__init__(f"{code} {path}: {message}")
        self.code = code
        self.path = path
        self.reason = message
        self.size = size


def max_bytes() -> int:
    """The input size limit in bytes: ``RULEGEN_MAX_INPUT_BYTES`` when set to a positive whole
    number, else :data:`DEFAULT_MAX_BYTES`.

    Raises:
        rulegen.findings.RulegenError: the variable is set to something else.
    """
    return positive_env(LIMIT_ENV, DEFAULT_MAX_BYTES, " of bytes")


def positive_env(name: str, default: int, unit: str = "") -> int:
    """The whole number the environment variable ``name`` holds (``_`` allowed between digits),
    or ``default`` when it is unset or empty; ``unit`` ends the error's "whole number" phrase.

    Raises:
        rulegen.findings.RulegenError: the variable holds anything but a positive whole number.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        n = int(raw.replace("_", ""))
    except ValueError:
        n = 0
    if n <= 0:
        raise RulegenError(f"{name}={raw!r} is not a positive whole number{unit}; "
                           f"unset it for the default ({default})")
    return n


def _too_big(shown: str, size: int | None, limit: int, own: bool) -> InputRefused:
    size_text = f"is {size} bytes" if size is not None else "grew while it was read"
    how = ("" if own else f"; when it really must be this big, raise the limit in the CI job with "
           f"{LIMIT_ENV}=<bytes>")
    return InputRefused("RG756", shown, f"{size_text}, more than the limit of {limit} bytes for this "
                        f"input file, so it was not read; split it or make it smaller{how}", size)


def _special(shown: str, mode: int) -> InputRefused:
    kind = ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else "a character device" if stat.S_ISCHR(mode)
            else "a block device" if stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode)
            else "not a regular file")
    return InputRefused("RG760", shown, f"is {kind}, not a regular file; rulegen reads only regular "
                        "files (reading this one could wait or run forever), so replace it with a file")


def check(path, shown: str | None = None, limit: int | None = None) -> os.stat_result:
    """``stat`` of ``path`` (links followed) when it is a regular file within the limit.

    Raises:
        FileNotFoundError, NotADirectoryError, IsADirectoryError: as ``open`` would.
        InputRefused: ``RG760`` not a regular file, ``RG756`` larger than the limit.
    """
    shown = shown or str(path)
    st = os.stat(path)
    if stat.S_ISDIR(st.st_mode):
        raise IsADirectoryError(21, "Is a directory", str(path))
    if not stat.S_ISREG(st.st_mode):
        raise _special(shown, st.st_mode)
    own = limit is not None
    limit = max_bytes() if limit is None else limit
    if st.st_size > limit:
        raise _too_big(shown, st.st_size, limit, own)
    return st


def is_regular(path) -> bool:
    """True when ``path`` (links followed) is a regular file; never opens it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def read_bytes(path, shown: str | None = None, limit: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, read only when it is within ``limit`` bytes
    (default :func:`max_bytes`); ``shown``: the path as messages show it.

    The path is ``stat``-ed first (a FIFO, device or socket is never opened); the file is
    then opened with ``O_NONBLOCK`` (a FIFO swapped in after the ``stat`` cannot block) and
    checked again on the open descriptor, and at most ``limit`` + 1 bytes are read, so a file
    that grows meanwhile is refused too.

    Raises:
        FileNotFoundError, IsADirectoryError, PermissionError (OSError): as ``open`` would.
        InputRefused: ``RG760`` not a regular file, ``RG756`` larger than the limit (checked
            before reading, and again while reading).
    """
    shown = shown or str(path)
    own = limit is not None
    limit = max_bytes() if limit is None else limit
    check(path, shown, limit if own else None)
    fd = os.open(path, _OPEN)
    try:
        st = os.fstat(fd)  # the file opened may not be the one stat-ed (swapped meanwhile)
        if not stat.S_ISREG(st.st_mode):
            raise _special(shown, st.st_mode)
        if st.st_size > limit:
            raise _too_big(shown, st.st_size, limit, own)
        chunks, got = [], 0
        while got <= limit:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - got))
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        if got > limit:
            raise _too_big(shown, None, limit, own)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_text(path, shown: str | None = None, limit: int | None = None, exact: bool = False) -> str:
    r"""The UTF-8 text of ``path`` through :func:`read_bytes`. ``exact=False`` translates line
    endings as ``open`` does by default (``\r\n`` and ``\r`` become ``\n``); ``exact=True``
    keeps the bytes' line endings. A byte-order mark is kept (callers strip it when they
    must).

    Raises:
        UnicodeDecodeError: not UTF-8. Otherwise as :func:`read_bytes`.
    """
    text = read_bytes(path, shown, limit).decode("utf-8")
    if not exact and "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def read_text_or_none(path, shown: str | None = None, exact: bool = False) -> str | None:
    """:func:`read_text`, or None when ``path`` does not exist, is a folder or is not UTF-8.
    A special file or one over the limit still raises :class:`InputRefused`."""
    try:
        return read_text(path, shown, exact=exact)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, UnicodeDecodeError):
        return None


__all__ = ["DEFAULT_MAX_BYTES", "LIMIT_ENV", "InputRefused", "check", "is_regular", "max_bytes", "read_bytes",
           "read_text", "read_text_or_none"]
