"""Plain calls inside Streamable HTTP sessions take the fast path, byte for byte as the SDK's
session transport answers them (issue 25): the same SSE responses, heads included, the same
refusals (unknown, ended or missing session), a sequence position per session shared with the
calls the SDK answers in it, and the same call log."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import h11
import mcp
import pytest
import trio

from tests.mcp.fast_path_cases import CALLS, UNIVERSE, call, calls_through_the_sdk, synthesize
from tests.mcp.test_http_sessions import Seen, messaging_doc, write
from windtunnel.mcp import RecordedMCPServer, _http_serving

pytestmark = pytest.mark.timeout(120)

SSE = "application/json, text/event-stream"
CLOSE_DEADLINE_S = 10
"""How long a connection may stay open after an answer that said `close` (it ends at once)."""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

Step = tuple[str, dict[str, Any], dict[str, str]]
"""(which session: "a", "b", "unknown" or "none"; the JSON-RPC body; extra headers)."""


def session_steps() -> list[Step]:
    """Two sessions opened one after the other; every case of `fast_path_cases` in the first
    (at its negotiated 2025-06-18, which its headers name), the sequence tool in both,
    interleaved, once with a wildcard `Accept` (the SDK's to answer, at the same position);
    then what the SDK must answer: a call naming an unknown session, one in the session at the
    2026-07-28 version, an undeclared tool, `tools/list`; a call in an ended session."""
    steps: list[Step] = [("a", INITIALIZE, {}), ("a", INITIALIZED, {})]
    steps += [("b", INITIALIZE, {}), ("b", INITIALIZED, {})]
    steps += [("a", call(i, tool, args), {}) for i, (tool, args) in enumerate(CALLS)]
    counter = call("c1", "counter", {})
    steps += [
        ("b", counter, {}),
        ("b", {**counter, "id": "c2"}, {"accept": "*/*"}),
        ("b", {**counter, "id": "c3"}, {}),
        ("unknown", call(50, "motd", {}), {}),
        ("none", call(51, "motd", {}), {}),
        ("a", call(52, "motd", {}), {"mcp-protocol-version": "2026-07-28"}),
        ("a", call(53, "undeclared", {}), {}),
        ("a", {"jsonrpc": "2.0", "id": 54, "method": "tools/list"}, {}),
        ("a", call("é55", "motd", {"text": "ünïcode ✓"}), {}),
        ("delete-b", {}, {}),
        ("b", call(56, "motd", {}), {}),
    ]
    return steps


def _request(step: Step, sessions: dict[str, str], port: int) -> bytes:
    where, body, extra = step
    method = "DELETE" if where == "delete-b" else "POST"
    data = b"" if method == "DELETE" else json.dumps(body).encode()
    headers = {
        "Host": f"127.0.0.1:{port}",
        "Content-Length": str(len(data)),
        "Content-Type": "application/json",
        "Accept": SSE,
        "mcp-protocol-version": "2025-06-18",
    }
    named = {"a": sessions.get("a"), "b": sessions.get("b"), "delete-b": sessions.get("b")}
    if where == "unknown":
        headers["mcp-session-id"] = "f" * 32
    elif named.get(where) is not None:
        headers["mcp-session-id"] = named[where] or ""
    if body.get("method") == "initialize":
        headers.pop("mcp-protocol-version")
    headers.update(extra)
    head = f"{method} /mcp HTTP/1.1\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    return head.encode() + b"\r\n" + data


async def _session_answers(
    server: RecordedMCPServer, steps: list[Step] | None = None
) -> tuple[list[bytes], int]:
    """Every response to `steps` (default `session_steps()`), over one kept-alive connection
    (an answer that says `close` must be followed by the connection's end within
    `CLOSE_DEADLINE_S`; the next step opens a new one), with the Date and each session's id
    blanked, and how many requests reached the ASGI app."""
    reached_app = 0

    class CountingTrustedHostsOnly(_http_serving.TrustedHostsOnly):
        async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
            nonlocal reached_app
            reached_app += scope["type"] == "http"
            await super().__call__(scope, receive, send)

    sessions: dict[str, str] = {}
    responses = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_http_serving, "TrustedHostsOnly", CountingTrustedHostsOnly)
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            client = h11.Connection(h11.CLIENT)
            for step in session_steps() if steps is None else steps:
                if client.our_state is h11.MUST_CLOSE:
                    await stream.aclose()
                    stream = await trio.open_tcp_stream("127.0.0.1", port)
                    client = h11.Connection(h11.CLIENT)
                await stream.send_all(_request(step, sessions, port))
                client.send(h11.Request(method="POST", target="/", headers=[("Host", "x")]))
                client.send(h11.EndOfMessage())
                response = b""
                while not isinstance(event := client.next_event(), h11.EndOfMessage):
                    if event is h11.NEED_DATA:
                        data = await stream.receive_some(65536)
                        client.receive_data(data)
                        response += data
                if client.their_state is not h11.MUST_CLOSE:
                    client.start_next_cycle()
                else:
                    # The server said `close`: the connection ends here (EOF), at once.
                    ended = None
                    with trio.move_on_after(CLOSE_DEADLINE_S):
                        ended = await stream.receive_some(65536)
                    assert ended == b"", f"not closed after saying so: {step}"
                opened = re.search(rb"mcp-session-id: (\w+)", response)
                if step[1].get("method") == "initialize" and opened is not None:
                    sessions[step[0]] = opened[1].decode()
                for name, session_id in sessions.items():
                    response = response.replace(session_id.encode(), b"SESSION-" + name.encode())
                responses.append(re.sub(rb"date: [^\r]*", b"date: -", response))
            await stream.aclose()
            await server.stop()
    return responses, reached_app


async def test_calls_in_a_session_are_answered_like_the_sdk_session(tmp_path: Path) -> None:
    """Byte for byte the SDK session's responses (SSE heads and bodies, 404s, 202s, the
    2026-07-28 entry's answer, JSON-RPC errors) with and without the fast path, the same call
    log; only the requests the SDK must see reach the app; the sequence tool's position is each
    session's own and shared with the call the SDK answered in it."""
    path = tmp_path / "fast.universe.json"
    path.write_text(json.dumps(UNIVERSE))
    runs = {}
    with trio.fail_after(90):
        for fast in (True, False):
            server = RecordedMCPServer(path, synthesize=synthesize, fast_path=fast)
            server.log_events = False
            assert server.needs_sessions()
            replies, reached = await _session_answers(server)
            runs[fast] = (replies, reached, server.call_log())
    (fast, fast_reached, fast_log), (sdk, sdk_reached, sdk_log) = runs[True], runs[False]
    steps = session_steps()
    for step, got, want in zip(steps, fast, sdk, strict=True):
        assert got == want, step
    assert all(a.same_call(b) for a, b in zip(fast_log, sdk_log, strict=True))
    # The 2026-07-28 call without its envelope and the ended session's are refused unlogged.
    assert len(fast_log) == len(sdk_log) == len(CALLS) + 3 + 1 + 1 + 1
    assert sdk_reached == len(steps)
    # Through the SDK: the opening requests, the wildcard Accept, the unknown session, the
    # 2026-07-28 one, the undeclared tool, tools/list, DELETE and the ended session; and the
    # call naming no session is answered statelessly by the fast path.
    assert fast_reached == 4 + 1 + 1 + 1 + 1 + 1 + 1 + 1
    statuses = [reply.split(b" ", 2)[1].decode() for reply in sdk]
    refused = {i: status for i, status in enumerate(statuses) if status not in ("200", "202")}
    assert refused == {len(steps) - 8: "404", len(steps) - 6: "400", len(steps) - 1: "404"}
    counted = [c.result for c in fast_log if c.tool_name == "counter"]
    # Session a: n=1, n=2, exhausted; session b: n=1 (fast), n=2 (SDK), exhausted (fast).
    assert [r.get("n") if isinstance(r, dict) else None for r in counted] == [
        1,
        2,
        None,
        1,
        2,
        None,
    ]


async def test_official_client_calls_in_a_session_take_the_fast_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Python SDK client in a session: its plain calls never reach the SDK's handler, two
    sessions each get the whole sequence, and the call whose recording holds server messages is
    still answered by the SDK (with its notifications)."""
    through_sdk = calls_through_the_sdk(monkeypatch)
    server = RecordedMCPServer(write(tmp_path, messaging_doc()))
    server.log_events = False
    seen = Seen()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with (
                seen.client(url) as first,
                mcp.Client(url, mode="legacy") as second,
            ):
                pages = [
                    (await first.call_tool("next_page", {})).structured_content,
                    (await second.call_tool("next_page", {})).structured_content,
                    (await first.call_tool("next_page", {})).structured_content,
                    (await first.call_tool("get_sum", {"a": 1, "b": 2})).structured_content,
                ]
                echoed = await first.call_tool("echo", {"text": "hi"})
            await server.stop()
    assert pages == [{"page": 1}, {"page": 1}, {"page": 2}, {"sum": 3}]
    assert echoed.content[0].text == "hi"  # type: ignore[union-attr]
    assert through_sdk == ["echo"]
    assert seen.events == [
        ("log", "info", "starting echo"),
        ("sample", "Capital of France?"),
        ("elicit", "Sure?"),
    ]


@pytest.mark.parametrize(
    "data", ['{"jsonrpc":"2.0","id":1,"result":{"t":"é ✓"}}', "a\nb\r\nc\rd", ""]
)
def test_sse_events_are_framed_as_sse_starlette_frames_them(data: str) -> None:
    """One `message` event, as the session transport's SSE writer has sse-starlette encode it
    (its default separator, a `data:` line per line of text)."""
    from sse_starlette import ServerSentEvent

    from windtunnel.mcp._sdk_internals import sse_event

    assert sse_event(data.encode()) == ServerSentEvent(data=data, event="message").encode()


async def test_the_last_answer_a_connection_carries_closes_it_as_the_sdk_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At hypercorn's keep-alive limit (3 here) the last answer on a connection says `close`
    where the SDK path's says it (after the transport's own `keep-alive`, before the chunked
    framing), byte for byte, and the connection ends, whichever path answered: the fast path,
    the SDK's session transport (an SSE answer, with the server's message before it or not),
    the stateless JSON app. Before, after an SSE answer of the SDK's the connection stayed open
    about half the time (the close was cancelled with the answer's task): six connections end
    on one here, on each server."""
    config = _http_serving.worker_config

    def limited(host: str, port: int) -> Any:
        limited_config = config(host, port)
        limited_config.keep_alive_max_requests = 3
        return limited_config

    monkeypatch.setattr(_http_serving, "worker_config", limited)
    doc = json.loads(json.dumps(UNIVERSE))
    doc["tools"].append({"name": "noisy"})
    noise = {"method": "notifications/message", "params": {"level": "info", "data": "hum"}}
    doc["recordings"].append(
        {"tool_name": "noisy", "args": {}, "result": "quiet", "server_messages": [noise]}
    )
    path = tmp_path / "fast.universe.json"
    path.write_text(json.dumps(doc))
    noisy = [("a", call(f"n{i}", "noisy", {}), {}) for i in range(17)]
    # Connections of 3: the opening one; six each ending on a call with a server message (the
    # SDK's SSE answer on both servers), the first with a plain call between; one of plain
    # calls naming no session (stateless JSON).
    steps: list[Step] = [
        ("a", INITIALIZE, {}),
        ("a", INITIALIZED, {}),
        ("a", call(1, "motd", {}), {}),
    ]
    steps += [noisy[0], ("a", call(2, "motd", {}), {}), noisy[1]]
    steps += noisy[2:]
    steps += [("none", call(i, "motd", {}), {}) for i in (3, 4, 5)]
    runs = {}
    with trio.fail_after(90):
        for fast in (True, False):
            server = RecordedMCPServer(path, synthesize=synthesize, fast_path=fast)
            server.log_events = False
            runs[fast] = (await _session_answers(server, steps))[0]
    assert runs[True] == runs[False]
    closing = [i for i, reply in enumerate(runs[True]) if b"\r\nconnection: close\r\n" in reply]
    assert closing == list(range(2, len(steps), 3))
    for i in closing[:-1]:
        assert b"connection: close\r\nTransfer-Encoding: chunked\r\n" in runs[True][i], i
    assert b"event: message\r\ndata: " in runs[True][5]
    assert b"hum" in runs[True][5]
    assert b"content-type: application/json" in runs[True][-1]
