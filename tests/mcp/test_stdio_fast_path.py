"""The stdio fast path answers exactly as the SDK session does, in both protocol eras."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.mcp.fast_path_cases import CALLS, UNIVERSE, call, synthesize, with_surface
from tests.mcp.stdio_session import (
    ANSWERING,
    INITIALIZE,
    INITIALIZED,
    MODERN_META,
    StdioClient,
    encode,
    stdio_session,
)
from windtunnel.mcp import RecordedMCPServer

# The calls above plus the other plain ones in `script`: only these skip the SDK session.
PLAIN_IDS = {
    "legacy": [*range(len(CALLS)), "s", 10**30, "progress", "after-init-again"],
    "modern": [*range(len(CALLS)), "s", 10**30, "no-info"],
}


def ping(request_id: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "ping"}


def script(era: str) -> list[tuple[Any, bool]]:
    """(message, whether it is answered): an opening, every call, then lines the fast path
    must leave to the SDK, each answered or ignored exactly as the SDK does (but lines that are
    not JSON, which the transport answers with a parse error)."""
    meta = MODERN_META if era == "modern" else None
    out: list[tuple[Any, bool]] = []
    if era == "legacy":
        out += [(call("early", "motd", {}), True), (INITIALIZE, True), (INITIALIZED, False)]
    else:
        discover = {"jsonrpc": "2.0", "id": "d", "method": "server/discover"}
        out += [({**discover, "params": {"_meta": MODERN_META}}, True)]
    out += [(call(i, tool, args, meta), True) for i, (tool, args) in enumerate(CALLS)]
    out += [
        (call("s", "motd", None, meta), True),  # arguments absent: an empty object
        (call(10**30, "motd", {}, meta), True),
        (call(True, "motd", {}, meta), False),  # a bool id: the SDK reads a notification
        (call(1.0, "motd", {}, meta), False),
        (call("unknown", "refund_card", {}, meta), True),
        (call("args-list", "motd", [1], meta), True),
        ({**call("extra-key", "motd", {}, meta), "extra": 1}, True),
        (call("meta-null", "motd", {}, None) | {"params": {"name": "motd", "_meta": None}}, True),
        ([call("batched", "motd", {}, meta)], False),
        # Not JSON: a -32700 parse error, as over HTTP (the SDK's stdio transport only logs).
        (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {', True),
        (b"\xff\xfe not utf-8", True),
        (
            {
                "jsonrpc": "2.0",
                "id": "list",
                "method": "tools/list",
                "params": meta and {"_meta": meta},
            },
            True,
        ),
        (ping("ping") | ({"params": {"_meta": meta}} if meta else {}), True),
    ]
    if era == "legacy":
        envelope = call("enveloped", "motd", {}, MODERN_META)
        out += [
            (envelope, True),  # the 2026-07-28 envelope on a handshake connection: refused
            (call("progress", "motd", {}, {"progressToken": 5}), True),
            (call("bad-progress", "motd", {}, {"progressToken": [5]}), True),
            ({**INITIALIZE, "id": "init-again"}, True),
            (call("after-init-again", "motd", {}), True),
        ]
    else:
        out += [
            (call("bare", "motd", {}), True),  # no envelope on a modern connection
            (
                call(
                    "future",
                    "motd",
                    {},
                    {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"},
                ),
                True,
            ),
            (
                call(
                    "bad-caps",
                    "motd",
                    {},
                    {**MODERN_META, "io.modelcontextprotocol/clientCapabilities": 5},
                ),
                True,
            ),
            (
                call(
                    "no-info",
                    "motd",
                    {},
                    {k: v for k, v in MODERN_META.items() if "clientInfo" not in k},
                ),
                True,
            ),
            (INITIALIZE, True),  # the handshake on a modern connection: refused
        ]
    return out


async def run_script(client: StdioClient, lines: list[tuple[Any, bool]]) -> list[bytes]:
    """Send each line after the previous one was answered; a line the SDK ignores is followed
    by a ping, so that nothing it might have caused can go unseen."""
    replies = []
    for n, (message, answered) in enumerate(lines):
        await client.send(message)
        if answered:
            replies.append(await client.receive())
        else:
            sentinel = json.dumps(f"sentinel-{n}").encode()
            await client.send(ping(f"sentinel-{n}"))
            assert b'"id":' + sentinel in await client.receive()
    return replies


def recorded_server(path: Path, *, both_eras: bool = False) -> RecordedMCPServer:
    server = RecordedMCPServer(path, synthesize=synthesize, both_eras=both_eras)
    server.log_events = False
    return server


@pytest.fixture
def universe(tmp_path: Path) -> Path:
    path = tmp_path / "fast.universe.json"
    path.write_text(json.dumps(UNIVERSE))
    return path


@pytest.fixture(params=["tools", "surface"])
def world(tmp_path: Path, request: pytest.FixtureRequest) -> Path:
    """The cases' universe as it is, and with a recorded server identity and rich tools."""
    path = tmp_path / "world.universe.json"
    path.write_text(json.dumps(UNIVERSE if request.param == "tools" else with_surface(UNIVERSE)))
    return path


