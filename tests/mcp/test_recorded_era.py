"""A replay keeps the protocol era and version its recorded server presented (issue 25): a
universe recorded from a handshake-era server (`@modelcontextprotocol/server-everything` behind
the TypeScript SDK's stateful Streamable HTTP transport, which refuses `server/discover`) is
served to the official Python client in `auto` mode and to the TypeScript client exactly as the
live server was: the same negotiated version and the same `tools/list`. `--both-eras` serves the
2026-07-28 revision too, as before."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import mcp
import pytest
import trio
from mcp import StdioServerParameters

from tests.mcp.test_http_sessions import INITIALIZE, POST_HEADERS, messaging_doc, write
from tests.mcp.test_node_clients import NODE_DIR, run_node_script
from tests.processes import wt_serve, wt_serve_stdio
from tests.record.test_handshake_era import everything_over_http
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(180)

ERA = NODE_DIR / "era.mjs"


async def python_view(server: str | StdioServerParameters) -> tuple[str, list[dict[str, Any]]]:
    """The version the Python client in `auto` mode ends up at, and the tools it lists (`server`:
    a URL, or the stdio server to spawn)."""
    async with mcp.Client(server, mode="auto") as client:
        listed = await client.list_tools()
        version = client.protocol_version
    tools = [
        tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in listed.tools
    ]
    return version, tools


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    """server-everything recorded through `wt record`'s proxy while the Python client (`auto`)
    and the TypeScript client talked to it: the universe, and what each client saw live."""
    path = tmp_path_factory.mktemp("era") / "everything.universe.json"

    async def record() -> tuple[Any, Any]:
        with trio.fail_after(90):
            async with trio.open_nursery() as nursery, everything_over_http() as url:
                proxy = RecordingProxy(url, name="everything")
                proxy_url = await proxy.start(nursery)
                python = await python_view(proxy_url)
                typescript = await run_node_script(ERA, proxy_url)
                await proxy.stop()
                proxy.save(path)
        return python, typescript

    python, typescript = trio.run(record)
    return path, python, typescript


@pytest.mark.node
def test_the_recording_holds_a_handshake_era_server(recorded: tuple[Path, Any, Any]) -> None:
    """The live server negotiated a handshake-era version with both clients, and it is the
    universe's `server.protocol_version`."""
    path, (version, tools), typescript = recorded
    server = load_universe(path).server
    assert server is not None
    assert version == typescript["protocolVersion"] == server.protocol_version == "2025-11-25"
    assert any("execution" in tool for tool in tools)


@pytest.mark.node
async def test_python_client_in_auto_mode_gets_the_recorded_era(
    recorded: tuple[Path, Any, Any],
) -> None:
    """The Python client (`auto`) probes `server/discover`, is refused as by the live server,
    falls back to `initialize` and negotiates the recorded version; it lists the live tools,
    `execution` included."""
    path, live, _ = recorded
    server = RecordedMCPServer(path)
    server.log_events = False
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            replayed = await python_view(url)
            await server.stop()
    assert replayed == live


@pytest.mark.node
async def test_typescript_client_gets_the_recorded_era(recorded: tuple[Path, Any, Any]) -> None:
    """The TypeScript client negotiates the recorded version and lists the live tools."""
    path, _, live = recorded
    server = RecordedMCPServer(path)
    server.log_events = False
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            replayed = await run_node_script(ERA, url)
            await server.stop()
    assert replayed == live


@pytest.mark.node
async def test_both_eras_serves_the_2026_revision_too(recorded: tuple[Path, Any, Any]) -> None:
    """`both_eras` (`wt serve --both-eras`): the Python client in `auto` mode negotiates
    2026-07-28, as without a recorded version."""
    path, _, _ = recorded
    server = RecordedMCPServer(path, both_eras=True)
    server.log_events = False
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            version, _ = await python_view(url)
            await server.stop()
    assert version == "2026-07-28"


def recorded_at(tmp_path: Path, version: str) -> Path:
    """The messaging world (it has a sequence tool: handshake-era clients get sessions),
    recorded from a server that presented `version`."""
    doc = messaging_doc()
    doc["server"]["protocol_version"] = version
    return write(tmp_path, doc)


class SessionVersions(RecordedMCPServer):
    """A replay that notes the version the SDK serves each `tools/call` at, on its session."""

    seen: list[str]

    def sdk_server(self, *, notify: bool = False) -> Any:
        server = super().sdk_server(notify=notify)

        async def observe(ctx: Any, call_next: Any) -> Any:
            if ctx.method == "tools/call":
                self.seen.append(ctx.session.protocol_version)
            return await call_next(ctx)

        server.middleware.append(observe)
        return server


