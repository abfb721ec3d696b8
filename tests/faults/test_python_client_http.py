"""Each kind of fault through the official Python SDK client over Streamable HTTP, in process:
exactly what the client saw, and the call log's evidence. Time is Trio's mock clock (autojump),
so delays and timeouts are measured, never slept."""

from __future__ import annotations

from typing import Any

import httpx2
import mcp
import pytest
import trio
import trio.testing

from tests.faults.world import ORDER, ORDER_CALL, SEARCH_CALL, SEARCH_TEXT, world
from windtunnel.faults import FAULT_EXTRA_KEY, Fault
from windtunnel.mcp import RecordedMCPServer

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Autojump once every task has been blocked for a moment of real time: loopback I/O in
    flight is never mistaken for a wait."""
    return trio.testing.MockClock(autojump_threshold=0.05)


async def call_once(
    server: RecordedMCPServer, tool: str, args: dict[str, Any], *, read_timeout: float = 30
) -> tuple[Any, float]:
    """(the result, or the exception the client raised; the virtual seconds it took)."""
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            started = trio.current_time()
            try:
                async with mcp.Client(url) as client:
                    try:
                        seen: Any = await client.call_tool(
                            tool, args, read_timeout_seconds=read_timeout
                        )
                    except Exception as exc:  # what the client raised is what it saw
                        seen = exc
            except BaseExceptionGroup as group:  # its transport failed: the client's tasks
                seen = group
            finally:
                took = trio.current_time() - started
                await server.stop()
    return seen, took


def served(*faults: str | Fault) -> RecordedMCPServer:
    server = RecordedMCPServer(world(), faults=list(faults))
    server.log_events = False
    return server


def evidence(server: RecordedMCPServer) -> list[dict[str, Any] | None]:
    return [call.extra.get(FAULT_EXTRA_KEY) for call in server.call_log()]


async def test_error_is_the_json_rpc_error(clock: trio.testing.MockClock) -> None:
    """`error:CODE:MESSAGE`: the client raises MCPError with that code and message."""
    server = served("get_order=error:-32000:busy")
    seen, _ = await call_once(server, *ORDER_CALL)
    assert isinstance(seen, mcp.MCPError)
    assert (seen.error.code, seen.error.message) == (-32000, "busy")
    assert evidence(server) == [
        {
            "id": "get_order=error:-32000:busy",
            "kind": "error",
            "target": "get_order",
            "code": -32000,
            "message": "busy",
            "call_number": 1,
        }
    ]
    assert server.call_log()[0].result == {"code": -32000, "message": "busy"}


async def test_is_error_is_a_tool_error_with_the_text(clock: trio.testing.MockClock) -> None:
    """`is_error:TEXT`: a result flagged isError whose one text block is TEXT."""
    server = served("get_order=is_error:upstream down: 503")
    seen, _ = await call_once(server, *ORDER_CALL)
    assert seen.is_error is True
    assert [block.text for block in seen.content] == ["upstream down: 503"]
    assert seen.structured_content is None
    assert evidence(server)[0]["kind"] == "is_error"


async def test_bad_schema_breaks_the_output_schema(clock: trio.testing.MockClock) -> None:
    """`bad_schema`: structured content the client's own outputSchema check refuses."""
    server = served("get_order=bad_schema")
    seen, _ = await call_once(server, *ORDER_CALL)
    assert isinstance(seen, RuntimeError)
    assert str(seen).startswith(
        "Invalid structured content returned by tool get_order: 'id' is a required property"
    )
    assert server.call_log()[0].result == {
        "content": [{"type": "text", "text": "{}"}],
        "structuredContent": {},
    }


async def test_not_json_truncates_the_recorded_json(clock: trio.testing.MockClock) -> None:
    """`not_json`: the recorded JSON text cut short, which no JSON parser reads."""
    server = served("search=not_json")
    seen, _ = await call_once(server, *SEARCH_CALL)
    assert [block.text for block in seen.content] == [SEARCH_TEXT[:-1]]
    assert seen.is_error is False


async def test_not_json_of_structured_content_fails_the_schema(
    clock: trio.testing.MockClock,
) -> None:
    """`not_json` on a tool with an output schema: text that is not JSON and no structured
    content, which the client refuses."""
    server = served("get_order=not_json")
    seen, _ = await call_once(server, *ORDER_CALL)
    assert isinstance(seen, RuntimeError)
    assert "has an output schema but did not return structured content" in str(seen)
    assert server.call_log()[0].result == {
        "content": [{"type": "text", "text": '{"id": "A1", "total": 42'}]
    }


async def test_empty_is_an_empty_result(clock: trio.testing.MockClock) -> None:
    """`empty`: no content at all."""
    server = served("search=empty")
    seen, _ = await call_once(server, *SEARCH_CALL)
    assert seen.content == []
    assert seen.is_error is False


