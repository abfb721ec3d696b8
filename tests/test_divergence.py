"""One divergence record: the replay engine's, the mock's, the log line, the event and the trace
warning for the same miss are built from one place and agree field by field."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from tests.compat import COMPAT_UNIVERSE, MISS_NEAREST
from windtunnel.actors.events import call_events
from windtunnel.errors import UnknownToolError
from windtunnel.mcp import MockMCPServer, RecordedMCPServer
from windtunnel.runner.trace import warnings_from_calls

UNKNOWN = {
    "tool": "refund_card",
    "args": {"amount": 120},
    "reason": "unknown_tool",
    "policy": "fail_call",
    "matched": None,
    "nearest": None,
}
UNKNOWN_RESULT = {
    "error": "unknown_tool",
    "tool": "refund_card",
    "message": "this server does not declare a tool named 'refund_card'",
}


def _mock() -> MockMCPServer:
    mock = MockMCPServer("compat")

    @mock.tool()
    def client_lookup(query: str) -> dict[str, str]:
        return {"name": query}

    return mock


def test_an_unknown_tool_is_the_same_record_in_replay_and_in_a_mock() -> None:
    recorded, mock = RecordedMCPServer(COMPAT_UNIVERSE), _mock()
    with capture_logs() as logs:
        with pytest.raises(UnknownToolError):
            recorded.call_tool("refund_card", {"amount": 120})
        with pytest.raises(UnknownToolError):
            mock.call_tool("refund_card", {"amount": 120})
    replayed, mocked = recorded.call_log()[0], mock.call_log()[0]
    for call in (replayed, mocked):
        assert call.extra == {"divergence": UNKNOWN}
        assert call.result == UNKNOWN_RESULT
        assert call.is_error is True
        assert call.upstream == "compat"
    line = {**UNKNOWN, "upstream": "compat", "scenario": None}
    assert logs == [
        {**line, "event": "universe_divergence", "log_level": "warning"},
        {**line, "event": "universe_divergence", "log_level": "warning"},
    ]


def test_the_event_and_the_trace_warning_carry_the_record_as_it_is() -> None:
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    server.log_events = False
    server.call_tool("client_lookup", {"query": "Bluewing"})
    [call] = server.call_log()
    record: dict[str, Any] = {
        "tool": "client_lookup",
        "args": {"query": "Bluewing"},
        "reason": "no_recorded_result",
        "policy": "fail_call",
        "matched": None,
        "nearest": MISS_NEAREST,
    }
    assert call.divergence == record
    [event] = call_events(call, pack="p", scenario="s", upstream="compat", with_calls=False)
    assert {key: event[key] for key in record} == record
    assert (event["event"], event["level"], event["upstream"]) == (
        "universe_divergence",
        "warning",
        "compat",
    )
    [warning] = warnings_from_calls([call], "s", universes={"compat": server.universe})
    nearest_args = server.universe.recordings[MISS_NEAREST["index"]].args
    assert warning == {
        "event": "universe_divergence",
        "level": "warning",
        "scenario": "s",
        "upstream": "compat",
        **record,
        "nearest": {**MISS_NEAREST, "args": nearest_args},
    }


def test_a_mock_keeps_its_calls_in_the_replay_engines_call_log() -> None:
    recorded, mock = RecordedMCPServer(COMPAT_UNIVERSE), _mock()
    assert type(mock.log) is type(recorded.replay.log)
    heard: list[str] = []
    mock.add_listener(lambda call: heard.append(call.tool_name))
    mock.call_tool("client_lookup", {"query": "a"})
    assert heard == ["client_lookup"]
    assert mock.listeners is mock.log.listeners
    assert [call.result for call in mock.call_log()] == [{"name": "a"}]
