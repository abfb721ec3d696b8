"""The official Python SDK client against a served universe, in both protocol eras."""

from __future__ import annotations

import json
from typing import Any

import mcp
import pytest
import trio

from tests.compat import (
    BLUEWING,
    CALLS,
    COMPAT_UNIVERSE,
    TOOL_NAMES,
    assert_compat_call_log,
    assert_compat_observed,
    fail_call_payload,
    observe_compat_script,
)
from tests.mcp.fast_path_cases import calls_through_the_sdk
from windtunnel.mcp import MockMCPServer, RecordedMCPServer
from windtunnel.mcp import _fast_path_http as http_fast_path
from windtunnel.mcp import _fast_path_stdio as stdio_fast_path

MODES = ["auto", "legacy"]


@pytest.mark.parametrize("mode", MODES)
async def test_python_client_compat_script(mode: str) -> None:
    """List tools, exact and keyed hits, a fail_call miss, a recorded error, an unknown tool."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                listed = await client.list_tools()
                assert [t.name for t in listed.tools] == TOOL_NAMES
                assert listed.tools[0].input_schema == server.universe.tools[0].input_schema
                results: list[Any] = []
                for step in CALLS[:4]:
                    results.append(await client.call_tool(step["tool"], step["args"]))
                with pytest.raises(mcp.MCPError) as info:
                    await client.call_tool(CALLS[4]["tool"], CALLS[4]["args"])
            await server.stop()
    exact, keyed, miss, recorded_error = results
    assert exact.structured_content == BLUEWING
    assert exact.is_error is False
    assert json.loads(exact.content[0].text) == BLUEWING
    assert keyed.structured_content == BLUEWING
    assert miss.is_error is True
    assert miss.structured_content == fail_call_payload()
    assert recorded_error.is_error is True
    assert recorded_error.content[0].text == "card declined: insufficient funds"
    assert info.value.code == -32602
    assert "refund_card" in info.value.message
    assert_compat_call_log(server.call_log())


@pytest.mark.parametrize("mode", MODES)
async def test_the_fast_path_answers_every_call_of_the_python_client(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every call the official client makes for a declared tool is answered by the fast path,
    in both eras: only the call of an undeclared tool reaches the SDK's handler."""
    through_sdk = calls_through_the_sdk(monkeypatch)
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                seen = await observe_compat_script(client)
            await server.stop()
    assert_compat_observed(seen)
    assert len(server.call_log()) == 7
    assert through_sdk == ["refund_card"]


@pytest.mark.parametrize("mode", MODES)
async def test_result_mapping(mode: str) -> None:
    """Strings become one text block; recorded CallToolResults (images too) pass verbatim."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                motd = await client.call_tool("motd", {})
                snapshot = await client.call_tool("snapshot", {})
            await server.stop()
    assert [(b.type, b.text) for b in motd.content] == [("text", "All systems nominal.")]
    assert motd.structured_content is None
    assert [b.type for b in snapshot.content] == ["image", "text"]
    assert snapshot.content[0].data == "iVBORw0KGgo="
    assert snapshot.content[0].mime_type == "image/png"


async def test_in_process_and_mcp_call_logs_are_identical() -> None:
    """call_tool() in process and the MCP path log the same entries for the same calls."""
    in_process = RecordedMCPServer(COMPAT_UNIVERSE)
    for step in CALLS[:4]:
        in_process.call_tool(step["tool"], step["args"])
    served = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await served.start(nursery)
            async with mcp.Client(url) as client:
                for step in CALLS[:4]:
                    await client.call_tool(step["tool"], step["args"])
            await served.stop()
    left, right = in_process.call_log(), served.call_log()
    assert len(left) == len(right) == 4
    assert all(a.same_call(b) for a, b in zip(left, right, strict=True))


async def test_many_servers_in_one_process_get_distinct_ports() -> None:
    """Fifty servers start in one nursery, each on its own OS-chosen loopback port."""
    servers = [RecordedMCPServer(COMPAT_UNIVERSE, name=f"s{i}") for i in range(50)]
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            urls = [await server.start(nursery) for server in servers]
            assert len(set(urls)) == 50
            assert all(url.startswith("http://127.0.0.1:") for url in urls)
            async with mcp.Client(urls[17]) as client:
                await client.call_tool("motd", {})
            for server in servers:
                await server.stop()
    assert [len(s.call_log()) for s in servers] == [0] * 17 + [1] + [0] * 32
    assert not any(server.started for server in servers)


async def test_pinned_port_taken_is_a_clear_error() -> None:
    """Starting on a port that is already bound raises ServerError naming the port."""
    from windtunnel.errors import ServerError

    first = RecordedMCPServer(COMPAT_UNIVERSE, name="first")
    second = RecordedMCPServer(COMPAT_UNIVERSE, name="second")
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await first.start(nursery)
            port = int(url.split(":")[2].split("/")[0])
            with pytest.raises(ServerError, match=f"cannot listen on 127.0.0.1:{port}"):
                await second.start(nursery, port=port)
            await first.stop()


def _forbid_fast_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*args: object, **kwargs: object) -> None:
        raise AssertionError("a fast path was built")

    monkeypatch.setattr(http_fast_path, "HTTPFastPath", forbidden)
    monkeypatch.setattr(stdio_fast_path, "StdioFastPath", forbidden)


@pytest.mark.parametrize("mode", MODES)
async def test_fast_path_off_serves_through_the_sdk_with_the_same_answers(
    mode: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`RecordedMCPServer(..., fast_path=False)`: nothing but the SDK answers, and clients and
    the call log see exactly what they see with the fast path on."""
    seen: dict[bool, Any] = {}
    logs: dict[bool, list[Any]] = {}
    with trio.fail_after(30):
        for fast_path in (True, False):
            if not fast_path:
                _forbid_fast_paths(monkeypatch)
            server = RecordedMCPServer(COMPAT_UNIVERSE, fast_path=fast_path)
            async with trio.open_nursery() as nursery:
                url = await server.start(nursery)
                async with mcp.Client(url, mode=mode) as client:
                    seen[fast_path] = await observe_compat_script(client)
                await server.stop()
            logs[fast_path] = [(c.tool_name, c.args, c.result, c.extra) for c in server.call_log()]
    assert_compat_observed(seen[False])
    assert seen[False] == seen[True]
    assert logs[False] == logs[True]


async def test_a_mock_with_the_fast_path_off_serves_through_the_sdk(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _forbid_fast_paths(monkeypatch)
    mock = MockMCPServer("crm", fast_path=False)

    @mock.tool(description="Look up a client.")
    def client_lookup(query: str) -> dict[str, str]:
        return {"name": query.title()}

    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await mock.start(nursery)
            async with mcp.Client(url) as client:
                result = await client.call_tool("client_lookup", {"query": "bluewing"})
            await mock.stop()
    assert result.structured_content == {"name": "Bluewing"}
    assert [call.tool_name for call in mock.call_log()] == ["client_lookup"]


async def test_the_fast_path_trap_springs_when_the_fast_path_is_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _forbid_fast_paths(monkeypatch)
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30), pytest.raises(ExceptionGroup) as raised:
        async with trio.open_nursery() as nursery:
            await server.start(nursery)
    assert raised.group_contains(AssertionError, match="a fast path was built")
