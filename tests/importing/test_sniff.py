"""Format sniffing over every shape a format comes in: logs by their first record, transcripts as
a request/response log, a response, a body with its response, or bare messages that use tools."""

from __future__ import annotations

import json
from typing import Any

import pytest

from windtunnel.errors import TraceError
from windtunnel.importing import sniff_format
from windtunnel.importing.document import parse_document

ANTHROPIC_RESPONSE = {"type": "message", "content": [{"type": "text", "text": "done"}]}
TOOL_USE = {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "x"}]}
CHAT_RESPONSE = {"object": "chat.completion", "choices": []}
RESPONSES_RESPONSE = {"object": "response", "output": []}
RPC = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def document(value: Any) -> bytes:
    return json.dumps(value).encode()


def lines(*values: Any) -> bytes:
    """JSON lines (a file of one line is read as one document)."""
    return b"".join(json.dumps(v).encode() + b"\n" for v in values)


def exchange(response: Any) -> dict[str, Any]:
    return {"request": {"messages": []}, "response": response}


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # Logs, told by their first record.
        (lines(RPC, {"jsonrpc": "2.0", "id": 1, "result": {}}), "mcp-jsonrpc"),
        (document([RPC]), "mcp-jsonrpc"),
        (document(RPC), "mcp-jsonrpc"),
        (document({"ts": 1, "conn": "crm", "msg": RPC}), "mcp-jsonrpc"),
        (document(RESPONSES_RESPONSE), "openai-responses"),
        (document([exchange(RESPONSES_RESPONSE)]), "openai-responses"),
        (lines(exchange(RESPONSES_RESPONSE), exchange(RESPONSES_RESPONSE)), "openai-responses"),
        (document({"output": [{"type": "mcp_call"}]}), "openai-responses"),
        # One OTLP export per document or per line.
        (document({"resourceSpans": []}), "otlp-json"),
        (lines({"resourceSpans": []}, {"resourceSpans": []}), "otlp-json"),
        (lines({"type": "summary"}, {"sessionId": "s", "type": "user"}), "claude-code-jsonl"),
        # Chat transcripts, in each of their shapes.
        (lines(exchange({"id": "m"}), exchange(ANTHROPIC_RESPONSE)), "anthropic-messages"),
        (document([exchange(ANTHROPIC_RESPONSE)]), "anthropic-messages"),
        (document(ANTHROPIC_RESPONSE), "anthropic-messages"),
        (document({"messages": [], "response": ANTHROPIC_RESPONSE}), "anthropic-messages"),
        (document({"messages": [TOOL_USE]}), "anthropic-messages"),
        (document([TOOL_USE]), "anthropic-messages"),
        (lines(exchange({"id": "c"}), exchange(CHAT_RESPONSE)), "openai-chat"),
        (document(CHAT_RESPONSE), "openai-chat"),
        (document({"messages": [], "response": CHAT_RESPONSE}), "openai-chat"),
        (document({"messages": [{"role": "tool", "content": "42"}]}), "openai-chat"),
        (document([{"role": "assistant", "tool_calls": []}]), "openai-chat"),
        (document({"contract": "windtunnel-trace", "calls": []}), "contract-a"),
    ],
)
def test_each_shape_is_sniffed_as_its_format(data: bytes, expected: str) -> None:
    """Every shape an adapter reads is recognised as that adapter's format."""
    assert sniff_format(parse_document(data, file="t")) == expected


@pytest.mark.parametrize(
    "data",
    [
        # No tool use: nothing to import.
        document({"messages": [{"role": "user", "content": "hi"}]}),
        document([]),
        # An Anthropic response always has content, wherever it stands.
        document({"type": "message"}),
        document({"messages": [], "response": {"type": "message"}}),
        lines(exchange(ANTHROPIC_RESPONSE), exchange({"id": "m"})),  # decided by the last one
        lines({"messages": [TOOL_USE]}, {"messages": [TOOL_USE]}),  # JSON lines only as a log
        document([{"resourceSpans": []}]),  # OTLP is never an array of exports
    ],
)
def test_what_no_format_claims_is_a_trace_error(data: bytes) -> None:
    """A trace no sniffer recognises asks for --format."""
    with pytest.raises(TraceError, match="cannot tell the trace format; pass --format"):
        sniff_format(parse_document(data, file="t"))
