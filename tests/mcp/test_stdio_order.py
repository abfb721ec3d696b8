"""Over stdio, a sequence-mode tool is consumed in the order the client sent its calls, whichever
path (the fast path on the reader thread or on Trio, the SDK session) answers each one."""

from __future__ import annotations

import json
from typing import Any

import pytest
import trio

from tests.mcp.stdio_session import ANSWERING, INITIALIZE, INITIALIZED, stdio_session
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Universe, decode_universe

CALLS = 12
SESSIONS = 25


def counter_universe() -> Universe:
    document = {
        "windtunnel_universe": 1,
        "tools": [{"name": "counter", "mode": "sequence"}],
        "recordings": [
            {"tool_name": "counter", "args": {}, "result": {"n": n}} for n in range(CALLS)
        ],
    }
    return decode_universe(json.dumps(document).encode(), file="counter.universe.json")


def counter_call(request_id: int, *, sdk_path: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"name": "counter", "arguments": {}}
    if sdk_path:
        params["task"] = {}  # a key the fast path does not take: the SDK session answers it
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


@pytest.mark.parametrize("pattern", ["sdk then fast", "fast then sdk", "all sdk", "random"])
@pytest.mark.parametrize("answering", ANSWERING)
async def test_pipelined_sequence_calls_are_consumed_in_wire_order(
    answering: str, pattern: str
) -> None:
    """Twelve pipelined calls of a sequence tool, mixing the SDK path and the fast path, get the
    recordings in the order they were sent, in each of 25 sessions."""
    random = __import__("random").Random(16)
    consumed: list[list[int]] = []
    with trio.fail_after(120):
        for _ in range(SESSIONS):
            if pattern == "random":
                sdk = [random.random() < 0.5 for _ in range(CALLS)]
            else:
                first = {"sdk then fast": True, "fast then sdk": False, "all sdk": True}[pattern]
                sdk = [
                    first if i % 2 == 0 or pattern == "all sdk" else not first for i in range(CALLS)
                ]
            server = RecordedMCPServer(counter_universe())
            server.log_events = False
            async with stdio_session(server, fast=True, answering=answering) as client:
                await client.request(INITIALIZE)
                await client.send(INITIALIZED)
                await client.to_server.send_all(
                    b"".join(
                        json.dumps(counter_call(i, sdk_path=sdk[i])).encode() + b"\n"
                        for i in range(CALLS)
                    )
                )
                by_id = {}
                for _ in range(CALLS):
                    reply = json.loads(await client.receive())
                    by_id[reply["id"]] = reply["result"]["structuredContent"]["n"]
            consumed.append([by_id[i] for i in range(CALLS)])
    assert consumed == [list(range(CALLS))] * SESSIONS
