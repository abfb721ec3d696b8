"""The universe's surface beyond tool calls (issue 25): it loads, round-trips byte for byte, is
left out of a tools-only file, and each malformed part is one clear error with its JSON path."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from tests.conftest import UniverseFactory, universe_doc
from tests.surface_world import surface_doc
from windtunnel.api import load_universe
from windtunnel.errors import UniverseError
from windtunnel.universe import (
    MAX_NESTING,
    Recording,
    Universe,
    UniverseTool,
    decode_universe,
    encode_universe,
)


def test_the_whole_surface_loads_as_written(write_universe_file: UniverseFactory) -> None:
    """Every surface part loads with its values and key order as in the file."""
    universe = load_universe(write_universe_file(surface_doc()))
    assert universe.server is not None
    assert universe.server.info == surface_doc()["server"]["info"]
    assert list(universe.server.capabilities or {}) == [
        "tools",
        "resources",
        "prompts",
        "logging",
        "completions",
    ]
    assert universe.server.instructions is not None
    assert [t.name for t in universe.tools] == ["get_sum", "echo"]
    get_sum = universe.tools[0]
    assert get_sum.title == "Sum"
    assert get_sum.meta == {"example.test/cost": 0}
    assert universe.resources == surface_doc()["resources"]
    assert [r.uri for r in universe.resource_reads] == [
        "test://static-text",
        "test://static-blob",
        "test://template/7/data",
    ]
    assert universe.prompt_gets[1].arguments == {"arg1": "a", "arg2": "b"}
    assert universe.completions[0].context is None


def test_the_whole_surface_round_trips_byte_for_byte() -> None:
    """encode(decode(encode(u))) is encode(u), and decoding gives back the same universe."""
    universe = decode_universe(json.dumps(surface_doc()))
    written = encode_universe(universe)
    again = decode_universe(written)
    assert again == universe
    assert encode_universe(again) == written
    # Payloads keep the key order they were recorded in.
    doc = json.loads(written)
    assert list(doc["server"]["info"]) == ["name", "version", "title", "websiteUrl"]
    assert list(doc["tools"][0]) == [
        "name",
        "input_schema",
        "description",
        "title",
        "annotations",
        "output_schema",
        "_meta",
    ]
    assert list(doc["completions"][0]) == ["ref", "argument", "result"]


def test_a_tools_only_universe_is_written_as_before() -> None:
    """No surface part appears in a file that has none (byte-identical to the format before)."""
    universe = Universe(
        windtunnel_universe=1,
        tools=[UniverseTool("lookup", {"type": "object"}, "Look up.")],
        recordings=[Recording(tool_name="lookup", args={"q": "x"}, result={"a": 1})],
    )
    assert encode_universe(universe) == (
        b'{\n  "windtunnel_universe": 1,\n  "tools": [\n    {\n      "name": "lookup",\n'
        b'      "input_schema": {\n        "type": "object"\n      },\n'
        b'      "description": "Look up."\n    }\n  ],\n  "recordings": [\n    {\n'
        b'      "tool_name": "lookup",\n      "args": {\n        "q": "x"\n      },\n'
        b'      "result": {\n        "a": 1\n      }\n    }\n  ],\n  "matching": {}\n}\n'
    )


def test_server_messages_load_and_round_trip() -> None:
    """A recording's `server_messages` are kept in order, verbatim."""
    messages = [
        {"method": "notifications/message", "params": {"level": "info", "data": "x"}},
        {"method": "notifications/progress", "params": {"progressToken": 7, "progress": 50}},
        {
            "method": "elicitation/create",
            "params": {"message": "ok?"},
            "response": {"result": {"action": "accept"}},
        },
        {
            "method": "roots/list",
            "response": {"result": {"roots": []}},
            "input_round": 1,
            "input_key": "roots",
        },
    ]
    doc = surface_doc()
    doc["recordings"][1]["server_messages"] = messages
    universe = decode_universe(json.dumps(doc))
    assert universe.recordings[1].server_messages == messages
    assert universe.recordings[0].server_messages is msgspec.UNSET
    assert decode_universe(encode_universe(universe)) == universe


def _deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = [value]
    return value


def _with(**changes: Any) -> dict[str, Any]:
    return surface_doc(**changes)


def _tool(**fields: Any) -> dict[str, Any]:
    return universe_doc([{"name": "t", **fields}])


def _message(message: Any) -> dict[str, Any]:
    return universe_doc(
        [{"name": "t"}], [{"tool_name": "t", "args": {}, "server_messages": [message]}]
    )


