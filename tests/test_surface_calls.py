"""Requests other than tools/call in the engine and everything downstream of the call log: a hit
names its entry, a miss is a divergence that `no_divergence`, traces, events and coverage see,
and a frozen log keeps what was answered (issue 25)."""

from __future__ import annotations

import json

import msgspec
import pytest
from structlog.testing import capture_logs

from tests.surface_world import surface_doc
from windtunnel.actors.events import call_events
from windtunnel.api import freeze_universe, no_divergence
from windtunnel.calls import MCPCall
from windtunnel.mcp import RecordedMCPServer
from windtunnel.replay import ClientExchange
from windtunnel.runner.policies import describe_call
from windtunnel.runner.trace import Trace, warnings_from_calls
from windtunnel.runner.universe_coverage import unit_coverage
from windtunnel.universe import decode_universe, encode_universe

COMPLETION = {
    "ref": {"type": "ref/prompt", "name": "with_args"},
    "argument": {"name": "arg1", "value": "a"},
}


def _server() -> RecordedMCPServer:
    return RecordedMCPServer(decode_universe(json.dumps(surface_doc())), name="world")


def test_recorded_requests_are_answered_from_their_entries() -> None:
    """A read by URI, a get by name + canonical arguments, a completion by canonical request."""
    server = _server()
    read = server.request("resources/read", "test://static-blob")
    get = server.request("prompts/get", "with_args", {"arg2": "b", "arg1": "a"})
    completion = server.request("completion/complete", "with_args", COMPLETION)
    universe = server.universe
    assert read.result is universe.resource_reads[1].result
    assert get.result is universe.prompt_gets[1].result
    assert completion.result is universe.completions[0].result
    assert [c.extra for c in (read, get, completion)] == [
        {"match": {"tier": "exact", "index": 1}},
        {"match": {"tier": "exact", "index": 1}},
        {"match": {"tier": "exact", "index": 0}},
    ]
    assert [c.method for c in server.call_log()] == [
        "resources/read",
        "prompts/get",
        "completion/complete",
    ]


def test_an_off_recording_request_is_a_divergence_everywhere() -> None:
    """The call log, the log line, the fleet's events, the trace's warnings and no_divergence
    all see a request the recording does not answer."""
    server = _server()
    with capture_logs() as logs:
        call = server.request("prompts/get", "with_args", {"arg1": "z"})
    expected = {
        "method": "prompts/get",
        "tool": "with_args",
        "args": {"arg1": "z"},
        "reason": "no_recorded_result",
        "policy": "fail_call",
        "matched": None,
        "nearest": None,
    }
    assert call.divergence == expected
    assert call.is_error is True
    assert [(log["event"], log["method"], log["tool"]) for log in logs] == [
        ("universe_divergence", "prompts/get", "with_args")
    ]
    events = call_events(
        call, pack=None, scenario="s", unit_id="s#0", upstream="world", with_calls=True
    )
    assert [e["event"] for e in events] == ["tool_call", "universe_divergence"]
    assert events[1]["method"] == "prompts/get"
    [warning] = warnings_from_calls([call], "s", universes={"world": server.universe})
    assert (warning["method"], warning["tool"], warning["reason"]) == (
        "prompts/get",
        "with_args",
        "no_recorded_result",
    )
    verdict = no_divergence().check(Trace(unit_id="s#0", scenario="s", mcp_calls=[call]))
    assert verdict.passed is False
    assert verdict.reason == (
        'call 1 world prompts/get with_args({"arg1":"z"}) diverged: no_recorded_result'
    )


def test_tool_divergences_keep_their_evidence_fields() -> None:
    """A tool's divergence record and warning have no `method` (DESIGN §4 unchanged)."""
    server = _server()
    call = server.replay.call("echo", {"text": "other"})
    assert call.divergence is not None and "method" not in call.divergence
    [warning] = warnings_from_calls([call], None, universes={"world": server.universe})
    assert "method" not in warning
    assert msgspec.json.decode(msgspec.json.encode(call)).keys() == {
        "tool_name",
        "args",
        "result",
        "extra",
        "upstream",
        "is_error",
        "started_at",
        "duration_ms",
    }


def test_coverage_counts_requests_but_only_tool_recordings_as_served() -> None:
    """A read's entry index is not a recording index: it serves no recording; its miss counts
    as unmatched."""
    server = _server()
    server.request("resources/read", "test://static-text")  # resource_reads[0]
    server.request("resources/read", "test://nowhere")
    server.replay.call("echo", {"text": "hi"})  # recordings[1]
    coverage = unit_coverage(server.call_log(), {"world": server.universe})["world"]
    assert (coverage.calls, coverage.served, coverage.unused, coverage.unmatched) == (3, 1, [0], 1)


