"""`timeout` and `drop` inside Streamable HTTP sessions (the SDK's session manager answers a
universe with sequence tools or server messages), through the official Python SDK client: a
timeout ends when the client gives up, however it does, and a drop ends the faulted call's
stream only, as outside sessions. Time is Trio's mock clock: nothing here sleeps."""

from __future__ import annotations

import json
import re
from typing import Any

import mcp
import pytest
import trio
import trio.testing

from tests.faults.world import DOC, ORDER, ORDER_CALL, SEARCH_CALL
from windtunnel.faults import FAULT_EXTRA_KEY
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Universe, decode_universe

pytestmark = pytest.mark.timeout(60)

WAITING = "_until_client_gives_up"
"""The function of `mcp/_faulted.py` a `timeout` waits in while the client still waits."""


@pytest.fixture
def clock() -> trio.testing.MockClock:
    """Autojump once every task has been blocked for a moment of real time: loopback I/O in
    flight is never mistaken for a wait."""
    return trio.testing.MockClock(autojump_threshold=0.05)


def session_world(kind: str) -> Universe:
    """The fault tests' universe, served with sessions: `search` in sequence mode (a handshake
    client's session holds its position), or with a recorded server message (a 2026-07-28
    call of it is answered by the session manager too, on an event stream)."""
    doc: dict[str, Any] = json.loads(json.dumps(DOC))
    if kind == "sequence":
        doc["tools"][1]["mode"] = "sequence"
    else:
        note = {"method": "notifications/message", "params": {"level": "info", "data": "busy"}}
        doc["recordings"][1]["server_messages"] = [note]
    return decode_universe(json.dumps(doc))


def served(kind: str, *faults: str) -> RecordedMCPServer:
    server = RecordedMCPServer(session_world(kind), faults=list(faults))
    server.log_events = False
    return server


def waiting_in(function: str) -> list[list[str]]:
    """Each task suspended inside `function` now (Trio's await frames), as the names of the
    tasks from the root down to it: where in the server it waits."""
    found: list[list[str]] = []

    def walk(task: trio.lowlevel.Task, above: list[str]) -> None:
        chain = [*above, task.name]
        if any(frame.f_code.co_name == function for frame, _ in task.iter_await_frames()):
            found.append(chain)
        for nursery in task.child_nurseries:
            for child in nursery.child_tasks:
                walk(child, chain)

    walk(trio.lowlevel.current_root_task(), [])
    return found


SESSION_TASK = {
    "legacy": re.compile(
        r"StreamableHTTPSessionManager\._(serve_opening|handle_stateful)_request"
        r"\.<locals>\.run_server"
    ),
    "auto": re.compile(r"_streamable_http_modern\.handle_modern_request\.<locals>\.run_handler"),
}
"""The SDK task a call in a session is answered under: a handshake session's server (its
name as of SDK 2.3, and 2.1's), or the 2026-07-28 request handler that streams a call's server
messages."""


SESSIONS = [("sequence", "legacy"), ("messaging", "legacy"), ("messaging", "auto")]


@pytest.mark.parametrize(("world", "mode"), SESSIONS)
@pytest.mark.parametrize("gives_up", ["read_timeout", "cancelled", "leaves"])
async def test_a_timeout_in_a_session_ends_when_the_client_gives_up(
    clock: trio.testing.MockClock, world: str, mode: str, gives_up: str
) -> None:
    """The call waits inside the session while the client does, and stops waiting once the
    client gives up after 5 s: its read timeout, its call cancelled, or the client leaving
    mid-call (its connections closed). A session the client kept answers its next call."""
    server = served(world, "search=timeout")
    seen: list[str] = []
    gave_up = trio.Event()

    async def agent(url: str) -> None:
        with trio.move_on_after(5 if gives_up == "leaves" else 1000):
            async with mcp.Client(url, mode=mode) as client:
                with trio.move_on_after(5 if gives_up == "cancelled" else 1000):
                    try:
                        await client.call_tool(*SEARCH_CALL, read_timeout_seconds=5)
                    except mcp.MCPError as exc:
                        seen.append(exc.error.message)
                gave_up.set()
                again = await client.call_tool(*ORDER_CALL)
                seen.append(json.dumps(again.structured_content))
        gave_up.set()

    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with trio.open_nursery() as agents:
                agents.start_soon(agent, url)
                await trio.testing.wait_all_tasks_blocked()
                waiting = waiting_in(WAITING)
                await gave_up.wait()
                gave_up_at = trio.current_time()
                await trio.testing.wait_all_tasks_blocked()
                after = waiting_in(WAITING)
            await server.stop()
    assert len(waiting) == 1
    assert any(SESSION_TASK[mode].search(name) for name in waiting[0]), "\n".join(waiting[0])
    assert gave_up_at == pytest.approx(5, abs=0.1)
    assert after == []
    assert (
        seen
        == {
            "read_timeout": ["Request 'tools/call' timed out", json.dumps(ORDER)],
            "cancelled": [json.dumps(ORDER)],
            "leaves": [],
        }[gives_up]
    )
    kinds = [c.extra.get(FAULT_EXTRA_KEY, {}).get("kind") for c in server.call_log()]
    assert kinds == (["timeout"] if gives_up == "leaves" else ["timeout", None])


@pytest.mark.parametrize("world", ["sequence", "messaging"])
async def test_a_drop_in_a_session_ends_that_calls_stream_only(
    clock: trio.testing.MockClock, world: str
) -> None:
    """`drop` in a handshake client's session closes the faulted call's connection at once:
    its event stream ends with no answer, while a call in flight on the same session (on its
    own connection) is answered, and the session goes on."""
    server = served(world, "search=drop", "get_order#1=delay:30")
    answered: list[tuple[Any, float]] = []
    dropped_at = 0.0
    with trio.fail_after(600):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:

                async def slow_call() -> None:
                    result = await client.call_tool(*ORDER_CALL)
                    answered.append((result.structured_content, trio.current_time()))

                async with trio.open_nursery() as calls:
                    calls.start_soon(slow_call)
                    await trio.testing.wait_all_tasks_blocked()
                    with pytest.raises(mcp.MCPError) as dropped:
                        await client.call_tool(*SEARCH_CALL, read_timeout_seconds=100)
                    dropped_at = trio.current_time()
                later = await client.call_tool(*ORDER_CALL)
            await server.stop()
    assert dropped.value.error.message == "SSE stream ended without a response"
    assert dropped_at < 1
    assert answered == [(ORDER, pytest.approx(30, abs=1))]
    assert later.structured_content == ORDER
    assert [c.extra.get(FAULT_EXTRA_KEY, {}).get("kind") for c in server.call_log()] == [
        "delay",
        "drop",
        None,
    ]
