"""The base URLs of ``.rulegen.yaml`` (``runbooks.*_url``, ``prometheus.url``): one rule for
the links of the runbook site and the live client (:mod:`rulegen.config`)."""

from __future__ import annotations

import ipaddress
import re

#: ``runbooks.*_url`` (also ``baseUrl`` in templates/rulegen.js): http(s), a host name or [IPv6], a port, a path of
#: unreserved characters, ``/:+`` and ``%XX``; no user info (``https://a.example@evil.example``), no ``()*!$&',;=``
#: (a ``)`` ended the page's silence link), query, quote, space or markup character.
BASE_URL = re.compile(r"https?://(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?"
                      r"(?:/(?:[A-Za-z0-9\-._~:+/]|%[0-9A-Fa-f]{2})*)?")


def base_url_ok(v) -> bool:
    """Whether ``v`` is a base URL: :data:`BASE_URL`'s characters, a bracketed host that is an
    IPv6 address (``[::1]``; not ``[1.2.3.4]`` nor ``[:::::]``) and a port of at most 65535
    (RFC 3986's host and port, as urllib and browsers read them: past the pattern alone, such
    a URL failed the live client with urllib's ValueError and made dead links on the site)."""
    if not isinstance(v, str) or not BASE_URL.fullmatch(v):
        return False
    authority = v.split("://", 1)[1].split("/", 1)[0]
    host, _, port = authority.rpartition("]") if authority.startswith("[") else ("", "", authority)
    if host:
        try:
            ipaddress.IPv6Address(host[1:])
        except ValueError:
            return False
        port = port[1:]
    else:
        port = port.partition(":")[2]
    return not port or int(port) <= 65535
