"""Adapter behaviour the golden samples do not pin: edge shapes of each format."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from windtunnel.errors import TraceError
from windtunnel.importing import import_bytes
from windtunnel.importing.envelope import CallError, Envelope


def _import(value: Any, fmt: str | None = None, *, lines: bool = False) -> Envelope:
    if lines:
        data = b"\n".join(msgspec.json.encode(v) for v in value) + b"\n"
    else:
        data = msgspec.json.encode(value)
    return import_bytes(data, file="t", format=fmt)


def _span(span_id: str, **attrs: Any) -> dict[str, Any]:
    return {
        "traceId": "CvdlGRbNQ92ESOshHIAxnA==",
        "spanId": span_id,
        "startTimeUnixNano": "1788000000000000000",
        "endTimeUnixNano": "1788000000100000000",
        "attributes": [{"key": k, "value": {"stringValue": v}} for k, v in attrs.items()],
    }


def test_otlp_base64_ids_legacy_scope_key_and_extra_traces() -> None:
    """Base64 trace ids become hex, instrumentationLibrarySpans is read, extra traces warned."""
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "ping"}
    other = dict(_span("AAAAAAAAAAE=", **tool), traceId="ffffffffffffffffffffffffffffffff")
    other["startTimeUnixNano"] = "1789000000000000000"
    doc = {
        "resourceSpans": [
            {"instrumentationLibrarySpans": [{"spans": [_span("AAAAAAAAAAI=", **tool), other]}]}
        ]
    }
    envelope = _import(doc)
    assert envelope.trace.id == "0af7651916cd43dd8448eb211c80319c"
    assert [(c.tool, c.outcome, c.provenance) for c in envelope.calls] == [
        ("ping", "unknown", {"span_id": "0000000000000002"})
    ]
    assert envelope.warnings[0].message == (
        "the file holds 2 traces; imported 0af7651916cd43dd8448eb211c80319c, the earliest "
        "with a tool call"
    )


def test_otlp_json_rpc_error_code_is_a_protocol_error() -> None:
    """A failed MCP client span with a JSON-RPC code in error.type is a protocol error."""
    span = _span(
        "a1",
        **{"mcp.method.name": "tools/call", "gen_ai.tool.name": "ping", "error.type": "-32602"},
    )
    span["status"] = {"code": 2, "message": "Unknown tool: ping"}
    (call,) = _import({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}).calls
    assert (call.outcome, call.error) == (
        "protocol_error",
        type(call.error)(message="Unknown tool: ping", code=-32602),
    )


def test_openai_custom_tool_input_is_wrapped() -> None:
    """A freeform custom tool call keeps its text as {"input": ...}, flagged args_wrapped."""
    doc = {
        "messages": [
            {"role": "user", "content": "run it"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c1", "type": "custom", "custom": {"name": "sql", "input": "SELECT 1"}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "1"},
        ]
    }
    (call,) = _import(doc).calls
    assert (call.args, call.flags) == (
        {"input": "SELECT 1"},
        ["args_wrapped", "result_model_view"],
    )


def test_openai_responses_error_shapes() -> None:
    """String errors are tool errors; http_error is a transport error with its code."""
    items = [
        {
            "type": "mcp_call",
            "id": "m1",
            "server_label": "kb",
            "name": "a",
            "arguments": "{}",
            "error": "boom",
        },
        {
            "type": "mcp_call",
            "id": "m2",
            "server_label": "kb",
            "name": "a",
            "arguments": "{}",
            "error": {"type": "http_error", "code": 502, "message": "bad gateway"},
        },
    ]
    envelope = _import({"object": "response", "id": "r1", "output": items})
    assert [(c.outcome, c.flags) for c in envelope.calls] == [
        ("tool_error", ["result_from_error_text", "result_model_view"]),
        ("transport_error", []),
    ]
    assert envelope.calls[1].error == type(envelope.calls[1].error)(message="bad gateway", code=502)


def test_anthropic_image_results_become_mcp_image_blocks() -> None:
    """A base64 image in a tool_result maps to an MCP image content block."""
    doc = {
        "messages": [
            {"role": "user", "content": "chart?"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "t", "name": "chart", "input": {}}],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t",
                        "content": [
                            {
                                "type": "image",
                                "source": {
                                    "type": "base64",
                                    "media_type": "image/png",
                                    "data": "iVBO",
                                },
                            }
                        ],
                    }
                ],
            },
        ]
    }
    (call,) = _import(doc).calls
    assert call.result is not None
    assert call.result.content == [{"type": "image", "data": "iVBO", "mimeType": "image/png"}]


def test_claude_code_interruption_and_sidechain() -> None:
    """An interrupted call is cancelled; a subagent's call is marked as sidechain."""
    base = {"sessionId": "s", "timestamp": "2026-10-12T09:00:00Z"}
    lines = [
        {**base, "type": "user", "message": {"role": "user", "content": "go"}},
        {
            **base,
            "type": "assistant",
            "isSidechain": True,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "t1", "name": "mcp__crm__find", "input": {"q": "x"}}
                ],
            },
        },
        {
            **base,
            "type": "user",
            "message": {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "is_error": True,
                        "content": "[Request interrupted by user for tool use]",
                    }
                ],
            },
        },
    ]
    (call,) = _import(lines, lines=True).calls
    assert (call.upstream, call.tool, call.outcome, call.provenance) == (
        "crm",
        "find",
        "cancelled",
        {"at": "line 2: content[0]", "sidechain": True, "source_name": "mcp__crm__find"},
    )
    assert call.started_at == "2026-10-12T09:00:00.000Z"


