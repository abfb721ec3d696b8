"""Which `Host` and `Origin` a listener answers: a defence against DNS rebinding and pages.

A web page can make the browser send requests to any address, loopback included, and DNS
rebinding lets it do so under its own name. Two headers give it away, and the browser sets both:
`Host` names the name the page used, and `Origin` the page itself. Every listener we open (the
MCP endpoint on every path and protocol: the HTTP/1.1 fast path, h11 and the SDK, HTTP/2; the
WebSocket event feed; `wt record`'s agent-facing front) asks the one check here,
`TrustedHosts.refusal`, and answers only:

- a `Host` (RFC 9110 §7.2: `NAME[:PORT]`, no port meaning 80) whose name is one of the names the
  bind address is reached by and whose port is one of the bound ports: the bind address itself;
  for a loopback bind also `localhost`, `127.0.0.1` and `[::1]`; for a wildcard bind (`0.0.0.0`,
  `::`) any IP address literal, `localhost` and this machine's host name. An IP literal cannot
  have been rebound: only names can;
- no `Origin` (programs: MCP clients, `wt watch`, log shippers), or an `Origin` (RFC 6454:
  `SCHEME://NAME[:PORT]`, no port meaning the scheme's default) that is this listener's own:
  scheme `http` (the listeners speak plain HTTP, so no `https` page is theirs) and a name and
  port the `Host` rule accepts.

Names compare without case (RFC 9110 §4.2.3) and IP literals by value (`[0:0::1]` is `[::1]`);
everything is parsed, never matched as a prefix (`127.0.0.1:80.evil.example` is not
`127.0.0.1:80`). A foreign `Host` is refused with 421, then a foreign `Origin` with 403.

`AllowedNames` extends the sets, never replaces them, for a listener reached under a name it
cannot know (`ssh -L`, `kubectl port-forward`, a container's published port, a compose service
name): `--allow-host NAME` (that name on a bound port), `--allow-host NAME:PORT` (exactly that),
`--allow-origin SCHEME://NAME[:PORT]` (a page elsewhere, `https` too). A wildcard, a pattern or
`null` is refused: each would turn the check off for every page.

Pure: no I/O but one `gethostname()` for a wildcard bind.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

from .errors import ConfigError

__all__ = [
    "HOST_REFUSED",
    "NO_EXTRA_NAMES",
    "ORIGIN_REFUSED",
    "AllowedNames",
    "Refusal",
    "TrustedHosts",
]


class Refusal(NamedTuple):
    """The answer to a request the check refuses: its HTTP status and body (the SDK's words)."""

    status: int
    text: str


HOST_REFUSED = Refusal(421, "Invalid Host header")
ORIGIN_REFUSED = Refusal(403, "Invalid Origin header")

_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
_WILDCARDS = ("", "0.0.0.0", "::", "[::]")
_DEFAULT_PORTS = {"http": 80, "https": 443}
_MEMO_ENTRIES = 256
# A registered name as hosts are named in practice (RFC 1123 labels; `_` for compose and
# Kubernetes service names); anything else that is not an IP literal is refused.
_NAME = re.compile(r"[a-z0-9_]([a-z0-9_.-]*[a-z0-9_])?")
_PORT = re.compile(r"[0-9]{1,5}")


class _Authority(NamedTuple):
    name: str
    """Lower-cased; an IP literal in its canonical form, IPv6 in brackets."""
    port: int | None
    """None when none was written."""


@dataclass(frozen=True)
class AllowedNames:
    """Names and pages a listener answers besides its bind address's own (`parse` builds one)."""

    names: frozenset[str] = frozenset()
    """`--allow-host NAME`: the name, on any port the listener is bound to."""
    authorities: frozenset[tuple[str, int]] = frozenset()
    """`--allow-host NAME:PORT`: exactly that name and port, whatever port is bound."""
    origins: frozenset[tuple[str, str, int]] = frozenset()
    """`--allow-origin`: (scheme, name, port), the default port filled in."""

    @classmethod
    def parse(
        cls,
        hosts: Iterable[str] = (),
        origins: Iterable[str] = (),
        *,
        host_option: str = "allowed_hosts",
        origin_option: str = "allowed_origins",
    ) -> AllowedNames:
        """Read `HOST[:PORT]` and `SCHEME://HOST[:PORT]` values; a `ConfigError` naming
        `host_option` or `origin_option` (the option as the user wrote it) for a bad one."""
        for values, option in ((hosts, host_option), (origins, origin_option)):
            if isinstance(values, str):
                raise ConfigError(
                    f"expected a list of values, got one string: {values!r}", file=option
                )
        names: set[str] = set()
        authorities: set[tuple[str, int]] = set()
        for text in hosts:
            authority = _allowed_host(text, host_option)
            if authority.port is None:
                names.add(authority.name)
            else:
                authorities.add((authority.name, authority.port))
        allowed_origins = {_allowed_origin(text, origin_option) for text in origins}
        return cls(frozenset(names), frozenset(authorities), frozenset(allowed_origins))


NO_EXTRA_NAMES = AllowedNames()


class TrustedHosts:
    """The `Host` and `Origin` values a listener bound at `bind_host` on `ports` answers."""

    def __init__(
        self,
        bind_host: str,
        ports: Iterable[int],
        allowed: AllowedNames = NO_EXTRA_NAMES,
    ) -> None:
        self.ports = frozenset(ports)
        self.allowed = allowed
        bare = bind_host.strip("[]").lower()
        self.any_ip = bare in _WILDCARDS
        if self.any_ip:
            names = {"localhost", socket.gethostname().lower()}
        else:
            names = {_canonical_name(bare)}
            if _is_loopback(bare):
                names.update(_LOOPBACK_NAMES)
        self.names = frozenset(names)
        self._names_any_port = self.names | allowed.names
        # The spellings every client sends, answered with one set lookup (`refusal`'s first line).
        hosts = {f"{name}:{port}" for name in self._names_any_port for port in self.ports}
        hosts.update(f"{name}:{port}" for name, port in allowed.authorities)
        self._hosts = frozenset(hosts)
        # Verdicts on other values (other spellings, wildcard binds' IP literals, Origins), so
        # each is parsed once.
        self._memo: dict[tuple[str, str | None], Refusal | None] = {}

    def refusal(self, host: str | None, origin: str | None) -> Refusal | None:
        """The one check: None when a request with this `Host` and `Origin` (None: absent) is
        answered, else how it is refused. Every listener calls it, through `judge` or directly
        (the fast path, whose head reader has already refused a header sent twice)."""
        if origin is None and host in self._hosts:
            return None  # every MCP client's request: two lookups, no allocation
        if host is None:
            return HOST_REFUSED
        key = (host, origin)
        try:
            return self._memo[key]
        except KeyError:
            pass
        verdict = self._judge(host, origin)
        if len(self._memo) >= _MEMO_ENTRIES:
            self._memo.clear()  # a bound, not a cache policy
        self._memo[key] = verdict
        return verdict

    def judge(self, hosts: Sequence[str], origins: Sequence[str]) -> Refusal | None:
        """`refusal` for a request that sent these `Host` and `Origin` values (every one it
        sent): none or two `Host`s is a foreign host, two `Origin`s a foreign origin."""
        if len(hosts) != 1:
            return HOST_REFUSED
        if len(origins) > 1:
            return self.refusal(hosts[0], None) or ORIGIN_REFUSED
        return self.refusal(hosts[0], origins[0] if origins else None)

    def judge_headers(self, headers: Iterable[tuple[bytes, bytes]]) -> Refusal | None:
        """`judge` over a request's header pairs (an ASGI scope's: names lower-cased)."""
        hosts: list[str] = []
        origins: list[str] = []
        for name, value in headers:
            if name == b"host":
                hosts.append(value.decode("latin-1"))
            elif name == b"origin":
                origins.append(value.decode("latin-1"))
        return self.judge(hosts, origins)

    def _judge(self, host: str, origin: str | None) -> Refusal | None:
        authority = _parse_authority(host)
        if authority is None or not self._answers(authority.name, authority.port or 80):
            return HOST_REFUSED
        if origin is not None and not self._is_own_or_allowed_origin(origin):
            return ORIGIN_REFUSED
        return None

    def _answers(self, name: str, port: int) -> bool:
        if port in self.ports and (
            name in self._names_any_port or (self.any_ip and _is_ip_literal(name))
        ):
            return True
        return (name, port) in self.allowed.authorities

    def _is_own_or_allowed_origin(self, origin: str) -> bool:
        scheme, sep, rest = origin.partition("://")
        scheme = scheme.lower()
        default_port = _DEFAULT_PORTS.get(scheme)
        if not sep or default_port is None:
            return False  # `null`, `file://`, anything not a web page's origin
        authority = _parse_authority(rest)
        if authority is None:
            return False
        name, port = authority.name, authority.port or default_port
        if (scheme, name, port) in self.allowed.origins:
            return True
        return scheme == "http" and self._answers(name, port)


def _parse_authority(text: str) -> _Authority | None:
    """`NAME[:PORT]` or `[IPv6][:PORT]`, the name canonical; None when it is not one (an empty
    port, a path, user info, characters no host name has)."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        inside, rest = text[1:end], text[end + 1 :]
        try:
            name = f"[{ipaddress.IPv6Address(inside).compressed}]"
        except ValueError:
            return None  # also zone ids (`fe80::1%eth0`): no browser sends one
        if rest and not rest.startswith(":"):
            return None
        port_text = rest[1:] if rest else None
    else:
        bare, sep, port_or_empty = text.partition(":")
        port_text = port_or_empty if sep else None
        canonical = _canonical_name(bare.lower())
        if not (_is_ip_literal(canonical) or _NAME.fullmatch(canonical)):
            return None
        name = canonical
    if port_text is None:
        return _Authority(name, None)
    if not (port_text.isascii() and _PORT.fullmatch(port_text)) or not 0 < int(port_text) < 65536:
        return None
    return _Authority(name, int(port_text))


def _canonical_name(bare: str) -> str:
    """A bind address or `Host` name as it is compared: an IP literal in its canonical form
    (IPv6 in brackets, as in a `Host`), a name lower-cased as given."""
    try:
        address = ipaddress.ip_address(bare)
    except ValueError:
        return bare
    return f"[{address.compressed}]" if address.version == 6 else address.compressed


def _is_ip_literal(name: str) -> bool:
    """Whether a canonical name (`_parse_authority`'s) is an IP literal."""
    if name.startswith("["):
        return True  # only a valid IPv6 literal gets its brackets there
    try:
        ipaddress.IPv4Address(name)
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


def _allowed_host(text: str, option: str) -> _Authority:
    """One `--allow-host` value: `NAME` or `NAME:PORT` (IPv6 in brackets)."""
    value = text.strip()
    if "*" in value:
        raise ConfigError(
            f"{text!r}: a wildcard would answer every name and switch the DNS-rebinding check "
            "off; name each host the server is reached by (HOST or HOST:PORT)",
            file=option,
        )
    if "://" in value:
        raise ConfigError(
            f"{text!r} is a URL; give the host as a client sends it in `Host`: HOST or HOST:PORT",
            file=option,
        )
    authority = _parse_authority(value)
    if authority is None:
        raise ConfigError(
            f"expected HOST or HOST:PORT (a host name, an IPv4 address or an IPv6 address in "
            f"brackets; a port from 1 to 65535), got {text!r}",
            file=option,
        )
    return authority


def _allowed_origin(text: str, option: str) -> tuple[str, str, int]:
    """One `--allow-origin` value: `http://NAME[:PORT]` or `https://NAME[:PORT]`."""
    value = text.strip()
    if "*" in value:
        raise ConfigError(
            f"{text!r}: a wildcard would let any web page call the server; name each page's "
            "origin (SCHEME://HOST[:PORT])",
            file=option,
        )
    if value.lower() == "null":
        raise ConfigError(
            "'null' is the origin of every sandboxed frame and local file: allowing it would "
            "let any of them call the server",
            file=option,
        )
    scheme, sep, rest = value.partition("://")
    scheme = scheme.lower()
    default_port = _DEFAULT_PORTS.get(scheme)
    if not sep or default_port is None:
        raise ConfigError(
            f"expected http://HOST[:PORT] or https://HOST[:PORT], got {text!r}", file=option
        )
    if "/" in rest:
        trimmed = f"{scheme}://{rest.split('/', 1)[0]}"
        raise ConfigError(f"an origin has no path: {trimmed!r}, not {text!r}", file=option)
    authority = _parse_authority(rest)
    if authority is None:
        raise ConfigError(
            f"expected {scheme}://HOST[:PORT] (a host name, an IPv4 address or an IPv6 address "
            f"in brackets; a port from 1 to 65535), got {text!r}",
            file=option,
        )
    return scheme, authority.name, authority.port or default_port
