"""`wt record` in front of a reference server from npm, `@modelcontextprotocol/server-everything`
(run with node from tests/node/node_modules, no network): images, resource links, annotations and
structured content arrive as the server sent them, and replay the same."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mcp
import pytest
import trio
from mcp import StdioServerParameters

from tests.record.upstreams import dump, tool_view, wt_record_stdio
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy

EVERYTHING = (
    Path(__file__).parents[1]
    / "node"
    / "node_modules"
    / "@modelcontextprotocol"
    / "server-everything"
    / "dist"
    / "index.js"
)
EVERYTHING_COMMAND = ["node", str(EVERYTHING), "stdio"]
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("echo", {"message": "hello through the proxy"}),
    ("get-sum", {"a": 2, "b": 40}),
    ("get-tiny-image", {}),
    ("get-structured-content", {"location": "Chicago"}),
    ("get-annotated-message", {"messageType": "error", "includeImage": True}),
    ("get-resource-links", {"count": 2}),
]

pytestmark = pytest.mark.node


@pytest.fixture(scope="module", autouse=True)
def _everything_installed() -> None:
    if not EVERYTHING.is_file():
        pytest.fail(
            "server-everything missing: run scripts/test (it runs npm install in tests/node)"
        )


async def session(client: mcp.Client) -> list[Any]:
    seen: list[Any] = [dump(await client.list_tools())]
    for name, args in CALLS:
        seen.append(dump(await client.call_tool(name, args)))
    return seen


async def replayed(path: Path) -> list[dict[str, Any]]:
    server = RecordedMCPServer(path)
    async with trio.open_nursery() as nursery:
        url = await server.start(nursery)
        async with mcp.Client(url, mode="legacy") as client:
            views = [tool_view(await client.call_tool(name, args)) for name, args in CALLS]
        await server.stop()
    assert [call.divergence for call in server.call_log()] == [None] * len(CALLS)
    return views


def views_of(answers: list[Any]) -> list[dict[str, Any]]:
    return [
        {k: a[k] for k in ("content", "structuredContent", "isError") if k in a} for a in answers
    ]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_server_everything_served_over_http(mode: str, tmp_path: Path) -> None:
    """HTTP agent through the proxy to the stdio server: the same answers as directly."""
    direct_params = StdioServerParameters(command="node", args=EVERYTHING_COMMAND[1:])
    with trio.fail_after(90):
        async with mcp.Client(direct_params, mode=mode) as client:
            direct = await session(client)
        async with trio.open_nursery() as nursery:
            proxy = RecordingProxy(EVERYTHING_COMMAND, name="everything")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                through = await session(client)
            await proxy.stop()
        proxy.save(tmp_path / "everything.universe.json")
        views = await replayed(tmp_path / "everything.universe.json")
    assert through == direct
    assert views == views_of(direct[1:])
    kinds = [block["type"] for answer in direct[1:] for block in answer["content"]]
    assert {"text", "image", "resource_link"} <= set(kinds)


async def test_server_everything_behind_wt_record_stdio(tmp_path: Path) -> None:
    """The agent spawns `wt record --stdio -- node .../server-everything`: the same answers."""
    out, errlog = tmp_path / "everything.universe.json", tmp_path / "err"
    direct_params = StdioServerParameters(command="node", args=EVERYTHING_COMMAND[1:])
    with trio.fail_after(90):
        async with mcp.Client(direct_params, mode="legacy") as client:
            direct = await session(client)
        params = wt_record_stdio(errlog, "-o", str(out), "everything=--", *EVERYTHING_COMMAND)
        async with mcp.Client(params, mode="legacy") as client:
            through = await session(client)
        views = await replayed(out)
    assert through == direct
    assert views == views_of(direct[1:])
    assert "everything: 6 call(s), 6 recording(s)" in errlog.read_text()
