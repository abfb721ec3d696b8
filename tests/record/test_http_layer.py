"""`wt record`'s front and `wt serve` are served by one HTTP layer (`mcp/_http_serving.py`): a
request either refuses gets the same answer from both, byte for byte but the Date."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio

from tests.compat import COMPAT_UNIVERSE
from tests.record.upstreams import SDK_UPSTREAM
from windtunnel.mcp import RecordedMCPServer, _http_worker
from windtunnel.mcp._http_serving import MAX_REQUEST_BODY
from windtunnel.mcp.spi import MCPServer
from windtunnel.record import RecordingProxy

BODY_TIMEOUT_S = 0.5


@asynccontextmanager
async def listening(kind: str) -> AsyncIterator[int]:
    """The port of a `wt serve` replay or of a `wt record` proxy in front of a stdio server."""
    server: MCPServer
    if kind == "serve":
        server = RecordedMCPServer(COMPAT_UNIVERSE)
        server.log_events = False
    else:
        server = RecordingProxy(SDK_UPSTREAM, name="sdk")
    async with trio.open_nursery() as nursery:
        url = await server.start(nursery)
        yield int(url.rsplit(":", 1)[1].split("/")[0])
        await server.stop()


async def exchange(port: int, request: bytes) -> bytes:
    """The response to `request` on a fresh connection (read until the server closes it or a
    sized body is whole), its Date blanked."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    received = b""
    async with stream:
        await stream.send_all(request)
        while chunk := await stream.receive_some(65536):
            received += chunk
            head, sep, body = received.partition(b"\r\n\r\n")
            length = re.search(rb"content-length: (\d+)", head)
            if sep and length is not None and len(body) >= int(length[1]):
                break
    return re.sub(rb"date: [^\r]*", b"date: -", received)


def post(path: bytes, host: bytes, length: int, *extra: bytes) -> bytes:
    lines = [
        b"POST %s HTTP/1.1" % path,
        b"host: %s" % host,
        b"content-type: application/json",
        b"accept: application/json, text/event-stream",
        b"content-length: %d" % length,
        *extra,
    ]
    return b"\r\n".join(lines) + b"\r\n\r\n"


@pytest.mark.timeout(60)
async def test_both_listeners_refuse_alike() -> None:
    """A foreign Host (on any path: 421 before the path is looked at), a foreign Origin (403) and
    a body over 4 MiB (413, the SDK's words) get the same bytes from `wt serve` and `wt record`."""
    answers: dict[str, list[bytes]] = {}
    for kind in ("serve", "record"):
        async with listening(kind) as port:
            own = b"127.0.0.1:%d" % port
            answers[kind] = [
                await exchange(port, post(b"/elsewhere", b"evil.example", 2) + b"{}"),
                await exchange(port, post(b"/mcp", own, 2, b"origin: http://evil.example") + b"{}"),
                await exchange(port, post(b"/mcp", own, MAX_REQUEST_BODY + 1)),
            ]
    assert answers["serve"] == answers["record"]
    statuses = [answer.split(b"\r\n", 1)[0] for answer in answers["record"]]
    assert statuses == [b"HTTP/1.1 421 ", b"HTTP/1.1 403 ", b"HTTP/1.1 413 "]
    assert [answer.rsplit(b"\r\n\r\n", 1)[1] for answer in answers["record"]] == [
        b"Invalid Host header",
        b"Invalid Origin header",
        b"Request body too large",
    ]


@pytest.mark.parametrize("kind", ["serve", "record"])
@pytest.mark.timeout(60)
async def test_a_body_that_never_comes_gets_408_from_either_listener(
    kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A head and half a body, then nothing: both listeners answer 408 and close after the body
    timeout (`wt record`'s front had no such limit: a client could hold a request open)."""
    monkeypatch.setattr(_http_worker.Config, "body_timeout", BODY_TIMEOUT_S)
    async with listening(kind) as port:
        request = post(b"/mcp", b"127.0.0.1:%d" % port, 100) + b'{"jsonrpc":'
        with trio.fail_after(BODY_TIMEOUT_S + 10):
            answer = await exchange(port, request)
    assert answer == b"HTTP/1.1 408 \r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
