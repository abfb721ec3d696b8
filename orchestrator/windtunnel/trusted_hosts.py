"""Which `Host` and `Origin` a listener answers: a defence against DNS rebinding and pages.

A web page can make the browser send requests to any address, loopback included, and DNS
rebinding lets it do so under its own name. Two headers give it away, and the browser sets both:
`Host` names the name the page used, and `Origin` the page itself. So every listener we open (the
MCP endpoint on every path and protocol, the WebSocket event feed) answers only:

- a `Host` that is exactly one of the names the bind address is reached by, with exactly one of
  the bound ports (`NAME:PORT`; a bare `NAME` only on port 80): the bind address itself; for a
  loopback bind also `localhost`, `127.0.0.1` and `[::1]`; for a wildcard bind (`0.0.0.0`, `::`)
  any IP address literal, `localhost` and this machine's host name. An IP literal cannot have
  been rebound: only names can;
- no `Origin` (programs: MCP clients, `wt watch`, log shippers), or an `Origin` that is exactly
  `http://` or `https://`, one of those names, and an optional port: a page served from this
  machine under one of the names the listener has.

The check is exact (parsed, not a prefix): `127.0.0.1:80.evil.example` is not `127.0.0.1:80`.
Pure: no I/O but one `gethostname()` for a wildcard bind.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable

__all__ = ["TrustedHosts"]

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_WILDCARDS = ("", "0.0.0.0", "::", "[::]")
_MEMO_ENTRIES = 256


class TrustedHosts:
    """The `Host` and `Origin` values a listener bound at `bind_host` on `ports` answers."""

    def __init__(self, bind_host: str, ports: Iterable[int]) -> None:
        self.ports = frozenset(ports)
        bare = bind_host.strip("[]").lower()
        self.any_ip = bare in _WILDCARDS
        names = {_url_name(bare)}
        if self.any_ip:
            names = {"localhost", socket.gethostname().lower()}
        elif _is_loopback(bare):
            names.update(_LOOPBACK_NAMES)
        self.names = frozenset(names)
        hosts = {f"{name}:{port}" for name in names for port in self.ports}
        if 80 in self.ports:
            hosts.update(names)
        self._hosts = frozenset(hosts)
        # Results for other values (wildcard binds: IP literals), so each is parsed once.
        self._memo: dict[tuple[str, str | None], bool] = {}

    def allows(self, host: str | None, origin: str | None) -> bool:
        """Whether a request with these `Host` and `Origin` values (None: absent) is answered."""
        if host in self._hosts and origin is None:
            return True  # every MCP client's request: two lookups, no allocation
        if host is None:
            return False
        key = (host, origin)
        verdict = self._memo.get(key)
        if verdict is None:
            verdict = self._host_allowed(host) and (origin is None or self._origin_allowed(origin))
            if len(self._memo) >= _MEMO_ENTRIES:
                self._memo.clear()  # a bound, not a cache policy
            self._memo[key] = verdict
        return verdict

    def _host_allowed(self, host: str) -> bool:
        name, port = _split_authority(host)  # names compare without case
        if name is None:
            return False
        if port is None:
            port = 80
        return port in self.ports and (name in self.names or (self.any_ip and _is_ip_literal(name)))

    def allows_origin(self, origin: str) -> bool:
        """Whether a page of this `Origin` may talk to the listener (the feed's check)."""
        return self._origin_allowed(origin)

    def _origin_allowed(self, origin: str) -> bool:
        scheme, sep, authority = origin.partition("://")
        if not sep or scheme not in ("http", "https"):
            return False
        name, _ = _split_authority(authority)
        if name is None:
            return False
        return name in self.names or (self.any_ip and _is_ip_literal(name))


def _split_authority(authority: str) -> tuple[str | None, int | None]:
    """`name:port` → (name, port); (name, None) without a port; (None, None) when malformed."""
    if authority.startswith("["):
        end = authority.find("]")
        if end < 0:
            return None, None
        name, rest = authority[: end + 1], authority[end + 1 :]
        if rest and not rest.startswith(":"):
            return None, None
        port_text = rest[1:] if rest else None
    else:
        name, sep, port_text_or_empty = authority.partition(":")
        port_text = port_text_or_empty if sep else None
    if not name or any(c in name for c in "/?#@\\ "):
        return None, None
    if port_text is None:
        return name.lower(), None
    if not (port_text.isascii() and port_text.isdigit()) or not 0 < int(port_text) < 65536:
        return None, None
    return name.lower(), int(port_text)


def _is_ip_literal(name: str) -> bool:
    text = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    if text != name and ":" not in text:
        return False  # brackets only around IPv6
    if text == name and ":" in text:
        return False  # IPv6 in a Host is always bracketed
    try:
        ipaddress.ip_address(text)
    except ValueError:
        return False
    return True


def _is_loopback(bare: str) -> bool:
    if bare == "localhost":
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def _url_name(bare: str) -> str:
    """How a bind address appears in a `Host`: IPv6 in brackets."""
    return f"[{bare}]" if ":" in bare else bare