def test_describe_call_names_the_method_of_a_request() -> None:
    """Reasons name a request by its method and target."""
    read = MCPCall(method="resources/read", tool_name="test://a", args={}, upstream="u")
    assert describe_call(4, read) == "call 4 u resources/read test://a({})"


def test_freeze_keeps_answered_requests_and_the_surface(tmp_path: object) -> None:
    """A log's answered reads, gets and completions are frozen into the universe, with the
    listed surface given; divergent ones are left out."""
    server = _server()
    server.request("resources/read", "test://static-text")
    server.request("resources/read", "test://static-text")  # the same request: kept once
    server.request("resources/read", "test://nowhere")
    server.request("prompts/get", "simple", {})
    server.request("completion/complete", "with_args", COMPLETION)
    server.replay.call("echo", {"text": "hi"})
    source = server.universe
    frozen = freeze_universe(
        server.call_log(),
        tools=source.tools,
        path=None,
        server={"info": {"name": "x", "version": "1"}, "instructions": "hello"},
        resources=source.resources,
        prompts=source.prompts,
    )
    assert frozen.resource_reads == source.resource_reads[:1]
    assert frozen.prompt_gets == source.prompt_gets[:1]
    assert frozen.completions == source.completions[:1]
    assert frozen.server is not None and frozen.server.instructions == "hello"
    assert decode_universe(encode_universe(frozen)) == frozen


def test_a_recording_with_server_messages_says_they_were_not_sent() -> None:
    """Replay does not send recorded server messages yet: the call says so, and a warning."""
    doc = surface_doc()
    doc["recordings"][1]["server_messages"] = [
        {"method": "notifications/message", "params": {"level": "info", "data": "x"}},
        {"method": "notifications/progress", "params": {"progressToken": 1, "progress": 1}},
    ]
    server = RecordedMCPServer(decode_universe(json.dumps(doc)), name="world")
    with capture_logs() as logs:
        call = server.replay.call("echo", {"text": "hi"})
        plain = server.replay.call("get_sum", {"a": 1, "b": 2})
    assert call.extra == {"match": {"tier": "exact", "index": 1}, "server_messages_not_replayed": 2}
    assert "server_messages_not_replayed" not in plain.extra
    assert [(log["event"], log["recording"], log["messages"]) for log in logs] == [
        ("server_messages_not_replayed", 1, 2)
    ]


def test_request_refuses_a_method_it_does_not_answer() -> None:
    """In process, only the three request methods are answered."""
    with pytest.raises(ValueError, match="tools/list"):
        _server().request("tools/list", "x")


def test_a_client_answer_that_differs_is_a_divergence_with_its_evidence() -> None:
    """`finish` with a differing client answer: the tool's policy answers, and the record, the
    trace's warning and no_divergence carry what was asked and both answers."""
    doc = surface_doc()
    doc["recordings"][1]["server_messages"] = [
        {"method": "roots/list", "response": {"result": {"roots": []}}}
    ]
    server = RecordedMCPServer(decode_universe(json.dumps(doc)), name="world")
    server.log_events = False
    outcome, messages = server.replay.begin("echo", {"text": "hi"})
    assert messages == doc["recordings"][1]["server_messages"]
    evidence = {
        "asked": {"method": "roots/list", "params": {}},
        "answered_then": {"result": {"roots": []}},
        "answered_now": {"result": {"roots": [{"uri": "file:///work"}]}},
    }
    call = server.replay.finish("echo", {"text": "hi"}, outcome, ClientExchange(differs=evidence))
    assert call.is_error is True and call.result["reason"] == "client_answer_differs"
    assert call.divergence == {
        "tool": "echo",
        "args": {"text": "hi"},
        "reason": "client_answer_differs",
        "policy": "fail_call",
        "matched": None,
        "nearest": {"index": 1, "shared": 1, "differing_keys": []},
        "recording": 1,
        "client": evidence,
    }
    [warning] = warnings_from_calls([call], "s", universes={"world": server.universe})
    assert (warning["reason"], warning["recording"], warning["client"]) == (
        "client_answer_differs",
        1,
        evidence,
    )
    agreed = server.replay.finish("echo", {"text": "hi"}, outcome, ClientExchange(unsent=0))
    assert agreed.divergence is None and agreed.result == "hi"
    assert [c.divergence is None for c in server.call_log()] == [False, True]
