"""Every listener gives the same verdict on the same Host and Origin: the fast path, the SDK path,
HTTP/2, the event feed's WebSocket and `wt record`'s front, real sockets on every bind."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import pytest
import trio

from tests.compat import COMPAT_UNIVERSE
from tests.processes import read_until
from tests.record.upstreams import SDK_UPSTREAM
from windtunnel.actors import open_fleet
from windtunnel.mcp import RecordedMCPServer
from windtunnel.mcp._fast_path_http import HTTPFastPath
from windtunnel.record import RecordingProxy

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
PLAIN_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "motd", "arguments": {}},
}
# An extra params key: not a plain call, so the SDK answers it (the fast path never sees it).
SDK_CALL = {**PLAIN_CALL, "params": {**PLAIN_CALL["params"], "task": None}}
TOOLS_LIST = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
LOOKUP = {  # the stateless era: no initialize needed through the recording proxy
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {
        "name": "lookup",
        "arguments": {"query": "acme"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}

ALLOWED_HOSTS = ["replay:8000"]
ALLOWED_ORIGINS = ["https://dash.example"]

OK = None
# (what is sent, Host, Origin, verdict without options, verdict with ALLOWED_*). `{own}` is the
# bind address as a URL writes it, `{port}` the listener's port, `{other}` another port.
MATRIX: list[tuple[str, str, str | None, int | None, int | None]] = [
    ("the bind address", "{own}:{port}", None, OK, OK),
    ("localhost", "localhost:{port}", None, OK, OK),
    ("LOCALHOST", "LOCALHOST:{port}", None, OK, OK),
    ("127.0.0.1", "127.0.0.1:{port}", None, OK, OK),
    ("[::1]", "[::1]:{port}", None, OK, OK),
    ("[::1] spelt out", "[0:0:0:0:0:0:0:1]:{port}", None, OK, OK),
    ("another port", "localhost:{other}", None, 421, 421),
    ("no port (80)", "localhost", None, 421, 421),
    ("an empty port", "localhost:", None, 421, 421),
    ("a trailing dot", "localhost.:{port}", None, 421, 421),
    ("our authority as a prefix", "127.0.0.1:{port}.evil.example", None, 421, 421),
    ("user info", "127.0.0.1:{port}@evil.example", None, 421, 421),
    ("a foreign name", "evil.example:{port}", None, 421, 421),
    ("a service name", "replay:8000", None, 421, OK),
    ("a service name, another port", "replay:8001", None, 421, 421),
    ("a service name from an allowed page", "replay:8000", "https://dash.example", 421, OK),
    ("our own page", "{own}:{port}", "http://localhost:{port}", OK, OK),
    ("our own page, upper case", "{own}:{port}", "HTTP://LocalHost:{port}", OK, OK),
    ("a page on port 80", "{own}:{port}", "http://127.0.0.1", 403, 403),
    ("a page on another port", "{own}:{port}", "http://127.0.0.1:{other}", 403, 403),
    ("an https page", "{own}:{port}", "https://127.0.0.1:{port}", 403, 403),
    ("a page with a path", "{own}:{port}", "http://127.0.0.1:{port}/", 403, 403),
    ("a foreign page", "{own}:{port}", "http://evil.example", 403, 403),
    ("a page under our prefix", "{own}:{port}", "http://127.0.0.1:{port}.evil.example", 403, 403),
    ("a sandboxed page", "{own}:{port}", "null", 403, 403),
    ("an allowed page", "{own}:{port}", "https://dash.example", 403, OK),
    ("an allowed page, another port", "{own}:{port}", "https://dash.example:8443", 403, 403),
    ("a foreign name and page", "evil.example:{port}", "http://evil.example", 421, 421),
]

Send = Callable[[str, str | None], Awaitable[int]]


def _authority(url: str) -> tuple[str, int]:
    """`http://[::1]:5000/mcp` → (`[::1]`, 5000)."""
    authority = url.split("/")[2]
    host, _, port = authority.rpartition(":")
    return host, int(port)


def post(http: httpx2.AsyncClient, url: str, body: dict[str, Any]) -> Send:
    async def send(host: str, origin: str | None) -> int:
        headers = {**HEADERS, "Host": host}
        if origin is not None:
            headers["Origin"] = origin
        response = await http.post(url, content=json.dumps(body), headers=headers)
        return response.status_code

    return send


def handshake(url: str) -> Send:
    """A WebSocket opening handshake written by hand: a client library sets `Host` itself."""
    host, port = _authority(url)

    async def send(host_header: str, origin: str | None) -> int:
        lines = [
            b"GET / HTTP/1.1",
            b"Host: " + host_header.encode(),
            b"Upgrade: websocket",
            b"Connection: Upgrade",
            b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
            b"Sec-WebSocket-Version: 13",
        ]
        if origin is not None:
            lines.append(b"Origin: " + origin.encode())
        stream = await trio.open_tcp_stream(host.strip("[]"), port)
        async with stream:
            await stream.send_all(b"\r\n".join(lines) + b"\r\n\r\n")
            head = await read_until(stream, b"\r\n\r\n")
        return int(head.split(b" ", 2)[1])

    return send


@pytest.mark.parametrize(
    ("bind", "allowed"),
    [("127.0.0.1", False), ("::1", False), ("127.0.0.2", False), ("127.0.0.1", True)],
)
async def test_every_listener_gives_the_same_verdict(
    bind: str, allowed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same Host/Origin matrix down every path of every listener: each answers (200, or
    101 for the feed) exactly the requests the rule answers, refuses the rest with the same 421
    or 403, and only answered requests reach the recording or the upstream."""
    fast_answers: list[str] = []
    answer = HTTPFastPath.answer

    async def counting(self: HTTPFastPath, version: str, headers: Any, body: bytes) -> Any:
        response = await answer(self, version, headers, body)
        if response is not None:  # None: not a plain call, passed on to the SDK
            fast_answers.append(headers["host"])
        return response

    monkeypatch.setattr(HTTPFastPath, "answer", counting)
    options: dict[str, list[str]] = (
        {"allowed_hosts": ALLOWED_HOSTS, "allowed_origins": ALLOWED_ORIGINS} if allowed else {}
    )
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    proxy = RecordingProxy(SDK_UPSTREAM, name="sdk")
    got: dict[str, list[int | None]] = {}
    with trio.fail_after(90):
        async with (
            trio.open_nursery() as nursery,
            open_fleet(host=bind, feed_port=0, **options) as fleet,
            httpx2.AsyncClient(timeout=30) as h1,
            httpx2.AsyncClient(http1=False, http2=True, timeout=30) as h2,
        ):
            url = await server.start(nursery, host=bind, **options)
            proxy_url = await proxy.start(nursery, host=bind, **options)
            assert fleet.feed is not None and fleet.feed.url is not None
            paths: dict[str, tuple[str, Send]] = {
                "HTTP/1.1 tools/call, fast path": (url, post(h1, url, PLAIN_CALL)),
                "HTTP/1.1 tools/call, SDK": (url, post(h1, url, SDK_CALL)),
                "HTTP/1.1 tools/list, SDK": (url, post(h1, url, TOOLS_LIST)),
                "HTTP/2 tools/call": (url, post(h2, url, PLAIN_CALL)),
                "HTTP/2 tools/list": (url, post(h2, url, TOOLS_LIST)),
                "event feed": (fleet.feed.url, handshake(fleet.feed.url)),
                "wt record, HTTP/1.1": (proxy_url, post(h1, proxy_url, LOOKUP)),
                "wt record, HTTP/2": (proxy_url, post(h2, proxy_url, LOOKUP)),
            }
            for path, (listener_url, send) in paths.items():
                own, port = _authority(listener_url)
                other = port + 1 if port < 65535 else port - 1
                statuses = []
                for _, host, origin, _, _ in MATRIX:
                    fill = {"own": own, "port": port, "other": other}
                    status = await send(
                        host.format(**fill), None if origin is None else origin.format(**fill)
                    )
                    statuses.append(None if status in (200, 101) else status)
                got[path] = statuses
            await proxy.stop()
            await server.stop()
    expected = [with_options if allowed else without for *_, without, with_options in MATRIX]
    assert got == dict.fromkeys(got, expected)
    answered = expected.count(OK)
    assert len(fast_answers) == answered  # the fast path answered its share itself
    assert [call.tool_name for call in server.call_log()] == ["motd"] * 3 * answered
    assert [call.tool_name for call in proxy.call_log()] == ["lookup"] * 2 * answered


