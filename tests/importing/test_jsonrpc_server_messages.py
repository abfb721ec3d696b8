"""`wt import` of a JSON-RPC capture ties each server message to its call as `wt record` does
(issue 25): by the request whose HTTP answer carried it, by progress token, else the one call in
flight over one stream; a 2026-07-28 call answered `input_required` is one call with its rounds.

The captures are real sessions: the SDK's own `mcp.Client` against a real `mcp` SDK server whose
`refund` tool elicits a confirmation, samples the client's model, then reports progress and logs,
recorded by `wt record`'s proxy (`RecordingProxy`, whose `--log` lines are the capture). The
import is compared with the universe `wt record` wrote from the same session, then served
(`RecordedMCPServer`, and `wt serve --stdio`) to the same client, which must receive what it
received live.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import mcp
import mcp_types as types
import msgspec
import pytest
import trio
from mcp.server.mcpserver import Context, MCPServer, Resolve

from tests.asgi_http import serve_app
from tests.conformance import reference_server as conformance
from tests.importing.test_jsonrpc_surface import import_capture
from tests.mcp.test_input_rounds import ASKED, Confirm, confirm, opinion
from windtunnel.importing import import_trace
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.record.tap import SessionTap
from windtunnel.universe import Universe

pytestmark = [
    pytest.mark.timeout(120),
    # The server logs, which the 2026-07-28 era deprecates.
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

RESULT = "refund for a broken kettle: confirmed=True, model said fair"


def build_upstream() -> MCPServer:
    """A refund tool that asks the client twice (an elicitation, then a sampling request that
    depends on its answer), then reports progress and logs while it works."""
    server = MCPServer("refunds")

    @server.tool()
    async def refund(
        reason: str,
        answer: Annotated[Confirm, Resolve(confirm)],
        verdict: Annotated[types.CreateMessageResult, Resolve(opinion)],
        ctx: Context,
    ) -> str:
        await ctx.report_progress(1, 2, "checking")
        await ctx.info(f"refund for {reason} checked")
        await ctx.report_progress(2, 2, "done")
        said = verdict.content.text if isinstance(verdict.content, types.TextContent) else "?"
        return f"refund for {reason}: confirmed={answer.ok}, model said {said}"

    return server


async def session(target: str | mcp.StdioServerParameters, mode: str) -> dict[str, Any]:
    """One `refund` call by a client of `mode`'s era that opts in to log messages; what it
    received: the questions it was asked, the logs, the progress and the result."""
    seen: dict[str, Any] = {"asked": [], "logs": [], "progress": []}

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen["asked"].append(("elicit", params.message))
        return types.ElicitResult(action="accept", content={"ok": True})

    async def on_sample(
        context: Any, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult:
        content = params.messages[0].content
        text = content.text if isinstance(content, types.TextContent) else ""
        seen["asked"].append(("sample", text))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="fair"),
            model="scripted",
        )

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append((params.level, params.data))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((value, total, message))

    async with mcp.Client(
        target,
        mode=mode,
        elicitation_callback=on_elicit,
        sampling_callback=on_sample,
        logging_callback=on_log,
        log_level="debug",
    ) as client:
        result = await client.call_tool(
            "refund", {"reason": "a broken kettle"}, progress_callback=on_progress
        )
    [block] = result.content
    assert isinstance(block, types.TextContent)
    seen["result"] = block.text
    return seen


async def record(mode: str) -> tuple[dict[str, Any], list[bytes], Universe]:
    """A live session through `wt record`'s proxy: what the client saw, the capture, and the
    universe `wt record` wrote."""
    async with (
        serve_app(build_upstream().streamable_http_app()) as upstream,
        trio.open_nursery() as nursery,
    ):
        proxy = RecordingProxy(upstream, name="refunds")
        url = await proxy.start(nursery)
        live = await session(url, mode)
        await proxy.stop()
    recording = proxy.recording()
    return live, recording.log_lines, recording.universe


LIVE = {
    "asked": ASKED,
    "logs": [("info", "refund for a broken kettle checked")],
    "progress": [(1.0, 2.0, "checking"), (2.0, 2.0, "done")],
    "result": RESULT,
}


def messages_of(universe: Universe) -> list[Any]:
    return [msgspec.to_builtins(r.server_messages) for r in universe.recordings]


@pytest.mark.parametrize("recorded_in", ["auto", "legacy"])
async def test_an_imported_session_replays_the_questions_logs_and_progress(
    recorded_in: str, tmp_path: Path
) -> None:
    """Recorded in either era (2026-07-28 `input_required` rounds, or handshake-era mid-call
    requests), the import holds the call's server messages exactly as `wt record` kept them, and
    its replay asks a client of either era the same questions and sends it the same log message,
    progress and result as the live server did."""
    with trio.fail_after(90):
        live, capture, recorded = await record(recorded_in)
        envelope, imported = import_capture(capture, tmp_path)
        replayed = {}
        for mode in ("auto", "legacy"):
            server = RecordedMCPServer(imported)
            server.log_events = False
            async with trio.open_nursery() as nursery:
                url = await server.start(nursery)
                replayed[mode] = await session(url, mode)
                await server.stop()
            assert [c.divergence for c in server.call_log()] == [None]
    assert live == LIVE
    assert replayed == {"auto": LIVE, "legacy": LIVE}
    assert messages_of(imported) == messages_of(recorded)
    [messages] = messages_of(imported)
    asked = [m for m in messages if "response" in m]
    assert [m["method"] for m in asked] == ["elicitation/create", "sampling/createMessage"]
    rounds = [m.get("input_round") for m in asked]
    assert rounds == ([1, 2] if recorded_in == "auto" else [None, None])
    assert [m["method"] for m in messages if "response" not in m] == [
        "notifications/progress",
        "notifications/message",
        "notifications/progress",
    ]
    # One call, however many requests its rounds took.
    assert [(c.tool, c.outcome) for c in envelope.calls] == [("refund", "ok")]
    assert [w.code for w in envelope.warnings] == ["task_missing"]


@pytest.mark.skipif(sys.platform == "win32", reason="stdio serving is POSIX here")
async def test_wt_serve_stdio_of_an_imported_2026_session(tmp_path: Path) -> None:
    """`wt serve --stdio` of the import of a 2026-07-28 session: a client of that era is asked
    the same questions in rounds and receives the same log message, progress and result."""
    with trio.fail_after(90):
        _, capture, _ = await record("auto")
        import_capture(capture, tmp_path)
        [universe_file] = (tmp_path / "pack").glob("*.universe.json")
        stdio = mcp.StdioServerParameters(
            command=sys.executable,
            args=["-m", "windtunnel", "serve", "--stdio", str(universe_file)],
        )
        replayed = await session(stdio, "auto")
    assert replayed == LIVE


async def test_logs_of_concurrent_calls_go_to_the_call_whose_stream_carried_them(
    tmp_path: Path,
) -> None:
    """Two calls that log at once over HTTP: each log message is tied to the call whose event
    stream carried it (the capture's `in_reply_to`), as `wt record` tied it, where the one
    call in flight rule alone would tie none."""
    with trio.fail_after(60):
        async with (
            serve_app(conformance.build_server().streamable_http_app()) as upstream,
            trio.open_nursery() as nursery,
        ):
            proxy = RecordingProxy(upstream, name="reference")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                await client.set_logging_level("debug")
                async with trio.open_nursery() as calls:
                    for _ in range(2):
                        calls.start_soon(client.call_tool, "test_tool_with_logging", {})
            await proxy.stop()
    recording = proxy.recording()
    envelope, imported = import_capture(recording.log_lines, tmp_path)
    records = [json.loads(line) for line in recording.log_lines]
    logs = [r for r in records if r["msg"].get("method") == "notifications/message"]
    calls = [r["msg"]["id"] for r in records if r["msg"].get("method") == "tools/call"]
    assert sorted(r["in_reply_to"] for r in logs) == sorted(calls * 3)
    # The two calls' messages interleaved: with both in flight, only the stream tells.
    assert [r["in_reply_to"] for r in logs] != sorted(r["in_reply_to"] for r in logs)
    assert messages_of(imported) == messages_of(recording.universe)
    # (The universe keeps the first of two identical calls; the envelope has both.)
    assert [len(c.server_messages or []) for c in envelope.calls] == [3, 3]
    assert "server_messages_unattributed" not in [w.code for w in envelope.warnings]


def _line(direction: str, msg: dict[str, Any], **extra: Any) -> str:
    return json.dumps({"conn": "refunds", "dir": direction, "msg": msg, **extra})


def test_a_round_never_retried_and_a_result_that_is_not_final_are_reported(
    tmp_path: Path,
) -> None:
    """A call answered `input_required` that the capture never retries has no result and one
    warning naming its line; an answer of another non-final kind is not taken as the result."""
    params = {"name": "refund", "arguments": {"reason": "kettle"}}
    ask = {"method": "elicitation/create", "params": {"message": "Sure?"}}
    lines = [
        _line("c2s", {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
        _line(
            "s2c",
            {
                "jsonrpc": "2.0",
                "id": 1,
                "result": {"resultType": "input_required", "inputRequests": {"sure": ask}},
            },
            in_reply_to=1,
        ),
        _line("c2s", {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}),
        _line(
            "s2c",
            {"jsonrpc": "2.0", "id": 2, "result": {"resultType": "task", "task": {}}},
            in_reply_to=2,
        ),
    ]
    capture = tmp_path / "capture.jsonl"
    capture.write_text("\n".join(lines) + "\n")
    envelope = import_trace(capture)
    assert [(c.outcome, c.result) for c in envelope.calls] == [("unknown", None)] * 2
    ours = {"call_result_not_final", "input_rounds_unfinished"}
    problems = [(w.code, w.message) for w in envelope.warnings if w.code in ours]
    assert problems == [
        (
            "call_result_not_final",
            "line 4: a tools/call answer with resultType 'task', which does not end the call; "
            "the call keeps no result from it",
        ),
        (
            "input_rounds_unfinished",
            "line 1: the call was answered `input_required` and the capture holds no retry "
            "that answers it; it has no result",
        ),
    ]


def test_the_tap_writes_which_request_carried_a_server_message() -> None:
    """`wt record`'s log names the request whose HTTP answer carried an upstream message
    (`in_reply_to`), and nothing for a message that came on no request's stream."""
    tap = SessionTap(upstream="http")
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "t"}}
    log = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "hi"}}
    tap.observe("c2s", call)
    tap.observe("s2c", log, in_reply_to=7)
    tap.observe("s2c", log)
    lines = [json.loads(msgspec.json.encode(record)) for record in tap.log]
    assert [line.get("in_reply_to") for line in lines] == [None, 7, None]
    assert ["in_reply_to" in line for line in lines] == [False, True, False]
