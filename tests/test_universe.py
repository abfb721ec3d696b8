"""Loading universe files: valid files load, every bad input is one clear UniverseError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import UniverseFactory, universe_doc
from windtunnel.api import UniverseTool, load_universe
from windtunnel.errors import UniverseError
from windtunnel.universe import Universe, decode_universe, encode_universe

TOOL = {"name": "lookup", "input_schema": {"type": "object"}}


def test_minimal_universe_loads_with_defaults(write_universe_file: UniverseFactory) -> None:
    """Defaults: stateless tools, fail_call, no arg_keys."""
    universe = load_universe(write_universe_file(universe_doc([{"name": "lookup"}])))
    assert universe.tools == [UniverseTool("lookup", {"type": "object"})]
    assert universe.tools[0].mode == "stateless"
    assert universe.matching.on_miss == "fail_call"
    assert universe.recordings == []


@pytest.mark.parametrize(
    "args",
    [
        {"arguments": {"q": "x"}},
        {"name": "lookup", "arguments": {"q": "x"}},
        {"name": "lookup", "args": {"q": "x"}},
        {"function": {"name": "lookup", "arguments": '{"q": "x"}'}},
        {"function": {"arguments": {"q": "x"}}},
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "lookup", "arguments": '{"q":"x"}'},
        },
    ],
)
def test_wire_wrappers_are_flattened(write_universe_file: UniverseFactory, args: Any) -> None:
    """MCP's, a worker's and OpenAI's wrappers (DESIGN §3, design 0001) become flat args."""
    doc = universe_doc([TOOL], [{"tool_name": "lookup", "args": args, "result": 1}])
    assert load_universe(write_universe_file(doc)).recordings[0].args == {"q": "x"}


@pytest.mark.parametrize(
    "args",
    [
        {"name": "other", "arguments": {"q": "x"}},
        {"arguments": "not-an-object"},
        {"arguments": {"q": "x"}, "extra": 1},
        {"name": "other", "args": {"q": "x"}},
        {"name": "lookup", "args": "q=x"},
        {"name": "lookup", "args": {"q": "x"}, "id": 1},
        {"function": {"name": "other", "arguments": '{"q": "x"}'}},
        {"function": {"arguments": "not json"}},
        {"function": {"arguments": "[1]"}},
        {"function": "lookup"},
    ],
)
def test_non_wrappers_stay_flat(write_universe_file: UniverseFactory, args: Any) -> None:
    """Anything that is not exactly a wrapper is taken as flat args."""
    doc = universe_doc([TOOL], [{"tool_name": "lookup", "args": args, "result": 1}])
    assert load_universe(write_universe_file(doc)).recordings[0].args == args


@pytest.mark.parametrize(
    "args",
    [
        {"arguments": {"arguments": {"q": "x"}}},
        {"name": "lookup", "arguments": {"name": "lookup", "arguments": {"q": "x"}}},
        {"arguments": {"name": "lookup", "args": {"q": "x"}}},
        {"arguments": {"function": {"arguments": '{"q": 1}'}}},
    ],
)
def test_flat_args_that_look_like_a_wrapper_survive_a_write(
    write_universe_file: UniverseFactory, args: Any
) -> None:
    """One level is flattened; the writer escapes what still looks like a wrapper, so it reads back."""
    doc = universe_doc([TOOL], [{"tool_name": "lookup", "args": args, "result": 1}])
    universe = load_universe(write_universe_file(doc))
    assert universe.recordings[0].args == args["arguments"]
    assert decode_universe(encode_universe(universe)) == universe


BAD_CASES: list[tuple[Any, str, str]] = [
    ("{not json", "", "JSON is malformed: object keys must be strings (line 1, column 2)"),
    ('{\n  "tools": [}', "", "(line 2, column 13)"),
    (b"\xff\xfe", "", "JSON"),
    ({"tools": []}, "", "missing required field `windtunnel_universe`"),
    (
        {"windtunnel_universe": 2, "tools": []},
        "$.windtunnel_universe",
        "unsupported format version 2",
    ),
    ({"windtunnel_universe": "1", "tools": []}, "$.windtunnel_universe", "unsupported format"),
    (
        {"windtunnel_universe": 1, "tools": [{"name": 3}]},
        "$.tools[0].name",
        "Expected `str`, got `int`",
    ),
    (
        {"windtunnel_universe": 1, "tools": [{"name": "a", "mode": "stateful"}]},
        "$.tools[0].mode",
        "Invalid enum value 'stateful'",
    ),
    (
        universe_doc([TOOL], [{"tool_name": "ghost", "args": {}, "result": 1}]),
        "$.recordings[0].tool_name",
        "undeclared tool 'ghost'",
    ),
    (
        universe_doc([TOOL], [{"tool_name": "lookup", "args": [], "result": 1}]),
        "$.recordings[0].args",
        "Expected `object`, got `array`",
    ),
    (
        universe_doc([TOOL], matching={"on_miss": "guess"}),
        "$.matching.on_miss",
        "Invalid enum value 'guess'",
    ),
    (
        universe_doc([TOOL], matching={"per_tool_on_miss": {"lookup": "guess"}}),
        "$.matching.per_tool_on_miss.lookup",
        "Invalid enum value 'guess'",
    ),
    (
        universe_doc([TOOL], matching={"arg_keys": {"lookup": {"keys": "q"}}}),
        "$.matching.arg_keys.lookup.keys",
        "Expected `array | null`, got `str`",
    ),
    (
        universe_doc([TOOL], matching={"modes": {"lookup": "stateful"}}),
        "$.matching.modes.lookup",
        "Invalid enum value 'stateful'",
    ),
    (
        universe_doc([TOOL, TOOL]),
        "$.tools[1].name",
        "declared twice",
    ),
]


