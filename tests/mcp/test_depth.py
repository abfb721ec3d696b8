"""Deep arguments: the fast paths and the SDK give the same answer at every depth, over HTTP and
stdio, with no RecursionError anywhere and no line left unanswered."""

from __future__ import annotations

import json
import logging

import httpx2
import mcp
import pydantic_core
import pytest
import trio

from tests.compat import COMPAT_UNIVERSE
from tests.mcp.stdio_session import ANSWERING, INITIALIZE, INITIALIZED, stdio_session
from windtunnel.errors import UniverseError
from windtunnel.mcp import RecordedMCPServer
from windtunnel.mcp._fast_path import SDK_MAX_DEPTH
from windtunnel.universe import MAX_NESTING, decode_universe

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
# Arguments sit three levels down (message, params, arguments): 197 more is the SDK's limit
# (198 for arrays, whose innermost one is empty and adds no level).
DEPTHS = [1, 100, 196, 197, 198, 199, 200, 250, 500, 985, 990, 998, 1000, 5000]
PARSE_ERROR = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: '


def deep_call(request_id: int, depth: int, shape: str) -> bytes:
    """A `motd` call whose `x` argument nests `depth` arrays (or objects) deep."""
    arrays = "[" * depth + "]" * depth
    value = arrays if shape == "arrays" else '{"a":' * depth + "1" + "}" * depth
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call",'
        b'"params":{"name":"motd","arguments":{"x":%s}}}' % (request_id, value.encode())
    )


@pytest.mark.parametrize("inner", ["1", "[]", "{}", '"x"'])
def test_the_limit_is_the_sdks_parser(inner: str) -> None:
    """The shared limit is where pydantic-core's parser (the SDK's) stops reading: non-empty
    arrays and objects nested `SDK_MAX_DEPTH` deep are read, one more is refused."""
    n = SDK_MAX_DEPTH
    assert pydantic_core.from_json("[" * n + inner + "]" * n) is not None
    assert pydantic_core.from_json('{"a":' * n + inner + "}" * n) is not None
    with pytest.raises(ValueError, match="recursion limit exceeded"):
        pydantic_core.from_json("[" * (n + 1) + inner + "]" * (n + 1))
    with pytest.raises(ValueError, match="recursion limit exceeded"):
        pydantic_core.from_json('{"a":' * (n + 1) + inner + "}" * (n + 1))


async def _http_answers(fast: bool, shape: str) -> list[tuple[int, bytes]]:
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    server.log_events = False
    server.fast_path = fast
    answers = []
    async with trio.open_nursery() as nursery:
        url = await server.start(nursery)
        async with httpx2.AsyncClient(timeout=30) as http:
            for depth in DEPTHS:
                response = await http.post(
                    url, content=deep_call(depth, depth, shape), headers=HEADERS
                )
                answers.append((response.status_code, response.content))
        await server.stop()
    return answers


@pytest.mark.parametrize("shape", ["arrays", "objects"])
async def test_http_fast_path_and_sdk_agree_at_every_depth(
    shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Over HTTP the fast path answers what the SDK answers, byte for byte, from depth 1 to
    5,000: results up to the SDK's limit, its 400 parse error past it; nothing logs a
    RecursionError."""
    caplog.set_level(logging.DEBUG)
    with trio.fail_after(120):
        fast = await _http_answers(True, shape)
        sdk = await _http_answers(False, shape)
    assert fast == sdk
    served = [status for status, _ in fast]
    answered = 5 if shape == "arrays" else 4  # up to depth 198, or 197
    assert served == [200] * answered + [400] * (len(DEPTHS) - answered)
    assert all(body.startswith(PARSE_ERROR) for _, body in fast[answered:])
    assert not [r for r in caplog.records if "recursion" in r.getMessage().lower() or r.exc_info]


async def _stdio_answers(fast: bool, answering: str, shape: str) -> list[bytes]:
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    server.log_events = False
    answers = []
    async with stdio_session(server, fast=fast, answering=answering) as client:
        await client.request(INITIALIZE)
        await client.send(INITIALIZED)
        for depth in DEPTHS:
            await client.send(deep_call(depth, depth, shape))
            answers.append(await client.receive())
    return answers


@pytest.mark.parametrize("shape", ["arrays", "objects"])
@pytest.mark.parametrize("answering", ANSWERING)
async def test_stdio_fast_path_and_sdk_agree_at_every_depth(
    answering: str, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Over stdio every deep line is answered, the same with and without the fast path, and as
    over HTTP: results up to the SDK's limit, a -32700 parse error past it; no RecursionError."""
    caplog.set_level(logging.DEBUG)
    with trio.fail_after(120):
        fast = await _stdio_answers(True, answering, shape)
        sdk = await _stdio_answers(False, answering, shape)
        http = await _http_answers(False, shape)
    assert fast == sdk
    assert fast == [body for _, body in http]
    assert not [r for r in caplog.records if "recursion" in r.getMessage().lower() and r.exc_info]


def _deep_result(levels: int) -> dict[str, object]:
    """An object result whose arrays and objects nest `levels` deep (a 1 at the bottom)."""
    value: object = 1
    for _ in range(levels - 1):
        value = [value]
    return {"v": value}


def _universe_with_result(levels: int) -> bytes:
    document = {
        "windtunnel_universe": 1,
        "tools": [{"name": "deep"}],
        "recordings": [{"tool_name": "deep", "args": {}, "result": _deep_result(levels)}],
    }
    return json.dumps(document).encode()


@pytest.mark.parametrize("fast", [True, False])
async def test_what_loads_serves_to_a_real_client_and_one_level_more_is_refused(
    fast: bool,
) -> None:
    """`wt validate` and `wt serve` agree on depth: a result nested `MAX_NESTING` deep loads and
    reaches the official SDK client intact over HTTP (fast path or SDK); one level more is
    refused when the file loads, naming the recording."""
    server = RecordedMCPServer(decode_universe(_universe_with_result(MAX_NESTING), file="d.json"))
    server.log_events = False
    server.fast_path = fast
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url) as client:
                result = await client.call_tool("deep", {})
            await server.stop()
    assert result.structured_content == _deep_result(MAX_NESTING)
    assert not result.is_error
    with pytest.raises(UniverseError, match="recordings"):
        decode_universe(_universe_with_result(MAX_NESTING + 1), file="d.json")
