"""Where each instrumentation puts a tool call on its span: name, arguments, result, server.

One function per question, each trying the conventions in a fixed order:

- GenAI semconv (pydantic-ai v3+, fastmcp, the `mcp` 2.x server): `gen_ai.operation.name =
  execute_tool`, arguments in `gen_ai.tool.call.arguments`, result in `gen_ai.tool.call.result`;
- pydantic-ai instrumentation v2: `running tool`, `tool_arguments`, `tool_response`;
- the `mcp` 2.x SDK client: `MCP send tools/call <tool>` with `mcp.method.name`, no content;
- OpenLLMetry (`opentelemetry-instrumentation-mcp`): `traceloop.span.kind = tool`, arguments in
  `traceloop.entity.input` (`.arguments`), result in `traceloop.entity.output` (`.result`, the
  first content block's text only);
- logfire `instrument_mcp` (`mcp` 1.x): `MCP request: tools/call <tool>` with a `request`
  attribute (`.params.arguments`) and a `response` (the `CallToolResult`, dumped by field name).

Pure functions over `otlp_spans.Span`; nothing here decides grouping or outcomes.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec

from .normalize import parse_json_text
from .otlp_spans import Span
from .shape import opt_str

__all__ = [
    "ResultView",
    "arguments",
    "explicit_tool_name",
    "is_tool_span",
    "listed_tools",
    "result_of",
    "server_name",
    "span_tool_name",
]

_NAMED_CALL = re.compile(r"(?:^|\s)tools/call\s+(\S+)$")
_ARGUMENT_KEYS = ("gen_ai.tool.call.arguments", "tool_arguments")
_RESULT_KEYS = ("gen_ai.tool.call.result", "tool_response")


class ResultView(msgspec.Struct):
    """A recorded result: the value, whether it is the wire's `CallToolResult` or what a layer
    above made of it, and whether the tracer kept only part of it (OpenLLMetry: the first
    content block's text)."""

    value: Any
    view: Literal["wire", "model"]
    partial: bool = False
    is_error: bool = False


def _json_object(value: Any) -> dict[str, Any] | None:
    if isinstance(value, str):
        ok, value = parse_json_text(value)
        if not ok:
            return None
    return value if isinstance(value, dict) else None


def _request(span: Span) -> dict[str, Any] | None:
    """logfire's `request` attribute when it is an MCP `tools/call` request."""
    request = _json_object(span.attrs.get("request"))
    if request is None or request.get("method") != "tools/call":
        return None
    params = request.get("params")
    return params if isinstance(params, dict) else {}


def is_tool_span(span: Span) -> bool:
    attrs = span.attrs
    return (
        attrs.get("gen_ai.operation.name") == "execute_tool"
        or attrs.get("mcp.method.name") == "tools/call"
        or attrs.get("rpc.method") == "tools/call"
        or attrs.get("traceloop.span.kind") == "tool"
        or _request(span) is not None
    )


def explicit_tool_name(span: Span) -> str | None:
    """The tool name an attribute states."""
    name = opt_str(span.attrs.get("gen_ai.tool.name"))
    if name is None and span.attrs.get("traceloop.span.kind") == "tool":
        name = opt_str(span.attrs.get("traceloop.entity.name"))
    if name is None:
        params = _request(span)
        name = opt_str(params.get("name")) if params is not None else None
    return name or None


def span_tool_name(span: Span) -> str | None:
    """The tool name only the span name gives (`MCP send tools/call <tool>`, `tools/call
    <tool>`, `MCP request: tools/call <tool>`)."""
    match = _NAMED_CALL.search(span.name)
    return match.group(1) if match else None


def arguments(span: Span) -> tuple[bool, Any]:
    """`(True, value)` when the span captured the call's arguments, else `(False, None)`."""
    for key in _ARGUMENT_KEYS:
        if key in span.attrs:
            return True, span.attrs[key]
    if span.attrs.get("traceloop.span.kind") == "tool":
        entity = _json_object(span.attrs.get("traceloop.entity.input"))
        if entity is not None and "arguments" in entity:
            return True, entity["arguments"]
    params = _request(span)
    if params is not None and "arguments" in params:
        return True, params["arguments"]
    return False, None


def _wire_dump(value: dict[str, Any]) -> dict[str, Any]:
    """A `CallToolResult` as pydantic dumped it by field name (`meta`, nulls) → as the wire
    carries it (`_meta`, no nulls), key order kept."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        if item is None:
            continue
        if key == "content" and isinstance(item, list):
            item = [_wire_dump(block) if isinstance(block, dict) else block for block in item]
        out["_meta" if key == "meta" else key] = item
    return out


def result_of(span: Span) -> ResultView | None:
    """The result the span captured, if any."""
    for key in _RESULT_KEYS:
        if key in span.attrs:
            view: Literal["wire", "model"] = "wire" if "mcp.method.name" in span.attrs else "model"
            return ResultView(value=span.attrs[key], view=view)
    if span.attrs.get("traceloop.span.kind") == "tool":
        entity = _json_object(span.attrs.get("traceloop.entity.output"))
        if entity is not None and "result" in entity:
            text = entity["result"]
            return ResultView(
                value={"content": [{"type": "text", "text": text}]}
                if isinstance(text, str)
                else text,
                view="wire",
                partial=True,
                is_error=entity.get("is_error") is True,
            )
    if _request(span) is not None:
        response = _json_object(span.attrs.get("response"))
        if response is not None:
            return ResultView(value=_wire_dump(response), view="wire")
    return None


def server_name(span: Span) -> str | None:
    """The MCP server's own name, when the span states it."""
    return opt_str(span.attrs.get("fastmcp.server.name")) or opt_str(
        span.attrs.get("mcp.server.name")
    )


def listed_tools(span: Span) -> tuple[str | None, list[dict[str, Any]]] | None:
    """`(server name, tools)` from a span that captured a `tools/list` or `initialize`
    response (logfire's `response`, OpenLLMetry's `traceloop.entity.output`)."""
    for key in ("response", "traceloop.entity.output"):
        response = _json_object(span.attrs.get(key))
        if response is None:
            continue
        tools = response.get("tools")
        info = response.get("serverInfo")
        name = opt_str(info.get("name")) if isinstance(info, dict) else None
        if isinstance(tools, list):
            return name, [t for t in tools if isinstance(t, dict) and opt_str(t.get("name"))]
        if name is not None:
            return name, []
    return None
