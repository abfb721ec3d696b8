"""`wt record` keeps the whole surface the agent was shown (issue 25): the server's identity,
instructions and capabilities, every tool field, resources, prompts and completions, and per call
what the server sent while answering it, with the client's answers to its requests.

The upstream is the conformance reference server (the `mcp` SDK's low-level server), the client
the SDK's own `mcp.Client`; each recorded value is compared with what the client itself received.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any

import mcp
import mcp_types as types
import msgspec
import pytest
import trio
import trio.testing

from tests.asgi_http import serve_app
from tests.conformance import reference_server
from windtunnel.errors import UniverseError
from windtunnel.record import RecordingProxy
from windtunnel.record.build import Additions, Recording, with_additions
from windtunnel.record.redact import RedactionRules
from windtunnel.universe import Universe, UniverseTool, encode_universe

pytestmark = [
    pytest.mark.timeout(60),
    # The reference server declares logging and sampling, deprecated in the 2026-07-28 era.
    pytest.mark.filterwarnings("ignore::mcp.MCPDeprecationWarning"),
]


def reference_http() -> AbstractAsyncContextManager[str]:
    return serve_app(reference_server.build_server().streamable_http_app())


def dump(value: Any) -> Any:
    return value.model_dump(mode="json", by_alias=True, exclude_none=True)


async def sampling(context: Any, params: types.CreateMessageRequestParams) -> Any:
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text="sampled: forty-two"),
        model="scripted-model",
    )


async def elicitation(context: Any, params: types.ElicitRequestParams) -> Any:
    return types.ElicitResult(action="accept", content={"username": "ana", "email": "a@b.example"})


async def session(url: str, seen: dict[str, Any]) -> None:
    """What an agent does with the reference server: everything but tools, then calls that make
    the server log, report progress, sample and elicit."""
    progress: list[tuple[float, float | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total))

    async with mcp.Client(
        url, mode="legacy", sampling_callback=sampling, elicitation_callback=elicitation
    ) as client:
        seen["initialize"] = {
            "protocolVersion": client.protocol_version,
            "serverInfo": dump(client.server_info),
            "capabilities": dump(client.server_capabilities),
            "instructions": client.instructions,
        }
        seen["tools"] = dump(await client.list_tools())["tools"]
        seen["resources"] = dump(await client.list_resources())["resources"]
        seen["templates"] = dump(await client.list_resource_templates())["resourceTemplates"]
        seen["prompts"] = dump(await client.list_prompts())["prompts"]
        seen["read"] = dump(await client.read_resource("test://static-binary"))
        await client.read_resource("test://static-binary")  # a repeat: the first answer is kept
        seen["template_read"] = dump(await client.read_resource("test://template/7/data"))
        seen["prompt"] = dump(
            await client.get_prompt("test_prompt_with_arguments", {"arg1": "a", "arg2": "b"})
        )
        seen["complete"] = dump(
            await client.complete(
                types.PromptReference(type="ref/prompt", name="test_prompt_with_arguments"),
                {"name": "arg1", "value": "pa"},
            )
        )
        await client.set_logging_level("debug")
        await client.call_tool("test_tool_with_logging", {})
        await client.call_tool("test_tool_with_progress", {}, progress_callback=on_progress)
        seen["sampling"] = dump(await client.call_tool("test_sampling", {"prompt": "6 x 7?"}))
        seen["elicitation"] = dump(await client.call_tool("test_elicitation", {"message": "Who?"}))
    seen["progress"] = progress


async def record(rules: RedactionRules | None = None) -> tuple[Recording, dict[str, Any]]:
    seen: dict[str, Any] = {}
    async with reference_http() as upstream, trio.open_nursery() as nursery:
        proxy = RecordingProxy(upstream, name="reference", redact=rules)
        url = await proxy.start(nursery)
        await session(url, seen)
        await proxy.stop()
    return proxy.recording(), seen


async def test_the_server_tools_resources_prompts_and_completions_are_recorded_as_sent() -> None:
    with trio.fail_after(30):
        recording, seen = await record()
    top = recording.additions.top
    initialize = seen["initialize"]
    assert top["server"] == {
        "protocol_version": initialize["protocolVersion"],
        "info": initialize["serverInfo"],
        "instructions": reference_server.INSTRUCTIONS,
        "capabilities": initialize["capabilities"],
    }
    assert top["server"]["info"]["name"] == "conformance-reference"
    assert set(top["server"]["capabilities"]) >= {"tools", "resources", "prompts", "logging"}
    assert top["resources"] == seen["resources"] == reference_server.RESOURCES
    assert top["resource_templates"] == seen["templates"] == reference_server.TEMPLATES
    assert top["prompts"] == seen["prompts"]
    # Answers as sent, less the protocol's envelope (`resultType`); the 2026-07-28 cache hints
    # (`ttlMs`, `cacheScope`) are the server's own and are kept.
    reads = top["resource_reads"]
    assert [read["uri"] for read in reads] == ["test://static-binary", "test://template/7/data"]
    assert reads[0]["result"]["contents"] == seen["read"]["contents"]
    assert reads[1]["result"]["contents"] == seen["template_read"]["contents"]
    [got] = top["prompt_gets"]
    assert (got["name"], got["arguments"]) == (
        "test_prompt_with_arguments",
        {"arg1": "a", "arg2": "b"},
    )
    assert got["result"]["messages"] == seen["prompt"]["messages"]
    [completion] = top["completions"]
    assert completion == {
        "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
        "argument": {"name": "arg1", "value": "pa"},
        "result": completion["result"],
    }
    assert (
        completion["result"]["completion"]
        == seen["complete"]["completion"]
        == {
            "values": ["paris", "park", "party"],
            "total": 3,
            "hasMore": False,
        }
    )
    for answer in [*reads, got, completion]:
        assert "resultType" not in answer["result"]
    # Every tool in list order, with the fields beyond its schema as the universe names them.
    assert [tool.name for tool in recording.universe.tools] == [t["name"] for t in seen["tools"]]
    assert recording.additions.tools == {
        "test_simple_text": {
            "title": "Simple text",
            "annotations": {"readOnlyHint": True, "idempotentHint": True},
        },
        "test_error_handling": {"annotations": {"destructiveHint": False}},
        "test_tool_with_progress": {"output_schema": reference_server.TOOLS[7]["outputSchema"]},
    }


async def test_each_call_keeps_what_the_server_sent_while_answering_it() -> None:
    with trio.fail_after(30):
        recording, seen = await record()
    names = [r.tool_name for r in recording.universe.recordings]
    assert names == [
        "test_tool_with_logging",
        "test_tool_with_progress",
        "test_sampling",
        "test_elicitation",
    ]
    logging, progress, sampled, elicited = recording.additions.server_messages
    assert logging == [
        {"method": "notifications/message", "params": {"level": "info", "data": text}}
        for text in ["Tool execution started", "Tool processing data", "Tool execution completed"]
    ]
    assert seen["progress"] == [(0, 100), (50, 100), (100, 100)]
    assert [m["method"] for m in progress] == ["notifications/progress"] * 3
    assert [(m["params"]["progress"], m["params"]["total"]) for m in progress] == seen["progress"]
    assert len({m["params"]["progressToken"] for m in progress}) == 1
    assert sampled == [
        {
            "method": "sampling/createMessage",
            "params": {
                "messages": [{"role": "user", "content": {"type": "text", "text": "6 x 7?"}}],
                "maxTokens": 100,
            },
            "response": {
                "result": {
                    "role": "assistant",
                    "content": {"type": "text", "text": "sampled: forty-two"},
                    "model": "scripted-model",
                }
            },
        }
    ]
    assert seen["sampling"]["content"][0]["text"] == "LLM response: sampled: forty-two"
    [asked] = elicited
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["requestedSchema"] == reference_server._ELICIT_USER
    assert asked["response"] == {
        "result": {"action": "accept", "content": {"username": "ana", "email": "a@b.example"}}
    }


async def test_redaction_covers_the_surface_but_not_schemas() -> None:
    """A key rule finds the elicited email in the client's answer, and its value is replaced in
    every section; the schema's own `email` property is a schema, not data, and stays."""
    with trio.fail_after(30):
        recording, _ = await record(RedactionRules(keys=["email"]))
    [asked] = recording.additions.server_messages[3]
    assert asked["response"]["result"]["content"] == {
        "username": "ana",
        "email": "[REDACTED:1]",
    }
    assert asked["params"]["requestedSchema"] == reference_server._ELICIT_USER
    assert "a@b.example" not in str(recording.additions) + str(recording.log_lines)


