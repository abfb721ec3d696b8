"""Streamable HTTP sessions in `wt serve` (issue 25): a universe whose recordings hold server
messages, or whose tools are sequence-mode, hands each handshake-era client a session; calls are
answered on SSE streams that carry the recorded notifications and requests to the client; a
sequence tool's position belongs to the session. A universe that needs none stays stateless
JSON with the fast path (the byte-for-byte tests in test_fast_path.py cover that)."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import httpx2
import mcp
import mcp_types as types
import pytest
import trio

from tests.mcp.fast_path_cases import calls_through_the_sdk
from tests.surface_world import surface_doc
from windtunnel.mcp import RecordedMCPServer

pytestmark = pytest.mark.timeout(120)

LOG = {"method": "notifications/message", "params": {"level": "info", "data": "starting echo"}}
PROGRESS = {
    "method": "notifications/progress",
    "params": {"progressToken": 7, "progress": 50, "total": 100},
}
LIST_CHANGED = {"method": "notifications/tools/list_changed"}
SAMPLING_PARAMS: dict[str, Any] = {
    "messages": [{"role": "user", "content": {"type": "text", "text": "Capital of France?"}}],
    "maxTokens": 20,
}
SAMPLED = {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "scripted"}
SAMPLING = {
    "method": "sampling/createMessage",
    "params": SAMPLING_PARAMS,
    "response": {"result": SAMPLED},
}
ELICIT_PARAMS: dict[str, Any] = {
    "message": "Sure?",
    "requestedSchema": {"type": "object", "properties": {}},
}
ELICIT = {
    "method": "elicitation/create",
    "params": ELICIT_PARAMS,
    "response": {"result": {"action": "accept", "content": {}}},
}
MESSAGES = [LOG, PROGRESS, LIST_CHANGED, SAMPLING, ELICIT]

PAGE_TOOL = {"name": "next_page", "input_schema": {"type": "object"}, "mode": "sequence"}
PAGES = [
    {"tool_name": "next_page", "args": {}, "result": {"page": 1}},
    {"tool_name": "next_page", "args": {}, "result": {"page": 2}},
]


def messaging_doc() -> dict[str, Any]:
    """The surface world, its `echo` recording answered with `MESSAGES` before the result, and a
    sequence-mode tool with two pages."""
    doc = surface_doc()
    doc["recordings"][1]["server_messages"] = MESSAGES
    doc["tools"].append(PAGE_TOOL)
    doc["recordings"].extend(PAGES)
    return doc


def write(tmp_path: Path, doc: dict[str, Any]) -> Path:
    path = tmp_path / "world.universe.json"
    path.write_text(json.dumps(doc))
    return path


class Seen:
    """What a Python SDK client saw, in order: notifications, requests to it, answers."""

    def __init__(self, elicit_action: str = "accept") -> None:
        self.events: list[Any] = []
        self.elicit_action = elicit_action

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.events.append(("log", params.level, params.data))

    async def on_progress(self, progress: float, total: float | None, message: str | None) -> None:
        self.events.append(("progress", progress, total))

    async def on_sample(
        self, context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        self.events.append(("sample", params.messages[0].content.text))  # type: ignore[union-attr]
        return types.CreateMessageResult.model_validate(SAMPLED)

    async def on_elicit(
        self, context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult:
        self.events.append(("elicit", params.message))
        if self.elicit_action == "accept":
            return types.ElicitResult(action="accept", content={})
        return types.ElicitResult(action="decline")

    def client(self, url: str, mode: str = "legacy") -> mcp.Client:
        return mcp.Client(
            url,
            mode=mode,
            logging_callback=self.on_log,
            log_level="info",
            sampling_callback=self.on_sample,
            elicitation_callback=self.on_elicit,
        )


async def test_python_client_gets_the_recorded_messages_before_the_answer_over_http(
    tmp_path: Path,
) -> None:
    """The official Python client over HTTP: the log message, the progress (with its own
    token), then the sampling and elicitation requests, answered as recorded, then the recorded
    answer; the call is a hit with nothing unsent."""
    server = RecordedMCPServer(write(tmp_path, messaging_doc()))
    server.log_events = False
    seen = Seen()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with seen.client(url) as client:
                result = await client.call_tool(
                    "echo", {"text": "hi"}, progress_callback=seen.on_progress
                )
                seen.events.append(("answer", result.content[0].text))  # type: ignore[union-attr]
            await server.stop()
    assert seen.events == [
        ("log", "info", "starting echo"),
        ("progress", 50.0, 100.0),
        ("sample", "Capital of France?"),
        ("elicit", "Sure?"),
        ("answer", "hi"),
    ]
    [call] = server.call_log()
    assert (call.divergence, call.extra) == (None, {"match": {"tier": "exact", "index": 1}})


async def test_a_live_client_answering_otherwise_over_http_is_a_divergence(
    tmp_path: Path,
) -> None:
    """The live client declines the elicitation the recorded client accepted: the call is a
    `client_answer_differs` divergence with what was asked and both answers, answered by the
    tool's policy (fail_call)."""
    server = RecordedMCPServer(write(tmp_path, messaging_doc()))
    server.log_events = False
    seen = Seen(elicit_action="decline")
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with seen.client(url) as client:
                result = await client.call_tool("echo", {"text": "hi"})
            await server.stop()
    assert result.is_error is True
    assert result.structured_content is not None
    assert result.structured_content["reason"] == "client_answer_differs"
    [call] = server.call_log()
    assert call.divergence is not None
    assert (call.divergence["reason"], call.divergence["recording"]) == (
        "client_answer_differs",
        1,
    )
    assert call.divergence["client"] == {
        "asked": {"method": "elicitation/create", "params": ELICIT_PARAMS},
        "answered_then": {"result": {"action": "accept", "content": {}}},
        "answered_now": {"result": {"action": "decline"}},
    }


