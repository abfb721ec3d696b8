"""OTLP/JSON: what the chat spans say (GenAI `gen_ai.*.messages`): the task, the system
instructions, the final answer, the tool definitions, and the calls themselves when no tool span
recorded them (results there are what the model was shown).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .builder import TraceBuilder
from .envelope import Call
from .normalize import parse_args, parse_json_text, text_result
from .otlp_spans import Span
from .shape import opt_str

__all__ = ["calls_from_messages", "conversation", "declare_definition", "tool_definitions"]


def declare_definition(
    builder: TraceBuilder, upstream: str, name: str, definition: dict[str, Any] | None
) -> None:
    """Declare a tool from its `gen_ai.tool.definitions` entry, when it has parameters."""
    if definition is not None and isinstance(definition.get("parameters"), dict):
        builder.declare_tool(
            upstream,
            name,
            input_schema=definition["parameters"],
            schema_source="otel_tool_definitions",
            description=definition.get("description"),
        )


def _messages(value: Any) -> list[dict[str, Any]]:
    if isinstance(value, str):
        ok, value = parse_json_text(value)
        if not ok:
            return []
    return [m for m in value if isinstance(m, dict)] if isinstance(value, list) else []


def _text_parts(message: dict[str, Any]) -> tuple[str | None, bool]:
    parts = message.get("parts")
    if not isinstance(parts, list):
        return None, False
    texts = [
        p["content"]
        for p in parts
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("content"), str)
    ]
    calls = any(isinstance(p, dict) and p.get("type") == "tool_call" for p in parts)
    return ("\n".join(texts) if texts else None), calls


def conversation(builder: TraceBuilder, spans: list[Span]) -> None:
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        for message in _messages(span.attrs.get("gen_ai.input.messages")):
            text, _ = _text_parts(message)
            if message.get("role") == "user" and text and not builder.prompt:
                builder.prompt = text
        if builder.system is None:
            instructions = _messages(span.attrs.get("gen_ai.system_instructions"))
            texts = [p["content"] for p in instructions if isinstance(p.get("content"), str)]
            builder.system = "\n".join(texts) if texts else None
    for span in sorted(spans, key=lambda s: (s.end, s.order)):
        for message in _messages(span.attrs.get("gen_ai.output.messages")):
            text, calls = _text_parts(message)
            if message.get("role") == "assistant" and text and not calls:
                builder.final_answer = text


def tool_definitions(spans: list[Span]) -> dict[str, dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        for definition in _messages(span.attrs.get("gen_ai.tool.definitions")):
            name = definition.get("name")
            if isinstance(name, str) and name and name not in found:
                found[name] = definition
    return found


def calls_from_messages(
    builder: TraceBuilder, spans: list[Span], definitions: dict[str, dict[str, Any]]
) -> None:
    """No tool spans: recover calls from the chat messages (`tool_call` / `tool_call_response`).

    Each chat span repeats the conversation so far, so parts are counted once per id. Results are
    what the model was shown, and the messages do not say which server a tool belongs to.
    """
    calls: dict[str, Call] = {}
    for span in sorted(spans, key=lambda s: (s.start, s.order)):
        for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
            for message in _messages(span.attrs.get(key)):
                parts = message.get("parts")
                for part in parts if isinstance(parts, list) else []:
                    if isinstance(part, dict):
                        _message_part(builder, part, span, calls, definitions)


def _message_part(
    builder: TraceBuilder,
    part: dict[str, Any],
    span: Span,
    calls: dict[str, Call],
    definitions: dict[str, dict[str, Any]],
) -> None:
    call_id = opt_str(part.get("id"))
    call_id = call_id.strip() if call_id else None
    if part.get("type") == "tool_call" and call_id and call_id not in calls:
        name = opt_str(part.get("name"))
        if not name:
            return
        upstream = builder.upstream("default")
        declare_definition(builder, upstream, name, definitions.get(name))
        calls[call_id] = builder.call(
            upstream,
            name,
            parse_args(part.get("arguments")),
            call_id=call_id,
            provenance={"span_id": span.span_id, "from": "messages"},
        )
    elif part.get("type") == "tool_call_response" and call_id in calls:
        call = calls[call_id]
        if call.outcome != "unknown":
            return
        # The spec's schema says `response`; its own example table says `result`.
        value = part.get("response", part.get("result"))
        text = value if isinstance(value, str) else msgspec.json.encode(value).decode()
        result, flags = text_result(text)
        builder.set_result(call, result, flags=flags)
