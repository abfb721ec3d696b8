"""The one Host/Origin check every listener asks (`trusted_hosts`), and the names it can be given."""

from __future__ import annotations

import socket

import pytest

from windtunnel.errors import ConfigError
from windtunnel.trusted_hosts import (
    HOST_REFUSED,
    ORIGIN_REFUSED,
    AllowedNames,
    Refusal,
    TrustedHosts,
)

OK = None
HOST = HOST_REFUSED
ORIGIN = ORIGIN_REFUSED


@pytest.mark.parametrize(
    ("bind", "host", "origin", "verdict"),
    [
        ("127.0.0.1", "127.0.0.1:8000", None, OK),
        ("127.0.0.1", "localhost:8000", "http://localhost:8000", OK),
        ("127.0.0.1", "LOCALHOST:8000", "HTTP://LocalHost:8000", OK),
        ("127.0.0.1", "[::1]:8000", "http://[0:0::1]:8000", OK),
        ("127.0.0.1", "[0:0:0:0:0:0:0:1]:8000", None, OK),
        ("127.0.0.1", "127.0.0.1:08000", None, OK),
        ("127.0.0.1", "127.0.0.1:8001", None, HOST),
        ("127.0.0.1", "127.0.0.1", None, HOST),
        ("127.0.0.1", "127.0.0.1:", None, HOST),
        ("127.0.0.1", "localhost.:8000", None, HOST),
        ("127.0.0.1", "127.000.0.1:8000", None, HOST),
        ("127.0.0.1", "127.0.0.1:8000.evil.example", None, HOST),
        ("127.0.0.1", "127.0.0.1:8000@evil.example", None, HOST),
        ("127.0.0.1", "evil.example:8000", None, HOST),
        ("127.0.0.1", "replay:8000", None, HOST),
        ("127.0.0.1", None, None, HOST),
        ("127.0.0.1", "evil.example:8000", "http://evil.example", HOST),
        ("127.0.0.1", "127.0.0.1:8000", "http://localhost:3000", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "https://127.0.0.1:8000", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1:8000/", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "http://evil.example", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1.evil.example:8000", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1:", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "null", ORIGIN),
        ("127.0.0.1", "127.0.0.1:8000", "file://", ORIGIN),
        ("127.0.0.2", "127.0.0.2:8000", None, OK),
        ("127.0.0.2", "localhost:8000", "http://127.0.0.2:8000", OK),
        ("127.0.0.2", "evil.example:8000", None, HOST),
        ("127.0.0.2", "127.0.0.2:8000", "http://evil.example", ORIGIN),
        ("::1", "[::1]:8000", None, OK),
        ("::1", "::1:8000", None, HOST),
        ("10.1.2.3", "10.1.2.3:8000", "http://10.1.2.3:8000", OK),
        ("10.1.2.3", "localhost:8000", None, HOST),
        ("10.1.2.3", "10.1.2.3:8000", "http://evil.example", ORIGIN),
        ("0.0.0.0", "192.168.7.9:8000", "http://192.168.7.9:8000", OK),
        ("0.0.0.0", "[fe80::1]:8000", None, OK),
        ("0.0.0.0", "localhost:8000", None, OK),
        ("0.0.0.0", "192.168.7.9:8001", None, HOST),
        ("0.0.0.0", "evil.example:8000", None, HOST),
        ("0.0.0.0", "192.168.7.9:8000", "http://evil.example:8000", ORIGIN),
        ("myhost.lan", "myhost.lan:8000", None, OK),
        ("MyHost.Lan", "MyHost.LAN:8000", None, OK),
    ],
)
def test_the_rule(bind: str, host: str | None, origin: str | None, verdict: Refusal | None) -> None:
    """Host: a name of the bind address (no case, IP literals by value) with a bound port;
    Origin: none, or `http://` and a name and port the Host rule takes."""
    trusted = TrustedHosts(bind, [8000])
    assert trusted.refusal(host, origin) == verdict
    assert trusted.refusal(host, origin) == verdict  # the memoised verdict is the same


def test_port_80_also_takes_a_bare_host() -> None:
    """On port 80 a Host without a port is the same address; on any other port it is not."""
    assert TrustedHosts("127.0.0.1", [80]).refusal("localhost", None) is None
    assert TrustedHosts("127.0.0.1", [80]).refusal("localhost", "http://localhost") is None
    assert TrustedHosts("127.0.0.1", [8080]).refusal("localhost", None) == HOST_REFUSED


def test_a_wildcard_bind_takes_this_machines_name() -> None:
    """A wildcard bind answers the machine's own host name, on the bound port only."""
    name = socket.gethostname()
    assert TrustedHosts("0.0.0.0", [8000]).refusal(f"{name}:8000", None) is None
    assert TrustedHosts("0.0.0.0", [8000]).refusal(f"{name}:9000", None) == HOST_REFUSED


@pytest.mark.parametrize(
    ("hosts", "origins", "verdict"),
    [
        (["localhost:8000"], [], OK),
        ([], [], HOST),
        (["localhost:8000", "localhost:8000"], [], HOST),
        (["localhost:8000"], ["http://localhost:8000", "http://localhost:8000"], ORIGIN),
        (["evil.example:8000"], ["http://a", "http://b"], HOST),
    ],
)
def test_a_header_sent_twice_is_refused(
    hosts: list[str], origins: list[str], verdict: Refusal | None
) -> None:
    """No Host or two is a foreign host; two Origins a foreign origin (the Host judged first)."""
    assert TrustedHosts("127.0.0.1", [8000]).judge(hosts, origins) == verdict


def test_judge_headers_reads_host_and_origin_from_header_pairs() -> None:
    """ASGI header pairs: the same verdicts as `judge` on the values."""
    trusted = TrustedHosts("127.0.0.1", [8000])
    assert trusted.judge_headers([(b"host", b"localhost:8000"), (b"accept", b"*/*")]) is None
    assert trusted.judge_headers([(b"host", b"localhost:8000"), (b"origin", b"null")]) == ORIGIN
    assert trusted.judge_headers([(b"accept", b"*/*")]) == HOST


ALLOWED = AllowedNames.parse(
    ["replay", "Forwarded.Example:9000", "[::1]:7000", "10.0.0.5:81"],
    ["https://Dash.Example", "http://localhost:3000"],
)


@pytest.mark.parametrize(
    ("host", "origin", "verdict"),
    [
        ("replay:8000", None, OK),
        ("REPLAY:8000", "http://replay:8000", OK),
        ("replay:8001", None, HOST),
        ("replay", None, HOST),
        ("forwarded.example:9000", None, OK),
        ("forwarded.example:8000", None, HOST),
        ("[0::1]:7000", None, OK),
        ("10.0.0.5:81", None, OK),
        ("127.0.0.1:8000", "https://dash.example", OK),
        ("127.0.0.1:8000", "https://dash.example:443", OK),
        ("127.0.0.1:8000", "http://dash.example", ORIGIN),
        ("127.0.0.1:8000", "https://dash.example:8443", ORIGIN),
        ("127.0.0.1:8000", "http://localhost:3000", OK),
        ("127.0.0.1:8000", "http://localhost:3001", ORIGIN),
        ("127.0.0.1:8000", "http://forwarded.example:9000", OK),
        ("127.0.0.1:8000", "https://forwarded.example:9000", ORIGIN),
        ("127.0.0.1:8000", "http://evil.example", ORIGIN),
        ("evil.example:8000", None, HOST),
        ("127.0.0.1:8001", None, HOST),
    ],
)
def test_allowed_names_extend_the_set(
    host: str, origin: str | None, verdict: Refusal | None
) -> None:
    """`NAME` on a bound port, `NAME:PORT` exactly, origins exactly (default ports filled in);
    the bind address's own names still answer and nothing else does."""
    assert TrustedHosts("127.0.0.1", [8000], ALLOWED).refusal(host, origin) == verdict


@pytest.mark.parametrize(
    ("hosts", "origins", "message"),
    [
        (
            ["*"],
            [],
            "allowed_hosts: '*': a wildcard would answer every name and switch the DNS-rebinding check off",
        ),
        (["*.example:80"], [], "a wildcard would answer every name"),
        (["replay:*"], [], "a wildcard would answer every name"),
        (
            ["http://replay:8000"],
            [],
            "'http://replay:8000' is a URL; give the host as a client sends it in `Host`: HOST or HOST:PORT",
        ),
        (
            ["replay:0"],
            [],
            "expected HOST or HOST:PORT (a host name, an IPv4 address or an IPv6 address in brackets; a port from 1 to 65535), got 'replay:0'",
        ),
        (["replay:65536"], [], "got 'replay:65536'"),
        (["replay:"], [], "got 'replay:'"),
        ([""], [], "got ''"),
        (["fe80::1"], [], "got 'fe80::1'"),
        (["a b"], [], "got 'a b'"),
        (["user@replay"], [], "got 'user@replay'"),
        ("replay", [], "allowed_hosts: expected a list of values, got one string: 'replay'"),
        ([], ["*"], "allowed_origins: '*': a wildcard would let any web page call the server"),
        ([], ["https://*.example"], "a wildcard would let any web page call the server"),
        (
            [],
            ["null"],
            "allowed_origins: 'null' is the origin of every sandboxed frame and local file",
        ),
        (
            [],
            ["localhost:3000"],
            "expected http://HOST[:PORT] or https://HOST[:PORT], got 'localhost:3000'",
        ),
        ([], ["ftp://files.example"], "got 'ftp://files.example'"),
        (
            [],
            ["http://a.example/"],
            "an origin has no path: 'http://a.example', not 'http://a.example/'",
        ),
        ([], ["http://a.example:99999"], "expected http://HOST[:PORT]"),
        ([], "http://a.example", "allowed_origins: expected a list of values, got one string"),
    ],
)
def test_a_bad_allowed_value_is_one_clear_error(
    hosts: list[str], origins: list[str], message: str
) -> None:
    """A wildcard, `null`, a URL for a host, a path in an origin, a bad port: a `ConfigError`
    naming the option and the value, never a check switched off."""
    with pytest.raises(ConfigError) as caught:
        AllowedNames.parse(hosts, origins)
    assert message in str(caught.value)
