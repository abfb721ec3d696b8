"""freeze_universe: call logs become universe files that replay the same answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import UniverseFactory, universe_doc
from windtunnel.api import MCPCall, UniverseTool, freeze_universe, load_universe
from windtunnel.errors import UniverseError
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Matching

TOOLS = [UniverseTool("lookup", {"type": "object"}), UniverseTool("page", {}, mode="sequence")]


def call(tool: str, args: dict[str, Any], result: Any, **extra: Any) -> MCPCall:
    return MCPCall(tool_name=tool, args=args, result=result, extra=extra)


def test_freeze_keeps_first_of_identical_stateless_calls(tmp_path: Path) -> None:
    """Stateless tools keep the first of canonically identical calls; sequence tools keep all."""
    log = [
        call("lookup", {"q": 1, "v": True}, "first"),
        call("lookup", {"v": True, "q": 1.0}, "second"),
        call("page", {"n": 1}, "p1"),
        call("page", {"n": 1}, "p2"),
        call("lookup", {"q": 2}, "miss", divergence={"reason": "no_recorded_result"}),
    ]
    universe = freeze_universe(log, tools=TOOLS, path=tmp_path / "f.universe.json")
    assert [(r.tool_name, r.args, r.result) for r in universe.recordings] == [
        ("lookup", {"q": 1, "v": True}, "first"),
        ("page", {"n": 1}, "p1"),
        ("page", {"n": 1}, "p2"),
    ]
    assert load_universe(tmp_path / "f.universe.json") == universe


def test_freeze_can_include_divergent_calls(tmp_path: Path) -> None:
    """include_divergent=True keeps calls that missed."""
    log = [call("lookup", {"q": 2}, "miss", divergence={"reason": "no_recorded_result"})]
    universe = freeze_universe(log, tools=TOOLS, path=None, include_divergent=True)
    assert len(universe.recordings) == 1


def test_freeze_output_is_byte_stable(tmp_path: Path) -> None:
    """Freezing the same log twice writes identical bytes: args with sorted keys, results as recorded."""
    log = [call("lookup", {"b": 1, "a": 2}, {"z": 1, "a": 2})]
    freeze_universe(log, tools=TOOLS, matching=Matching(on_miss="empty"), path=tmp_path / "1.json")
    freeze_universe(log, tools=TOOLS, matching=Matching(on_miss="empty"), path=tmp_path / "2.json")
    first = (tmp_path / "1.json").read_bytes()
    assert first == (tmp_path / "2.json").read_bytes()
    assert b'"a": 2,\n' in first and first.index(b'"a"') < first.index(b'"b"')
    result = first[first.index(b'"result"') :]
    assert result.index(b'"z"') < result.index(b'"a"')


def test_freeze_refuses_calls_to_unlisted_tools(tmp_path: Path) -> None:
    """A call to a tool missing from `tools` is an error, not a broken file."""
    with pytest.raises(UniverseError, match="'ghost', which is not among the tools"):
        freeze_universe([call("ghost", {}, 1)], tools=TOOLS, path=tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_freeze_normalizes_wire_wrappers(tmp_path: Path) -> None:
    """A recorder that logged the wire wrapper still freezes flat args."""
    log = [call("lookup", {"name": "lookup", "arguments": {"q": 1}}, "r")]
    assert freeze_universe(log, tools=TOOLS, path=None).recordings[0].args == {"q": 1}


def test_refreeze_of_recorded_server_log_is_equivalent(
    write_universe_file: UniverseFactory, tmp_path: Path
) -> None:
    """A recorded server's hits re-freeze into a universe that answers the same."""
    doc = universe_doc(
        [{"name": "lookup"}],
        [
            {"tool_name": "lookup", "args": {"q": "a"}, "result": {"r": 1}},
            {"tool_name": "lookup", "args": {"q": "b"}, "result": [1, 2]},
        ],
    )
    original = RecordedMCPServer(write_universe_file(doc))
    calls = [{"q": "a"}, {"q": "b"}, {"q": "c"}, {"q": "a"}]
    answers = [original.call_tool("lookup", c) for c in calls]
    frozen = freeze_universe(
        original.call_log(), tools=original.universe.tools, path=tmp_path / "re.json"
    )
    assert len(frozen.recordings) == 2
    replayed = RecordedMCPServer(tmp_path / "re.json")
    assert [replayed.call_tool("lookup", c) for c in calls] == answers


