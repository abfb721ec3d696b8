"""Each kind of fault through the official Python SDK client spawning `wt serve --stdio --fault`:
what the client saw, and the `fault_injected` event in the events file. Waits are bounded by the
client's own read timeout, never by a sleep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio

from tests.faults.world import DOC, ORDER, ORDER_CALL, SEARCH_CALL, SEARCH_TEXT
from tests.processes import wt_serve_stdio

pytestmark = pytest.mark.timeout(120)


async def through_stdio(
    tmp_path: Path, fault: str, tool: str, args: dict[str, Any], *, read_timeout: float = 60
) -> tuple[Any, list[dict[str, Any]]]:
    """(what the client got or raised, the events `wt serve --stdio` wrote)."""
    universe = tmp_path / "shop.universe.json"
    universe.write_text(json.dumps(DOC))
    events = tmp_path / "events.jsonl"
    params = wt_serve_stdio(
        tmp_path / "stderr", "--events", str(events), "--fault", fault, str(universe)
    )
    with trio.fail_after(100):
        try:
            async with mcp.Client(params) as client:
                try:
                    seen: Any = await client.call_tool(
                        tool, args, read_timeout_seconds=read_timeout
                    )
                except Exception as exc:  # what the client raised is what it saw
                    seen = exc
        except BaseExceptionGroup as group:
            seen = group
    return seen, [json.loads(line) for line in events.read_text().splitlines()]


def injected(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["fault"] for e in events if e["event"] == "fault_injected"]


async def test_error_over_stdio(tmp_path: Path) -> None:
    """`error`: the JSON-RPC error, and a fault_injected event naming the fault."""
    seen, events = await through_stdio(tmp_path, "get_order=error:-32000:busy", *ORDER_CALL)
    assert isinstance(seen, mcp.MCPError)
    assert (seen.error.code, seen.error.message) == (-32000, "busy")
    assert injected(events) == [
        {
            "id": "get_order=error:-32000:busy",
            "kind": "error",
            "target": "get_order",
            "code": -32000,
            "message": "busy",
            "call_number": 1,
        }
    ]
    fault_event = next(e for e in events if e["event"] == "fault_injected")
    assert (fault_event["level"], fault_event["tool"], fault_event["upstream"]) == (
        "warning",
        "get_order",
        "shop",
    )


async def test_is_error_over_stdio(tmp_path: Path) -> None:
    """`is_error:TEXT`: a tool error with that text."""
    seen, events = await through_stdio(tmp_path, "search=is_error:upstream down", *SEARCH_CALL)
    assert seen.is_error is True
    assert [block.text for block in seen.content] == ["upstream down"]
    assert [f["kind"] for f in injected(events)] == ["is_error"]


async def test_bad_schema_over_stdio(tmp_path: Path) -> None:
    """`bad_schema`: the client refuses the structured content."""
    seen, _ = await through_stdio(tmp_path, "get_order=bad_schema", *ORDER_CALL)
    assert isinstance(seen, RuntimeError)
    assert "'id' is a required property" in str(seen)


async def test_not_json_over_stdio(tmp_path: Path) -> None:
    """`not_json`: the recorded JSON text, cut short."""
    seen, _ = await through_stdio(tmp_path, "search=not_json", *SEARCH_CALL)
    assert [block.text for block in seen.content] == [SEARCH_TEXT[:-1]]


async def test_empty_over_stdio(tmp_path: Path) -> None:
    """`empty`: no content."""
    seen, _ = await through_stdio(tmp_path, "search=empty", *SEARCH_CALL)
    assert seen.content == []


async def test_delay_over_stdio_answers_late(tmp_path: Path) -> None:
    """`delay`: the recorded answer, late by what the event says it waited."""
    seen, events = await through_stdio(tmp_path, "get_order=delay:0.2", *ORDER_CALL)
    assert seen.structured_content == ORDER
    assert [f["waited"] for f in injected(events)] == [0.2]


async def test_timeout_over_stdio(tmp_path: Path) -> None:
    """`timeout`: nothing comes back before the client's read timeout."""
    seen, events = await through_stdio(tmp_path, "search=timeout", *SEARCH_CALL, read_timeout=1)
    assert isinstance(seen, mcp.MCPError)
    assert seen.error.message == "Request 'tools/call' timed out"
    assert [f["kind"] for f in injected(events)] == ["timeout"]


async def test_drop_over_stdio_ends_the_process(tmp_path: Path) -> None:
    """`drop`: the server process goes away mid-call; the client's connection closes, and the
    last events say why."""
    seen, events = await through_stdio(tmp_path, "search=drop", *SEARCH_CALL)
    assert isinstance(seen, mcp.MCPError)
    assert seen.error.message == "Connection closed"
    assert [f["kind"] for f in injected(events)] == ["drop"]
    finished = next(e for e in events if e["event"] == "scenario_finished")
    assert (
        finished["error"] == "ProcessDropped: fault 'search=drop': the process goes away mid-call"
    )
