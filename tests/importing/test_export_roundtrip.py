"""A call log exported as a raw MCP JSON-RPC log re-imports into universes that replay the same
answers."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from windtunnel.calls import MCPCall
from windtunnel.errors import UnknownToolError
from windtunnel.importing import export_jsonrpc_log, import_trace, write_import
from windtunnel.importing.export import as_call_tool_result
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import (
    FORMAT_VERSION,
    Recording,
    Universe,
    UniverseTool,
    load_universe,
)

CRM = Universe(
    windtunnel_universe=FORMAT_VERSION,
    tools=[
        UniverseTool(
            name="client_lookup",
            input_schema={"type": "object", "properties": {"query": {"type": "string"}}},
            description="Look up a client by name.",
        ),
        UniverseTool(name="notes", description="Free-text notes."),
    ],
    recordings=[
        Recording(
            tool_name="client_lookup",
            args={"query": "Bluewing Logistics"},
            result={"name": "Bluewing Logistics", "tier": 2, "tags": ["freight", None]},
        ),
        Recording(tool_name="notes", args={"client": "CL-9"}, result="pays late, be polite"),
        Recording(tool_name="notes", args={"client": "CL-10"}, result=[1, 2.5, True]),
        Recording(
            tool_name="notes",
            args={"client": "CL-11"},
            result={"content": [{"type": "text", "text": "locked"}], "isError": True},
        ),
    ],
)
BILLING = Universe(
    windtunnel_universe=FORMAT_VERSION,
    tools=[UniverseTool(name="balance")],
    recordings=[Recording(tool_name="balance", args={"client": "CL-9"}, result={"due": 1840.5})],
)
CALLS: list[tuple[str, str, dict[str, Any]]] = [
    ("crm", "client_lookup", {"query": "Bluewing Logistics"}),
    ("crm", "notes", {"client": "CL-9"}),
    ("billing", "balance", {"client": "CL-9"}),
    ("crm", "notes", {"client": "CL-10"}),
    ("crm", "notes", {"client": "CL-11"}),
    ("crm", "client_lookup", {"query": "Bluewing Logistics"}),
]


def _served(servers: dict[str, RecordedMCPServer]) -> tuple[list[Any], list[MCPCall]]:
    """Make every call in order; return the answers and the merged call log."""
    answers, log = [], []
    for upstream, tool, args in CALLS:
        answers.append(servers[upstream].call_tool(tool, args))
        log.append(servers[upstream].call_log()[-1])
    return answers, log


def test_exported_log_reimports_and_replays_the_same_answers(tmp_path: Path) -> None:
    """Every call answers on the wire exactly as the original servers answered it."""
    original = {
        "crm": RecordedMCPServer(CRM, name="crm"),
        "billing": RecordedMCPServer(BILLING, name="billing"),
    }
    answers, log = _served(original)
    export_jsonrpc_log(
        log, tmp_path / "calls.jsonl", tools={"crm": CRM.tools, "billing": BILLING.tools}
    )
    envelope = import_trace(tmp_path / "calls.jsonl", task="Check Bluewing's account.")
    output = write_import(envelope, tmp_path / "out", name="roundtrip")
    assert envelope.warnings == []
    replayed = {
        name: RecordedMCPServer(load_universe(tmp_path / "out" / file), name=name)
        for name, file in output.plan.files.items()
    }
    again, _ = _served(replayed)
    assert [as_call_tool_result(a) for a in again] == [as_call_tool_result(a) for a in answers]
    assert [c.divergence for s in replayed.values() for c in s.call_log()] == [None] * len(CALLS)
    assert replayed["crm"].universe.tools == CRM.tools


def test_unknown_tool_call_is_exported_as_the_mcp_error(tmp_path: Path) -> None:
    """A call to an undeclared tool becomes a JSON-RPC -32602 error and stays out of the fixture."""
    server = RecordedMCPServer(BILLING, name="billing")
    with pytest.raises(UnknownToolError):
        server.call_tool("refund", {"client": "CL-9"})
    export_jsonrpc_log(server.call_log(), tmp_path / "calls.jsonl")
    envelope = import_trace(tmp_path / "calls.jsonl", task="t")
    (call,) = envelope.calls
    assert (call.outcome, call.error) == (
        "protocol_error",
        type(call.error)(message="Unknown tool: refund", code=-32602),
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("text", {"content": [{"type": "text", "text": "text"}]}),
        (
            {"a": 1},
            {"content": [{"type": "text", "text": '{"a":1}'}], "structuredContent": {"a": 1}},
        ),
        ([1, None], {"content": [{"type": "text", "text": "[1,null]"}]}),
        (None, {"content": [{"type": "text", "text": "null"}]}),
        (
            {"content": [{"type": "text", "text": "x"}]},
            {"content": [{"type": "text", "text": "x"}]},
        ),
    ],
)
def test_payloads_map_to_call_tool_results(value: Any, expected: dict[str, Any]) -> None:
    """Bare payloads map to the CallToolResult a server puts on the wire (DESIGN §5)."""
    assert as_call_tool_result(value) == expected
