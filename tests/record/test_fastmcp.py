"""`wt record` in front of a fastmcp server (its own venv), over stdio and Streamable HTTP: the
same answers as directly, and a recording that replays them."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio
from mcp import StdioServerParameters

from tests.processes import read_until
from tests.record.upstreams import dump, tool_view
from tests.thirdparty import thirdparty_python
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy

SCRIPT = str(Path(__file__).with_name("fastmcp_upstream.py"))
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("lookup", {"query": "bluewing"}),
    ("counter", {}),
    ("counter", {}),
    ("fail", {"reason": "card declined"}),
]


async def session(client: mcp.Client) -> list[Any]:
    seen: list[Any] = [dump(await client.list_tools())]
    for name, args in CALLS:
        seen.append(dump(await client.call_tool(name, args)))
    return seen


@asynccontextmanager
async def fastmcp_http(python: Path) -> AsyncIterator[str]:
    """A fastmcp server process over HTTP; its URL once it listens."""
    process = await trio.lowlevel.open_process(
        [str(python), SCRIPT, "http"], stdout=subprocess.PIPE
    )
    try:
        assert process.stdout is not None
        yield (await read_until(process.stdout, b"\n")).decode().strip()
    finally:
        process.kill()
        with trio.CancelScope(shield=True):
            await process.wait()


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_fastmcp_through_the_proxy_equals_direct(transport: str, tmp_path: Path) -> None:
    """Structured results, a stateful tool and a tool error pass unchanged; replay matches."""
    python = thirdparty_python("fw-fastmcp")
    command = [str(python), SCRIPT, "stdio"]
    with trio.fail_after(90):
        if transport == "stdio":
            params = StdioServerParameters(command=command[0], args=command[1:])
            async with mcp.Client(params, mode="legacy") as client:
                direct = await session(client)
            upstream: str | list[str] = command
            async with trio.open_nursery() as nursery:
                proxy = RecordingProxy(upstream, name="fast")
                url = await proxy.start(nursery)
                async with mcp.Client(url, mode="legacy") as client:
                    through = await session(client)
                await proxy.stop()
        else:
            async with fastmcp_http(python) as direct_url, mcp.Client(direct_url) as client:
                direct = await session(client)
            async with fastmcp_http(python) as upstream_url, trio.open_nursery() as nursery:
                proxy = RecordingProxy(upstream_url, name="fast")
                url = await proxy.start(nursery)
                async with mcp.Client(url) as client:
                    through = await session(client)
                await proxy.stop()
        recording = proxy.save(tmp_path / "fast.universe.json")
        server = RecordedMCPServer(tmp_path / "fast.universe.json")
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                replayed = [tool_view(await client.call_tool(n, a)) for n, a in CALLS]
            await server.stop()
    assert through == direct
    assert [t.name for t in recording.universe.tools if t.mode == "sequence"] == ["counter"]
    assert replayed == [
        {k: a[k] for k in ("content", "structuredContent", "isError") if k in a} for a in direct[1:]
    ]
    assert direct[4]["isError"] is True
    assert [call.divergence for call in server.call_log()] == [None] * len(CALLS)