json_scalars = st.none() | st.booleans() | st.integers(-1000, 1000) | st.text(max_size=4)
json_results = st.recursive(
    json_scalars,
    lambda c: st.lists(c, max_size=3) | st.dictionaries(st.text(max_size=4), c, max_size=3),
    max_leaves=8,
)
call_strategy = st.tuples(
    st.sampled_from(["lookup", "page"]),
    st.dictionaries(st.sampled_from(["q", "n", "x"]), json_scalars, max_size=3),
    json_results,
)


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(call_strategy, max_size=12))
def test_freeze_load_replay_gives_the_original_answers(
    tmp_path: Path, calls: list[tuple[str, dict[str, Any], Any]]
) -> None:
    """For any mock call log, the frozen universe answers every call as the mock did."""
    log = [call(tool, args, result) for tool, args, result in calls]
    path = tmp_path / "prop.universe.json"
    freeze_universe(log, tools=TOOLS, path=path)
    server = RecordedMCPServer(path)
    first_answer: dict[Any, Any] = {}
    from windtunnel.canonical import canonical_key

    for entry in log:
        answer = server.call_tool(entry.tool_name, entry.args)
        if entry.tool_name == "page":
            assert answer == entry.result
        else:
            key = canonical_key(entry.args)
            first_answer.setdefault(key, entry.result)
            assert answer == first_answer[key]
    assert all(c.divergence is None for c in server.call_log())


def test_freeze_keeps_the_universe_meta_and_each_recordings_meta() -> None:
    """`meta` is the universe's; a call's extra["recording_meta"] becomes its recording's meta."""
    log = [
        MCPCall(
            tool_name="lookup", args={"q": 1}, result="a", extra={"recording_meta": {"seq": 0}}
        ),
        MCPCall(tool_name="lookup", args={"q": 2}, result="b"),
    ]
    universe = freeze_universe(log, tools=TOOLS, path=None, meta={"upstream": {"name": "crm"}})
    assert universe.meta == {"upstream": {"name": "crm"}}
    assert [r.meta for r in universe.recordings] == [{"seq": 0}, msgspec.UNSET]


def test_freeze_accepts_matching_in_the_mapping_form_the_docs_show(tmp_path: Path) -> None:
    """`matching={"arg_keys": {...}}` (the user documentation's example) freezes and replays keyed."""
    path = tmp_path / "f.universe.json"
    universe = freeze_universe(
        [call("lookup", {"query": "Bluewing", "verbose": False}, {"id": 7})],
        tools=TOOLS,
        matching={"arg_keys": {"lookup": ["query"]}, "on_miss": "nearest"},
        path=path,
    )
    assert universe.matching == Matching(on_miss="nearest", arg_keys={"lookup": ["query"]})
    assert load_universe(path) == universe
    server = RecordedMCPServer(path)
    assert server.call_tool("lookup", {"query": "Bluewing", "verbose": True}) == {"id": 7}


@pytest.mark.parametrize(
    ("matching", "where", "message"),
    [
        ({"arg_keyz": {}}, "$.matching", "Object contains unknown field `arg_keyz`"),
        ({"arg_keys": {"lookup": "query"}}, "$.matching.arg_keys.lookup", "Expected `array`"),
        (
            {"per_tool_on_miss": {"page": "empty", "lookup": "explode"}},
            "$.matching.per_tool_on_miss.lookup",
            "Invalid enum value 'explode'",
        ),
        ({"on_miss": 3}, "$.matching.on_miss", "Expected `str | null`, got `int`"),
        ("fail_call", "$.matching", "matching must be a Matching or a mapping, got str"),
    ],
)
def test_bad_matching_mappings_name_the_key_and_write_nothing(
    tmp_path: Path, matching: Any, where: str, message: str
) -> None:
    """A bad mapping is a `UniverseError` naming the file and the key; no file is written."""
    path = tmp_path / "f.universe.json"
    with pytest.raises(UniverseError) as caught:
        freeze_universe([call("lookup", {"q": 1}, "r")], tools=TOOLS, matching=matching, path=path)
    assert (caught.value.file, caught.value.path) == (str(path), where)
    assert message in caught.value.message
    assert list(tmp_path.iterdir()) == []