@pytest.mark.parametrize("answering", ANSWERING)
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_stdio_fast_path_answers_like_the_sdk(world: Path, era: str, answering: str) -> None:
    """Byte for byte the SDK's response to every line, the same call log, and the SDK session
    never sees a plain call: hits, misses under every policy, every result mapping, errors; also
    with a recorded server identity (the 2026-07-28 stamp, `initialize`) and rich tools. (That
    identity was recorded in the handshake era: the 2026-07-28 script needs `both_eras`, and the
    handshake one runs on the SDK's handshake-only loop.)"""
    runs = {}
    with trio.fail_after(30):
        for fast in (True, False):
            server = recorded_server(world, both_eras=era == "modern")
            async with stdio_session(server, fast=fast, answering=answering) as client:
                replies = await run_script(client, script(era))
            runs[fast] = (replies, server.call_log(), client.sdk_saw)
    (fast_replies, fast_log, fast_saw), (sdk_replies, sdk_log, sdk_saw) = runs[True], runs[False]
    lines = [encode(message) for message, answered in script(era) if answered]
    for line, got, want in zip(lines, fast_replies, sdk_replies, strict=True):
        assert got == want, line
    assert len(fast_log) == len(sdk_log) > len(CALLS)
    assert all(a.same_call(b) for a, b in zip(fast_log, sdk_log, strict=True))
    # The SDK session saw everything but the plain calls.
    plain = {("tools/call", request_id) for request_id in PLAIN_IDS[era]}
    assert fast_saw == [seen for seen in sdk_saw if seen not in plain]
    assert plain <= set(sdk_saw)


BIG = "x" * 100_000  # larger than a pipe's buffer: writes block halfway through a line


