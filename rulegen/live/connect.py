"""Where the live Prometheus is and how to reach it: :func:`resolve` merges the ``prometheus:``
section of ``.rulegen.yaml`` (:class:`rulegen.config.PrometheusSettings`) with the command-line
options (:class:`rulegen.live.options.CliOptions`) into a checked :class:`Connection`, or None
when no Prometheus is configured (callers then print :data:`SKIPPED` once and skip every live
check).

Hostile input: ``.rulegen.yaml`` comes with the pull request, so

* its URL is plain http(s) (no other scheme, no user info), checked by
  :func:`rulegen.config.live_url`;
* its ``bearer_token_file`` and ``ca_file`` are paths inside the project (as written, and on
  the disk: a symlink leading out or into ``.git`` is refused, :func:`rulegen.fs.containment.first_problem`);
* a token or headers given on the command line (the CI's secrets, from any path the CI names)
  are sent only when the URL is given on the command line too: otherwise a pull request could
  point ``prometheus.url`` at its own server and collect the CI's token;
* the token is read through :func:`rulegen.fs.read.read_text` (bounded, no FIFO or device), is
  never part of a message or ``repr``, and must be one line of visible ASCII.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import CONFIG_FILE, PrometheusSettings, header, live_url, seconds
from ..findings import RulegenError
from ..fs import read as fs_read
from ..fs.containment import first_problem
from .options import CliOptions

#: The one line printed when no Prometheus is configured.
SKIPPED = ("live Prometheus checks skipped: no Prometheus configured (set prometheus.url in .rulegen.yaml "
           "or pass --prometheus URL; see docs/live.md)")
#: The largest token or CA file read, in bytes.
MAX_SECRET_BYTES = 1 << 20


class LiveError(RulegenError):
    """A live Prometheus could not be used: bad settings, or a request that failed (the message
    names the URL and says why; it never holds the token)."""


@dataclass(frozen=True)
class Connection:
    """A checked way to one Prometheus.

    Attributes:
        url: base URL (http/https, no trailing ``/``), e.g. ``https://prometheus.example.com``.
        headers: ``((name, value), ...)`` sent with every request (the token is not among them).
        token: the bearer token or None (kept out of ``repr``; never in a message).
        ca_pem: PEM text of the CA bundle to verify https with, or None (system CAs).
        timeout: seconds one request may take.
        lookback: seconds the series checks look back.
        source: where the URL came from: ``--prometheus`` or ``.rulegen.yaml``.
    """

    url: str
    headers: tuple = ()
    token: str | None = field(default=None, repr=False)
    ca_pem: str | None = field(default=None, repr=False)
    timeout: float = 30.0
    lookback: float = 7 * 86400.0
    source: str = "--prometheus"


def resolve(root: Path, settings: PrometheusSettings, cli: CliOptions | None = None) -> Connection | None:
    """The :class:`Connection` the config ``settings`` and the command line ``cli`` describe
    for the project at ``root``; None when neither names a URL.

    Raises:
        LiveError: a bad URL, header or timeout on the command line; a token or header given
            on the command line without ``--prometheus URL``; a token or CA file that is
            missing, too large, not a regular file, outside the project (config paths) or
            not a one-line token.
    """
    cli = cli or CliOptions()
    try:
        url = live_url(cli.url, "--prometheus")
    except RulegenError as e:
        raise LiveError(str(e)) from None
    if cli.secrets and url is None:
        raise LiveError("--prometheus-bearer-token-file and --prometheus-header are sent only to a URL given with "
                        f"--prometheus (a pull request can change prometheus.url in {CONFIG_FILE}); add --prometheus URL")
    source = "--prometheus"
    if url is None:
        url, source = settings.url, CONFIG_FILE
    if url is None:
        return None
    headers = list(settings.headers)
    for name, value in cli.headers:
        try:
            headers.append(header(name, value, "--prometheus-header"))
        except RulegenError as e:
            raise LiveError(str(e)) from None
    if cli.bearer_token_file:
        token = _token(Path(cli.bearer_token_file), cli.bearer_token_file, "--prometheus-bearer-token-file")
    elif settings.bearer_token_file:
        token = _token(_inside(root, settings.bearer_token_file, "prometheus.bearer_token_file"),
                       settings.bearer_token_file, f"{CONFIG_FILE}: prometheus.bearer_token_file")
    else:
        token = None
    if cli.ca_file:
        ca = _read(Path(cli.ca_file), cli.ca_file, "--prometheus-ca-file")
    elif settings.ca_file:
        ca = _read(_inside(root, settings.ca_file, "prometheus.ca_file"), settings.ca_file,
                   f"{CONFIG_FILE}: prometheus.ca_file")
    else:
        ca = None
    try:
        timeout = seconds(cli.timeout, "--prometheus-timeout", settings.timeout)
    except RulegenError as e:
        raise LiveError(str(e)) from None
    return Connection(url=url, headers=tuple(headers), token=token, ca_pem=ca, timeout=timeout,
                      lookback=settings.lookback, source=source)


def _inside(root: Path, rel: str, what: str) -> Path:
    """``root/rel`` after refusing a symlink on the way that leads outside the project or into
    ``.git``, and a special file."""
    refused = first_problem(root, rel)  # a link out, or into .git (the CI's credentials)
    if refused is not None:
        raise LiveError(f"{CONFIG_FILE}: {what}: {refused}; it was not read")
    return Path(root) / rel


def _read(path: Path, shown: str, what: str) -> str:
    try:
        return fs_read.read_text(path, shown, limit=MAX_SECRET_BYTES)
    except FileNotFoundError:
        raise LiveError(f"{what}: {shown} does not exist") from None
    except UnicodeDecodeError:
        raise LiveError(f"{what}: {shown} is not UTF-8 text") from None
    except OSError as e:
        raise LiveError(f"{what}: {shown} cannot be read: {e.strerror or type(e).__name__}") from None
    except RulegenError as e:
        raise LiveError(f"{what}: {e}") from None


def _token(path: Path, shown: str, what: str) -> str:
    """The token in ``path``: its text without surrounding white space, one line of visible
    ASCII (a header value cannot carry more). Messages never quote it."""
    token = _read(path, shown, what).strip()
    if not token:
        raise LiveError(f"{what}: {shown} is empty")
    if any(not (32 < ord(c) < 127) for c in token):
        raise LiveError(f"{what}: {shown} must hold one token of visible ASCII characters (no spaces or line "
                        "breaks inside it); its content is not shown")
    return token
