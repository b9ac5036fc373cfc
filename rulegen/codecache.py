"""Compiled code kept between runs, where and when Python keeps rulegen's own bytecode.

Two things rulegen would otherwise compile on every run cost more than the rest of its
start-up: the Jinja2 templates (about 0.2 s) and the spec schema's fastjsonschema validator
(about 0.1 s, paid again by a forked child, see :mod:`rulegen.parallel`). Their compiled code
is kept under the same switches as Python's ``__pycache__`` (PEP 3147, PEP 552's
``sys.pycache_prefix``):

* ``sys.pycache_prefix`` set (``PYTHONPYCACHEPREFIX``, ``-X pycache_prefix``): in
  ``<prefix>/rulegen-codecache/``;
* else in ``__pycache__/codecache/`` inside the rulegen package;
* ``sys.dont_write_bytecode`` (``PYTHONDONTWRITEBYTECODE``, ``-B``): nothing is written;
  what is there is still read, as Python reads ``.pyc`` files.

An entry is named by a hash of everything its code is made from (the schema or template
text, the source of the rulegen module that makes it, the compiling library's version,
rulegen's version, Python's bytecode magic number), so
a changed input never meets an old entry; the Jinja2 entries also carry the template's
checksum, which Jinja2 checks. Every entry carries a SHA-256 of its content, checked before
it is unmarshalled; an entry that cannot be read or is damaged is made again (and rewritten);
a folder that cannot be written is not an error. Writes go to a temp file that is renamed,
so a reader never sees half an entry. Nothing here affects what rulegen outputs: the same code
is compiled either way.
"""

from __future__ import annotations

import hashlib
import importlib.util
import marshal
import os
import stat
import sys
from pathlib import Path


#: Sub-folder name under the cache root.
FOLDER = "codecache"


def cache_dir() -> Path | None:
    """The folder compiled code is kept in (see the module docstring); None when there is no
    sensible place (the package folder is not a real folder, e.g. inside a zip)."""
    prefix = getattr(sys, "pycache_prefix", None)
    if prefix:
        return Path(prefix) / f"rulegen-{FOLDER}"
    pkg = Path(__file__).resolve().parent
    if not pkg.is_dir():
        return None
    return pkg / "__pycache__" / FOLDER


def writable() -> bool:
    """False when Python is told not to write bytecode (then neither does rulegen)."""
    return not sys.dont_write_bytecode


def key(*parts: str | bytes) -> str:
    """A hex digest naming an entry made from ``parts`` (with rulegen's version and Python's
    bytecode magic number added, since marshalled code is only valid for one Python)."""
    from . import __version__
    h = hashlib.sha256()
    for p in (importlib.util.MAGIC_NUMBER, __version__, *parts):
        b = p if isinstance(p, bytes) else p.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "big"))
        h.update(b)
    return h.hexdigest()


#: First bytes of every entry: format tag, then the SHA-256 of its name and the rest.
_MAGIC = b"rulegen-codecache-2\n"


def read_bytes(name: str) -> bytes | None:
    """The bytes stored as ``name``, or None when there are none, they cannot be read, or their
    checksum does not match (a damaged entry must never reach ``marshal``, which can crash
    the interpreter on corrupt input)."""
    d = cache_dir()
    if d is None:
        return None
    path = d / name
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None  # opening a FIFO would wait for a writer
        raw = path.read_bytes()
    except OSError:
        return None
    head = len(_MAGIC) + 32
    if len(raw) < head or not raw.startswith(_MAGIC):
        return None
    body = raw[head:]
    if _digest(name, body) != raw[len(_MAGIC):head]:
        return None
    return body


def _digest(name: str, data: bytes) -> bytes:
    """SHA-256 of an entry's name and content: an entry copied or renamed to another name
    (another schema's validator, another template) does not match."""
    return hashlib.sha256(name.encode("utf-8") + b"\0" + data).digest()


def write_bytes(name: str, data: bytes) -> None:
    """Keep ``data`` as ``name`` with its checksum, atomically (temp file, then rename), readable
    by everyone like a ``.pyc``; does nothing when bytecode is not to be written or the folder
    cannot be written."""
    d = cache_dir()
    if d is None or not writable():
        return
    from .fs.write import atomic_write  # only on a miss: most runs read
    try:  # the one writer: exclusive temporary file, rename; a cache need not survive a crash
        atomic_write(d / name, _MAGIC + _digest(name, data) + data, sync=False)
    except OSError:
        pass


def load(name: str):
    """The value stored as ``name`` by :func:`store`, or None (see :func:`read_bytes`)."""
    data = read_bytes(name)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (EOFError, ValueError, TypeError):
        return None


def store(name: str, value) -> None:
    """Keep ``value`` (marshal-able: code objects, tuples, strings) as ``name``."""
    write_bytes(name, marshal.dumps(value))


def jinja_bytecode_cache(env_settings: str):
    """A :class:`jinja2.BytecodeCache` keeping compiled templates in :func:`cache_dir` through
    :func:`read_bytes`/:func:`write_bytes` (checksummed), one entry per template named by
    ``env_settings`` (everything about the Environment that changes the compiled code), the
    template's name and file; Jinja2 itself checks the template's source checksum and its own
    bytecode version. None when there is no cache folder."""
    import jinja2
    if cache_dir() is None:
        return None
    prefix = "jinja-" + key("jinja2", jinja2.__version__, env_settings)[:32] + "-"

    class Cache(jinja2.BytecodeCache):
        def load_bytecode(self, bucket):
            data = read_bytes(prefix + bucket.key)
            if data is None:
                return
            try:
                bucket.bytecode_from_string(data)
            except Exception:
                bucket.reset()  # unreadable: compile the template again

        def dump_bytecode(self, bucket):
            write_bytes(prefix + bucket.key, bucket.bytecode_to_string())

    return Cache()
