"""windtunnel-bench's envelope names, where its code imports them (`windtunnel.api.interchange`).

A project moving from windtunnel-bench changes no import. The checks are ours
(`importing.interchange.check_interchange`, which applies the original's rules in its order);
what this module adds is the original's typed view of a checked envelope (frozen dataclasses with
its field names) and its function signatures. Where ours differ: `InterchangeFormatError` is both
our `TraceError` (an `InputError` whose message names the file and the JSON path) and, as there, a
`ValueError`; `lint_interchange` returns our lint messages, each prefixed by the JSON path.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import TraceError
from ..importing.document import parse_document
from ..importing.interchange import INTERCHANGE_VERSION, check_interchange
from ..importing.interchange import lint_interchange as _lints
from ..input_files import read_input

__all__ = [
    "INTERCHANGE_VERSION",
    "InterchangeFormatError",
    "InterchangeMessage",
    "InterchangePart",
    "InterchangeToolDefinition",
    "InterchangeTrace",
    "InterchangeWitnessedCall",
    "TextPart",
    "ToolCallPart",
    "ToolCallResponsePart",
    "build_envelope",
    "lint_interchange",
    "load_interchange",
    "parse_interchange",
]


class InterchangeFormatError(TraceError, ValueError):
    """A file or value that is not a valid version-1 envelope (`path` is the JSON path)."""


_NOT_A_FILE = "<interchange>"


@dataclass(frozen=True)
class TextPart:
    """An OTel GenAI `text` message part."""

    content: str


@dataclass(frozen=True)
class ToolCallPart:
    """An OTel GenAI `tool_call` message part."""

    id: str
    name: str
    arguments: Any


@dataclass(frozen=True)
class ToolCallResponsePart:
    """An OTel GenAI `tool_call_response` message part."""

    id: str
    response: Any


InterchangePart = TextPart | ToolCallPart | ToolCallResponsePart


@dataclass(frozen=True)
class InterchangeMessage:
    """One OTel GenAI message with typed parts."""

    role: str
    parts: list[InterchangePart]

    def text_content(self) -> str:
        """The text parts joined by newlines, in order."""
        return "\n".join(part.content for part in self.parts if isinstance(part, TextPart))


@dataclass(frozen=True)
class InterchangeToolDefinition:
    """A tool's schema as the producer carried it."""

    name: str
    description: str = ""
    input_schema: dict[str, Any] | None = None
    result_schema: dict[str, Any] | None = None


@dataclass(frozen=True)
class InterchangeWitnessedCall:
    """One entry of `witnessed_calls`: the tool boundary's own record of a call."""

    tool_name: str
    args: dict[str, Any]
    result: Any


@dataclass(frozen=True)
class InterchangeTrace:
    """A checked envelope: the seed's fields only (fields it does not know are dropped)."""

    windtunnel_interchange: int
    otel_genai_mapping: str
    session: dict[str, Any]
    messages: list[InterchangeMessage]
    source: dict[str, Any] | None = None
    tool_definitions: list[InterchangeToolDefinition] | None = None
    witnessed_calls: list[InterchangeWitnessedCall] | None = None

    @property
    def model(self) -> str:
        """`session.model` (required, non-empty)."""
        return str(self.session["model"])

    @property
    def source_ref(self) -> str | None:
        """`source.ref` when it is a non-empty string."""
        ref = self.source.get("ref") if self.source is not None else None
        return ref if isinstance(ref, str) and ref else None


def _part(raw: dict[str, Any]) -> InterchangePart:
    if raw["type"] == "text":
        return TextPart(content=raw["content"])
    if raw["type"] == "tool_call":
        return ToolCallPart(id=raw["id"], name=raw["name"], arguments=dict(raw["arguments"]))
    return ToolCallResponsePart(id=raw["id"], response=raw["response"])


def _tool_definition(raw: dict[str, Any]) -> InterchangeToolDefinition:
    input_schema = raw.get("input_schema")
    result_schema = raw.get("result_schema")
    return InterchangeToolDefinition(
        name=raw["name"],
        description=raw.get("description") or "",
        input_schema=dict(input_schema) if input_schema is not None else None,
        result_schema=dict(result_schema) if result_schema is not None else None,
    )


