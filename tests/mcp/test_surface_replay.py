"""A replay shows the recorded world (issue 25): the official Python client sees on replay the
same identity, instructions, capabilities, tools, resources, prompts and completions as it saw
live from a real SDK server, in both protocol eras and over both transports; requests the
recording does not answer are divergences with the spec's JSON-RPC errors."""

from __future__ import annotations

import sys
from typing import Any

import mcp
import mcp_types as types
import pytest
import trio

from tests.surface_world import (
    TOOLS,
    observe,
    recorded_from,
    reference_server,
    surface_doc,
    wire,
    without_envelope,
)
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import decode_universe, encode_universe

MODES = ["auto", "legacy"]

# The logging and subscription calls are handshake-era methods (deprecated from 2026-07-28).
pytestmark = pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")


async def _observe_live(mode: str) -> dict[str, Any]:
    async with mcp.Client(reference_server(), mode=mode) as client:
        return await observe(client)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("fast_path", [True, False])
async def test_a_replay_over_http_shows_what_the_live_server_showed(
    mode: str, fast_path: bool
) -> None:
    """initialize/discover, tools/list, resources, templates, reads, prompts, gets and
    completions seen on replay equal what the same client saw from the real SDK server."""
    with trio.fail_after(30):
        live = await _observe_live(mode)
        universe = decode_universe(encode_universe(decode_universe_doc(recorded_from(live))))
        server = RecordedMCPServer(universe, fast_path=fast_path)
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                replayed = await observe(client)
            await server.stop()
    assert replayed == live
    assert live["instructions"] is not None and live["tools"][0]["annotations"]
    assert [call.divergence for call in server.call_log()] == [None] * len(server.call_log())
    methods = [call.method for call in server.call_log()]
    assert (
        methods
        == ["resources/read"] * 3
        + ["prompts/get"] * 2
        + ["completion/complete"] * 2
        + ["tools/call"] * 2
    )


def decode_universe_doc(doc: dict[str, Any]) -> Any:
    import json

    return decode_universe(json.dumps(doc))


@pytest.mark.skipif(sys.platform == "win32", reason="stdio serving is POSIX here")
@pytest.mark.parametrize("mode", MODES)
async def test_a_replay_over_stdio_shows_what_the_live_server_showed(
    mode: str, tmp_path: Any
) -> None:
    """The same over stdio: `wt serve --stdio` spawned by the official client."""
    import json

    with trio.fail_after(60):
        live = await _observe_live(mode)
        path = tmp_path / "world.universe.json"
        path.write_text(json.dumps(recorded_from(live)))
        params = mcp.StdioServerParameters(
            command=sys.executable, args=["-m", "windtunnel", "serve", "--stdio", str(path)]
        )
        async with mcp.Client(params, mode=mode) as client:
            replayed = await observe(client)
    assert replayed == live


@pytest.mark.parametrize("mode", MODES)
async def test_own_identity_shows_wind_tunnel_instead(mode: str) -> None:
    """`own_identity=True`: Wind Tunnel's serverInfo, no instructions; the rest as recorded."""
    from windtunnel import __version__

    universe = decode_universe_doc(surface_doc())
    server = RecordedMCPServer(universe, own_identity=True, name="world")
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                info = client.server_info
                instructions = client.instructions
                tools = await client.list_tools()
            await server.stop()
    assert info is not None and (info.name, info.version) == ("world", __version__)
    assert info.title is None
    assert instructions is None
    assert tools.tools[0].title == TOOLS[0]["title"]


