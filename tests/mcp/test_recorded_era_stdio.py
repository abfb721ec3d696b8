"""Over stdio too, a replay keeps the protocol era and version its recorded server presented
(issue 25): a universe recorded from a handshake-era server (`@modelcontextprotocol/
server-everything` over stdio, through `wt record --stdio`) is served by `wt serve --stdio` in
the handshake era only. The live server answers the `server/discover` probe of a client in `auto`
mode with an error (-32601) and the client falls back to `initialize`; so does the replay, for
the official Python client (`auto`), the TypeScript SDK's handshake-era client and its dual-era
client in `auto` mode (which probes on a sibling process): each ends at the live version with the
live tools. `--both-eras` serves the 2026-07-28 revision too. The lines a client sees are the
SDK's own handshake-only server's, fast path on or off."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import trio
from mcp import StdioServerParameters

from tests.mcp.stdio_session import INITIALIZE, INITIALIZED, MODERN_META, stdio_session
from tests.mcp.test_node_clients import run_node_script
from tests.mcp.test_recorded_era import ERA, python_view, recorded_at
from tests.processes import WT, wt_serve_stdio
from tests.record.test_reference_servers import EVERYTHING, EVERYTHING_COMMAND
from tests.record.upstreams import wt_record_stdio
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(240)

TYPESCRIPT_CLIENTS = ((), ("--auto",))
"""era.mjs's clients: the TypeScript SDK's handshake-era one, its dual-era one in `auto` mode."""


async def typescript_views(*command: str) -> list[dict[str, Any]]:
    """What each TypeScript client saw of the stdio server `command` spawns."""
    return [await run_node_script(ERA, *flags, "--stdio", *command) for flags in TYPESCRIPT_CLIENTS]


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, Any]:
    """server-everything over stdio: the Python client (`auto`) and the TypeScript clients
    talking to it live, and its universe recorded by `wt record --stdio` while the Python client
    (`auto`) talked to it through it."""
    if not EVERYTHING.is_file():
        pytest.fail(
            "server-everything missing: run scripts/test (it runs npm install in tests/node)"
        )
    folder = tmp_path_factory.mktemp("era_stdio")
    path = folder / "everything.universe.json"
    live = StdioServerParameters(command=EVERYTHING_COMMAND[0], args=EVERYTHING_COMMAND[1:])

    async def record() -> tuple[Any, Any]:
        with trio.fail_after(150):
            python = await python_view(live)
            typescript = await typescript_views(*EVERYTHING_COMMAND)
            through = wt_record_stdio(folder / "err", "-o", str(path), "--", *EVERYTHING_COMMAND)
            assert await python_view(through) == python
        return python, typescript

    python, typescript = trio.run(record)
    return path, python, typescript


@pytest.mark.node
def test_the_stdio_recording_holds_a_handshake_era_server(
    recorded: tuple[Path, Any, Any],
) -> None:
    """Live over stdio every client ended at 2025-11-25, the universe's recorded version."""
    path, (version, _), typescript = recorded
    server = load_universe(path).server
    assert server is not None
    versions = [version] + [view["protocolVersion"] for view in typescript]
    assert versions == ["2025-11-25"] * 3 == [server.protocol_version] * 3


@pytest.mark.node
async def test_over_stdio_each_client_gets_the_recorded_era(
    recorded: tuple[Path, Any, Any], tmp_path: Path
) -> None:
    """`wt serve --stdio`: the Python client (`auto`) and both TypeScript clients end at the
    recorded version and list the live tools (`execution` included), as live over stdio."""
    path, python, typescript = recorded
    with trio.fail_after(120):
        replayed_python = await python_view(wt_serve_stdio(tmp_path / "err", str(path)))
        replayed_typescript = await typescript_views(*WT, "serve", "--stdio", str(path))
    assert replayed_python == python
    assert any("execution" in tool for tool in python[1])
    assert replayed_typescript == typescript


@pytest.mark.node
async def test_over_stdio_both_eras_serves_the_2026_revision_too(
    recorded: tuple[Path, Any, Any], tmp_path: Path
) -> None:
    """`wt serve --stdio --both-eras`: the probing clients (Python and TypeScript in `auto`
    mode) open a 2026-07-28 connection, the handshake-era client still gets 2025-11-25."""
    path, _, _ = recorded
    with trio.fail_after(120):
        python, _ = await python_view(wt_serve_stdio(tmp_path / "err", "--both-eras", str(path)))
        typescript = await typescript_views(*WT, "serve", "--stdio", "--both-eras", str(path))
    assert [python] + [view["protocolVersion"] for view in typescript] == [
        "2026-07-28",
        "2025-11-25",
        "2026-07-28",
    ]


