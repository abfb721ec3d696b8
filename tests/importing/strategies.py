"""Hypothesis strategies for plausible-but-noisy traces of every format.

Mostly the right shape, with any JSON value anywhere a field is optional, so generated documents
get past the first check of each adapter and exercise pairing, results and emission.
"""

from __future__ import annotations

from typing import Any

import msgspec
from hypothesis import strategies as st

WORDS = [
    "messages",
    "role",
    "content",
    "type",
    "text",
    "id",
    "name",
    "input",
    "result",
    "error",
    '{"a":1}',
    '{"a":',
    "[1]",
    "mcp__s__t",
    "Bash",
    "…",
    "",
    "x@y.example",
]
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(WORDS),
    st.text(max_size=6),
)
anything = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(WORDS), inner, max_size=4)
    ),
    max_leaves=12,
)


def noisy(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Usually `strategy`, now and then any JSON value."""
    return st.one_of(*([strategy] * 12), anything)


ids = noisy(st.sampled_from(["t1", "t2"]))
names = noisy(st.sampled_from(["get", "put", "mcp__crm__find", "mcp__crm__", "Bash"]))
args = st.dictionaries(st.sampled_from(["q", "n", "to"]), scalars, max_size=3)
args_text = st.one_of(args.map(lambda a: msgspec.json.encode(a).decode()), st.sampled_from(WORDS))
text_blocks = st.lists(
    st.fixed_dictionaries({"type": st.just("text"), "text": st.text(max_size=8)}), max_size=2
)

anthropic_block = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            ["text", "tool_use", "tool_result", "mcp_tool_use", "mcp_tool_result"]
        ),
        "id": ids,
        "tool_use_id": ids,
        "name": names,
        "input": noisy(args),
        "content": noisy(st.one_of(st.text(max_size=8), text_blocks)),
    },
    optional={
        "server_name": names,
        "is_error": noisy(st.booleans()),
        "text": noisy(st.text(max_size=8)),
    },
)
anthropic_message = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant"]),
        "content": noisy(st.one_of(st.text(max_size=8), st.lists(anthropic_block, max_size=4))),
    }
)
anthropic_doc = st.fixed_dictionaries(
    {"messages": st.lists(anthropic_message, max_size=6)},
    optional={
        "tools": noisy(
            st.lists(
                st.fixed_dictionaries(
                    {"name": names}, optional={"input_schema": anything, "type": anything}
                ),
                max_size=2,
            )
        ),
        "mcp_servers": noisy(st.lists(st.fixed_dictionaries({"name": names}), max_size=2)),
        "response": noisy(
            st.fixed_dictionaries(
                {"type": st.just("message"), "content": st.lists(anthropic_block, max_size=3)}
            )
        ),
    },
)

chat_call = st.one_of(
    st.fixed_dictionaries(
        {
            "id": ids,
            "type": st.just("function"),
            "function": noisy(
                st.fixed_dictionaries({"name": names, "arguments": noisy(args_text)})
            ),
        }
    ),
    st.fixed_dictionaries(
        {
            "id": ids,
            "type": st.just("custom"),
            "custom": noisy(st.fixed_dictionaries({"name": names, "input": anything})),
        }
    ),
)
chat_message = st.fixed_dictionaries(
    {"role": st.sampled_from(["system", "user", "assistant", "tool"])},
    optional={
        "content": noisy(st.one_of(st.none(), st.text(max_size=8), text_blocks)),
        "tool_calls": noisy(st.lists(chat_call, max_size=3)),
        "tool_call_id": ids,
    },
)
chat_doc = st.fixed_dictionaries(
    {"messages": st.lists(chat_message, max_size=6)},
    optional={
        "tools": noisy(
            st.lists(
                st.fixed_dictionaries(
                    {
                        "type": st.just("function"),
                        "function": st.fixed_dictionaries(
                            {"name": names}, optional={"parameters": anything}
                        ),
                    }
                ),
                max_size=2,
            )
        )
    },
)

responses_item = st.fixed_dictionaries(
    {
        "type": st.sampled_from(
            [
                "message",
                "mcp_list_tools",
                "mcp_call",
                "mcp_approval_request",
                "mcp_approval_response",
                "function_call",
                "function_call_output",
            ]
        ),
        "id": ids,
        "call_id": ids,
        "name": names,
        "arguments": noisy(args_text),
        "output": noisy(st.one_of(st.none(), st.text(max_size=8))),
        "server_label": names,
    },
    optional={
        "error": noisy(
            st.one_of(
                st.none(),
                st.text(max_size=6),
                st.fixed_dictionaries(
                    {
                        "type": st.sampled_from(
                            ["mcp_protocol_error", "mcp_tool_execution_error", "http_error"]
                        )
                    },
                    optional={"code": anything, "message": anything, "content": anything},
                ),
            )
        ),
        "tools": noisy(
            st.lists(
                st.fixed_dictionaries({"name": names}, optional={"input_schema": anything}),
                max_size=2,
            )
        ),
        "approve": noisy(st.booleans()),
        "approval_request_id": ids,
        "role": st.sampled_from(["user", "assistant"]),
        "content": noisy(text_blocks),
    },
)
responses_doc = st.lists(
    st.fixed_dictionaries(
        {
            "request": st.fixed_dictionaries(
                {},
                optional={
                    "input": noisy(
                        st.one_of(st.text(max_size=8), st.lists(responses_item, max_size=3))
                    ),
                    "tools": noisy(
                        st.lists(
                            st.fixed_dictionaries(
                                {
                                    "type": st.sampled_from(["mcp", "function"]),
                                    "server_label": names,
                                    "name": names,
                                }
                            ),
                            max_size=2,
                        )
                    ),
                },
            ),
            "response": st.fixed_dictionaries(
                {"object": st.just("response"), "output": st.lists(responses_item, max_size=4)},
                optional={"id": ids},
            ),
        }
    ),
    min_size=1,
    max_size=3,
)

jsonrpc_request = st.fixed_dictionaries(
    {
        "jsonrpc": st.just("2.0"),
        "method": st.sampled_from(
            ["tools/call", "tools/list", "initialize", "notifications/cancelled"]
        ),
        "params": noisy(
            st.fixed_dictionaries(
                {"name": names, "arguments": noisy(args)}, optional={"requestId": st.integers(1, 3)}
            )
        ),
    },
    optional={"id": noisy(st.integers(1, 3))},
)
jsonrpc_response = st.fixed_dictionaries(
    {"jsonrpc": st.just("2.0"), "id": noisy(st.integers(1, 3))},
    optional={
        "result": noisy(
            st.one_of(
                st.fixed_dictionaries(
                    {"content": noisy(text_blocks)},
                    optional={"isError": anything, "structuredContent": anything},
                ),
                st.fixed_dictionaries(
                    {
                        "tools": noisy(
                            st.lists(
                                st.fixed_dictionaries(
                                    {"name": names}, optional={"inputSchema": anything}
                                ),
                                max_size=2,
                            )
                        )
                    }
                ),
                st.fixed_dictionaries({"serverInfo": st.fixed_dictionaries({"name": names})}),
            )
        ),
        "error": noisy(st.fixed_dictionaries({"code": anything, "message": anything})),
    },
)
jsonrpc_message = st.one_of(jsonrpc_request, jsonrpc_response)
jsonrpc_lines = st.lists(
    st.one_of(
        jsonrpc_message,
        st.fixed_dictionaries(
            {"msg": jsonrpc_message},
            optional={
                "conn": noisy(st.sampled_from(["crm", "billing"])),
                "ts": noisy(st.sampled_from(["2026-01-01T00:00:00Z", "bad"])),
            },
        ),
    ),
    min_size=1,
    max_size=8,
)

claude_lines = st.lists(
    st.fixed_dictionaries(
        {
            "type": st.sampled_from(["user", "assistant", "summary"]),
            "sessionId": st.just("s1"),
            "message": noisy(anthropic_message),
        },
        optional={
            "timestamp": noisy(st.sampled_from(["2026-10-12T09:00:00.000Z", "nope"])),
            "isSidechain": noisy(st.booleans()),
        },
    ),
    min_size=1,
    max_size=8,
)

otlp_value = st.one_of(
    st.fixed_dictionaries({"stringValue": noisy(st.one_of(names, args_text))}),
    st.fixed_dictionaries(
        {"intValue": noisy(st.sampled_from(["8443", "99999999999999999999999", 5]))}
    ),
    st.fixed_dictionaries(
        {
            "kvlistValue": st.fixed_dictionaries(
                {
                    "values": st.lists(
                        st.fixed_dictionaries(
                            {
                                "key": st.sampled_from(["q", "n"]),
                                "value": st.fixed_dictionaries(
                                    {"stringValue": st.text(max_size=4)}
                                ),
                            }
                        ),
                        max_size=2,
                    )
                }
            )
        }
    ),
    anything,
)
otlp_attr = st.fixed_dictionaries(
    {
        "key": st.sampled_from(
            [
                "gen_ai.operation.name",
                "mcp.method.name",
                "gen_ai.tool.name",
                "gen_ai.tool.call.id",
                "gen_ai.tool.call.arguments",
                "gen_ai.tool.call.result",
                "error.type",
                "server.address",
                "server.port",
                "gen_ai.input.messages",
                "gen_ai.output.messages",
                "gen_ai.tool.definitions",
            ]
        ),
        "value": st.one_of(
            st.sampled_from(
                [
                    {"stringValue": "execute_tool"},
                    {"stringValue": "tools/call"},
                    {"stringValue": "tool_error"},
                    {"stringValue": "-32602"},
                ]
            ),
            otlp_value,
        ),
    }
)
otlp_span = st.fixed_dictionaries(
    {
        "traceId": st.sampled_from(
            ["0af7651916cd43dd8448eb211c80319c", "CvdlGRbNQ92ESOshHIAxnA==", ""]
        ),
        "spanId": st.sampled_from(["a1", "b2", "c3", "d4"]),
        "attributes": st.lists(otlp_attr, max_size=6),
    },
    optional={
        "parentSpanId": st.sampled_from(["a1", "b2", "c3"]),
        "kind": noisy(st.sampled_from([1, 2, 3, "SPAN_KIND_SERVER", "SPAN_KIND_CLIENT"])),
        "startTimeUnixNano": noisy(
            st.sampled_from(["1788000000000000000", "5", "99999999999999999999999"])
        ),
        "endTimeUnixNano": noisy(st.sampled_from(["1788000000000000000", "7"])),
        "status": noisy(
            st.fixed_dictionaries(
                {"code": noisy(st.sampled_from([0, 1, 2, "STATUS_CODE_ERROR"]))},
                optional={"message": anything},
            )
        ),
    },
)
otlp_doc = st.fixed_dictionaries(
    {
        "resourceSpans": st.lists(
            st.fixed_dictionaries(
                {
                    "scopeSpans": st.lists(
                        st.fixed_dictionaries({"spans": st.lists(otlp_span, max_size=5)}),
                        max_size=2,
                    )
                },
                optional={
                    "resource": st.fixed_dictionaries(
                        {
                            "attributes": st.lists(
                                st.fixed_dictionaries(
                                    {
                                        "key": st.sampled_from(["service.name", "service.version"]),
                                        "value": otlp_value,
                                    }
                                ),
                                max_size=2,
                            )
                        }
                    )
                },
            ),
            max_size=2,
        )
    }
)


agents_span = st.fixed_dictionaries(
    {
        "object": st.just("trace.span"),
        "trace_id": st.sampled_from(["trace_1", "trace_2"]),
        "span_data": noisy(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["function", "mcp_tools", "agent"])},
                optional={
                    "name": noisy(st.sampled_from(["lookup", ""])),
                    "input": noisy(st.sampled_from(['{"q": 1}', "{", "", "[1]"])),
                    "output": noisy(
                        st.sampled_from(
                            ["{'type': 'text', 'text': 'hi'}", "[{'type': 'text'}]", "ok", "(1,"]
                        )
                    ),
                    "mcp_data": noisy(st.fixed_dictionaries({"server": anything})),
                },
            )
        ),
    },
    optional={
        "id": anything,
        "started_at": noisy(st.sampled_from(["2026-12-02T15:12:41.525217+00:00", "x"])),
        "ended_at": anything,
        "error": noisy(st.fixed_dictionaries({"message": anything}, optional={"data": anything})),
    },
)
agents_lines = st.tuples(
    st.fixed_dictionaries({"object": st.just("trace"), "id": st.just("trace_1")}),
    st.lists(agents_span, max_size=5),
).map(lambda head_spans: [head_spans[0], *head_spans[1]])


def jsonl(values: list[Any]) -> bytes:
    return b"\n".join(msgspec.json.encode(v) for v in values) + b"\n"


DOCUMENTS: dict[str, st.SearchStrategy[bytes]] = {
    "anthropic-messages": anthropic_doc.map(msgspec.json.encode),
    "openai-chat": chat_doc.map(msgspec.json.encode),
    "openai-responses": responses_doc.map(msgspec.json.encode),
    "mcp-jsonrpc": jsonrpc_lines.map(jsonl),
    "claude-code-jsonl": claude_lines.map(jsonl),
    "otlp-json": otlp_doc.map(msgspec.json.encode),
    "openai-agents": agents_lines.map(jsonl),
}
