"""Adapter: OpenAI Chat Completions logs into Contract A.

Input: the last request body (`{"tools", "messages"}`), optionally with the final completion under
`"response"`; a bare array of messages; or a request/response log (JSON lines, or an array, of
`{"request", "response"}`), read from its last exchange. `tool_calls[].function.arguments` are
JSON text (parsed, original kept in `args_raw`); `role: "tool"` messages answer by
`tool_call_id`. Chat logs do not say which server a tool belongs to: every call lands on the
upstream `default`. Results are the model's view.
"""

from __future__ import annotations

from typing import Any

from .builder import TraceBuilder
from .document import Document
from .envelope import Call
from .normalize import parse_args, text_result
from .shape import as_list, as_obj, opt_str, read_transcript
from .sniffing import transcript_looks_like

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "openai-chat"


def _is_response(value: Any) -> bool:
    return isinstance(value, dict) and value.get("object") == "chat.completion"


def _uses_tools(message: dict[str, Any]) -> bool:
    return "tool_calls" in message or message.get("role") == "tool"


def looks_like(doc: Document) -> bool:
    return transcript_looks_like(doc, is_response=_is_response, uses_tools=_uses_tools)


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


def read(doc: Document, builder: TraceBuilder) -> None:
    found = read_transcript(doc, is_response=_is_response)
    body, messages, response = found.body, found.messages, found.response
    response_at = found.response_at
    if response is not None:
        builder.trace_id = opt_str(response.get("id"))
        choices = as_list(doc, response.get("choices"), f"{response_at}.choices")
        if choices:
            first = as_obj(doc, choices[0], f"{response_at}.choices[0]")
            at = f"{response_at}.choices[0].message"
            messages.append((at, as_obj(doc, first.get("message"), at)))
    upstream = builder.upstream("default", kind="function")
    for i, tool in enumerate(as_list(doc, body.get("tools", []), f"{found.at}.tools")):
        tool = as_obj(doc, tool, f"{found.at}.tools[{i}]")
        function = tool.get("function")
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            builder.declare_tool(
                upstream,
                function["name"],
                input_schema=function.get("parameters"),
                schema_source="request_tools",
                description=function.get("description"),
            )
    pending: dict[str, Call] = {}
    for where, message in messages:
        role = message.get("role")
        if role in ("system", "developer") and builder.system is None:
            builder.system = _text(message.get("content"))
        elif role == "user" and not builder.prompt:
            builder.prompt = _text(message.get("content")) or ""
        elif role == "assistant":
            calls = message.get("tool_calls")
            if calls:
                for j, tool_call in enumerate(as_list(doc, calls, f"{where}.tool_calls")):
                    _tool_call(
                        doc, builder, upstream, tool_call, f"{where}.tool_calls[{j}]", pending
                    )
            elif _text(message.get("content")):
                builder.final_answer = _text(message.get("content"))
        elif role == "tool":
            call_id = opt_str(message.get("tool_call_id"))
            call = pending.pop(call_id, None) if call_id is not None else None
            if call is None:
                builder.warn(
                    "orphan_result",
                    f"{where}: a tool message for {call_id!r}, which no call issued; ignored",
                )
                continue
            text = _text(message.get("content"))
            if text is None:
                doc.fail("tool message content must be text", f"{where}.content")
            result, flags = text_result(text)
            builder.set_result(call, result, flags=flags)


def _tool_call(
    doc: Document,
    builder: TraceBuilder,
    upstream: str,
    tool_call: Any,
    where: str,
    pending: dict[str, Call],
) -> None:
    tool_call = as_obj(doc, tool_call, where)
    if tool_call.get("type") == "custom":
        custom = as_obj(doc, tool_call.get("custom"), f"{where}.custom")
        name, raw = custom.get("name"), custom.get("input")
        args = parse_args({"input": raw})
        args.flags.append("args_wrapped")
    else:
        function = as_obj(doc, tool_call.get("function"), f"{where}.function")
        name = function.get("name")
        args = parse_args(function.get("arguments"))
    if not isinstance(name, str) or not name:
        doc.fail("a tool call without a name", where)
    call_id = opt_str(tool_call.get("id"))
    call = builder.call(upstream, name, args, call_id=call_id, provenance={"at": where})
    if call_id is not None:
        pending[call_id] = call