@pytest.mark.parametrize(("doc", "path", "message"), BAD_CASES)
def test_bad_universe_is_one_clear_error(
    write_universe_file: UniverseFactory, doc: Any, path: str, message: str
) -> None:
    """Each malformed file raises UniverseError naming the file, the JSON path and the problem."""
    file = write_universe_file(doc)
    with pytest.raises(UniverseError) as info:
        load_universe(file)
    error = info.value
    assert error.file == str(file)
    assert message in error.message
    if path:
        assert error.path is not None and error.path.startswith(path)
    assert str(error).startswith(str(file))


def test_missing_file_and_directory(tmp_path: Path) -> None:
    """A missing path or a directory is a UniverseError, not an OSError."""
    with pytest.raises(UniverseError, match="no such file"):
        load_universe(tmp_path / "absent.json")
    with pytest.raises(UniverseError, match="is a directory"):
        load_universe(tmp_path)


@settings(max_examples=300)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_raise_only_universe_error(data: bytes) -> None:
    """The decoder given any bytes either loads or raises the project's error."""
    try:
        decode_universe(data, file="fuzz.json")
    except UniverseError as exc:
        assert exc.file == "fuzz.json"


@settings(max_examples=200)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=5),
        lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=5), c, max_size=3),
        max_leaves=12,
    )
)
def test_arbitrary_json_documents_raise_only_universe_error(doc: Any) -> None:
    """Well-formed JSON of the wrong shape raises only UniverseError."""
    import json

    for candidate in (
        doc,
        {"windtunnel_universe": 1, "tools": doc},
        {"windtunnel_universe": 1, "tools": [], "recordings": doc},
    ):
        try:
            decode_universe(json.dumps(candidate), file="doc.json")
        except UniverseError:
            pass


def test_encode_is_deterministic_and_round_trips(write_universe_file: UniverseFactory) -> None:
    """Writing a loaded universe twice gives identical bytes that load back equal."""
    doc = universe_doc(
        [TOOL, {"name": "page", "mode": "sequence", "result_schema": {"type": "array"}}],
        [{"tool_name": "lookup", "args": {"b": 1, "a": 2}, "result": {"z": 1, "y": [2]}}],
        matching={"on_miss": "empty", "arg_keys": {"lookup": ["a"]}},
    )
    universe = load_universe(write_universe_file(doc))
    first = encode_universe(universe)
    assert first == encode_universe(decode_universe(first))
    assert decode_universe(first) == universe
    assert first.index(b'"a"') < first.index(b'"b"')


def test_encode_keeps_recorded_payload_order_and_recording_meta(
    write_universe_file: UniverseFactory,
) -> None:
    """Results and schemas keep their key order; args are sorted; a recording's meta round-trips."""
    doc = universe_doc(
        [{"name": "lookup", "input_schema": {"type": "object", "properties": {"q": {}, "a": {}}}}],
        [
            {
                "tool_name": "lookup",
                "args": {"q": 1, "a": 2},
                "result": {"z": 1, "m": {"y": 2.5, "b": None}},
                "meta": {"provenance": "model_view"},
            }
        ],
    )
    universe = load_universe(write_universe_file(doc))
    encoded = encode_universe(universe)
    decoded = msgspec.json.decode(encoded)
    (recording,) = decoded["recordings"]
    assert list(recording["args"]) == ["a", "q"]
    assert msgspec.json.encode(recording["result"]) == b'{"z":1,"m":{"y":2.5,"b":null}}'
    assert list(decoded["tools"][0]["input_schema"]["properties"]) == ["q", "a"]
    assert recording["meta"] == {"provenance": "model_view"}
    assert decode_universe(encoded) == universe


def test_a_loaded_universe_is_frozen_and_checked_once(
    write_universe_file: UniverseFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import windtunnel.universe as universe_module
    from windtunnel.mcp import RecordedMCPServer

    checks: list[object] = []
    check = universe_module._check_references

    def counted(universe: Universe, file: str, nesting_checked: bool) -> None:
        checks.append(universe)
        check(universe, file, nesting_checked)

    monkeypatch.setattr(universe_module, "_check_references", counted)
    doc = universe_doc(
        [{"name": "lookup"}], [{"tool_name": "lookup", "args": {"arguments": {"q": 1}}}]
    )
    universe = load_universe(write_universe_file(doc))
    RecordedMCPServer(universe)
    RecordedMCPServer(universe)
    assert checks == [universe]
    with pytest.raises(AttributeError):
        universe.recordings = []  # type: ignore[misc]
    with pytest.raises(AttributeError):
        universe.recordings[0].args = {}  # type: ignore[misc]
    # The wire shape `{"arguments": {...}}` was flattened while decoding, not after.
    assert universe.recordings[0].args == {"q": 1}
    built = Universe(windtunnel_universe=1, tools=[UniverseTool("t")])
    RecordedMCPServer(built)
    assert checks == [universe, built]
