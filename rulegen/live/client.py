"""A small client of the Prometheus HTTP API (``/api/v1/...``), on :mod:`urllib` alone.

Every method takes explicit times (Unix seconds, floats) and returns the ``data`` member of
Prometheus' JSON answer. Every failure is a :class:`rulegen.live.connect.LiveError` whose
message starts with ``Prometheus at <url>`` and says why, in one line, with no traceback and
never the token: refused or unresolvable address, TLS failure, no answer within the timeout,
an HTTP error status (401/403 say to check the token; the server's own ``error`` text is
shown cleaned of control characters and shortened), a redirect (not followed: a token must
not travel to another address), an answer that is not Prometheus JSON, and an answer larger
than the bounds:

* :data:`MAX_BYTES_ENV` (default :data:`DEFAULT_MAX_BYTES`): bytes of one answer;
* :data:`MAX_SERIES_ENV` (default :data:`DEFAULT_MAX_SERIES`): series (or label values) in
  one answer; the series and label endpoints are also asked for at most that many plus one
  (Prometheus' ``limit`` parameter).
"""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import threading
import time as _time
import urllib.error
import urllib.parse
import urllib.request

from ..fs.read import positive_env
from .connect import Connection, LiveError

MAX_BYTES_ENV = "RULEGEN_PROMETHEUS_MAX_BYTES"
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
MAX_SERIES_ENV = "RULEGEN_PROMETHEUS_MAX_SERIES"
DEFAULT_MAX_SERIES = 100_000
_CHUNK = 1 << 16
USER_AGENT = "rulegen"


def clean(text, limit: int = 300) -> str:
    """Server-provided ``text`` made safe for one terminal line: control characters (escape
    sequences included) replaced by ``?``, at most ``limit`` characters (``...`` after)."""
    s = "".join(c if c.isprintable() else "?" for c in str(text))
    return s if len(s) <= limit else s[:limit] + "..."


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # noqa: D102 (urllib's hook)
        return None  # urllib then raises HTTPError with the 3xx status


class _Tracked:
    """Connection classes for :class:`_Deadline` handlers: each socket they open is noted in
    ``socks`` (a list), so a watchdog can shut it at the request's deadline."""

    @staticmethod
    def factory(cls, socks: list):
        def make(host, **kw):
            conn = cls(host, **kw)

            def create(*a, **k):
                sock = socket.create_connection(*a, **k)
                socks.append(sock)
                return sock
            conn._create_connection = create
            return conn
        return make


class _HTTP(urllib.request.HTTPHandler):
    def __init__(self, socks: list):
        super().__init__()
        self.socks = socks

    def http_open(self, req):  # noqa: D102 (urllib's hook)
        return self.do_open(_Tracked.factory(http.client.HTTPConnection, self.socks), req)


class _HTTPS(urllib.request.HTTPSHandler):
    def __init__(self, socks: list, context):
        super().__init__(context=context)
        self.socks, self.ctx = socks, context

    def https_open(self, req):  # noqa: D102 (urllib's hook)
        return self.do_open(_Tracked.factory(http.client.HTTPSConnection, self.socks), req, context=self.ctx)


class _Deadline:
    """The whole of one request (connect, TLS, status line, headers, body) within ``seconds``:
    a socket timeout bounds only the wait for each next byte, so a server answering one byte
    at a time would otherwise hold CI for ever. At the deadline the request's sockets are shut,
    which ends any read blocked on them; ``fired`` then says the failure is the deadline's."""

    def __init__(self, seconds: float):
        self.socks: list = []
        self.fired = False
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        self.fired = True
        for sock in list(self.socks):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self):
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()


