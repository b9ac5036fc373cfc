"""Two cores for the per-spec work of a large project, without changing any result.

:func:`split_map` is ``[fn(x) for x in items]``: with enough items, on a machine with more
than one CPU and where ``os.fork`` exists, a forked child computes items from the end of the
list while this process computes them from the start, and sends its results back pickled.
The child inherits everything (specs, config, caches, monkeypatches), so nothing but the results crosses the
pipe, and a fork costs a few milliseconds where a fresh interpreter would cost a second of
imports. Should the child fail in any way (an exception, a result that does not pickle, a
crash), this process computes the child's share itself, so an exception is raised here exactly
as the sequential loop would raise it. ``RULEGEN_JOBS=1`` turns it off.
"""

from __future__ import annotations

import os
import sys

#: Fewer items than this are not worth a fork (the bundled project, most tests).
MIN_ITEMS = 16
#: Most tokens put in the pipe (4 KiB, POSIX's smallest pipe buffer, so writing them never
#: blocks); beyond that a token stands for a run of items.
_MAX_TOKENS = 4096


def _enabled(n: int) -> bool:
    if n < MIN_ITEMS or not hasattr(os, "fork") or os.environ.get("RULEGEN_JOBS", "") == "1":
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus > 1


def split_map(fn, items, meanwhile=None) -> list:
    """``[fn(x) for x in items]``, shared with a forked child when it pays (see above).

    The two processes share the items as they go: a pipe holds one token per item (per run
    of items, for more than :data:`_MAX_TOKENS`), and each takes a token (a one-byte read,
    atomic on a pipe) before each item, this process from the front of the list and the
    child from the back, until none is left; so neither waits long for the other, however
    the items' costs differ. ``meanwhile``: a callable this process runs first when it did
    fork (its result and any exception are dropped), for work a later step needs anyway,
    such as imports; the child starts on the items meanwhile."""
    items = list(items)
    n = len(items)
    if not _enabled(n):
        return [fn(x) for x in items]
    import pickle  # only a run that forks pays for these imports (not the bundled project)
    import signal
    size = -(-n // _MAX_TOKENS)  # items per token
    chunks = [items[i:i + size] for i in range(0, n, size)]
    tr, tw = os.pipe()
    os.write(tw, b"." * len(chunks))
    os.close(tw)
    os.set_blocking(tr, False)

    def take() -> bool:
        try:
            return os.read(tr, 1) == b"."
        except BlockingIOError:
            return False

    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: compute from the back, send, leave without the parent's cleanup
        code = 0
        try:
            os.close(r)
            try:
                done = []
                while take():
                    done.append([fn(x) for x in chunks[len(chunks) - 1 - len(done)]])
                data = pickle.dumps(done, protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:
                data, code = b"", 1
            with os.fdopen(w, "wb") as f:
                f.write(data)
        finally:
            os._exit(code)
    os.close(w)
    first: list = []
    taken = 0
    finished = False
    try:
        if meanwhile is not None:
            try:
                meanwhile()
            except Exception:
                pass  # the step that needs it does it again and fails there, as without it
        while take():
            first.extend(fn(x) for x in chunks[taken])
            taken += 1
        finished = True
    finally:
        if not finished:  # an exception here comes before any of the child's items: stop it
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        os.close(tr)
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
    second = None
    if status == 0 and data:
        try:
            second = pickle.loads(data)
        except Exception:
            second = None
    if second is None or len(second) != len(chunks) - taken:
        return first + [fn(x) for x in items[len(first):]]
    return first + [y for chunk in reversed(second) for y in chunk]
