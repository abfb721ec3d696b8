"""`wt import` of OTLP traces gives each call the server messages its spans hold (issue 25), and
names each one it cannot keep.

The traces are written in the test by the real instrumentation around a real session
(`sources/server_message_sessions.py`: a tool that logs, elicits and samples): logfire's
`instrument_mcp` on `mcp` 1.x spans every request sent, the server's requests to the client
included, with its response, and writes a log record per log message the client received; the
`mcp` 2.x SDK's own spans name each request the server sends, below the call's span, with no
payload. The logfire import is then served to the official client, which must be asked and told
what the live client was.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import pytest
import trio

from tests.thirdparty import thirdparty_python
from windtunnel.importing import import_trace, write_import
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import load_universe

pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

SOURCES = Path(__file__).parent / "sources"


def _generate(venv: str, source: str, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """Run the session in its venv; the trace file and what the client received."""
    trace = tmp_path / "trace.json"
    finished = subprocess.run(
        [
            str(thirdparty_python(venv)),
            str(SOURCES / "server_message_sessions.py"),
            source,
            str(trace),
        ],
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
        cwd=tmp_path,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    [seen] = [json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")]
    return trace, seen


def _without_meta(params: dict[str, Any]) -> dict[str, Any]:
    """Params less the trace context the instrumentation put in their `_meta` on the wire."""
    return {key: value for key, value in params.items() if key != "_meta"}


def _dump(model: Any) -> Any:
    return model.model_dump(by_alias=True, exclude_none=True, mode="json")


async def _replay_session(url: str) -> dict[str, Any]:
    """The live session's call, made by the official `mcp` 2.x client to a replay: what it was
    asked, the log messages it got, the result."""
    seen: dict[str, Any] = {"asked": [], "logs": []}

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
        seen["asked"].append(["sampling/createMessage", _without_meta(_dump(params))])
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(type="text", text="fair"), model="scripted"
        )

    async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
        seen["asked"].append(["elicitation/create", _without_meta(_dump(params))])
        return types.ElicitResult(action="accept", content={"ok": True})

    async def logging(params: types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append(_without_meta(_dump(params)))

    async with mcp.Client(
        url,
        mode="legacy",
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        logging_callback=logging,
    ) as client:
        result = await client.call_tool("refund", {"reason": "a broken kettle"})
    seen["content"] = _dump(result)["content"]
    return seen


async def test_logfire_spans_give_the_calls_requests_answers_and_logs(tmp_path: Path) -> None:
    """logfire's spans of a session (`mcp` 1.x): the imported call holds the log message, the
    elicitation and the sampling request the server sent while answering it, with the client's
    answers, in the order the client received them; served, they reach the official client as
    they reached the live one, and nothing is a divergence."""
    trace, live = _generate("traces-mcp1", "logfire", tmp_path)
    envelope = import_trace(trace)
    assert [w.code for w in envelope.warnings] == ["task_missing"]
    output = write_import(envelope, tmp_path / "pack", name="refunds")
    [file] = output.plan.files.values()
    universe = load_universe(tmp_path / "pack" / file)
    [recording] = universe.recordings
    [log] = live["logs"]
    asked = [
        {"method": method, "params": _without_meta(params), "response": {"result": answer}}
        for (method, params), answer in zip(live["asked"], live["answers"], strict=True)
    ]
    expected = [{"method": "notifications/message", "params": _without_meta(log)}, *asked]
    assert recording.server_messages == expected
    with trio.fail_after(60):
        server = RecordedMCPServer(universe)
        server.log_events = False
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            replayed = await _replay_session(url)
            await server.stop()
    assert replayed == {
        "asked": [[method, _without_meta(params)] for method, params in live["asked"]],
        "logs": [_without_meta(log)],
        "content": live["result"]["content"],
    }
    assert [call.divergence for call in server.call_log()] == [None]


def test_sdk_spans_name_each_server_request_they_cannot_keep(tmp_path: Path) -> None:
    """The `mcp` 2.x SDK's spans: each request the server sent is a span below the call's span
    with no payload; one warning per span, naming the method and the call, and the call holds no
    server message made up from them."""
    trace, live = _generate("traces-mcp2", "mcp-sdk", tmp_path)
    envelope = import_trace(trace)
    missing = [w for w in envelope.warnings if w.code == "server_message_payload_missing"]
    assert [w.message.split(" span ", 1)[0] for w in missing] == [
        "a elicitation/create",
        "a sampling/createMessage",
    ]
    assert all("sent while answering the call to refund (seq 0)" in w.message for w in missing)
    assert all(w.path is not None and w.path.startswith("line ") for w in missing)
    assert [call.server_messages for call in envelope.calls] == [None]
    assert [method for method, _ in live["asked"]] == [
        "elicitation/create",
        "sampling/createMessage",
    ]
    assert "server_messages_unattributed" not in [w.code for w in envelope.warnings]


def _span(span_id: str, parent: str, name: str, start: int, **attrs: Any) -> dict[str, Any]:
    return {
        "traceId": "5476dfbc227fd8d228692b4147a216ef",
        "spanId": span_id,
        "parentSpanId": parent,
        "name": name,
        "kind": 3,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 10),
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def test_messages_below_no_call_and_logs_of_a_level_mcp_cannot_name_are_reported(
    tmp_path: Path,
) -> None:
    """A server request span below no tool call's span is counted in one warning naming the
    first; a logfire log record of level `fatal` (critical, alert or emergency: no one MCP
    level) is left out with a warning naming it and its call."""
    spans = [
        _span("a1", "", "tools/call refund", 1, **{"mcp.method.name": "tools/call"}),
        _span(
            "a2",
            "a1",
            "MCP server log",
            2,
            **{
                "logfire.span_type": "log",
                "logfire.msg_template": "MCP server log",
                "logfire.level_num": "21",
                "data": "the disk is on fire",
            },
        ),
        _span("b1", "", "MCP send roots/list", 3, **{"mcp.method.name": "roots/list"}),
        _span("b2", "", "MCP send roots/list", 4, **{"mcp.method.name": "roots/list"}),
    ]
    spans[0]["attributes"].append({"key": "gen_ai.tool.name", "value": {"stringValue": "refund"}})
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
    envelope = import_trace(trace)
    ours = {"server_messages_unattributed", "server_message_payload_missing"}
    assert [(w.code, w.message) for w in envelope.warnings if w.code in ours] == [
        (
            "server_message_payload_missing",
            "a notifications/message span sent while answering the call to refund (seq 0) holds "
            "no MCP log level (logfire's `fatal` is critical, alert or emergency alike) and data "
            "(the MCP conventions record the method, not what was sent; a "
            "tracer that captures it, such as logfire's instrument_mcp on mcp 1.x, does): the "
            "recording keeps nothing of it",
        ),
        (
            "server_messages_unattributed",
            "2 server message span(s) are below no tool call's span (first: roots/list); left "
            "out of the universe",
        ),
    ]
    assert [call.server_messages for call in envelope.calls] == [None]