@pytest.mark.parametrize("mode", MODES)
async def test_off_recording_requests_are_divergences_with_the_spec_errors(mode: str) -> None:
    """An unrecorded read (-32002, or -32602 from 2026-07-28), prompt get (-32602) and
    completion (-32602) are errors on the wire and divergences in the call log."""
    universe = decode_universe_doc(surface_doc())
    server = RecordedMCPServer(universe)
    errors: list[tuple[int, str]] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                modern = client.protocol_version >= "2026"
                for ask in (
                    client.read_resource("test://nowhere"),
                    client.get_prompt("with_args", {"arg1": "z"}),
                    client.complete(
                        types.PromptReference(type="ref/prompt", name="with_args"),
                        {"name": "arg1", "value": "zz"},
                    ),
                ):
                    with pytest.raises(mcp.MCPError) as info:
                        await ask
                    errors.append((info.value.code, info.value.message))
            await server.stop()
    assert [code for code, _ in errors] == [-32602 if modern else -32002, -32602, -32602]
    assert errors[0][1] == "Resource not found"
    log = server.call_log()
    assert [(c.method, c.tool_name, c.args) for c in log] == [
        ("resources/read", "test://nowhere", {}),
        ("prompts/get", "with_args", {"arg1": "z"}),
        (
            "completion/complete",
            "with_args",
            {
                "ref": {"type": "ref/prompt", "name": "with_args"},
                "argument": {"name": "arg1", "value": "zz"},
            },
        ),
    ]
    assert [c.divergence for c in log] == [
        {
            "method": c.method,
            "tool": c.tool_name,
            "args": c.args,
            "reason": "no_recorded_result",
            "policy": "fail_call",
            "matched": None,
            "nearest": None,
        }
        for c in log
    ]


async def test_a_tools_only_universe_shows_what_it_showed_before() -> None:
    """No server section: the SDK's own identity and capabilities (tools only), as before."""
    from windtunnel import __version__

    universe = decode_universe_doc(
        surface_doc(
            server=None,
            resources=[],
            resource_templates=[],
            resource_reads=[],
            prompts=[],
            prompt_gets=[],
            completions=[],
        )
    )
    server = RecordedMCPServer(universe, name="plain")
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                info = client.server_info
                capabilities = wire(client.server_capabilities)
                with pytest.raises(mcp.MCPError) as refused:
                    await client.list_resources()
            await server.stop()
    assert info is not None and (info.name, info.version) == ("plain", __version__)
    # mcp 2.1.1 also sends an empty `experimental`, as it does for any server.
    assert {k: v for k, v in capabilities.items() if k != "experimental"} == {
        "tools": {"listChanged": False}
    }
    assert refused.value.code == -32601


def _docs_mock() -> Any:
    from windtunnel.mcp import MockMCPServer

    mock = MockMCPServer(
        "docs",
        server_info={"name": "docs-server", "version": "2.0.0", "title": "Docs"},
        instructions="Read docs://index first.",
    )

    @mock.tool(title="Search", annotations={"readOnlyHint": True})
    def search(query: str) -> dict[str, Any]:
        return {"hits": [query]}

    mock.add_resource(
        {"uri": "docs://index", "name": "index", "mimeType": "text/plain"},
        read={"contents": [{"uri": "docs://index", "text": "Welcome"}]},
    )
    mock.add_prompt(
        {"name": "summarise", "arguments": [{"name": "topic", "required": True}]},
        get=lambda args: {
            "messages": [
                {"role": "user", "content": {"type": "text", "text": f"Summarise {args['topic']}"}}
            ]
        },
    )

    @mock.completion
    def complete(request: dict[str, Any]) -> dict[str, Any]:
        value = request["argument"]["value"]
        return {"completion": {"values": [value + "-1", value + "-2"]}}

    return mock


async def _observe_docs(client: mcp.Client) -> dict[str, Any]:
    return {
        "info": wire(client.server_info) if client.server_info else None,
        "instructions": client.instructions,
        "tools": wire(await client.list_tools())["tools"],
        "resources": wire(await client.list_resources())["resources"],
        "read": without_envelope(wire(await client.read_resource("docs://index"))),
        "prompts": wire(await client.list_prompts())["prompts"],
        "get": without_envelope(wire(await client.get_prompt("summarise", {"topic": "x"}))),
        "complete": without_envelope(
            wire(
                await client.complete(
                    types.PromptReference(type="ref/prompt", name="summarise"),
                    {"name": "topic", "value": "a"},
                )
            )
        ),
        "call": without_envelope(wire(await client.call_tool("search", {"query": "q"}))),
    }


