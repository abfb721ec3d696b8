"""DNS rebinding: every bind address checks Host and Origin exactly, on every path and the feed."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx2
import pytest
import trio
from trio_websocket import ConnectionRejected, open_websocket_url

from tests.compat import COMPAT_UNIVERSE
from windtunnel.actors.websocket_feed import WebSocketFeed
from windtunnel.mcp import RecordedMCPServer
from windtunnel.trusted_hosts import TrustedHosts

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


@pytest.mark.parametrize(
    ("bind", "host", "origin", "allowed"),
    [
        ("127.0.0.1", "127.0.0.1:8000", None, True),
        ("127.0.0.1", "localhost:8000", "http://localhost:3000", True),
        ("127.0.0.1", "[::1]:8000", "https://[::1]", True),
        ("127.0.0.1", "127.0.0.1:8001", None, False),
        ("127.0.0.1", "127.0.0.1", None, False),
        ("127.0.0.1", "127.0.0.1:8000.evil.example", None, False),
        ("127.0.0.1", "127.0.0.1:8000@evil.example", None, False),
        ("127.0.0.1", "evil.example:8000", None, False),
        ("127.0.0.1", None, None, False),
        ("127.0.0.1", "127.0.0.1:8000", "http://evil.example", False),
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1.evil.example:8000", False),
        ("127.0.0.1", "127.0.0.1:8000", "http://127.0.0.1:", False),
        ("127.0.0.1", "127.0.0.1:8000", "null", False),
        ("127.0.0.1", "127.0.0.1:8000", "file://", False),
        ("127.0.0.2", "127.0.0.2:8000", None, True),
        ("127.0.0.2", "localhost:8000", "http://127.0.0.2:8000", True),
        ("127.0.0.2", "evil.example:8000", None, False),
        ("127.0.0.2", "127.0.0.2:8000", "http://evil.example", False),
        ("::1", "[::1]:8000", None, True),
        ("::1", "::1:8000", None, False),
        ("10.1.2.3", "10.1.2.3:8000", "http://10.1.2.3:8000", True),
        ("10.1.2.3", "localhost:8000", None, False),
        ("10.1.2.3", "10.1.2.3:8000", "http://evil.example", False),
        ("0.0.0.0", "192.168.7.9:8000", "http://192.168.7.9:8000", True),
        ("0.0.0.0", "[fe80::1]:8000", None, True),
        ("0.0.0.0", "localhost:8000", None, True),
        ("0.0.0.0", "192.168.7.9:8001", None, False),
        ("0.0.0.0", "evil.example:8000", None, False),
        ("0.0.0.0", "192.168.7.9:8000", "http://evil.example:8000", False),
        ("myhost.lan", "myhost.lan:8000", None, True),
        ("myhost.lan", "MyHost.LAN:8000", None, True),
    ],
)
def test_trusted_hosts_rule(bind: str, host: str | None, origin: str | None, allowed: bool) -> None:
    """Host must be a name of the bind address with a bound port, exactly; Origin a local page."""
    assert TrustedHosts(bind, [8000]).allows(host, origin) is allowed


def test_port_80_also_takes_a_bare_host() -> None:
    """On port 80 a Host without a port is the same address; on any other port it is not."""
    assert TrustedHosts("127.0.0.1", [80]).allows("localhost", None) is True
    assert TrustedHosts("127.0.0.1", [8080]).allows("localhost", None) is False


def test_a_wildcard_bind_takes_this_machines_name() -> None:
    """A wildcard bind answers the machine's own host name, on the bound port only."""
    name = socket.gethostname()
    assert TrustedHosts("0.0.0.0", [8000]).allows(f"{name}:8000", None) is True
    assert TrustedHosts("0.0.0.0", [8000]).allows(f"{name}:9000", None) is False


async def _post(http: httpx2.AsyncClient, url: str, body: Any, **headers: str) -> int:
    response = await http.post(url, content=json.dumps(body), headers={**HEADERS, **headers})
    return response.status_code


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "127.5.6.7"])
async def test_every_path_refuses_a_rebound_host_and_a_foreign_origin(bind: str) -> None:
    """On any loopback bind, the fast path, the SDK path, tools/list and HTTP/2 answer 421 to a
    foreign Host and 403 to a foreign Origin; none of them reaches the recording."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    statuses: dict[str, list[int]] = {}
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery, host=bind)
            authority = url.split("/")[2]
            for label, client in (
                ("http/1.1", httpx2.AsyncClient(timeout=10)),
                ("http/2", httpx2.AsyncClient(http1=False, http2=True, timeout=10)),
            ):
                async with client as http:
                    for name, body in (
                        ("plain", PLAIN_CALL),
                        ("sdk", SDK_CALL),
                        ("list", TOOLS_LIST),
                    ):
                        statuses[f"{label} {name}"] = [
                            await _post(http, url, body, Host="evil.example"),
                            await _post(http, url, body, Host=f"evil.example:{authority[-5:]}"),
                            await _post(http, url, body, Origin="http://evil.example"),
                            await _post(http, url, body, Origin=f"http://{authority}.evil.example"),
                            await _post(http, url, body),
                        ]
            await server.stop()
    assert statuses == {
        f"{label} {name}": [421, 421, 403, 403, 200]
        for label in ("http/1.1", "http/2")
        for name in ("plain", "sdk", "list")
    }
    assert [call.tool_name for call in server.call_log()] == ["motd"] * 4


async def test_a_get_or_delete_under_a_rebound_host_is_refused() -> None:
    """Methods other than POST are checked too (the SDK's own check stops at loopback binds)."""
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
            authority = url.split("/")[2]
            host, port = authority.rsplit(":", 1)
            stream = await trio.open_tcp_stream(host, int(port))
            async with stream:
                await stream.send_all(
                    b"POST /mcp HTTP/1.1\r\nHost: %s\r\nHost: evil.example\r\n"
                    b"Content-Type: application/json\r\nAccept: application/json\r\n"
                    b"Content-Length: %d\r\n\r\n%s" % (authority.encode(), len(body), body)
                )
                reply = b""
                while b"\r\n\r\n" not in reply:
                    reply += await stream.receive_some(65536)
            await server.stop()
    assert reply.startswith(b"HTTP/1.1 400 ")
    assert server.call_log() == []


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2", "127.9.9.9"])
@pytest.mark.parametrize(
    ("origin", "accepted"),
    [
        (None, True),
        ("http://localhost:3000", True),
        ("http://evil.example", False),
        ("http://127.0.0.1.evil.example", False),
    ],
)
async def test_the_event_feed_checks_origin_on_every_bind(
    bind: str, origin: str | None, accepted: bool
) -> None:
    """The WebSocket feed refuses a page of a foreign Origin (403) on any loopback bind."""
    feed = WebSocketFeed(host=bind)
    headers = [(b"Origin", origin.encode())] if origin is not None else []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(feed.run)
            try:
                async with open_websocket_url(url, extra_headers=headers) as ws:
                    got = json.loads(await ws.get_message())["event"]
            except ConnectionRejected as exc:
                got = str(exc.status_code)
            await feed.aclose()
            nursery.cancel_scope.cancel()
    assert got == ("feed_subscribed" if accepted else "403")