def test_jsonrpc_plain_array_with_modern_server_info_and_orphans() -> None:
    """A JSON array of messages names its upstream from result _meta; orphans are warned."""
    meta = {"io.modelcontextprotocol/serverInfo": {"name": "Files Server", "version": "9"}}
    messages = [
        {
            "jsonrpc": "2.0",
            "id": "a",
            "method": "tools/call",
            "params": {"name": "read", "arguments": {"p": "/x"}},
        },
        {
            "jsonrpc": "2.0",
            "id": "a",
            "result": {"content": [{"type": "text", "text": "hi"}], "_meta": meta},
        },
        {"jsonrpc": "2.0", "id": 99, "result": {}},
    ]
    envelope = _import_task(messages, "read x")
    assert [(u.id, u.identity.source, u.identity.server_name) for u in envelope.upstreams] == [
        ("files-server", "server_info", "Files Server")
    ]
    assert (envelope.calls[0].call_id, envelope.calls[0].outcome) == ("a", "ok")
    assert envelope.warnings[0].message == (
        "$[2]: a response to request id 99 that the log does not contain; ignored"
    )


def _import_task(value: Any, task: str) -> Envelope:
    return import_bytes(msgspec.json.encode(value), file="t", task=task)


def test_upstream_option_names_the_unnamed_upstream() -> None:
    """`upstream=` renames `default` everywhere, with identity source `user`."""
    doc = {
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "tool_calls": [
                    {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}
                ],
            },
        ]
    }
    envelope = import_bytes(msgspec.json.encode(doc), file="t", upstream="Billing API")
    assert [(u.id, u.identity.source) for u in envelope.upstreams] == [("billing-api", "user")]
    assert [c.upstream for c in envelope.calls] == ["billing-api"]
    assert "upstream_unnamed" not in [w.code for w in envelope.warnings]


def test_upstream_option_without_an_unnamed_upstream_is_an_error() -> None:
    """Naming an upstream the trace already names is refused with a clear message."""
    line = {"conn": "crm", "msg": {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}}
    with pytest.raises(TraceError) as caught:
        import_bytes(msgspec.json.encode(line), file="t", upstream="crm")
    assert str(caught.value) == (
        "t: --upstream 'crm': the trace has no unnamed upstream, or one of that name already exists"
    )