def _typed(raw: dict[str, Any]) -> InterchangeTrace:
    definitions = raw.get("tool_definitions")
    witnessed = raw.get("witnessed_calls")
    source = raw.get("source")
    return InterchangeTrace(
        windtunnel_interchange=raw["windtunnel_interchange"],
        otel_genai_mapping=raw.get("otel_genai_mapping", ""),
        session=dict(raw["session"]),
        messages=[
            InterchangeMessage(role=m["role"], parts=[_part(p) for p in m["parts"]])
            for m in raw["messages"]
        ],
        source=dict(source) if source is not None else None,
        tool_definitions=(
            [_tool_definition(t) for t in definitions] if definitions is not None else None
        ),
        witnessed_calls=(
            [
                InterchangeWitnessedCall(
                    tool_name=c["tool_name"], args=dict(c["args"]), result=c["result"]
                )
                for c in witnessed
            ]
            if witnessed is not None
            else None
        ),
    )


def _check(raw: Any, file: str) -> None:
    try:
        check_interchange(raw, file=file)
    except TraceError as exc:
        raise InterchangeFormatError(exc.message, file=exc.file, path=exc.path) from None


def _parse(raw: Any, file: str) -> InterchangeTrace:
    _check(raw, file)
    return _typed(raw)


def parse_interchange(raw: Any) -> InterchangeTrace:
    """Check a parsed JSON value as a version-1 envelope; the first problem is an
    `InterchangeFormatError` naming its JSON path."""
    return _parse(raw, _NOT_A_FILE)


def load_interchange(path: str | os.PathLike[str]) -> InterchangeTrace:
    """Read and check a `*.wtin.json` file (errors name the file and the JSON path)."""
    file = os.fspath(Path(path))
    try:
        doc = parse_document(read_input(file, what="a trace file", error=TraceError), file=file)
    except TraceError as exc:
        raise InterchangeFormatError(exc.message, file=exc.file, path=exc.path) from None
    if doc.jsonl:
        raise InterchangeFormatError(
            "a Contract A envelope is one JSON document, not JSON lines", file=file
        )
    return _parse(doc.single, file)


def lint_interchange(envelope: dict[str, Any]) -> list[str]:
    """The lint warnings of an envelope (checked first: an invalid one raises), in message
    order, each `PATH: message`."""
    _check(envelope, _NOT_A_FILE)
    return [f"{lint.path}: {lint.message}" for lint in _lints(envelope)]


def as_document(trace: InterchangeTrace) -> dict[str, Any]:
    """The JSON document of a typed envelope (its seed fields)."""
    doc: dict[str, Any] = {
        "windtunnel_interchange": trace.windtunnel_interchange,
        "otel_genai_mapping": trace.otel_genai_mapping,
        "session": dict(trace.session),
        "messages": [
            {"role": m.role, "parts": [_part_document(p) for p in m.parts]} for m in trace.messages
        ],
    }
    if trace.source is not None:
        doc["source"] = dict(trace.source)
    if trace.tool_definitions is not None:
        doc["tool_definitions"] = [_definition_document(t) for t in trace.tool_definitions]
    if trace.witnessed_calls is not None:
        doc["witnessed_calls"] = [
            {"tool_name": c.tool_name, "args": dict(c.args), "result": c.result}
            for c in trace.witnessed_calls
        ]
    return doc


def _part_document(part: InterchangePart) -> dict[str, Any]:
    if isinstance(part, TextPart):
        return {"type": "text", "content": part.content}
    if isinstance(part, ToolCallPart):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    return {"type": "tool_call_response", "id": part.id, "response": part.response}


def _definition_document(tool: InterchangeToolDefinition) -> dict[str, Any]:
    doc: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if tool.input_schema is not None:
        doc["input_schema"] = dict(tool.input_schema)
    if tool.result_schema is not None:
        doc["result_schema"] = dict(tool.result_schema)
    return doc


def build_envelope(
    *,
    model: str,
    messages: list[dict[str, Any]],
    provider: str | None = None,
    otel_genai_mapping: str = "",
    source: dict[str, Any] | None = None,
    tool_definitions: list[dict[str, Any]] | None = None,
    witnessed_calls: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """A version-1 envelope from already-shaped parts (not checked: `parse_interchange` or
    `wt validate` does that), key for key as the original builds it."""
    session: dict[str, Any] = {"model": model}
    if provider is not None:
        session["provider"] = provider
    envelope: dict[str, Any] = {
        "windtunnel_interchange": INTERCHANGE_VERSION,
        "otel_genai_mapping": otel_genai_mapping,
        "session": session,
        "messages": messages,
    }
    if source is not None:
        envelope["source"] = source
    if tool_definitions is not None:
        envelope["tool_definitions"] = tool_definitions
    if witnessed_calls is not None:
        envelope["witnessed_calls"] = witnessed_calls
    return envelope