async def test_a_get_or_delete_under_a_rebound_host_is_refused() -> None:
    """Methods other than POST are checked too, on any loopback bind."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery, host="127.0.0.2")
            async with httpx2.AsyncClient(timeout=10) as http:
                get = await http.get(url, headers={**HEADERS, "Host": "evil.example"})
                delete = await http.delete(
                    url, headers={**HEADERS, "Origin": "http://evil.example"}
                )
            await server.stop()
    assert (get.status_code, get.text) == (421, "Invalid Host header")
    assert (delete.status_code, delete.text) == (403, "Invalid Origin header")


async def test_two_host_headers_are_refused() -> None:
    """A request with two Host headers, one of them ours, is refused (h11's 400) and not run."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    body = json.dumps(PLAIN_CALL).encode()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            host, port = _authority(url)
            stream = await trio.open_tcp_stream(host, port)
            async with stream:
                await stream.send_all(
                    b"POST /mcp HTTP/1.1\r\nHost: %s:%d\r\nHost: evil.example\r\n"
                    b"Content-Type: application/json\r\nAccept: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (host.encode(), port, len(body), body)
                )
                reply = await read_until(stream, b"\r\n\r\n")
            await server.stop()
    assert reply.startswith(b"HTTP/1.1 400 ")
    assert server.call_log() == []


async def test_a_bad_allowed_value_fails_before_anything_binds() -> None:
    """A wildcard given from Python is the same clear error as on the command line."""
    from windtunnel.errors import ConfigError

    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            with pytest.raises(ConfigError, match=r"allowed_hosts: '\*': a wildcard"):
                await server.start(nursery, allowed_hosts=["*"])
            with pytest.raises(ConfigError, match="allowed_origins: 'null' is the origin"):
                async with open_fleet(feed_port=0, allowed_origins=["null"]):
                    pass
    assert not server.started