BAD_SURFACES = [
    (_with(server={"info": {"name": "x"}}), "$.server.info.version", "string `version`"),
    (_with(server={"instructions": 3}), "$.server.instructions", "Expected `str | null`"),
    (_with(resources=[{"name": "no-uri"}]), "$.resources[0].uri", "non-empty string `uri`"),
    (
        _with(resources=[{"uri": "a://x", "name": "x"}, {"uri": "a://x", "name": "y"}]),
        "$.resources[1].uri",
        "listed twice",
    ),
    (
        _with(resource_templates=[{"uri": "a://x"}]),
        "$.resource_templates[0].uriTemplate",
        "non-empty string `uriTemplate`",
    ),
    (_with(prompts=[{"name": 5}]), "$.prompts[0].name", "non-empty string `name`"),
    (
        _with(resource_reads=[{"uri": "a://x", "result": {}}]),
        "$.resource_reads[0].result.contents",
        "`contents` array",
    ),
    (
        _with(resource_reads=[{"uri": "a://x"}]),
        "$.resource_reads[0]",
        "missing required field `result`",
    ),
    (
        _with(prompt_gets=[{"name": "p", "arguments": [], "result": {"messages": []}}]),
        "$.prompt_gets[0].arguments",
        "Expected `object`",
    ),
    (
        _with(prompt_gets=[{"name": "p", "result": {"messages": {}}}]),
        "$.prompt_gets[0].result.messages",
        "`messages` array",
    ),
    (
        _with(completions=[{"ref": {}, "argument": {"name": "a"}, "result": {}}]),
        "$.completions[0].ref.type",
        "string `type`",
    ),
    (
        _with(
            completions=[{"ref": {"type": "ref/prompt"}, "argument": {"name": "a"}, "result": {}}]
        ),
        "$.completions[0].result.completion",
        "`values` array",
    ),
    (_tool(title=1), "$.tools[0].title", "Expected `str | null`"),
    (_tool(annotations=[]), "$.tools[0].annotations", "Expected `object | null`"),
    (_tool(icons={}), "$.tools[0].icons", "Expected `array | null`"),
    (_tool(_meta="x"), "$.tools[0]._meta", "Expected `object | null`"),
    (_tool(output_schema={"d": _deep(MAX_NESTING)}), "$.tools[0].output_schema", "nested deeper"),
    (
        _tool(annotations={"x": _deep(MAX_NESTING + 1)}),
        "$.tools[0].annotations",
        "nested deeper",
    ),
    (
        _with(resources=[{"uri": "a://x", "name": "x", "deep": _deep(MAX_NESTING + 1)}]),
        "$.resources[0]",
        "nested deeper",
    ),
    (
        _with(prompt_gets=[{"name": "p", "result": {"messages": [], "d": _deep(MAX_NESTING + 1)}}]),
        "$.prompt_gets[0].result",
        "nested deeper",
    ),
    (_message({"params": {}}), "$.recordings[0].server_messages[0].method", "`method`"),
    (
        _message({"method": "x", "id": 3}),
        "$.recordings[0].server_messages[0].id",
        "unknown key `id`",
    ),
    (
        _message({"method": "x", "response": {"result": 1, "error": 2}}),
        "$.recordings[0].server_messages[0].response",
        "`response` must be",
    ),
    (
        _message({"method": "x", "input_round": 1, "input_key": "k"}),
        "$.recordings[0].server_messages[0]",
        "belong to a request with its `response`",
    ),
    (
        _message({"method": "x", "response": {"result": {}}, "input_round": 0, "input_key": "k"}),
        "$.recordings[0].server_messages[0].input_round",
        "an integer from 1",
    ),
    (
        _message({"method": "x", "response": {"result": {}}, "input_round": 2}),
        "$.recordings[0].server_messages[0].input_key",
        "a non-empty string",
    ),
    (
        _message({"method": "x", "params": {"d": _deep(MAX_NESTING + 1)}}),
        "$.recordings[0].server_messages[0]",
        "nested deeper",
    ),
]


@pytest.mark.parametrize(("doc", "path", "message"), BAD_SURFACES)
def test_a_bad_surface_is_one_clear_error(
    write_universe_file: UniverseFactory, doc: Any, path: str, message: str
) -> None:
    """Each malformed surface part raises one UniverseError with the file, JSON path and problem."""
    file = write_universe_file(doc)
    with pytest.raises(UniverseError) as info:
        load_universe(file)
    error = info.value
    assert error.file == str(file)
    assert message in error.message, error.message
    assert error.path is not None and error.path.startswith(path), error.path


def test_a_hand_built_universe_is_checked_too() -> None:
    """A universe built in Python (not loaded) gets the same checks when it is served."""
    from windtunnel.universe import ServerSurface, validate_universe

    universe = Universe(
        windtunnel_universe=1,
        tools=[UniverseTool("t")],
        server=ServerSurface(info={"name": 1, "version": "1"}),
    )
    with pytest.raises(UniverseError, match=r"\$\.server\.info\.name"):
        validate_universe(universe)
