"""`wt import` of a JSON-RPC capture fills the whole surface (issue 25): the server's identity,
every tool field in list order, resources, prompts, completions, and per call what the server sent
while answering it, with the client's answers to its requests.

The captures are written in the test by `wt record`'s proxy (`RecordingProxy`, the `--log` lines)
around real `mcp` SDK servers, driven by the SDK's own `mcp.Client`: the whole-world server of
tests/surface_world.py (then served from the import and observed again by the same client), and
the conformance reference server (logging, progress, sampling, elicitation; the import is
compared with the universe `wt record` itself wrote from the same session).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import jsonschema
import mcp
import mcp_types as types
import msgspec
import pytest
import trio

from tests.asgi_http import serve_app
from tests.conformance import reference_server as conformance
from tests.seed.envelope_differential import original
from tests.surface_world import observe
from tests.surface_world import reference_server as world_server
from windtunnel.importing import import_trace, write_import
from windtunnel.importing.envelope import json_schema
from windtunnel.mcp import RecordedMCPServer
from windtunnel.record import RecordingProxy
from windtunnel.universe import Universe, load_universe

pytestmark = [
    pytest.mark.timeout(120),
    # The servers declare logging and sampling, deprecated in the 2026-07-28 era.
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]

SECTIONS = (
    "server",
    "resources",
    "resource_templates",
    "resource_reads",
    "prompts",
    "prompt_gets",
    "completions",
)


def sections(universe: Universe) -> dict[str, Any]:
    return {name: msgspec.to_builtins(getattr(universe, name)) for name in SECTIONS}


def import_capture(lines: list[bytes], tmp_path: Path) -> tuple[Any, Universe]:
    """Write the capture, import it (sniffed), write the pack; the envelope and the universe."""
    capture = tmp_path / "capture.jsonl"
    capture.write_bytes(b"".join(line.rstrip(b"\n") + b"\n" for line in lines))
    envelope = import_trace(capture)
    output = write_import(envelope, tmp_path / "pack", name="incident")
    [universe_file] = output.plan.files.values()
    return envelope, load_universe(tmp_path / "pack" / universe_file)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_an_imported_capture_replays_what_the_live_server_showed(
    mode: str, tmp_path: Path
) -> None:
    """The same client sees, from `wt serve` of the import, the identity, instructions,
    capabilities, tools, resources, templates, reads, prompts, gets and completions it saw live."""
    with trio.fail_after(60):
        app = world_server().streamable_http_app()
        async with serve_app(app) as upstream, trio.open_nursery() as nursery:
            proxy = RecordingProxy(upstream, name="everything-ref")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                live = await observe(client)
            await proxy.stop()
        envelope, universe = import_capture(proxy.recording().log_lines, tmp_path)
        server = RecordedMCPServer(universe)
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                replayed = await observe(client)
            await server.stop()
    assert replayed == live
    assert [call.divergence for call in server.call_log()] == [None] * len(server.call_log())
    assert universe.server is not None and universe.server.protocol_version == (
        "2026-07-28" if mode == "auto" else "2025-11-25"
    )
    assert live["instructions"] and live["tools"][0]["annotations"]
    assert [w.code for w in envelope.warnings] == ["task_missing"]


async def reference_session(target: Any) -> dict[str, Any]:
    """What an agent does with the conformance reference server (at a URL, or spawned over
    stdio): the whole surface, then calls that make the server log, report progress, sample and
    elicit. What the client received: the logs, progress, the requests it was asked, results."""
    seen: dict[str, Any] = {"logs": [], "progress": [], "asked": [], "results": []}

    async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
        seen["asked"].append(("sampling", wire(params)))
        return types.CreateMessageResult(
            role="assistant",
            content=types.TextContent(type="text", text="sampled: forty-two"),
            model="scripted-model",
        )

    async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
        seen["asked"].append(("elicitation", wire(params)))
        return types.ElicitResult(action="accept", content={"username": "ana"})

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        seen["logs"].append(wire(params))

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        seen["progress"].append((value, total))

    async with mcp.Client(
        target,
        mode="legacy",
        sampling_callback=sampling,
        elicitation_callback=elicitation,
        logging_callback=on_log,
    ) as client:
        await client.list_tools()
        await client.list_resources()
        await client.list_resource_templates()
        await client.list_prompts()
        await client.read_resource("test://static-binary")
        await client.read_resource("test://template/7/data")
        await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        await client.complete(
            types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
            {"name": "arg1", "value": "pa"},
        )
        await client.set_logging_level("debug")
        for name, args in [
            ("test_tool_with_logging", {}),
            ("test_tool_with_progress", {}),
            ("test_sampling", {"prompt": "6 x 7?"}),
            ("test_elicitation", {"message": "Who?"}),
        ]:
            result = await client.call_tool(name, args, progress_callback=on_progress)
            seen["results"].append(wire(result))
    return seen


def wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


async def test_the_import_of_a_capture_equals_what_wt_record_wrote(tmp_path: Path) -> None:
    """Importing `wt record`'s capture log gives the universe `wt record` wrote from the same
    session: identity, tools with every field in list order, every surface section, and each
    recording's server messages (logs, progress, sampling and elicitation with the answers)."""
    with trio.fail_after(60):
        async with (
            serve_app(conformance.build_server().streamable_http_app()) as upstream,
            trio.open_nursery() as nursery,
        ):
            proxy = RecordingProxy(upstream, name="reference")
            url = await proxy.start(nursery)
            seen = await reference_session(url)
            await proxy.stop()
    recording = proxy.recording()
    envelope, imported = import_capture(recording.log_lines, tmp_path)
    recorded = recording.universe
    assert sections(imported) == sections(recorded)
    assert [t.listed() for t in imported.tools] == [t.listed() for t in recorded.tools]
    # (Tool results are read through the import's own `CallToolResult` reading, as before.)
    assert [(r.tool_name, r.args) for r in imported.recordings] == [
        (r.tool_name, r.args) for r in recorded.recordings
    ]
    messages = [r.server_messages for r in imported.recordings]
    assert messages == [r.server_messages for r in recorded.recordings]
    logging, progress, sampled, elicited = messages
    assert [m["method"] for m in logging] == ["notifications/message"] * 3
    assert len(progress) == len(seen["progress"]) == 3
    assert {m["method"] for m in progress} == {"notifications/progress"}
    [asked] = sampled
    assert asked["method"] == "sampling/createMessage"
    assert asked["response"]["result"]["content"]["text"] == "sampled: forty-two"
    [asked] = elicited
    assert asked["response"] == {"result": {"action": "accept", "content": {"username": "ana"}}}
    assert "server_messages_unattributed" not in [w.code for w in envelope.warnings]
    server = recorded.server
    assert server is not None and server.info is not None and server.capabilities is not None
    note = (tmp_path / "pack" / "IMPORTED.md").read_text()
    [line] = [line for line in note.splitlines() if line.startswith("- upstream `reference`:")]
    assert line == (
        "- upstream `reference`: server `conformance-reference` `"
        + server.info["version"]
        + "`; protocol `2025-11-25`; instructions ("
        + str(len(conformance.INSTRUCTIONS))
        + " characters); capabilities (`"
        + ", ".join(sorted(server.capabilities))
        + "`); "
        + f"{len(recorded.resources)} resource(s); {len(recorded.resource_templates)} resource "
        "template(s); 2 resource read(s); "
        f"{len(recorded.prompts)} prompt(s); 1 prompt get(s); 1 completion(s); 3 tool(s) with "
        "title, annotations or other listed fields; "
        f"{sum(len(m or []) for m in messages)} server message(s) sent during calls"
    )


