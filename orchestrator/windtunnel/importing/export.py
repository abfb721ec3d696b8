"""Export a call log as a raw MCP JSON-RPC log (the inverse of the `mcp-jsonrpc` adapter).

Each call becomes a `tools/call` request and its response, wrapped as a capture line
`{"conn": <upstream>, "dir": "c2s" | "s2c", "msg": ...}`, so a multi-upstream log keeps its
upstreams apart. Results are written as the `CallToolResult` a Wind Tunnel server puts on the wire
(DESIGN §5): served verbatim when already one, an object as `structuredContent` plus a text block
with its JSON, a string as a text block, anything else as a text block with its JSON.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from ..atomic_write import atomic_write
from ..calls import MCPCall, is_tool_result
from ..errors import TraceError
from ..universe import UniverseTool

__all__ = ["as_call_tool_result", "export_jsonrpc_log"]

_UNKNOWN_TOOL = -32602


def as_call_tool_result(value: Any, *, is_error: bool = False) -> dict[str, Any]:
    """The MCP `CallToolResult` for a bare payload, as a server serves it."""
    if is_tool_result(value):
        result: dict[str, Any] = value
        return result
    if isinstance(value, str):
        result = {"content": [{"type": "text", "text": value}]}
    elif isinstance(value, dict):
        text = msgspec.json.encode(value).decode()
        result = {"content": [{"type": "text", "text": text}], "structuredContent": value}
    else:
        result = {"content": [{"type": "text", "text": msgspec.json.encode(value).decode()}]}
    if is_error:
        result["isError"] = True
    return result


def _line(conn: str, direction: str, msg: dict[str, Any], ts: float | None) -> bytes:
    record: dict[str, Any] = {"conn": conn, "dir": direction, "msg": msg}
    if ts:
        record["ts"] = ts
    return msgspec.json.encode(record) + b"\n"


def export_jsonrpc_log(
    calls: Iterable[MCPCall],
    path: str | os.PathLike[str],
    *,
    tools: Sequence[UniverseTool] | dict[str, Sequence[UniverseTool]] = (),
    default_upstream: str = "default",
) -> None:
    """Write `calls` (any call log) as JSON lines of MCP JSON-RPC messages.

    `tools` (a list, or a list per upstream) is written first as `tools/list` exchanges, so the
    re-imported universe offers the same input schemas. Calls to a tool the universe did not
    declare are written as the JSON-RPC error an MCP server answers.
    """
    calls = list(calls)
    per_upstream: dict[str, Sequence[UniverseTool]]
    if isinstance(tools, dict):
        per_upstream = dict(tools)
    else:
        names = sorted({call.upstream or default_upstream for call in calls}) or [default_upstream]
        per_upstream = {name: tools for name in names} if tools else {}
    out = bytearray()
    next_id = 1
    for conn, listed in per_upstream.items():
        out += _line(conn, "c2s", {"jsonrpc": "2.0", "id": next_id, "method": "tools/list"}, None)
        tool_list = [
            {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
            for t in listed
        ]
        response = {"jsonrpc": "2.0", "id": next_id, "result": {"tools": tool_list}}
        out += _line(conn, "s2c", response, None)
        next_id += 1
    for call in calls:
        conn = call.upstream or default_upstream
        params = {"name": call.tool_name, "arguments": call.args}
        request = {"jsonrpc": "2.0", "id": next_id, "method": "tools/call", "params": params}
        out += _line(conn, "c2s", request, call.started_at or None)
        divergence = call.divergence
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": next_id}
        if divergence is not None and divergence.get("reason") == "unknown_tool":
            reply["error"] = {"code": _UNKNOWN_TOOL, "message": f"Unknown tool: {call.tool_name}"}
        else:
            reply["result"] = as_call_tool_result(call.result, is_error=call.is_error)
        end = call.started_at + call.duration_ms / 1000.0 if call.started_at else None
        out += _line(conn, "s2c", reply, end)
        next_id += 1
    atomic_write(path, bytes(out), error=TraceError)