async def test_initialize_negotiates_as_the_recorded_server(tmp_path: Path) -> None:
    """Recorded at 2025-06-18: a client asking for 2025-11-25 (legacy) or probing 2026-07-28
    (`auto`) gets 2025-06-18, an older known one is agreed to; the session the client gets is
    served at that version (what the SDK answered is what it committed)."""
    server = SessionVersions(recorded_at(tmp_path, "2025-06-18"), fast_path=False)
    server.seen = []
    server.log_events = False
    older = {**INITIALIZE, "params": {**INITIALIZE["params"], "protocolVersion": "2025-03-26"}}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode="legacy") as legacy:
                legacy_version = legacy.protocol_version
                await legacy.call_tool("get_sum", {"a": 1, "b": 2})
            auto_version, _ = await python_view(url)
            async with httpx2.AsyncClient(timeout=10) as http:
                agreed = await http.post(url, json=older, headers=POST_HEADERS)
            await server.stop()
    assert (legacy_version, auto_version) == ("2025-06-18", "2025-06-18")
    assert '"protocolVersion":"2025-03-26"' in agreed.text
    assert server.seen == ["2025-06-18"]


async def test_requests_of_another_era_are_refused_as_by_a_handshake_server(
    tmp_path: Path,
) -> None:
    """Recorded at 2025-06-18, over HTTP: a request naming 2026-07-28 (the `auto` probe) or a
    newer handshake version gets 400 and a JSON-RPC error naming the versions served, whichever
    path it would have taken (the fast path declines it); a request naming none, or a version
    served, is answered; nothing is logged for the refused ones."""
    server = RecordedMCPServer(recorded_at(tmp_path, "2025-06-18"))
    server.log_events = False
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "get_sum", "arguments": {"a": 1, "b": 2}},
    }
    discover = {"jsonrpc": "2.0", "id": 4, "method": "server/discover", "params": {}}
    headers = {**POST_HEADERS, "content-type": "application/json"}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=10) as http:
                answers = [
                    await http.post(
                        url,
                        json=body,
                        headers={**headers, "mcp-protocol-version": version, "mcp-method": method},
                    )
                    for body, version, method in (
                        (discover, "2026-07-28", "server/discover"),
                        (call, "2026-07-28", "tools/call"),
                        (call, "2025-11-25", "tools/call"),
                        (call, "2025-06-18", "tools/call"),
                    )
                ]
                plain = await http.post(url, json=call, headers=headers)
            await server.stop()
    refused = answers[:3]
    assert [a.status_code for a in refused] == [400, 400, 400]
    assert refused[0].json() == {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32600,
            "message": "Bad Request: Unsupported protocol version: 2026-07-28 (supported "
            "versions: 2024-11-05, 2025-03-26, 2025-06-18)",
        },
    }
    assert [a.status_code for a in (answers[3], plain)] == [200, 200]
    assert plain.json()["result"]["structuredContent"] == {"sum": 3}
    assert [c.tool_name for c in server.call_log()] == ["get_sum", "get_sum"]


async def test_a_universe_recorded_at_2026_or_without_a_version_keeps_both_eras(
    tmp_path: Path,
) -> None:
    """Recorded at 2026-07-28 (its servers speak both eras) or with no recorded version: the
    Python client in `auto` mode negotiates 2026-07-28, as before."""
    modern = recorded_at(tmp_path, "2026-07-28")
    doc = messaging_doc()
    del doc["server"]["protocol_version"]
    unversioned = tmp_path / "unversioned.universe.json"
    unversioned.write_text(json.dumps(doc))
    versions = []
    with trio.fail_after(60):
        for path in (modern, unversioned):
            server = RecordedMCPServer(path)
            server.log_events = False
            async with trio.open_nursery() as nursery:
                url = await server.start(nursery)
                versions.append((await python_view(url))[0])
                await server.stop()
    assert versions == ["2026-07-28", "2026-07-28"]


async def test_wt_serve_keeps_the_recorded_era_unless_both_eras(tmp_path: Path) -> None:
    """`wt serve FILE`: the Python client in `auto` mode ends at the recorded 2025-06-18;
    `wt serve --both-eras FILE`: at 2026-07-28."""
    path = recorded_at(tmp_path, "2025-06-18")
    versions = []
    with trio.fail_after(90):
        for extra in ([], ["--both-eras"]):
            async with wt_serve(*extra, str(path)) as (_, printed):
                versions.append((await python_view(printed.decode().strip()))[0])
    assert versions == ["2025-06-18", "2026-07-28"]


async def test_over_stdio_initialize_negotiates_as_the_recorded_server(tmp_path: Path) -> None:
    """`wt serve --stdio` of a universe recorded at 2025-06-18: the Python client (`legacy`,
    asking 2025-11-25) gets 2025-06-18, and its calls are answered at it (the probing clients:
    test_recorded_era_stdio.py)."""
    path = recorded_at(tmp_path, "2025-06-18")
    params = wt_serve_stdio(tmp_path / "stderr", str(path))
    with trio.fail_after(60):
        async with mcp.Client(params, mode="legacy") as client:
            version = client.protocol_version
            summed = await client.call_tool("get_sum", {"a": 1, "b": 2})
    assert version == "2025-06-18"
    assert summed.structured_content == {"sum": 3}
