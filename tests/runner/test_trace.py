"""Traces and their `universe_divergence` worker warnings."""

from __future__ import annotations

from pathlib import Path

import msgspec

from windtunnel.calls import MCPCall
from windtunnel.mcp.recorded import RecordedMCPServer
from windtunnel.runner.trace import Trace, merge_call_logs, warnings_from_calls

CRM = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"


def test_each_divergence_becomes_one_warning_with_fixed_fields() -> None:
    """Hits make no warning; each miss makes exactly the documented fields, in call order."""
    server = RecordedMCPServer(CRM, name="crm")
    server.call_tool("client_lookup", {"query": "Bluewing Logistics"})
    server.call_tool("client_lookup", {"query": "Bluewing", "verbose": True})
    warnings = warnings_from_calls(server.call_log(), "bluewing")
    assert warnings == [
        {
            "event": "universe_divergence",
            "level": "warning",
            "scenario": "bluewing",
            "upstream": "crm",
            "tool": "client_lookup",
            "args": {"query": "Bluewing", "verbose": True},
            "reason": "no_recorded_result",
            "policy": "fail_call",
            "matched": None,
            "nearest": {"index": 0, "shared": 0, "differing_keys": ["query", "verbose"]},
        }
    ]


def test_universes_add_the_nearest_recordings_args() -> None:
    """Given the universe of the upstream, `nearest` also carries the recording's args."""
    server = RecordedMCPServer(CRM, name="crm")
    server.call_tool("list_invoices", {"account_id": "ACC-9", "cursor": "p2"})
    [warning] = warnings_from_calls(server.call_log(), "s", universes={"crm": server.universe})
    assert warning["nearest"] == {
        "index": 2,
        "shared": 0,
        "differing_keys": ["account_id", "cursor"],
        "args": {"account_id": "ACC-1042"},
    }
    # The call log's own evidence is left as the replay engine wrote it.
    assert "args" not in server.call_log()[0].extra["divergence"]["nearest"]


def test_trace_round_trips_through_json() -> None:
    """A trace (with its calls) survives encode/decode unchanged."""
    server = RecordedMCPServer(CRM, name="crm")
    server.call_tool("client_lookup", {"query": "x"})
    trace = Trace(
        unit_id="s#0",
        scenario="s",
        mcp_calls=server.call_log(),
        warnings=warnings_from_calls(server.call_log(), "s"),
        output="done",
    )
    again = msgspec.json.decode(msgspec.json.encode(trace), type=Trace)
    assert again == trace
    assert again.divergence_count == 1


def test_merge_orders_by_start_and_tags_upstreams() -> None:
    """Logs merge by start time, ties in upstream then log order; untagged calls get their key."""
    a1 = MCPCall(tool_name="a1", args={}, started_at=2.0)
    a2 = MCPCall(tool_name="a2", args={}, started_at=5.0)
    b1 = MCPCall(tool_name="b1", args={}, upstream="billing", started_at=2.0)
    b2 = MCPCall(tool_name="b2", args={}, upstream="billing", started_at=1.0)
    merged = merge_call_logs({"crm": [a1, a2], "billing": [b1, b2]})
    assert [(c.tool_name, c.upstream) for c in merged] == [
        ("b2", "billing"),
        ("a1", "crm"),
        ("b1", "billing"),
        ("a2", "crm"),
    ]
    assert a1.upstream is None
