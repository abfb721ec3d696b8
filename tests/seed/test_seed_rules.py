"""Matching and evidence where design 0001 is explicit: consume-once on every path, keyed matches
need their keys, wire wrappers are flattened on live calls, the seed's evidence fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio

from tests.conftest import UniverseFactory, universe_doc
from windtunnel.calls import MCPCall
from windtunnel.freeze import freeze_universe
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import UniverseTool, load_universe

LOOKUP = {"name": "lookup", "input_schema": {"type": "object"}}


def server_for(
    write: UniverseFactory, recordings: list[dict[str, Any]], **matching: Any
) -> RecordedMCPServer:
    tool = {**LOOKUP, "mode": matching.pop("mode", "stateless")}
    server = RecordedMCPServer(load_universe(write(universe_doc([tool], recordings, matching))))
    server.log_events = False
    return server


def rec(args: dict[str, Any], result: Any) -> dict[str, Any]:
    return {"tool_name": "lookup", "args": args, "result": result}


def test_a_nearest_miss_in_sequence_mode_never_serves_a_consumed_recording(
    write_universe_file: UniverseFactory,
) -> None:
    """Consume-once holds for `nearest`: each miss takes the nearest recording not yet used
    (and uses it up), then, with none left, fails the call with nothing `matched`."""
    server = server_for(
        write_universe_file,
        [rec({"q": "a", "n": 1}, "first"), rec({"q": "a", "n": 2}, "second"), rec({"q": "b"}, "b")],
        on_miss="nearest",
        mode="sequence",
    )
    answers = [server.call_tool("lookup", {"q": "a", "n": 9}) for _ in range(4)]
    assert answers[:3] == ["first", "second", "b"]
    assert answers[3]["error"] == "no_recorded_result"
    matched = [call.divergence["matched"] for call in server.call_log()]  # type: ignore[index]
    assert matched == [0, 1, 2, None]
    # The exact recording it missed is gone too: the consumed ones are not served again.
    assert server.call_tool("lookup", {"q": "a", "n": 1})["error"] == "no_recorded_result"
    assert server.call_log()[-1].divergence["reason"] == "sequence_exhausted"  # type: ignore[index]


def test_reset_call_log_gives_back_every_consumed_recording(
    write_universe_file: UniverseFactory,
) -> None:
    """The next run starts as a fresh server would: empty log, every recording available."""
    server = server_for(write_universe_file, [rec({}, 1), rec({}, 2)], mode="sequence")
    assert [server.call_tool("lookup", {}) for _ in range(2)] == [1, 2]
    server.reset_call_log()
    assert server.call_log() == []
    assert server.call_tool("lookup", {}) == 1


def test_a_keyed_match_needs_every_key_on_both_sides(write_universe_file: UniverseFactory) -> None:
    """A call without the identifying key does not hit a recording that lacks it too."""
    server = server_for(
        write_universe_file,
        [rec({"verbose": True}, "no key"), rec({"q": "a", "verbose": True}, "keyed")],
        arg_keys={"lookup": ["q"]},
    )
    assert server.call_tool("lookup", {"verbose": False})["error"] == "no_recorded_result"
    assert server.call_tool("lookup", {"q": "a"}) == "keyed"
    assert [c.extra.get("match") for c in server.call_log()] == [
        None,
        {"tier": "keyed", "index": 1},
    ]


def test_fail_call_and_the_divergence_record_carry_the_seeds_fields(
    write_universe_file: UniverseFactory,
) -> None:
    """`{"error": "no_recorded_result", "tool", "args"}` and `policy` beside `matched`."""
    server = server_for(write_universe_file, [rec({"q": "a"}, 1)])
    answer = server.call_tool("lookup", {"q": "z"})
    assert {k: answer[k] for k in ("error", "tool", "args")} == {
        "error": "no_recorded_result",
        "tool": "lookup",
        "args": {"q": "z"},
    }
    divergence = server.call_log()[0].divergence
    assert divergence is not None
    assert (divergence["policy"], divergence["matched"]) == ("fail_call", None)


WRAPPED = [
    {"name": "lookup", "args": {"q": "a"}},
    {"function": {"name": "lookup", "arguments": '{"q": "a"}'}},
    {"id": "call_7", "type": "function", "function": {"name": "lookup", "arguments": {"q": "a"}}},
    {"name": "lookup", "arguments": {"q": "a"}},
]


@pytest.mark.parametrize("args", WRAPPED)
def test_wrapped_arguments_are_flattened_in_process(
    write_universe_file: UniverseFactory, args: dict[str, Any]
) -> None:
    """A wrapped call hits the flat recording and is logged flat."""
    server = server_for(write_universe_file, [rec({"q": "a"}, "hit")])
    assert server.call_tool("lookup", args) == "hit"
    assert server.call_log()[0].args == {"q": "a"}


@pytest.mark.parametrize("fast_path", [True, False])
async def test_wrapped_arguments_are_flattened_on_live_calls(
    write_universe_file: UniverseFactory, fast_path: bool
) -> None:
    """Over MCP (the official SDK client; the fast path and the SDK path) as in process."""
    server = server_for(write_universe_file, [rec({"q": "a"}, {"row": 1})])
    server.fast_path = fast_path
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url) as client:
                results = [await client.call_tool("lookup", args) for args in WRAPPED]
            await server.stop()
    assert [r.structured_content for r in results] == [{"row": 1}] * len(WRAPPED)
    assert [c.args for c in server.call_log()] == [{"q": "a"}] * len(WRAPPED)


def test_freeze_flattens_wrapped_arguments(tmp_path: Path) -> None:
    """`freeze_universe` writes flat args, whatever wrapper the log holds; the original's
    mapping forms (tool definitions, `modes`) are taken too."""
    log = [
        MCPCall(tool_name="lookup", args=args, result=i) for i, args in enumerate(WRAPPED[:2])
    ] + [MCPCall(tool_name="lookup", args={"q": "b"}, result=9)]
    path = tmp_path / "frozen.universe.json"
    universe = freeze_universe(
        log,
        [{"name": "lookup", "input_schema": {"type": "object"}, "description": None}],
        matching={"modes": {"lookup": "sequence"}, "arg_keys": {"lookup": {"keys": ["q"]}}},
        path=path,
    )
    assert [r.args for r in universe.recordings] == [{"q": "a"}, {"q": "a"}, {"q": "b"}]
    assert universe.tools == [UniverseTool("lookup", {"type": "object"}, mode="sequence")]
    written = json.loads(path.read_text())
    assert written["matching"] == {"arg_keys": {"lookup": ["q"]}}
    assert load_universe(path) == universe