class Client:
    """The HTTP API of the Prometheus ``conn`` describes.

    Args:
        conn: a :class:`rulegen.live.connect.Connection`.
        max_bytes: bound of one answer in bytes (default ``$RULEGEN_PROMETHEUS_MAX_BYTES`` or
            64 MiB).
        max_series: bound of the series/values in one answer (default
            ``$RULEGEN_PROMETHEUS_MAX_SERIES`` or 100,000).

    Attributes:
        warnings: the ``warnings`` Prometheus attached to answers so far (cleaned text).
        requests: how many requests were made.
    """

    def __init__(self, conn: Connection, max_bytes: int | None = None, max_series: int | None = None):
        self.conn = conn
        self.url = conn.url
        self.max_bytes = max_bytes or positive_env(MAX_BYTES_ENV, DEFAULT_MAX_BYTES, " of bytes")
        self.max_series = max_series or positive_env(MAX_SERIES_ENV, DEFAULT_MAX_SERIES, " of series")
        self.warnings: list[str] = []
        self.requests = 0
        self._lock = threading.Lock()  # a client may be shared by threads (the series checks are)
        self._ctx = None
        if conn.url.startswith("https://"):
            self._ctx = ssl.create_default_context()
            if conn.ca_pem is not None:
                try:
                    self._ctx = ssl.create_default_context(cadata=conn.ca_pem)
                except (ssl.SSLError, ValueError) as e:
                    raise LiveError(f"Prometheus at {conn.url}: the CA bundle is not valid PEM: {clean(e)}") from None

    # -- the endpoints ----------------------------------------------------------------------

    def query(self, expr: str, time: float) -> dict:
        """``/api/v1/query`` at ``time``: ``{"resultType": ..., "result": ...}``."""
        return self._bounded(self.call("/api/v1/query", [("query", expr), ("time", _ts(time))]))

    def query_range(self, expr: str, start: float, end: float, step: float) -> dict:
        """``/api/v1/query_range`` from ``start`` to ``end`` every ``step`` seconds:
        ``{"resultType": "matrix", "result": [{"metric": {...}, "values": [[t, "v"], ...]}]}``."""
        return self._bounded(self.call("/api/v1/query_range", [("query", expr), ("start", _ts(start)),
                                                                ("end", _ts(end)), ("step", _ts(step))]))

    def series(self, matchers: list[str], start: float, end: float, limit: int | None = None) -> list[dict]:
        """``/api/v1/series``: the label sets of the series any of ``matchers`` (selectors)
        selects between ``start`` and ``end``; with ``limit``, at most that many (some, not
        an error, when there are more)."""
        params = [("match[]", m) for m in matchers]
        if limit is not None:
            got = self.call("/api/v1/series", params + [("start", _ts(start)), ("end", _ts(end)),
                                                         ("limit", str(limit))])
            return self._list(got, "series")[:limit]
        return self._list(self.call("/api/v1/series", params + self._window(start, end)), "series")

    def labels(self, start: float, end: float, matchers: list[str] = ()) -> list[str]:
        """``/api/v1/labels``: label names present between ``start`` and ``end``."""
        params = [("match[]", m) for m in matchers]
        return self._list(self.call("/api/v1/labels", params + self._window(start, end)), "label names")

    def label_values(self, name: str, start: float, end: float, matchers: list[str] = ()) -> list[str]:
        """``/api/v1/label/<name>/values``: the values of label ``name`` between ``start`` and
        ``end`` (``__name__``: metric names), among the series of ``matchers`` when given."""
        path = "/api/v1/label/" + urllib.parse.quote(name, safe="") + "/values"
        params = [("match[]", m) for m in matchers]
        return self._list(self.call(path, params + self._window(start, end), post=False), f"values of {name}")

    def metadata(self, metric: str | None = None) -> dict:
        """``/api/v1/metadata``: metric name -> ``[{"type", "help", "unit"}, ...]``."""
        params = [("metric", metric)] if metric else []
        return self.call("/api/v1/metadata", params + [("limit", str(self.max_series))], post=False) or {}

    # -- plumbing ---------------------------------------------------------------------------

    def _window(self, start: float, end: float) -> list:
        return [("start", _ts(start)), ("end", _ts(end)), ("limit", str(self.max_series + 1))]

    def _list(self, data, what: str) -> list:
        if not isinstance(data, list):
            raise LiveError(f"Prometheus at {self.url}: the answer for {what} is not a list")
        if len(data) > self.max_series:
            raise LiveError(f"Prometheus at {self.url}: more than {self.max_series} {what} in one answer "
                            f"(the bound, {MAX_SERIES_ENV}); narrow the selector")
        return data

    def _bounded(self, data) -> dict:
        if not isinstance(data, dict) or "resultType" not in data:
            raise LiveError(f"Prometheus at {self.url}: the answer is not a query result")
        result = data.get("result")
        if isinstance(result, list) and len(result) > self.max_series:
            raise LiveError(f"Prometheus at {self.url}: the query returned more than {self.max_series} series "
                            f"(the bound, {MAX_SERIES_ENV}); aggregate or narrow it")
        return data

    def call(self, path: str, params: list, post: bool = True):
        """One request to ``path`` (``/api/v1/...``) with form ``params`` (``[(name, value)]``);
        POST (form body) unless ``post`` is False. Returns the answer's ``data``.

        Raises:
            LiveError: any failure (see the module docstring).
        """
        body = urllib.parse.urlencode(params).encode()
        target = self.url + path
        if post:
            req = urllib.request.Request(target, data=body, method="POST")
            req.add_header("Content-Type", "application/x-www-form-urlencoded")
        else:
            req = urllib.request.Request(target + ("?" + body.decode() if params else ""), method="GET")
        req.add_header("Accept", "application/json")
        req.add_header("User-Agent", USER_AGENT)
        for name, value in self.conn.headers:
            req.add_header(name, value)
        if self.conn.token:
            req.add_header("Authorization", "Bearer " + self.conn.token)
        with self._lock:
            self.requests += 1
        raw = self._fetch(req, path)
        try:
            doc = json.loads(raw)
        except ValueError:
            raise LiveError(f"Prometheus at {self.url}: {path} did not answer with JSON (is this a Prometheus "
                            "API base URL?)") from None
        if not isinstance(doc, dict) or doc.get("status") != "success":
            raise LiveError(self._api_error(path, doc))
        with self._lock:
            self.warnings.extend(clean(w) for w in doc.get("warnings") or ())
        return doc.get("data")

    def _fetch(self, req, path: str) -> bytes:
        where = f"Prometheus at {self.url}"
        deadline = _time.monotonic() + self.conn.timeout
        watch = _Deadline(self.conn.timeout)
        handlers = [_NoRedirect(), _HTTP(watch.socks)]
        if self._ctx is not None:
            handlers.append(_HTTPS(watch.socks, self._ctx))
        with watch:  # also over the error's handling: an HTTP error's body is read too
            opener = urllib.request.build_opener(*handlers)
            try:
                with opener.open(req, timeout=self.conn.timeout) as resp:
                    return self._read(resp, deadline, path)
            except LiveError:
                raise
            except Exception as e:  # noqa: BLE001 (after the deadline, any failure is the deadline's)
                if watch.fired:
                    raise LiveError(f"{where}: no answer from {path} within {self.conn.timeout:g}s "
                                    "(--prometheus-timeout / prometheus.timeout)") from None
                self._failed(e, path)
                raise

    def _failed(self, error: Exception, path: str):
        """Raise the :class:`LiveError` for a request that failed with ``error``."""
        where = f"Prometheus at {self.url}"
        try:
            raise error
        except urllib.error.HTTPError as e:
            raise LiveError(self._status_error(e, path)) from None
        except urllib.error.URLError as e:
            raise LiveError(f"{where}: {self._reason(e.reason)}") from None
        except (TimeoutError, socket.timeout):
            raise LiveError(f"{where}: no answer from {path} within {self.conn.timeout:g}s "
                            "(--prometheus-timeout / prometheus.timeout)") from None
        except ssl.SSLError as e:
            raise LiveError(f"{where}: TLS failed: {clean(e.reason or e)}") from None
        except (ConnectionError, OSError) as e:
            raise LiveError(f"{where}: {self._reason(e)}") from None
        except ValueError as e:  # http.client's own parse errors (a non-HTTP server)
            raise LiveError(f"{where}: not an HTTP answer: {clean(e)}") from None

    def _read(self, resp, deadline: float, path: str) -> bytes:
        chunks, got = [], 0
        while True:
            if _time.monotonic() > deadline:
                raise TimeoutError
            chunk = resp.read(min(_CHUNK, self.max_bytes + 1 - got))
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            got += len(chunk)
            if got > self.max_bytes:
                raise LiveError(f"Prometheus at {self.url}: the answer of {path} is larger than {self.max_bytes} "
                                f"bytes (the bound, {MAX_BYTES_ENV}); narrow the query")

    def _reason(self, reason) -> str:
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return f"no answer within {self.conn.timeout:g}s (--prometheus-timeout / prometheus.timeout)"
        if isinstance(reason, ConnectionRefusedError):
            return "connection refused (is Prometheus listening at that address?)"
        if isinstance(reason, socket.gaierror):
            return "the host name does not resolve"
        if isinstance(reason, ssl.SSLError):
            return f"TLS failed: {clean(getattr(reason, 'reason', None) or reason)} (--prometheus-ca-file / prometheus.ca_file)"
        if isinstance(reason, OSError) and reason.strerror:
            return f"cannot connect: {clean(reason.strerror)}"
        return f"cannot connect: {clean(reason)}"

    def _status_error(self, e: urllib.error.HTTPError, path: str) -> str:
        where = f"Prometheus at {self.url}"
        if 300 <= e.code < 400:
            return (f"{where}: {path} answered HTTP {e.code}, a redirect, which rulegen does not follow (a token "
                    "must not travel to another address); give the final URL")
        detail = ""
        try:
            text = e.read(4096)
            doc = json.loads(text)
            if isinstance(doc, dict) and doc.get("error"):
                detail = f": {clean(doc.get('error'))}"
        except (ValueError, OSError):
            pass
        hint = ""
        if e.code in (401, 403):
            hint = (" (check the bearer token file and headers; the token is not shown)" if self.conn.token
                    else " (no bearer token given: --prometheus-bearer-token-file or prometheus.bearer_token_file)")
        return f"{where}: {path} answered HTTP {e.code} {clean(e.reason, 60)}{detail}{hint}"

    def _api_error(self, path: str, doc) -> str:
        if isinstance(doc, dict):
            return (f"Prometheus at {self.url}: {path} failed: {clean(doc.get('errorType', 'error'), 40)}: "
                    f"{clean(doc.get('error', 'no error text'))}")
        return f"Prometheus at {self.url}: {path} did not answer with a Prometheus API object"


def _ts(t: float) -> str:
    """Seconds as the API reads them (``1700000000.5``)."""
    return f"{float(t):.3f}".rstrip("0").rstrip(".")