DISCOVER = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "server/discover",
    "params": {"_meta": MODERN_META},
}
ENVELOPED_CALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "get_sum", "arguments": {"a": 1, "b": 2}, "_meta": MODERN_META},
}
PLAIN_CALL = {
    "jsonrpc": "2.0",
    "id": 3,
    "method": "tools/call",
    "params": {"name": "get_sum", "arguments": {"a": 1, "b": 2}},
}
METHOD_NOT_FOUND = (
    b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found",'
    b'"data":"server/discover"}}'
)


async def handshake_era_lines(path: Path, *, fast: bool) -> tuple[list[bytes], list[Any]]:
    """A stdio session's answers: `server/discover` and an enveloped call before `initialize`,
    `initialize`, then `server/discover`, an enveloped call and a plain one; and the ids of
    the calls the SDK answered."""
    server = RecordedMCPServer(path)
    server.log_events = False
    lines = []
    async with stdio_session(server, fast=fast) as client:
        for message in (DISCOVER, ENVELOPED_CALL, INITIALIZE):
            lines.append(await client.request(message))
        await client.send(INITIALIZED)
        for message in (DISCOVER, ENVELOPED_CALL, PLAIN_CALL):
            lines.append(await client.request(message))
    return lines, [id_ for method, id_ in client.sdk_saw if method == "tools/call"]


async def test_over_stdio_a_handshake_era_replay_answers_as_a_handshake_era_server(
    tmp_path: Path,
) -> None:
    """Recorded at 2025-06-18: `server/discover` is an unknown method before and after
    `initialize` (-32601, as the TypeScript SDK's handshake-era server answers it), an enveloped
    request is one of the handshake era (refused before `initialize`, answered after it, its
    `_meta` unread, as by such a server), `initialize` gets 2025-06-18; the same lines with the
    fast path on and off, and with `both_eras` the probe opens a 2026-07-28 connection."""
    path = recorded_at(tmp_path, "2025-06-18")
    with trio.fail_after(60):
        fast, fast_sdk_calls = await handshake_era_lines(path, fast=True)
        sdk, sdk_calls = await handshake_era_lines(path, fast=False)
        both = RecordedMCPServer(path, both_eras=True)
        both.log_events = False
        async with stdio_session(both, fast=True) as client:
            opened = await client.request(DISCOVER)
    assert fast == sdk
    assert (fast_sdk_calls, sdk_calls) == ([2, 2], [2, 2, 3])  # the plain call: the fast path's
    assert fast[0] == fast[3] == METHOD_NOT_FOUND
    assert fast[1] == (
        b'{"jsonrpc":"2.0","id":2,"error":{"code":-32602,"message":"Invalid request parameters",'
        b'"data":""}}'
    )
    assert b'"protocolVersion":"2025-06-18"' in fast[2]
    assert b'"structuredContent":{"sum":3}' in fast[4]
    assert fast[5] == fast[4].replace(b'"id":2', b'"id":3')
    assert b'"supportedVersions":["2026-07-28"]' in opened


async def test_over_stdio_own_identity_keeps_the_recorded_era(tmp_path: Path) -> None:
    """`wt serve --stdio --own-identity` of a universe recorded at 2025-06-18 (a plain one, which
    `--both-eras` serves without loading the SDK): the Python client (`auto`) ends at
    2025-06-18; with `--both-eras` at 2026-07-28."""
    path = tmp_path / "plain.universe.json"
    plain = {
        "windtunnel_universe": 1,
        "server": {"protocol_version": "2025-06-18"},
        "tools": [{"name": "motd", "input_schema": {"type": "object"}}],
        "recordings": [{"tool_name": "motd", "args": {}, "result": "hello"}],
    }
    path.write_text(json.dumps(plain))
    versions = []
    with trio.fail_after(60):
        for extra in ([], ["--both-eras"]):
            params = wt_serve_stdio(tmp_path / "err", "--own-identity", *extra, str(path))
            versions.append((await python_view(params))[0])
    assert versions == ["2025-06-18", "2026-07-28"]