async def test_a_2026_client_over_http_is_asked_in_input_required_rounds(
    tmp_path: Path,
) -> None:
    """2026-07-28 has no sessions and no requests to the client mid-call (the universe was
    recorded in the handshake era: served in both, `both_eras`): the log message (the
    client opted in) and the progress come on the call's stream, then the sampling and the
    elicitation request each come as an `input_required` round the client answers by retrying,
    then the recorded answer; one call, a hit, nothing unsent."""
    server = RecordedMCPServer(write(tmp_path, messaging_doc()), both_eras=True)
    server.log_events = False
    seen = Seen()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with seen.client(url, mode="auto") as client:
                assert client.protocol_version >= "2026"
                result = await client.call_tool(
                    "echo", {"text": "hi"}, progress_callback=seen.on_progress
                )
                seen.events.append(("answer", result.content[0].text))  # type: ignore[union-attr]
            await server.stop()
    assert seen.events == [
        ("log", "info", "starting echo"),
        ("progress", 50.0, 100.0),
        ("sample", "Capital of France?"),
        ("elicit", "Sure?"),
        ("answer", "hi"),
    ]
    [call] = server.call_log()
    assert (call.divergence, call.extra) == (None, {"match": {"tier": "exact", "index": 1}})


async def test_each_session_has_its_own_sequence_position(tmp_path: Path) -> None:
    """Two agents sharing one server: each session gets page 1 then page 2 (neither takes the
    other's recordings); a third call in one session is `sequence_exhausted`. A 2026-07-28
    client (served with `both_eras`) has no session: it takes the server's own position, which the sessions left alone."""
    server = RecordedMCPServer(write(tmp_path, messaging_doc()), both_eras=True)
    server.log_events = False
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with (
                mcp.Client(url, mode="legacy") as first,
                mcp.Client(url, mode="legacy") as second,
            ):
                pages = [
                    (await first.call_tool("next_page", {})).structured_content,
                    (await second.call_tool("next_page", {})).structured_content,
                    (await second.call_tool("next_page", {})).structured_content,
                    (await first.call_tool("next_page", {})).structured_content,
                ]
                third = await first.call_tool("next_page", {})
            async with mcp.Client(url, mode="auto") as sessionless:
                assert sessionless.protocol_version >= "2026"
                unsessioned = [
                    (await sessionless.call_tool("next_page", {})).structured_content
                    for _ in range(2)
                ]
            await server.stop()
    assert pages == [{"page": 1}, {"page": 1}, {"page": 2}, {"page": 2}]
    assert third.is_error is True
    assert unsessioned == [{"page": 1}, {"page": 2}]
    reasons = [c.divergence["reason"] if c.divergence else None for c in server.call_log()]
    assert reasons == [None, None, None, None, "sequence_exhausted", None, None]
    assert [c.extra.get("match", {}).get("index") for c in server.call_log()[:4]] == [
        2,
        2,
        3,
        3,
    ]