@pytest.mark.parametrize("mode", MODES)
async def test_a_hand_built_mock_world_freezes_and_replays_the_same(
    mode: str, tmp_path: Any
) -> None:
    """MockMCPServer shows identity, instructions, resources, prompts and completions; its call
    log frozen with its surface replays to the client exactly as the mock showed it."""
    from windtunnel.api import freeze_universe, load_universe

    mock = _docs_mock()
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await mock.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                live = await _observe_docs(client)
            await mock.stop()
        path = tmp_path / "docs.universe.json"
        freeze_universe(
            mock.call_log(), tools=mock.universe_tools(), path=path, **mock.surface_parts()
        )
        replay = RecordedMCPServer(load_universe(path))
        async with trio.open_nursery() as nursery:
            url = await replay.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                replayed = await _observe_docs(client)
            await replay.stop()
    assert live["info"]["name"] == "docs-server" and live["instructions"]
    assert live["tools"][0]["annotations"] == {"readOnlyHint": True}
    assert live["get"]["messages"][0]["content"]["text"] == "Summarise x"
    assert replayed == live
    assert [c.divergence for c in replay.call_log()] == [None] * 4


async def test_wt_serve_own_identity_over_stdio(tmp_path: Any) -> None:
    """`wt serve --stdio --own-identity`: the universe's stem and Wind Tunnel's version, no
    instructions; without the option, the recorded identity."""
    import json

    from windtunnel import __version__

    path = tmp_path / "world.universe.json"
    path.write_text(json.dumps(surface_doc()))
    seen = []
    with trio.fail_after(60):
        for extra in ([], ["--own-identity"]):
            params = mcp.StdioServerParameters(
                command=sys.executable,
                args=["-m", "windtunnel", "serve", "--stdio", *extra, str(path)],
            )
            async with mcp.Client(params, mode="legacy") as client:
                assert client.server_info is not None
                seen.append(
                    (client.server_info.name, client.server_info.version, client.instructions)
                )
    assert seen == [
        ("everything-ref", "1.2.0", surface_doc()["server"]["instructions"]),
        ("world", __version__, None),
    ]


MESSAGES = [
    {"method": "notifications/message", "params": {"level": "info", "data": "starting echo"}},
    {
        "method": "notifications/progress",
        "params": {"progressToken": 7, "progress": 50, "total": 100},
    },
    {"method": "notifications/tools/list_changed"},
    {
        "method": "elicitation/create",
        "params": {"message": "Sure?", "requestedSchema": {"type": "object", "properties": {}}},
        "response": {"result": {"action": "accept", "content": {}}},
    },
]


def _messaging_world(tmp_path: Any) -> Any:
    import json

    doc = surface_doc()
    doc["recordings"][1]["server_messages"] = MESSAGES
    path = tmp_path / "world.universe.json"
    path.write_text(json.dumps(doc))
    return path