async def test_the_2026_era_identity_comes_from_server_discover() -> None:
    """No `initialize` in the 2026-07-28 era: the server's info rides in `server/discover`'s
    `_meta`, and the version is the one every request carries."""
    with trio.fail_after(30):
        async with reference_http() as upstream, trio.open_nursery() as nursery:
            proxy = RecordingProxy(upstream, name="reference")
            url = await proxy.start(nursery)
            async with mcp.Client(url, mode="auto") as client:
                await client.list_tools()
                seen = {
                    "protocol_version": client.protocol_version,
                    "info": dump(client.server_info),
                    "instructions": client.instructions,
                    "capabilities": dump(client.server_capabilities),
                }
            await proxy.stop()
    server = proxy.recording().additions.top["server"]
    assert seen["protocol_version"] == "2026-07-28"
    assert {**server, "capabilities": seen["capabilities"]} == seen
    assert set(server["capabilities"]) == set(seen["capabilities"])


def test_the_additions_are_written_and_checked_by_the_loader() -> None:
    """Additions go into the file the format's own loader reads back (an addition it refuses is
    an error, never a file that does not load)."""

    universe = Universe(windtunnel_universe=1, tools=[UniverseTool(name="t")])
    additions = Additions(
        top={"server": {"info": {"name": "x", "version": "1"}}},
        tools={"t": {"title": "T"}},
        server_messages=[],
    )
    document = msgspec.json.decode(encode_universe(with_additions(universe, additions)))
    assert document["server"] == {"info": {"name": "x", "version": "1"}}
    assert document["tools"][0]["title"] == "T"
    assert with_additions(universe, Additions()) is universe
    with pytest.raises(UniverseError, match=r"\$\.server\.info"):
        with_additions(universe, Additions(top={"server": {"info": {"name": 1}}}))