async def test_a_universe_without_messages_or_sequences_stays_stateless(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """No session is handed out, and the client's plain calls take the fast path."""
    through_sdk = calls_through_the_sdk(monkeypatch)
    server = RecordedMCPServer(json_universe(surface_doc()))
    server.log_events = False
    assert server.needs_sessions() is False
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient() as http:
                opened = await http.post(url, json=INITIALIZE, headers=POST_HEADERS)
            async with mcp.Client(url, mode="legacy") as client:
                result = await client.call_tool("get_sum", {"a": 1, "b": 2})
            await server.stop()
    assert "mcp-session-id" not in opened.headers
    assert opened.headers["content-type"] == "application/json"
    assert result.structured_content == {"sum": 3}
    assert through_sdk == []


def json_universe(doc: dict[str, Any]) -> Any:
    from windtunnel.universe import decode_universe

    return decode_universe(json.dumps(doc))


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {}, "sampling": {}},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
POST_HEADERS = {"accept": "application/json, text/event-stream"}


def sse_messages(body: str) -> list[dict[str, Any]]:
    return [
        json.loads(line[len("data: ") :])
        for line in body.splitlines()
        if line.startswith("data: ") and line[len("data: ") :].strip()
    ]


async def test_the_session_on_the_wire(tmp_path: Path) -> None:
    """The SDK's session rules, served by `wt serve`: `initialize` answers with an
    `Mcp-Session-Id` on an SSE stream; a plain call in the session is answered on an SSE stream;
    one naming an unknown session is 404; a GET with it opens the standalone SSE stream; DELETE
    ends the session, after which its id is 404. A call that names no session is answered
    statelessly, in JSON, as by a server without sessions."""
    server = RecordedMCPServer(write(tmp_path, messaging_doc()))
    server.log_events = False
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "get_sum", "arguments": {"a": 1, "b": 2}},
    }
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=10) as http:
                opened = await http.post(url, json=INITIALIZE, headers=POST_HEADERS)
                session = opened.headers["mcp-session-id"]
                in_session = {
                    **POST_HEADERS,
                    "mcp-session-id": session,
                    "mcp-protocol-version": "2025-11-25",
                }
                await http.post(
                    url,
                    json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                    headers=in_session,
                )
                without = await http.post(url, json=call, headers=POST_HEADERS)
                unknown = await http.post(
                    url, json=call, headers={**in_session, "mcp-session-id": "f" * 32}
                )
                answered = await http.post(url, json=call, headers=in_session)
                async with http.stream(
                    "GET", url, headers={**in_session, "accept": "text/event-stream"}
                ) as stream:
                    standalone = (stream.status_code, stream.headers["content-type"])
                ended = await http.delete(url, headers=in_session)
                after = await http.post(url, json=call, headers=in_session)
            await server.stop()
    assert opened.status_code == 200
    assert opened.headers["content-type"].startswith("text/event-stream")
    assert len(session) == 32
    [initialized] = sse_messages(opened.text)
    assert initialized["result"]["serverInfo"]["name"] == "everything-ref"
    assert (without.status_code, without.headers["content-type"]) == (200, "application/json")
    assert without.json()["result"]["structuredContent"] == {"sum": 3}
    assert unknown.status_code == 404
    assert answered.headers["content-type"].startswith("text/event-stream")
    assert sse_messages(answered.text) == [
        {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {
                "content": [{"type": "text", "text": '{"sum": 3}'}],
                "structuredContent": {"sum": 3},
                "isError": False,
            },
        }
    ]
    assert standalone[0] == 200 and standalone[1].startswith("text/event-stream")
    assert (ended.status_code, after.status_code) == (200, 404)


