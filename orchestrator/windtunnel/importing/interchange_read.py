"""Adapter: a producer's `windtunnel_interchange` 1 envelope (design 0001's fields only) → ours.

The evidence is chosen as the seed chooses it: `witnessed_calls` when the envelope has them (the
tool boundary's own record, served as the wire view), else the pairs reconstructed from
`messages`, each `tool_call` answered by the first unused `tool_call_response` with its id (the
agent's account: the model view). Every call records which (`provenance.evidence`). A `tool_call`
left unanswered stays a call without a result; a response no call issued is `orphan_response`.
Tools come from `tool_definitions`; a definition without `input_schema` gets a stub accepting any
object (`schema_stubbed`), and a called tool without a definition an inferred schema
(`schema_inferred`): both are flagged for hand-editing. The seed has no upstreams: every tool is on
upstream `default` (`--upstream NAME` names it). `source` stays verbatim as provenance and its
`ref` becomes the trace id.
"""

from __future__ import annotations

import json
from typing import Any

from ..calls import is_tool_result
from .builder import TraceBuilder
from .envelope import CallResult, View
from .normalize import ParsedArgs, iso_from_text, text_block

__all__ = ["STUB_SCHEMA", "read_interchange", "result_from_value"]

STUB_SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": True}


def result_from_value(value: Any, *, view: View) -> tuple[CallResult, bool]:
    """A recorded result value as the `CallToolResult` a universe holding that value serves
    (a `CallToolResult` as it is; anything else as its JSON text, an object also as
    `structuredContent`), and whether it is a tool error."""
    if is_tool_result(value):
        result = CallResult(content=list(value["content"]), view=view)
        if "structuredContent" in value:
            result.structured = value["structuredContent"]
        return result, value.get("isError") is True
    text = (
        value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )
    result = CallResult(content=[text_block(text)], view=view)
    if isinstance(value, dict):
        result.structured = value
    return result, False


def _text_of(message: dict[str, Any]) -> str:
    return "\n".join(part["content"] for part in message["parts"] if part["type"] == "text")


def read_interchange(value: dict[str, Any], builder: TraceBuilder) -> None:
    """Fill `builder` from an envelope `check_interchange` passed."""
    source = value.get("source")
    ref = source.get("ref") if isinstance(source, dict) else None
    if isinstance(ref, str) and ref:
        builder.trace_id = ref
    session = value["session"]
    builder.model = session["model"]
    started = session.get("started_at")
    if isinstance(started, str):
        builder.started_at = iso_from_text(started)
    messages: list[dict[str, Any]] = value["messages"]
    users = [_text_of(m) for m in messages if m["role"] == "user"]
    builder.prompt = next((text for text in users if text), "")
    systems = [_text_of(m) for m in messages if m["role"] == "system"]
    builder.system = next((text for text in systems if text), None)
    answers = [_text_of(m) for m in messages if m["role"] == "assistant"]
    builder.final_answer = next((text for text in reversed(answers) if text), None)
    upstream = builder.upstream("default")
    for tool in value.get("tool_definitions") or []:
        schema = tool.get("input_schema")
        builder.declare_tool(
            upstream,
            tool["name"],
            input_schema=schema if schema is not None else dict(STUB_SCHEMA),
            schema_source="tool_definitions" if schema is not None else "stub",
            description=tool.get("description") or None,
        )
    if value.get("witnessed_calls") is not None:
        _witnessed(value["witnessed_calls"], builder, upstream)
    else:
        _reconstructed(messages, builder, upstream)


def _witnessed(calls: list[dict[str, Any]], builder: TraceBuilder, upstream: str) -> None:
    for i, entry in enumerate(calls):
        call = builder.call(
            upstream,
            entry["tool_name"],
            ParsedArgs(args=dict(entry["args"]), raw=None, flags=[]),
            provenance={"evidence": "witnessed_calls", "at": f"$.witnessed_calls[{i}]"},
        )
        result, is_error = result_from_value(entry["result"], view="wire")
        builder.set_result(call, result, is_error=is_error)


def _reconstructed(messages: list[dict[str, Any]], builder: TraceBuilder, upstream: str) -> None:
    issued: list[tuple[str, dict[str, Any], str]] = []
    responses: dict[str, list[tuple[str, Any]]] = {}
    for i, message in enumerate(messages):
        for j, part in enumerate(message["parts"]):
            where = f"$.messages[{i}].parts[{j}]"
            if part["type"] == "tool_call":
                issued.append((where, part, part["id"]))
            elif part["type"] == "tool_call_response":
                responses.setdefault(part["id"], []).append((where, part["response"]))
    for where, part, call_id in issued:
        call = builder.call(
            upstream,
            part["name"],
            ParsedArgs(args=dict(part["arguments"]), raw=None, flags=[]),
            call_id=call_id,
            provenance={"evidence": "reconstructed", "at": where},
        )
        pending = responses.get(call_id)
        if pending:
            _, response = pending.pop(0)
            result, is_error = result_from_value(response, view="model")
            builder.set_result(call, result, is_error=is_error)
    called = {call_id for _, _, call_id in issued}
    for call_id, left in responses.items():
        for where, _ in left:
            reason = (
                "each tool_call takes one response"
                if call_id in called
                else "no tool_call in the messages has its id"
            )
            builder.warn("orphan_response", f"tool response {call_id!r}: {reason}; ignored", where)