async def test_a_stdio_agent_in_front_of_an_http_upstream_gets_each_call_its_messages() -> None:
    """`wt record --stdio` with an HTTP upstream: the log messages that came on a call's own event
    stream are that call's, while another call is in flight at the same time."""
    agent_in, proxy_stdin = trio.testing.memory_stream_one_way_pair()
    proxy_stdout, agent_out = trio.testing.memory_stream_one_way_pair()

    def line(message: dict[str, Any]) -> bytes:
        return msgspec.json.encode({"jsonrpc": "2.0", **message}) + b"\n"

    async def answers(count: int) -> list[dict[str, Any]]:
        buffer, got = b"", []
        while len(got) < count:
            buffer += await agent_out.receive_some()
            *lines, buffer = buffer.split(b"\n")
            got += [msgspec.json.decode(done) for done in lines if done.strip()]
        return got

    hello = {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "hand", "version": "1"},
    }
    with trio.fail_after(30):
        async with reference_http() as upstream, trio.open_nursery() as nursery:
            proxy = RecordingProxy(upstream, name="reference")
            nursery.start_soon(proxy.serve_stdio_on, proxy_stdin, proxy_stdout)
            await agent_in.send_all(line({"id": 1, "method": "initialize", "params": hello}))
            await answers(1)
            await agent_in.send_all(line({"method": "notifications/initialized"}))
            logging = {"name": "test_tool_with_logging", "arguments": {}}
            simple = {"name": "test_simple_text", "arguments": {}}
            await agent_in.send_all(
                line({"id": 2, "method": "tools/call", "params": logging})
                + line({"id": 3, "method": "tools/call", "params": simple})
            )
            got = await answers(5)  # three log messages and two answers
            await agent_in.aclose()
    assert sorted(m["id"] for m in got if "id" in m) == [2, 3]
    recording = proxy.recording()
    by_tool = dict(
        zip(
            [r.tool_name for r in recording.universe.recordings],
            recording.additions.server_messages,
            strict=True,
        )
    )
    assert [m["params"]["data"] for m in by_tool["test_tool_with_logging"]] == [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    assert by_tool["test_simple_text"] == []
