"""The miss policy of requests other than tool calls (`matching.per_method_on_miss`, issue 25):
by default an unrecorded read, prompt get or completion is the JSON-RPC error its method
prescribes; a universe may answer it with the method's empty result instead. Either way it is a
divergence, with the policy applied in its record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp
import mcp_types as types
import msgspec
import pytest
import trio

from tests.surface_world import surface_doc
from windtunnel.cli.main import main
from windtunnel.errors import UniverseError
from windtunnel.explain import explain_request, render_explanation
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import Matching, decode_universe, encode_universe, validate_universe

ALL_EMPTY = {"resources/read": "empty", "prompts/get": "empty", "completion/complete": "empty"}
COMPLETION = {
    "ref": {"type": "ref/prompt", "name": "with_args"},
    "argument": {"name": "arg1", "value": "zz"},
}


def _universe(per_method: dict[str, Any]) -> Any:
    return decode_universe(json.dumps(surface_doc(matching={"per_method_on_miss": per_method})))


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_empty_answers_the_official_client_with_empty_results(mode: str) -> None:
    """Over HTTP, with every method's policy `empty`: the client gets a read without contents,
    a prompt without messages and a completion without values, and each is a divergence whose
    record says `policy: empty`, not an error."""
    server = RecordedMCPServer(_universe(ALL_EMPTY))
    server.log_events = False
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode=mode) as client:
                read = await client.read_resource("test://nowhere")
                got = await client.get_prompt("with_args", {"arg1": "z"})
                completed = await client.complete(
                    types.PromptReference(type="ref/prompt", name="with_args"),
                    {"name": "arg1", "value": "zz"},
                )
                hit = await client.read_resource("test://static-text")
            await server.stop()
    assert (read.contents, got.messages, completed.completion.values) == ([], [], [])
    assert hit.contents[0].text == "Hello, world"  # type: ignore[union-attr]
    log = server.call_log()
    assert [(c.method, c.result, c.is_error) for c in log[:3]] == [
        ("resources/read", {"contents": []}, False),
        ("prompts/get", {"messages": []}, False),
        ("completion/complete", {"completion": {"values": []}}, False),
    ]
    assert [c.divergence for c in log[:3]] == [
        {
            "method": c.method,
            "tool": c.tool_name,
            "args": c.args,
            "reason": "no_recorded_result",
            "policy": "empty",
            "matched": None,
            "nearest": None,
        }
        for c in log[:3]
    ]
    assert log[3].divergence is None


@pytest.mark.timeout(60)
async def test_a_method_without_a_policy_keeps_the_spec_error() -> None:
    """Only the methods named answer `empty`: an unnamed one is still its JSON-RPC error."""
    server = RecordedMCPServer(_universe({"resources/read": "empty"}))
    server.log_events = False
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url, mode="legacy") as client:
                read = await client.read_resource("test://nowhere")
                with pytest.raises(mcp.MCPError) as refused:
                    await client.get_prompt("with_args", {"arg1": "z"})
            await server.stop()
    assert read.contents == []
    assert refused.value.code == -32602
    assert [c.divergence["policy"] for c in server.call_log() if c.divergence] == [
        "empty",
        "fail_call",
    ]


def test_in_process_requests_follow_the_same_policy() -> None:
    """`RecordedMCPServer.request` answers as over MCP."""
    server = RecordedMCPServer(_universe(ALL_EMPTY))
    server.log_events = False
    call = server.request("completion/complete", "with_args", COMPLETION)
    assert (call.result, call.is_error) == ({"completion": {"values": []}}, False)
    assert call.divergence is not None and call.divergence["policy"] == "empty"


def test_the_policy_round_trips_through_the_file() -> None:
    """Written back as it was read; a universe without it writes no `per_method_on_miss`."""
    universe = _universe({"prompts/get": "empty"})
    assert universe.matching.per_method_on_miss == {"prompts/get": "empty"}
    again = decode_universe(encode_universe(universe))
    assert again.matching == universe.matching
    plain = decode_universe(json.dumps(surface_doc()))
    assert b"per_method_on_miss" not in encode_universe(plain)


@pytest.mark.parametrize(
    ("per_method", "path", "message"),
    [
        (
            {"resources/list": "empty"},
            "$.matching.per_method_on_miss.resources/list",
            "names 'resources/list', not a request a universe answers",
        ),
        (
            {"prompts/get": "nearest"},
            "$.matching.per_method_on_miss.prompts/get",
            "Invalid enum value 'nearest'",
        ),
    ],
)
def test_a_bad_policy_is_one_error_with_its_path(
    per_method: dict[str, Any], path: str, message: str
) -> None:
    """An unknown method, or a policy requests do not take, is refused naming the field."""
    with pytest.raises(UniverseError) as info:
        _universe(per_method)
    assert info.value.path == path
    assert message in str(info.value)


def test_a_matching_built_in_python_is_checked_too() -> None:
    """`Matching(per_method_on_miss=...)` naming no request method fails validation."""
    universe = decode_universe(json.dumps(surface_doc()))
    bad = msgspec.structs.replace(
        universe,
        matching=Matching(per_method_on_miss={"tools/call": "empty"}),
    )
    with pytest.raises(UniverseError) as info:
        validate_universe(bad)
    assert info.value.path == "$.matching.per_method_on_miss.tools/call"


def test_explain_names_the_policy_that_answers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt explain --method` says which policy answers a miss, and the empty result."""
    universe = _universe({"prompts/get": "empty"})
    explained = explain_request(universe, "prompts/get", "with_args", {"arg1": "z"})
    assert (explained.outcome, explained.policy, explained.result) == (
        "miss",
        "empty",
        {"messages": []},
    )
    path = tmp_path / "world.universe.json"
    path.write_bytes(encode_universe(universe))
    assert main(["explain", str(path), "--method", "prompts/get", "with_args", '{"arg1":"z"}']) == 0
    assert capsys.readouterr().out.splitlines() == [
        'prompts/get with_args({"arg1":"z"})',
        "  miss (no_recorded_result): no entry of prompt_gets has the same name and canonically "
        "equal arguments; policy empty (matching.per_method_on_miss) answers",
        '  result: {"messages":[]}',
    ]
    read = explain_request(universe, "resources/read", "test://nowhere", {})
    assert (
        render_explanation(read)
        .splitlines()[1]
        .endswith(
            "policy fail_call: the JSON-RPC error -32002 Resource not found (-32602 from protocol "
            "2026-07-28) answers"
        )
    )


def test_verify_update_carries_the_policy_over() -> None:
    """`wt verify --update` rebuilds the universe from the live server and keeps the old
    file's matching rules, requests' policies among them."""
    from windtunnel.verify.updating import _carried_over

    old = _universe({"completion/complete": "empty"})
    new = decode_universe(json.dumps(surface_doc()))
    assert _carried_over(old, new).matching.per_method_on_miss == {"completion/complete": "empty"}