@pytest.mark.node
@pytest.mark.parametrize("elicit", ["accept", "decline"])
async def test_typescript_client_gets_the_recorded_messages_over_http(
    tmp_path: Path, elicit: str
) -> None:
    """The TypeScript SDK client over HTTP gets a session, the log message, the progress, the
    sampling and elicitation requests (which it answers), then the answer: the recorded one
    when it answered as recorded, else the `client_answer_differs` divergence; then its DELETE
    ends the session."""
    from tests.mcp.test_node_clients import NODE_DIR, run_node_script

    server = RecordedMCPServer(write(tmp_path, messaging_doc()))
    server.log_events = False
    plan = {"tool": "echo", "arguments": {"text": "hi"}, "elicit": elicit, "sampled": SAMPLED}
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            report = await run_node_script(NODE_DIR / "messages.mjs", url, json.dumps(plan))
            await server.stop()
    assert (report["session"], report["terminated"]) == (True, True)
    *before, (kind, answer) = report["events"]
    assert before == [
        ["log", "info", "starting echo"],
        ["progress", 50, 100],
        ["sample", "Capital of France?"],
        ["elicit", "Sure?"],
    ]
    assert kind == "answer"
    [call] = server.call_log()
    if elicit == "accept":
        assert answer == {"content": [{"type": "text", "text": "hi"}], "isError": False}
        assert call.divergence is None
    else:
        assert answer["isError"] is True
        assert answer["structuredContent"]["reason"] == "client_answer_differs"
        assert call.divergence is not None
        assert call.divergence["client"]["answered_now"] == {"result": {"action": "decline"}}


async def test_stop_ends_a_session_whose_get_stream_is_open(tmp_path: Path) -> None:
    """A client holding its standalone GET stream open does not keep a stopping server up: the
    stream ends and `stop` returns within its grace period."""
    server = RecordedMCPServer(write(tmp_path, messaging_doc()))
    server.log_events = False
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=10) as http:
                opened = await http.post(url, json=INITIALIZE, headers=POST_HEADERS)
                headers = {
                    "accept": "text/event-stream",
                    "mcp-session-id": opened.headers["mcp-session-id"],
                    "mcp-protocol-version": "2025-11-25",
                }
                async with http.stream("GET", url, headers=headers) as stream:
                    assert stream.status_code == 200
                    started = trio.current_time()
                    await server.stop(grace_s=2.0)
                    stopped_after = trio.current_time() - started
                    with contextlib.suppress(httpx2.HTTPError):  # cut, or ended: either way
                        async for _ in stream.aiter_bytes():
                            pass
    assert server.started is False
    assert stopped_after < 2.5


async def test_bad_bodies_outside_a_session_get_the_stateless_answers(tmp_path: Path) -> None:
    """The router reads a session-less POST's body to see whether it opens a session; a body
    that is not JSON, nested past the parser's depth, or over the size limit gets what a server
    without sessions answers (the SDK's parse error, its 413), and the server keeps serving."""
    from windtunnel.mcp._http_serving import MAX_REQUEST_BODY

    server = RecordedMCPServer(write(tmp_path, messaging_doc()))
    server.log_events = False
    headers = {**POST_HEADERS, "content-type": "application/json"}
    bodies = [b"{not json", b"[" * 100_000 + b"]" * 100_000, b"x" * (MAX_REQUEST_BODY + 1)]
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=30) as http:
                answers = [await http.post(url, content=body, headers=headers) for body in bodies]
                opened = await http.post(url, json=INITIALIZE, headers=POST_HEADERS)
            await server.stop()
    assert [a.status_code for a in answers] == [400, 400, 413]
    assert [a.json()["error"]["code"] for a in answers[:2]] == [-32700, -32700]
    assert opened.status_code == 200 and "mcp-session-id" in opened.headers
