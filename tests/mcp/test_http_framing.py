"""HTTP/1.1 framing the stack left open (RFC 9112): requests framed twice, bytes after a request
that closes the connection, absolute-form targets. Raw bytes on real sockets."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest
import trio

from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import decode_universe


def counter_server() -> RecordedMCPServer:
    """A sequence-mode tool: every call that runs consumes a recording, visibly."""
    document = {
        "windtunnel_universe": 1,
        "tools": [{"name": "counter", "mode": "sequence"}],
        "recordings": [{"tool_name": "counter", "args": {}, "result": {"n": n}} for n in range(5)],
    }
    server = RecordedMCPServer(decode_universe(json.dumps(document).encode(), file="c.json"))
    server.log_events = False
    return server


def call(request_id: int) -> bytes:
    message = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "counter", "arguments": {}},
    }
    return json.dumps(message).encode()


def request(
    host: bytes,
    body: bytes,
    extra: bytes = b"",
    target: bytes = b"/mcp",
    version: bytes = b"HTTP/1.1",
) -> bytes:
    return (
        b"POST %s %s\r\nHost: %s\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\n%sContent-Length: %d\r\n\r\n%s"
        % (target, version, host, extra, len(body), body)
    )


@asynccontextmanager
async def serving() -> AsyncIterator[tuple[RecordedMCPServer, bytes, int]]:
    server = counter_server()
    async with trio.open_nursery() as nursery:
        url = await server.start(nursery)
        port = int(url.split(":")[2].split("/")[0])
        yield server, b"127.0.0.1:%d" % port, port
        await server.stop()


async def until_closed(port: int, data: bytes) -> bytes:
    """Send `data`; everything the server writes until it closes the connection."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(data)
        received = b""
        while chunk := await stream.receive_some(65536):
            received += chunk
    return received


def statuses(received: bytes) -> list[bytes]:
    return [line.split(b" ")[1] for line in received.split(b"\r\n") if line.startswith(b"HTTP/1.")]


async def test_a_request_with_content_length_and_transfer_encoding_is_refused() -> None:
    """CL and TE together: 400, the connection closes, and the request hidden in the body the
    sender framed by Content-Length never runs."""
    with trio.fail_after(30):
        async with serving() as (server, host, port):
            smuggled = request(host, call(2))
            body = b"0\r\n\r\n" + smuggled
            received = await until_closed(
                port,
                b"POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
                b"Accept: application/json\r\nContent-Length: %d\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n%s" % (host, len(body), body),
            )
    assert statuses(received) == [b"400"]
    assert b"connection: close\r\n" in received.lower()
    assert server.call_log() == []


@pytest.mark.parametrize(
    "closing",
    [
        pytest.param((b"Connection: close\r\n", b"HTTP/1.1"), id="connection-close"),
        pytest.param((b"", b"HTTP/1.0"), id="http-1.0"),
    ],
)
async def test_nothing_after_a_request_that_closes_the_connection_runs(
    closing: tuple[bytes, bytes],
) -> None:
    """A call pipelined behind one that closes the connection is not run; the first call's
    answer is the one the client gets (before: a 400 in its place, the call consumed)."""
    extra, version = closing
    with trio.fail_after(30):
        async with serving() as (server, host, port):
            received = await until_closed(
                port, request(host, call(1), extra, version=version) + request(host, call(2))
            )
    assert statuses(received) == [b"200"]
    body = json.loads(received.split(b"\r\n\r\n", 1)[1])
    assert (body["id"], body["result"]["structuredContent"]) == (1, {"n": 0})
    assert [c.result for c in server.call_log()] == [{"n": 0}]


async def test_an_absolute_form_target_is_served_under_its_authority() -> None:
    """`POST http://HOST:PORT/mcp` is served like `/mcp` (was 404); the target's authority is
    the Host checked, so a foreign one is refused with 421."""
    with trio.fail_after(30):
        async with serving() as (server, host, port):
            ours = await until_closed(
                port,
                request(host, call(1), b"Connection: close\r\n", target=b"http://%s/mcp" % host),
            )
            foreign = await until_closed(
                port,
                request(
                    host,
                    call(2),
                    b"Connection: close\r\n",
                    target=b"http://evil.example:%d/mcp" % port,
                ),
            )
    assert statuses(ours) == [b"200"]
    assert json.loads(ours.split(b"\r\n\r\n", 1)[1])["result"]["structuredContent"] == {"n": 0}
    assert statuses(foreign) == [b"421"]
    assert [c.result for c in server.call_log()] == [{"n": 0}]
