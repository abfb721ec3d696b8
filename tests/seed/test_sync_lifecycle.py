"""The seed's lifecycle: `RecordedMCPServer(...).start()` from plain synchronous code returns a
handle (`url`, `call_tool`, `call_log`, `reset_call_log`, `stop`); the Trio start is unchanged."""

from __future__ import annotations

import warnings
from typing import Any

import anyio
import mcp
import pytest
import trio

from tests.compat import BLUEWING, COMPAT_UNIVERSE
from windtunnel.errors import ServerError
from windtunnel.mcp import RecordedMCPServer, ServerHandle


async def call_over_mcp(url: str, args: dict[str, Any]) -> Any:
    async with mcp.Client(url) as client:
        result = await client.call_tool("client_lookup", args)
    return result.structured_content


@pytest.mark.timeout(60)
def test_start_from_synchronous_code_returns_a_serving_handle() -> None:
    """No event loop in sight: start, call over MCP and in process, read, reset, stop."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    handle = server.start()
    try:
        assert isinstance(handle, ServerHandle)
        assert handle.url == server.url and handle.url.startswith("http://127.0.0.1:")
        assert server.start() is handle  # started once
        over_mcp = anyio.run(call_over_mcp, handle.url, {"query": "Bluewing Logistics"})
        assert over_mcp == BLUEWING
        assert handle.call_tool("client_lookup", {"query": "Bluewing Logistics"}) == BLUEWING
        assert [c.extra for c in handle.call_log()] == [
            {"match": {"tier": "exact", "index": 0}}
        ] * 2
        handle.reset_call_log()
        assert handle.call_log() == []
    finally:
        handle.stop()
    assert handle.stopped and not server.started
    handle.stop()  # twice is fine


@pytest.mark.timeout(60)
def test_server_stop_from_synchronous_code_needs_no_await() -> None:
    """windtunnel-bench stops with `server.stop()`: here too, and nothing is left unawaited."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    handle = server.start()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        server.stop()
        server.stop()
    assert handle.stopped and not server.started
    with pytest.raises(ServerError, match="not started"):
        _ = server.url


async def test_the_trio_start_is_unchanged() -> None:
    """`await server.start(nursery)` gives the URL and `await server.stop()` stops it."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            assert isinstance(url, str) and server.started
            await server.stop()
    assert not server.started
