"""A live Prometheus: the connection (settings, a small HTTP client) and the series checks.

* :mod:`.options`: the command-line options every live command shares (``--prometheus URL``,
  ``--prometheus-bearer-token-file``, ``--prometheus-header``, ``--prometheus-ca-file``,
  ``--prometheus-timeout``); imports nothing of rulegen, so building the parser stays fast.
* :mod:`.connect`: :class:`.connect.Connection`, the settings of ``.rulegen.yaml``
  (``prometheus:``, :class:`rulegen.config.PrometheusSettings`) and the command line merged and
  checked (:func:`.connect.resolve`; None when no Prometheus is configured, and then every live
  check is skipped with the one line :data:`.connect.SKIPPED`).
* :mod:`.client`: :class:`.client.Client`, the Prometheus HTTP API (``query``,
  ``query_range``, ``series``, ``labels``, ``label/<name>/values``, ``metadata``) with bounded
  responses, timeouts, a CA bundle and a bearer token that never appears in a message.
* :mod:`.series` / :mod:`.report`: the series checks of ``rulegen check --prometheus``
  (RG900-RG919).

This package may import the ground floor (:mod:`rulegen.promql`, :mod:`rulegen.tools`,
:mod:`rulegen.fs`, :mod:`rulegen.findings`, :mod:`rulegen.config`), nothing above it.
"""