def _stdio(path: Any, *extra: str) -> mcp.StdioServerParameters:
    return mcp.StdioServerParameters(
        command=sys.executable, args=["-m", "windtunnel", "serve", "--stdio", *extra, str(path)]
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("with_progress", [True, False])
async def test_recorded_server_messages_are_exchanged_again_over_stdio(
    tmp_path: Any, with_progress: bool, mode: str
) -> None:
    """Over stdio, a call answered from a recording with server messages sends them again, in
    order, before the answer: the log message (from 2026-07-28 to a client that opted in) and
    list change as recorded, the progress with the live request's token (none without one), and
    the elicitation to the live client (a mid-call request in the handshake era, an
    `input_required` round from 2026-07-28), whose answer, the same as recorded, lets the
    recorded answer through."""
    seen: list[Any] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen.append(("log", wire(params)))

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append(("progress", progress, total, message))

    async def on_elicit(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(("elicit", params.message))
        return types.ElicitResult(action="accept", content={})

    path = _messaging_world(tmp_path)
    with trio.fail_after(60):
        async with mcp.Client(
            _stdio(path),
            mode=mode,
            logging_callback=on_log,
            log_level="info",
            elicitation_callback=on_elicit,
        ) as client:
            result = await client.call_tool(
                "echo", {"text": "hi"}, progress_callback=on_progress if with_progress else None
            )
            seen.append("answer")
            plain = await client.call_tool("get_sum", {"a": 1, "b": 2})
    assert result.content[0].text == "hi" and plain.structured_content == {"sum": 3}
    assert seen == [
        ("log", {"level": "info", "data": "starting echo"}),
        *([("progress", 50.0, 100.0, None)] if with_progress else []),
        ("elicit", "Sure?"),
        "answer",
    ]


async def test_a_live_client_answering_otherwise_is_a_divergence(tmp_path: Any) -> None:
    """The live client declines the elicitation the recorded client accepted: the call is a
    divergence (`client_answer_differs`, with what was asked and both answers) answered by the
    tool's miss policy, here fail_call."""
    import json

    async def decline(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    path = _messaging_world(tmp_path)
    events = tmp_path / "events.jsonl"
    with trio.fail_after(60):
        async with mcp.Client(
            _stdio(path, "--events", str(events)), mode="legacy", elicitation_callback=decline
        ) as client:
            result = await client.call_tool("echo", {"text": "hi"})
    assert result.is_error is True
    assert result.structured_content is not None
    assert result.structured_content["reason"] == "client_answer_differs"
    [divergence] = [
        e
        for e in map(json.loads, events.read_text().splitlines())
        if e["event"] == "universe_divergence"
    ]
    assert (divergence["reason"], divergence["policy"], divergence["recording"]) == (
        "client_answer_differs",
        "fail_call",
        1,
    )
    assert divergence["client"] == {
        "asked": {"method": "elicitation/create", "params": MESSAGES[3]["params"]},
        "answered_then": {"result": {"action": "accept", "content": {}}},
        "answered_now": {"result": {"action": "decline"}},
    }


def test_over_http_server_messages_are_reported_unsent() -> None:
    """Answered where no stream can carry them (in process here; so would a stateless JSON
    server, which is why a universe with server messages is served with sessions over HTTP),
    none is sent, and the call says so."""
    import json

    doc = surface_doc()
    doc["recordings"][1]["server_messages"] = MESSAGES
    server = RecordedMCPServer(decode_universe(json.dumps(doc)))
    server.log_events = False
    assert server.messaging_tools() == {"echo"}
    call = server.replay.call("echo", {"text": "hi"})
    assert call.extra["server_messages_not_replayed"] == 4


@pytest.mark.parametrize("answer", ["same", "other"])
async def test_a_recorded_request_goes_to_the_client_before_the_answer_on_the_wire(
    tmp_path: Any, answer: str
) -> None:
    """On the stdio wire (in process, so it runs on every SDK of the range): the log
    notification, the list change, then the elicitation request, then, once the client
    answered, the call's answer: the recorded one when the client answered as recorded, else
    the fail_call divergence."""
    import json

    from tests.mcp.stdio_session import INITIALIZE, INITIALIZED, stdio_session

    server = RecordedMCPServer(_messaging_world(tmp_path))
    server.log_events = False
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "hi"}},
    }
    initialize = {
        **INITIALIZE,
        "params": {**INITIALIZE["params"], "capabilities": {"elicitation": {}}},
    }
    with trio.fail_after(30):
        async with stdio_session(server, fast=True) as client:
            await client.request(initialize)
            await client.send(INITIALIZED)
            await client.send(call)
            log = json.loads(await client.receive())
            changed = json.loads(await client.receive())  # no progress: the call asked for none
            elicit = json.loads(await client.receive())
            reply = (
                {"action": "accept", "content": {}} if answer == "same" else {"action": "cancel"}
            )
            await client.send({"jsonrpc": "2.0", "id": elicit["id"], "result": reply})
            answered = json.loads(await client.receive())
    assert (log["method"], log["params"]) == (
        "notifications/message",
        {"level": "info", "data": "starting echo"},
    )
    assert changed["method"] == "notifications/tools/list_changed"
    # Sent through the SDK's request model, which writes defaults the recording left out
    # (`mode: "form"`; mcp 2.1.1 also an empty `_meta`).
    sdk_defaults = {"mode": "form", "_meta": {}}
    assert elicit["method"] == "elicitation/create"
    assert {k: v for k, v in elicit["params"].items() if sdk_defaults.get(k) != v} == (
        MESSAGES[3]["params"]
    )
    assert answered["id"] == 1
    [logged] = server.call_log()
    if answer == "same":
        assert answered["result"]["content"] == [{"type": "text", "text": "hi"}]
        assert logged.divergence is None
        assert logged.extra == {"match": {"tier": "exact", "index": 1}}
    else:
        assert answered["result"]["isError"] is True
        assert logged.divergence is not None
        assert logged.divergence["client"]["answered_now"] == {"result": {"action": "cancel"}}