async def test_the_envelope_with_a_surface_is_valid_and_loads_in_the_original(
    tmp_path: Path,
) -> None:
    """The envelope written for a capture with the whole surface validates against the shipped
    JSON Schema, and windtunnel-bench's own loader reads it without error."""
    with trio.fail_after(60):
        async with (
            serve_app(conformance.build_server().streamable_http_app()) as upstream,
            trio.open_nursery() as nursery,
        ):
            proxy = RecordingProxy(upstream, name="reference")
            url = await proxy.start(nursery)
            await reference_session(url)
            await proxy.stop()
    import_capture(proxy.recording().log_lines, tmp_path)
    written = tmp_path / "pack" / "trace.wtin.json"
    value = json.loads(written.read_text())
    [upstream] = value["upstreams"]
    assert set(upstream["surface"]) == set(SECTIONS)
    assert any("server_messages" in call for call in value["calls"])
    validator = jsonschema.Draft202012Validator(json_schema())
    assert [e.message for e in validator.iter_errors(value)] == []
    [theirs] = await trio.to_thread.run_sync(original, [written], tmp_path)
    assert theirs["error"] is None


def _line(direction: str, msg: dict[str, Any]) -> str:
    return json.dumps({"conn": "docs", "dir": direction, "msg": msg})


def test_malformed_surface_answers_are_left_out_with_a_warning_naming_the_line(
    tmp_path: Path,
) -> None:
    """Each surface answer the universe could not hold is one warning naming its capture line;
    the rest of the capture still imports, and the universe loads."""
    asked = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "docs://a"}},
        {"jsonrpc": "2.0", "id": 4, "method": "prompts/get", "params": {"name": "p"}},
        {
            "jsonrpc": "2.0",
            "id": 5,
            "method": "completion/complete",
            "params": {"ref": {"type": "ref/prompt", "name": "p"}, "argument": {"value": "a"}},
        },
    ]
    answers: list[dict[str, Any]] = [
        {"serverInfo": {"name": "docs"}, "protocolVersion": "2025-11-25", "instructions": 7},
        {"resources": [{"uri": "docs://a", "name": "a"}, {"name": "no uri"}]},
        {"contents": "not a list"},
        {"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}]},
        {"completion": {"values": ["alpha"]}},
    ]
    lines = []
    for request, result in zip(asked, answers, strict=True):
        lines.append(_line("c2s", request))
        lines.append(_line("s2c", {"jsonrpc": "2.0", "id": request["id"], "result": result}))
    lines.append(_line("s2c", {"jsonrpc": "2.0", "method": "notifications/message", "params": 3}))
    capture = tmp_path / "capture.jsonl"
    capture.write_text("\n".join(lines) + "\n")
    envelope = import_trace(capture)
    problems = [(w.code, w.message) for w in envelope.warnings if w.code != "task_missing"]
    assert problems == [
        (
            "server_info_malformed",
            "line 2: result.serverInfo is not an object with string `name` and `version`; the "
            "universe keeps no server identity from it",
        ),
        (
            "server_surface_malformed",
            "line 2: result.instructions is not a string; left out of the universe",
        ),
        (
            "surface_list_malformed",
            "line 4: result.resources[1] is not an object with a non-empty string `uri`; left "
            "out of the universe",
        ),
        (
            "resource_read_malformed",
            "line 6: the resources/read answer for 'docs://a' has no `contents` array; left out "
            "of the universe",
        ),
        (
            "completion_malformed",
            "line 10: a completion/complete answer its request has no `argument` with a string "
            "`name`; left out of the universe",
        ),
        (
            "server_message_malformed",
            "line 11: the server's notifications/message has `params` that are not an object; "
            "left out of the universe",
        ),
    ]
    output = write_import(envelope, tmp_path / "pack", name="docs")
    [file] = output.plan.files.values()
    universe = load_universe(tmp_path / "pack" / file)
    assert universe.server is not None
    assert (universe.server.protocol_version, universe.server.info) == ("2025-11-25", None)
    assert universe.resources == [{"uri": "docs://a", "name": "a"}]
    assert universe.resource_reads == []
    assert [get.name for get in universe.prompt_gets] == ["p"]
    assert universe.completions == []


@pytest.mark.skipif(sys.platform == "win32", reason="stdio serving is POSIX here")
async def test_wt_serve_of_the_import_sends_the_server_messages_again(tmp_path: Path) -> None:
    """`wt serve --stdio` of the imported capture: the official client gets the same log
    messages and progress, is asked the same sampling and elicitation requests, and receives the
    same tool results as it did from the live server."""
    with trio.fail_after(90):
        async with (
            serve_app(conformance.build_server().streamable_http_app()) as upstream,
            trio.open_nursery() as nursery,
        ):
            proxy = RecordingProxy(upstream, name="reference")
            url = await proxy.start(nursery)
            live = await reference_session(url)
            await proxy.stop()
        import_capture(proxy.recording().log_lines, tmp_path)
        [universe_file] = (tmp_path / "pack").glob("*.universe.json")
        replayed = await reference_session(
            mcp.StdioServerParameters(
                command=sys.executable,
                args=["-m", "windtunnel", "serve", "--stdio", str(universe_file)],
            )
        )
    assert replayed == live
    assert len(live["logs"]) == 3 and [kind for kind, _ in live["asked"]] == [
        "sampling",
        "elicitation",
    ]


async def test_concurrent_calls_each_get_the_progress_their_token_names(tmp_path: Path) -> None:
    """Two calls in flight at once on one connection: each call's `server_messages` holds the
    progress notifications that name its own progress token, and only those."""

    async def noted(value: float, total: float | None, message: str | None) -> None:
        pass

    with trio.fail_after(60):
        async with (
            serve_app(conformance.build_server().streamable_http_app()) as upstream,
            trio.open_nursery() as nursery,
        ):
            proxy = RecordingProxy(upstream, name="reference")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="legacy") as client, trio.open_nursery() as calls:
                for _ in range(2):
                    calls.start_soon(
                        lambda: client.call_tool(
                            "test_tool_with_progress", {}, progress_callback=noted
                        )
                    )
            await proxy.stop()
        envelope, _ = import_capture(proxy.recording().log_lines, tmp_path)
    capture = [json.loads(line) for line in proxy.recording().log_lines]
    tokens = [
        record["msg"]["params"]["_meta"]["progressToken"]
        for record in capture
        if record["msg"].get("method") == "tools/call"
    ]
    assert len(set(tokens)) == 2
    for call, token in zip(envelope.calls, tokens, strict=True):
        assert call.server_messages is not None
        assert [m["params"]["progressToken"] for m in call.server_messages] == [token] * 3
        assert [m["params"]["progress"] for m in call.server_messages] == [0, 50, 100]


