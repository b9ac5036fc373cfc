"""The tools layer: the external programs rulegen runs (``helm``, ``promtool``, ``git``, ``bash``).

The bottom floor of the package: it imports nothing from rulegen but :mod:`rulegen.findings`.

* :mod:`.find` locates a pinned tool (``$RULEGEN_TOOLS_DIR/bin``, the per-user cache, ``PATH``;
  never the project being checked);
* :mod:`.process` runs any program with an environment reduced to what it needs;
* :mod:`.helm` and :mod:`.promtool` run the two tools and read their output back.
"""
