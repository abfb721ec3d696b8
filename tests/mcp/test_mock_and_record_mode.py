"""Hand-built mock servers and record mode: mock → agent → freeze → `wt serve` replays it."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio

from tests.processes import wt_serve
from windtunnel.api import freeze_universe, load_universe
from windtunnel.errors import ServerError, UnknownToolError
from windtunnel.mcp import MockMCPServer, RecordedMCPServer
from windtunnel.mcp.mock import schema_from_signature


def build_mock() -> MockMCPServer:
    mock = MockMCPServer("crm")
    pages = iter([{"page": 1, "next": "p2"}, {"page": 2, "next": None}])

    @mock.tool(description="Look up a client.")
    def client_lookup(query: str, verbose: bool = False) -> dict[str, Any]:
        return {"name": query.title(), "verbose": verbose}

    @mock.tool()
    async def exchange_rate(currency: str) -> float:
        await trio.lowlevel.checkpoint()
        return {"EUR": 1.08}.get(currency, 1.0)

    @mock.tool(mode="sequence")
    def list_invoices(account_id: str) -> dict[str, Any]:
        return next(pages)

    @mock.tool()
    def flaky() -> None:
        raise ConnectionError("upstream reset")

    return mock


def test_schema_from_signature() -> None:
    """Input schemas come from signatures: simple annotations become JSON types."""

    def tool(query: str, limit: int = 5, tags: list[str] | None = None, *, raw: bool) -> None:
        return None

    assert schema_from_signature(tool) == {
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer"},
            "tags": {"type": ["array", "null"]},
            "raw": {"type": "boolean"},
        },
        "required": ["query", "raw"],
    }


def test_mock_in_process_calls_and_errors() -> None:
    """Sync and async tools answer in process; a raising tool is a tool error; unknown raises."""
    mock = build_mock()
    assert mock.call_tool("client_lookup", {"query": "acme"}) == {"name": "Acme", "verbose": False}
    assert mock.call_tool("exchange_rate", {"currency": "EUR"}) == 1.08
    assert mock.call_tool("flaky", {}) == {
        "content": [{"type": "text", "text": "ConnectionError: upstream reset"}],
        "structuredContent": {"error": "ConnectionError", "message": "upstream reset"},
        "isError": True,
    }
    assert mock.call_tool("client_lookup", {"nope": 1})["structuredContent"]["error"] == "TypeError"
    with pytest.raises(UnknownToolError):
        mock.call_tool("ghost", {})
    log = mock.call_log()
    assert [c.is_error for c in log] == [False, False, True, True, True]
    assert log[-1].divergence is not None
    assert log[-1].divergence["reason"] == "unknown_tool"


def test_mock_and_replay_log_an_unknown_tool_alike(tmp_path: Path) -> None:
    """A call of an undeclared tool leaves the same result and evidence in a mock's call log as
    in a recorded server's (one builder, no drift)."""
    mock = build_mock()
    recorded = RecordedMCPServer(freeze_universe([], tools=[], path=tmp_path / "empty.json"))
    for server in (mock, recorded):
        with pytest.raises(UnknownToolError):
            server.call_tool("ghost", {"a": 1})
    (mock_call,) = mock.call_log()
    (replay_call,) = recorded.call_log()
    assert (
        mock_call.result
        == replay_call.result
        == {
            "error": "unknown_tool",
            "tool": "ghost",
            "message": "this server does not declare a tool named 'ghost'",
        }
    )
    assert (
        mock_call.divergence
        == replay_call.divergence
        == {
            "tool": "ghost",
            "args": {"a": 1},
            "reason": "unknown_tool",
            "policy": "fail_call",
            "matched": None,
            "nearest": None,
        }
    )


async def test_async_tool_in_process_inside_trio_is_a_clear_error() -> None:
    """Inside Trio, a sync call of an async tool says to await `answer` instead."""
    with pytest.raises(ServerError, match=r"await server\.answer"):
        build_mock().call_tool("exchange_rate", {"currency": "EUR"})


async def test_record_mode_end_to_end(tmp_path: Path) -> None:
    """Run once against a mock over MCP, freeze its log, and `wt serve` replays the same answers."""
    mock = build_mock()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("client_lookup", {"query": "bluewing", "verbose": True}),
        ("exchange_rate", {"currency": "EUR"}),
        ("list_invoices", {"account_id": "A"}),
        ("list_invoices", {"account_id": "A"}),
        ("client_lookup", {"query": "bluewing", "verbose": True}),
        ("flaky", {}),
    ]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await mock.start(nursery)
            async with mcp.Client(url) as client:
                live = [await client.call_tool(tool, args) for tool, args in calls]
            await mock.stop()
        path = tmp_path / "crm.universe.json"
        freeze_universe(mock.call_log(), tools=mock.universe_tools(), path=path)
        frozen = load_universe(path)
        assert [r.tool_name for r in frozen.recordings] == [
            "client_lookup",
            "exchange_rate",
            "list_invoices",
            "list_invoices",
            "flaky",
        ]
        async with wt_serve(str(path)) as (process, first):
            async with mcp.Client(first.decode().strip()) as client:
                replayed = [await client.call_tool(tool, args) for tool, args in calls]
            process.send_signal(signal.SIGTERM)
            await process.wait()
    dump = [r.model_dump(exclude_none=True) for r in live]
    assert [r.model_dump(exclude_none=True) for r in replayed] == dump
    assert live[2].structured_content == {"page": 1, "next": "p2"}
    assert live[5].is_error is True
