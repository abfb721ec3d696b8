"""What a recording keeps from the messages that pass through the proxy. Pure: no I/O.

Every JSON-RPC message is seen once, in the order the proxy forwarded it, with its direction
(`c2s` agent to upstream, `s2c` upstream to agent). Requests pair with their responses by
(direction, id), as `wt import` pairs them. The tap keeps the raw log (the `mcp-jsonrpc` capture
format), the live `tools/list` (every page, by tool name) and every answered `tools/call` with the
`CallToolResult` exactly as the upstream sent it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from ..calls import MCPCall

__all__ = ["LogRecord", "SessionTap", "decode_messages", "tool_result"]

_OTHER_WAY = {"c2s": "s2c", "s2c": "c2s"}
_PROTOCOL_META = "io.modelcontextprotocol/"


class LogRecord(msgspec.Struct, gc=False):
    """One line of the capture log: `{"ts", "conn", "dir", "msg"}` (what `wt import` reads)."""

    ts: float
    conn: str
    dir: str
    msg: Any


def decode_messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages in one body or line (a batch is several); nothing if not JSON-RPC."""
    try:
        value = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return []
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict) and item.get("jsonrpc") == "2.0"]


@dataclass
class _Pending:
    method: str
    params: Any
    started_at: float


@dataclass
class SessionTap:
    """The recording of one upstream, fed by `observe` in forwarding order."""

    upstream: str
    log: list[LogRecord] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[MCPCall] = field(default_factory=list)
    failed_calls: int = 0
    """`tools/call` requests answered with a JSON-RPC error (kept in the log only)."""
    incomplete_calls: int = 0
    """`tools/call` answers that were not final (2026-07-28 `resultType` other than complete)."""
    changes: int = 0
    """Bumped whenever something a universe holds changed (tools or calls)."""
    on_change: Callable[[MCPCall | None], None] | None = None
    """Told of every change: with the call it completed, or None for a new tool list."""
    _pending: dict[tuple[str, bytes], _Pending] = field(default_factory=dict)

    def observe(
        self, direction: str, message: dict[str, Any], *, in_reply_to: Any = None
    ) -> MCPCall | None:
        """Take one message; return the call it completed, if it answered a `tools/call`.

        `in_reply_to` is the id of the request this message came back to, when the transport
        says (the answer to an HTTP POST of one request): an error with `id: null` (the upstream
        could not tell the id, e.g. a handshake-era server refusing `server/discover`) then
        answers that request."""
        now = time.time()
        self.log.append(LogRecord(ts=now, conn=self.upstream, dir=direction, msg=message))
        method = message.get("method")
        message_id = message.get("id")
        if message_id is None and "error" in message and method is None:
            message_id = in_reply_to
        if message_id is None or not _hashable_id(message_id):
            return None
        key = msgspec.json.encode(message_id)
        if isinstance(method, str):
            self._pending[(direction, key)] = _Pending(method, message.get("params"), now)
            return None
        pending = self._pending.pop((_OTHER_WAY.get(direction, ""), key), None)
        if pending is None or direction != "s2c":
            return None
        return self._answered(pending, message, now)

    def unanswered(self) -> list[str]:
        """Methods of agent requests still waiting for the upstream."""
        return [p.method for (direction, _), p in self._pending.items() if direction == "c2s"]

    def _answered(self, pending: _Pending, message: dict[str, Any], now: float) -> MCPCall | None:
        result = message.get("result")
        if pending.method == "tools/list" and isinstance(result, dict):
            for tool in result.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self.tools[tool["name"]] = tool
            self._changed(None)
            return None
        if pending.method != "tools/call":
            return None
        params = pending.params if isinstance(pending.params, dict) else {}
        name = params.get("name")
        if not isinstance(name, str):
            return None
        if not isinstance(result, dict):
            self.failed_calls += 1
            return None
        if result.get("resultType", "complete") != "complete":
            self.incomplete_calls += 1  # asks the agent for input; the final answer comes later
            return None
        arguments = params.get("arguments")
        call = MCPCall(
            tool_name=name,
            args=dict(arguments) if isinstance(arguments, dict) else {},
            result=tool_result(result),
            upstream=self.upstream,
            is_error=result.get("isError") is True,
            started_at=pending.started_at,
            duration_ms=(now - pending.started_at) * 1000.0,
        )
        self.calls.append(call)
        self._changed(call)
        return call

    def _changed(self, call: MCPCall | None) -> None:
        self.changes += 1
        if self.on_change is not None:
            self.on_change(call)


def tool_result(result: dict[str, Any]) -> dict[str, Any]:
    """The tool's answer without the protocol's envelope around it.

    `resultType` (2026-07-28: `complete` here) and the protocol's own `_meta` keys
    (`io.modelcontextprotocol/...`, e.g. the server info) describe the response, not the tool's
    result; whatever serves the recording adds its own. Everything else is kept as sent.
    """
    kept = {key: value for key, value in result.items() if key != "resultType"}
    meta = kept.get("_meta")
    if isinstance(meta, dict):
        own = {k: v for k, v in meta.items() if not k.startswith(_PROTOCOL_META)}
        if own:
            kept["_meta"] = own
        else:
            del kept["_meta"]
    return kept


def _hashable_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)