async def test_delay_answers_after_the_seconds(clock: trio.testing.MockClock) -> None:
    """`delay:SECONDS`: the recorded answer, that many (virtual) seconds late."""
    server = served("search=delay:12.5")
    seen, took = await call_once(server, *SEARCH_CALL)
    assert [block.text for block in seen.content] == [SEARCH_TEXT]
    assert 12.5 <= took < 13
    assert evidence(server)[0]["waited"] == 12.5


async def test_delay_recorded_replays_at_the_recorded_pace(clock: trio.testing.MockClock) -> None:
    """`delay:recorded`: as late as the recording's `meta.duration_ms` says (1500 ms)."""
    server = served("get_order=delay:recorded")
    seen, took = await call_once(server, *ORDER_CALL)
    assert seen.structured_content == ORDER
    assert 1.5 <= took < 2
    assert evidence(server)[0]["waited"] == 1.5


async def test_a_delay_past_the_clients_patience_times_out(clock: trio.testing.MockClock) -> None:
    """A delay longer than the client's read timeout is a timeout to the client."""
    server = served("search=delay:60")
    seen, took = await call_once(server, *SEARCH_CALL, read_timeout=5)
    assert isinstance(seen, mcp.MCPError)
    assert seen.error.message == "Request 'tools/call' timed out"
    assert 5 <= took < 6


async def test_timeout_never_answers(clock: trio.testing.MockClock) -> None:
    """`timeout`: no answer, until the client gives up; the call is in the log all the same."""
    server = served("search=timeout")
    seen, took = await call_once(server, *SEARCH_CALL, read_timeout=100)
    assert isinstance(seen, mcp.MCPError)
    assert seen.error.message == "Request 'tools/call' timed out"
    assert 100 <= took < 101
    assert [call.result for call in server.call_log()] == [None]
    assert evidence(server)[0]["kind"] == "timeout"


async def test_drop_closes_the_connection_mid_call(clock: trio.testing.MockClock) -> None:
    """`drop`: the connection closes with no answer; the client's transport says so."""
    server = served("search=drop")
    seen, _ = await call_once(server, *SEARCH_CALL)
    assert isinstance(seen, BaseExceptionGroup)
    dropped = seen.subgroup(httpx2.RemoteProtocolError)
    assert dropped is not None
    assert [str(e) for e in _leaves(dropped)] == ["Server disconnected without sending a response."]
    assert evidence(server)[0]["kind"] == "drop"


def _leaves(group: BaseExceptionGroup[Any]) -> list[BaseException]:
    return [
        leaf
        for exc in group.exceptions
        for leaf in (_leaves(exc) if isinstance(exc, BaseExceptionGroup) else [exc])
    ]


async def test_the_nth_call_only(clock: trio.testing.MockClock) -> None:
    """`TOOL#N`: only the Nth call of the tool is faulted; the others get the recording."""
    server = served("search#2=is_error:second")
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url) as client:
                seen = [await client.call_tool(*SEARCH_CALL) for _ in range(3)]
            await server.stop()
    assert [r.is_error for r in seen] == [False, True, False]
    assert [(e or {}).get("call_number") for e in evidence(server)] == [None, 2, None]


async def test_configure_failure_mode_on_a_running_server(clock: trio.testing.MockClock) -> None:
    """The seed's modes apply from the next call on, even to calls the fast path answers, and
    `None` serves the recording again."""
    server = served()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url) as client:
                plain = await client.call_tool(*SEARCH_CALL)
                server.configure_failure_mode("auth_scope_denied")
                denied = await client.call_tool(*SEARCH_CALL)
                server.configure_failure_mode(None)
                again = await client.call_tool(*SEARCH_CALL)
            await server.stop()
    assert plain.is_error is False
    assert denied.is_error is True
    assert [b.text for b in denied.content] == ["Permission denied: auth scope insufficient"]
    assert again.is_error is False
    assert [e and e["id"] for e in evidence(server)] == [None, "auth_scope_denied", None]


@pytest.mark.parametrize("mode", ["timeout", "search=drop"])
async def test_unanswered_faults_on_the_fast_path_end_with_the_connection(
    clock: trio.testing.MockClock, mode: str
) -> None:
    """A timeout or drop configured on a running server reaches calls the fast path answers
    (inside the connection's reader): the client gives up or is cut off, the server keeps
    serving the next call, and stops cleanly."""
    server = served()
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            server.configure_failure_mode(mode)
            failed: BaseException | None = None
            try:
                async with mcp.Client(url) as client:
                    await client.call_tool(*SEARCH_CALL, read_timeout_seconds=5)
            except BaseException as exc:  # the timeout, or the dropped transport's group
                failed = exc
            server.configure_failure_mode(None)
            async with mcp.Client(url) as client:
                again = await client.call_tool(*SEARCH_CALL)
            await server.stop()
    assert failed is not None
    assert again.is_error is False
    assert [e and e["kind"] for e in evidence(server)] == [
        "timeout" if mode == "timeout" else "drop",
        None,
    ]