def test_jsonrpc_ids_are_per_direction() -> None:
    """A server's own request reusing a client id does not steal the client's response."""

    def line(sender: str, msg: dict[str, Any]) -> dict[str, Any]:
        return {"conn": "crm", "dir": sender, "msg": {"jsonrpc": "2.0", **msg}}

    ok = {"content": [{"type": "text", "text": "found"}]}
    lines = [
        line("c2s", {"id": 1, "method": "tools/call", "params": {"name": "find", "arguments": {}}}),
        line("s2c", {"id": 1, "method": "sampling/createMessage", "params": {}}),
        line("c2s", {"id": 1, "result": {"role": "assistant", "content": {"type": "text"}}}),
        line("s2c", {"id": 1, "result": ok}),
    ]
    data = b"\n".join(msgspec.json.encode(v) for v in lines)
    (call,) = import_bytes(data, file="t", task="t").calls
    assert (call.outcome, call.result.content if call.result else None) == ("ok", ok["content"])


def test_otlp_spans_without_a_tool_call_exit_naming_what_was_found() -> None:
    """A file with spans but no tool call is an error naming span names, scopes and formats."""
    doc = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "scope": {"name": "my.http"},
                        "spans": [_span("AAAAAAAAAAE=", route="/a"), _span("AAAAAAAAAAI=")],
                    }
                ]
            }
        ]
    }
    doc["resourceSpans"][0]["scopeSpans"][0]["spans"][1]["name"] = "GET /a"
    with pytest.raises(TraceError) as caught:
        _import(doc)
    assert caught.value.message.startswith(
        "2 span(s) but no recognisable tool call: span names '(unnamed)' x1, 'GET /a' x1; "
        "scopes 'my.http'. Supported: GenAI execute_tool spans"
    )


def test_otlp_odd_spans_are_skipped_and_the_rest_imported() -> None:
    """A span that is not an object and a tool span naming no tool are warnings, not aborts."""
    tool = {"gen_ai.operation.name": "execute_tool"}
    named = _span("AAAAAAAAAAI=", **tool, **{"gen_ai.tool.name": "ping"})
    nameless = _span("AAAAAAAAAAM=", **tool)
    doc = {"resourceSpans": [{"scopeSpans": [{"spans": [7, named, nameless]}]}]}
    envelope = _import(doc)
    assert [(c.tool, c.args, c.flags) for c in envelope.calls] == [("ping", None, ["args_missing"])]
    assert [(w.code, w.path) for w in envelope.warnings[:2]] == [
        ("span_unreadable", "$.resourceSpans[0].scopeSpans[0].spans[0]"),
        ("tool_name_missing", "$.resourceSpans[0].scopeSpans[0].spans[2]"),
    ]


def test_otlp_span_name_gives_the_tool_and_enum_names_are_read() -> None:
    """`MCP send tools/call <tool>` names the tool; SPAN_KIND_* and STATUS_CODE_* are enums."""
    span = _span("AAAAAAAAAAE=", **{"mcp.method.name": "tools/call"})
    span.update(
        name="MCP send tools/call lookup",
        kind="SPAN_KIND_CLIENT",
        status={"code": "STATUS_CODE_ERROR", "message": "boom"},
    )
    span["attributes"].append({"key": "error.type", "value": {"stringValue": "-32602"}})
    envelope = _import({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    (call,) = envelope.calls
    assert (call.tool, call.outcome, call.error) == (
        "lookup",
        "protocol_error",
        CallError(message="boom", code=-32602),
    )


def test_otlp_tool_error_without_text_gets_no_made_up_result() -> None:
    """error.type = tool_error with no message leaves the call without a result."""
    span = _span(
        "AAAAAAAAAAE=", **{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "t"}
    )
    span["attributes"].append({"key": "error.type", "value": {"stringValue": "tool_error"}})
    span["status"] = {"code": 2}
    envelope = _import({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    (call,) = envelope.calls
    assert (call.outcome, call.result) == ("unknown", None)
    assert call.error is not None and "holds no error text" in call.error.message
