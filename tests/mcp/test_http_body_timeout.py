"""A request body that does not come in time: 408 and the connection closed, on either path."""

from __future__ import annotations

import json

import pytest
import trio

from tests.compat import COMPAT_UNIVERSE
from windtunnel.mcp import RecordedMCPServer, _http_worker

BODY_TIMEOUT_S = 0.5
CALL = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "motd"}}
).encode()


def head(host: bytes, framing: bytes) -> bytes:
    return (
        b"POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n"
        b"Accept: application/json, text/event-stream\r\n%s\r\n" % (host, framing)
    )


@pytest.mark.parametrize(
    ("framing", "first_part"),
    [
        # The plain-call shape: its body is gathered by the in-protocol fast path.
        pytest.param(b"Content-Length: %d\r\n" % len(CALL), CALL[:20], id="fast-path"),
        # Chunked: h11 reads it and the app waits for the rest.
        pytest.param(b"Transfer-Encoding: chunked\r\n", b"14\r\n" + CALL[:20] + b"\r\n", id="h11"),
    ],
)
async def test_a_body_that_never_comes_gets_408_and_a_closed_connection(
    framing: bytes, first_part: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A head and part of a body, then nothing: after the body timeout the server answers 408,
    closes the connection and runs nothing; the server goes on serving."""
    monkeypatch.setattr(_http_worker.Config, "body_timeout", BODY_TIMEOUT_S)
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    server.log_events = False
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            port = int(url.split(":")[2].split("/")[0])
            host = b"127.0.0.1:%d" % port
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                started = trio.current_time()
                await stream.send_all(head(host, framing) + first_part)
                received = b""
                while chunk := await stream.receive_some(65536):
                    received += chunk
                waited = trio.current_time() - started
            healthy = await trio.open_tcp_stream("127.0.0.1", port)
            async with healthy:
                await healthy.send_all(head(host, b"Content-Length: %d\r\n" % len(CALL)) + CALL)
                answer = b""
                while b"}}" not in answer:
                    answer += await healthy.receive_some(65536)
            await server.stop()
    assert received == b"HTTP/1.1 408 \r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
    assert BODY_TIMEOUT_S <= waited < BODY_TIMEOUT_S + 5
    assert answer.startswith(b"HTTP/1.1 200 ")
    assert [call.tool_name for call in server.call_log()] == ["motd"]


def test_the_default_body_timeout_is_30_s() -> None:
    """Unless told otherwise, a request has 30 s from its head to the end of its body."""
    assert _http_worker.Config().body_timeout == 30.0