def test_a_server_message_with_several_calls_in_flight_is_left_out_with_a_warning(
    tmp_path: Path,
) -> None:
    """A log message sent while two calls are in flight on its connection belongs to neither:
    one warning counts it and names its line; one sent while one call is in flight is that
    call's, and so is a message on another connection's single call."""

    def call(request_id: int, conn: str = "docs") -> str:
        params = {"name": "search", "arguments": {"q": str(request_id)}}
        msg = {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
        return json.dumps({"conn": conn, "dir": "c2s", "msg": msg})

    def answer(request_id: int, conn: str = "docs") -> str:
        result = {"content": [{"type": "text", "text": f"hit {request_id}"}]}
        msg = {"jsonrpc": "2.0", "id": request_id, "result": result}
        return json.dumps({"conn": conn, "dir": "s2c", "msg": msg})

    def log(text: str, conn: str = "docs") -> str:
        params = {"level": "info", "data": text}
        msg = {"jsonrpc": "2.0", "method": "notifications/message", "params": params}
        return json.dumps({"conn": conn, "dir": "s2c", "msg": msg})

    lines = [
        call(1),
        log("only 1"),
        call(2),
        call(1, conn="other"),
        log("1 or 2?"),
        log("other's", conn="other"),
        answer(1),
        log("only 2"),
        answer(2),
        answer(1, conn="other"),
    ]
    capture = tmp_path / "capture.jsonl"
    capture.write_text("\n".join(lines) + "\n")
    envelope = import_trace(capture)
    texts = [[m["params"]["data"] for m in c.server_messages or []] for c in envelope.calls]
    assert texts == [["only 1"], ["only 2"], ["other's"]]
    [warning] = [w for w in envelope.warnings if w.code == "server_messages_unattributed"]
    assert warning.message == (
        "1 server message(s) could not be tied to one tools/call (none or several in flight on "
        "their connection, first at line 5); left out of the universe"
    )


def test_server_messages_and_tool_fields_nested_too_deep_do_not_abort_the_import(
    tmp_path: Path,
) -> None:
    """A server request 200 levels deep sent during a call, and a tool whose annotations are as
    deep: the import still writes a universe that loads, the message left out with a warning
    naming the answer's line, the field left off the tool."""
    deep: Any = "bottom"
    for _ in range(200):
        deep = {"d": deep}
    tool = {"name": "search", "inputSchema": {"type": "object"}, "annotations": deep}
    params = {"name": "search", "arguments": {}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": deep}},
        {"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "ok"}]}},
    ]
    directions = ["c2s", "s2c", "c2s", "s2c", "s2c"]
    capture = tmp_path / "capture.jsonl"
    capture.write_text(
        "".join(
            json.dumps({"conn": "docs", "dir": d, "msg": m}) + "\n"
            for d, m in zip(directions, messages, strict=True)
        )
    )
    envelope = import_trace(capture)
    [warning] = [w for w in envelope.warnings if w.code == "surface_too_deep"]
    assert warning.message.startswith("line 5: the server's notifications/message sent while")
    output = write_import(envelope, tmp_path / "pack", name="docs")
    [file] = output.plan.files.values()
    universe = load_universe(tmp_path / "pack" / file)
    assert [r.server_messages for r in universe.recordings] == [msgspec.UNSET]
    assert universe.tools[0].annotations is None


async def observe_everything(client: mcp.Client) -> dict[str, Any]:
    """What a client sees of server-everything: identity, lists, the first resource read, the
    first prompt that needs no argument, an echo."""
    resources = wire(await client.list_resources())["resources"]
    prompts = wire(await client.list_prompts())["prompts"]
    plain = next(p for p in prompts if not any(a.get("required") for a in p.get("arguments", [])))
    return {
        "server_info": wire(client.server_info),
        "capabilities": wire(client.server_capabilities),
        "instructions": client.instructions,
        "tools": wire(await client.list_tools())["tools"],
        "resources": resources,
        "templates": wire(await client.list_resource_templates())["resourceTemplates"],
        "prompts": prompts,
        "read": wire(await client.read_resource(resources[0]["uri"]))["contents"],
        "get": wire(await client.get_prompt(plain["name"]))["messages"],
        "echo": wire(await client.call_tool("echo", {"message": "hi"}))["content"],
    }


@pytest.mark.node
async def test_server_everything_imported_replays_what_it_showed_live(tmp_path: Path) -> None:
    """`@modelcontextprotocol/server-everything` (npm, the TypeScript SDK over HTTP) recorded by
    `wt record`'s proxy for an `auto` client (whose `server/discover` probe it refuses with an
    `id: null` error), imported, served: the client sees the same identity, instructions,
    capabilities, tools, resources, templates, prompts, read, prompt and echo as live."""
    from tests.record.test_handshake_era import everything_over_http

    with trio.fail_after(90):
        async with trio.open_nursery() as nursery, everything_over_http() as upstream:
            proxy = RecordingProxy(upstream, name="everything")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="auto") as client:
                live = await observe_everything(client)
            await proxy.stop()
        envelope, universe = import_capture(proxy.recording().log_lines, tmp_path)
        server = RecordedMCPServer(universe)
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            # The live session fell back to the handshake era: the replay is asked in it too.
            async with mcp.Client(url, mode="legacy") as client:
                replayed = await observe_everything(client)
            await server.stop()
    assert replayed == live
    assert len(live["instructions"]) > 100 and len(live["tools"]) > 5
    assert universe.server is not None and universe.server.protocol_version == "2025-11-25"
    # The refused `server/discover` probe (`id: null`) is its answer, not an orphan; what the
    # server sends outside any call (its own log messages) is counted, not attributed.
    codes = {w.code for w in envelope.warnings}
    assert codes <= {"task_missing", "server_messages_unattributed"}


def test_each_connection_of_a_capture_gets_its_own_surface(tmp_path: Path) -> None:
    """Two upstreams in one capture (`conn`): each universe holds the identity and resources its
    own connection answered."""
    lines = []
    for conn in ("docs", "crm"):
        info = {"name": f"{conn}-server", "version": "1.0"}
        exchange = [
            ("c2s", {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}),
            ("s2c", {"jsonrpc": "2.0", "id": 1, "result": {"serverInfo": info}}),
            ("c2s", {"jsonrpc": "2.0", "id": 2, "method": "resources/list"}),
            (
                "s2c",
                {"jsonrpc": "2.0", "id": 2, "result": {"resources": [{"uri": f"{conn}://a"}]}},
            ),
        ]
        lines += [json.dumps({"conn": conn, "dir": d, "msg": m}) for d, m in exchange]
    capture = tmp_path / "capture.jsonl"
    capture.write_text("\n".join(lines) + "\n")
    output = write_import(import_trace(capture), tmp_path / "pack", name="two")
    for conn in ("docs", "crm"):
        universe = load_universe(tmp_path / "pack" / output.plan.files[conn])
        assert universe.server is not None and universe.server.info is not None
        assert universe.server.info["name"] == f"{conn}-server"
        assert universe.resources == [{"uri": f"{conn}://a"}]