@pytest.mark.parametrize(
    ("answering", "non_blocking"), [*((a, False) for a in ANSWERING), ("thread", True)]
)
async def test_pipelined_answers_never_interleave(
    tmp_path: Path, answering: str, non_blocking: bool
) -> None:
    """Hundreds of requests written at once, plain calls with large answers mixed with lines
    only the SDK answers (some large too): every line out is one whole JSON-RPC response, and
    every request is answered exactly once. Also with the server's pipe ends left in
    non-blocking mode, where its reads and writes find them empty and full."""
    path = tmp_path / "big.universe.json"
    path.write_text(
        json.dumps(
            {
                "windtunnel_universe": 1,
                "tools": [{"name": "big"}, {"name": "small"}],
                "recordings": [
                    {"tool_name": "big", "args": {}, "result": BIG},
                    {"tool_name": "small", "args": {}, "result": {"ok": True}},
                ],
            }
        )
    )
    server = RecordedMCPServer(path)
    server.log_events = False
    requests: list[dict[str, Any]] = []
    for i in range(400):
        kind = i % 8
        if kind in (0, 1):
            requests.append(call(i, "big", {}))
        elif kind in (2, 3):
            requests.append(call(i, "small", {}))
        elif kind == 4:  # answered by the SDK, also large
            requests.append({**call(i, "big", {}), "extra": True})
        elif kind == 5:
            requests.append({"jsonrpc": "2.0", "id": i, "method": "tools/list"})
        elif kind == 6:
            requests.append(call(i, "nope", {}))
        else:
            requests.append(ping(i))
    answers: dict[int, dict[str, Any]] = {}
    with trio.fail_after(60):
        async with stdio_session(
            server, fast=True, answering=answering, non_blocking=non_blocking
        ) as client:
            assert b'"result"' in await client.request(INITIALIZE)
            await client.send(INITIALIZED)

            async def send_all() -> None:
                for request in requests:
                    await client.send(request)
                    if request["id"] % 50 == 0:
                        await client.send(
                            {
                                "jsonrpc": "2.0",
                                "method": "notifications/cancelled",
                                "params": {"requestId": -1},
                            }
                        )

            async with trio.open_nursery() as nursery:
                nursery.start_soon(send_all)
                while len(answers) < len(requests):
                    message = json.loads(await client.receive())  # one whole message per line
                    assert message["jsonrpc"] == "2.0"
                    assert message["id"] not in answers
                    answers[message["id"]] = message
    assert sorted(answers) == [r["id"] for r in requests]
    for request in requests:
        answer = answers[request["id"]]
        if request.get("params", {}).get("name") == "big":
            assert answer["result"]["content"] == [{"type": "text", "text": BIG}]
        elif request.get("params", {}).get("name") == "small":
            assert answer["result"]["structuredContent"] == {"ok": True}
    fast = {
        r["id"]
        for r in requests
        if r["method"] == "tools/call" and "extra" not in r and r["params"]["name"] != "nope"
    }
    sdk_calls = {request_id for method, request_id in client.sdk_saw if method == "tools/call"}
    assert sdk_calls.isdisjoint(fast)  # every plain call was answered by the fast path
    assert len(server.call_log()) == sum(1 for r in requests if r["method"] == "tools/call")


async def test_memoized_results_are_never_confused() -> None:
    """A mock's results that JSON-encode alike but are not the same JSON data (int keys, NaN, a
    tuple, a value changed in place) still get exactly the SDK's answer, call after call."""
    shared = {"n": 1}
    results: dict[str, list[Any]] = {
        "keys": [{"1": "a"}, {1: "a"}, {"1": "a"}],
        "nan": [{"x": None}, {"x": float("nan")}, {"x": None}],
        "seq": [[1, 2], (1, 2), [1, 2]],
        "mutated": [shared, shared, shared],
    }
    from windtunnel.mcp import MockMCPServer

    def build() -> MockMCPServer:
        mock = MockMCPServer("memo")
        served = {name: iter(values) for name, values in results.items()}
        for name in results:

            def tool(_name: str = name) -> Any:
                value = next(served[_name])
                if _name == "mutated":
                    shared["n"] += 1
                return value

            mock.tool(name=name)(tool)
        return mock

    runs = {}
    with trio.fail_after(30):
        for fast in (True, False):
            shared["n"] = 1
            mock = build()
            mock.log_events = False
            async with stdio_session(mock, fast=fast) as client:
                assert b'"result"' in await client.request(INITIALIZE)
                await client.send(INITIALIZED)
                replies = [
                    await client.request(call(f"{name}{n}", name, {}))
                    for n in range(3)
                    for name in results
                ]
            runs[fast] = (replies, client.sdk_saw)
    assert runs[True][0] == runs[False][0]
    assert not [seen for seen in runs[True][1] if seen[0] == "tools/call"]


async def test_the_answer_is_written_before_listeners_hear_of_the_call(universe: Path) -> None:
    """The client's wait ends before the server's bookkeeping: a listener that blocks until the
    client holds the answer (it runs on the reader thread) never holds the answer back."""
    server = recorded_server(universe)
    client_has_answer = threading.Event()
    waited: list[bool] = []
    server.add_listener(lambda _: waited.append(client_has_answer.wait(timeout=10)))
    with trio.fail_after(30):
        async with stdio_session(server, fast=True) as client:
            assert b'"result"' in await client.request(INITIALIZE)
            await client.send(INITIALIZED)
            reply = json.loads(await client.request(call(1, "motd", {})))
            client_has_answer.set()
    assert reply["result"]["content"][0]["text"] == "All systems nominal. é ✓"
    assert waited == [True]
    assert ("tools/call", 1) not in client.sdk_saw  # the reader thread answered it
