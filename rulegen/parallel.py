"""Two cores for the per-spec work of a large project, without changing any result.

:func:`split_map` is ``[fn(x) for x in items]``: with enough items, on a machine with more
than one CPU and where ``os.fork`` exists, a forked child computes the second half while this
process computes the first, and sends its results back pickled. The child inherits
everything (specs, config, caches, monkeypatches), so nothing but the results crosses the
pipe, and a fork costs a few milliseconds where a fresh interpreter would cost a second of
imports. Should the child fail in any way (an exception, a result that does not pickle, a
crash), this process computes the second half itself, so an exception is raised here exactly
as the sequential loop would raise it. ``RULEGEN_JOBS=1`` turns it off.
"""

from __future__ import annotations

import os
import pickle
import sys

#: Fewer items than this are not worth a fork (the bundled project, most tests).
MIN_ITEMS = 16


def _enabled(n: int) -> bool:
    if n < MIN_ITEMS or not hasattr(os, "fork") or os.environ.get("RULEGEN_JOBS", "") == "1":
        return False
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus > 1


def split_map(fn, items, meanwhile=None) -> list:
    """``[fn(x) for x in items]``, the second half in a forked child when it pays (see above).

    ``meanwhile``: a callable this process runs first when it did fork (its result and any
    exception are dropped), for work a later step needs anyway, such as imports; the child then
    takes a tenth more of the items so both finish about together."""
    items = list(items)
    if not _enabled(len(items)):
        return [fn(x) for x in items]
    half = (len(items) + 1) // 2 - (len(items) // 10 if meanwhile is not None else 0)
    r, w = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the child: compute, send, leave without running any cleanup of the parent's
        code = 0
        try:
            os.close(r)
            try:
                data = pickle.dumps([fn(x) for x in items[half:]], protocol=pickle.HIGHEST_PROTOCOL)
            except BaseException:
                data, code = b"", 1
            with os.fdopen(w, "wb") as f:
                f.write(data)
        finally:
            os._exit(code)
    os.close(w)
    try:
        if meanwhile is not None:
            try:
                meanwhile()
            except Exception:
                pass  # the step that needs it does it again and fails there, as without it
        first = [fn(x) for x in items[:half]]
    finally:
        with os.fdopen(r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(pid, 0)
    second = None
    if status == 0 and data:
        try:
            second = pickle.loads(data)
        except Exception:
            second = None
    if second is None or len(second) != len(items) - half:
        second = [fn(x) for x in items[half:]]
    return first + second
