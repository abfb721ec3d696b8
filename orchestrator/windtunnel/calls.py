"""`MCPCall`: one witnessed tool call, the unit of call logs, traces and recordings."""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["MCPCall", "is_tool_result", "without_envelope"]


class MCPCall(msgspec.Struct, kw_only=True, omit_defaults=True, gc=False):
    """A tool call (or another request answered from the recording) as the server saw it.

    `method` is the MCP method: `tools/call` (the default, left out when written) or one of the
    other requests a universe answers, logged with their target in `tool_name` and their
    parameters in `args`: `resources/read` (the URI; `args` empty), `prompts/get` (the prompt's
    name; its arguments), `completion/complete` (the `ref`'s name or URI; `args` holds `ref`,
    `argument` and `context` as sent).

    `args` are flat; `result` is the payload the agent was given (the recorded value, a miss
    policy's value, or the `fail_call` error object). `extra["match"]` says which recording
    answered (`{"tier", "index"}`, the index into the method's list: `recordings`,
    `resource_reads`, `prompt_gets` or `completions`); a miss carries `extra["divergence"]`
    instead.

    Not tracked by the cyclic garbage collector (`gc=False`): a long-running server keeps every
    call, and each full collection walks every tracked object, so the call log made those
    pauses grow with it. A call holds plain data and is never part of a reference cycle (never
    put a call inside its own `args`, `result` or `extra`: such a cycle would never be freed).
    """

    tool_name: str
    args: dict[str, Any]
    result: Any = None
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    upstream: str | None = None
    is_error: bool = False
    started_at: float = 0.0
    duration_ms: float = 0.0
    method: str = "tools/call"

    @property
    def divergence(self) -> dict[str, Any] | None:
        divergence: dict[str, Any] | None = self.extra.get("divergence")
        return divergence

    def same_call(self, other: MCPCall) -> bool:
        """Equal apart from timing: what in-process and MCP paths must agree on."""
        return (
            self.tool_name == other.tool_name
            and self.method == other.method
            and self.args == other.args
            and self.result == other.result
            and self.extra == other.extra
            and self.upstream == other.upstream
            and self.is_error == other.is_error
        )


_RESULT_KEYS = frozenset({"content", "structuredContent", "isError", "_meta"})


def is_tool_result(value: Any) -> bool:
    """True when a recorded result is already an MCP `CallToolResult` (served verbatim).

    Its keys are a subset of `content`, `structuredContent`, `isError`, `_meta`, and `content` is a
    list of content blocks (objects with a string `type`).
    """
    if not isinstance(value, dict) or "content" not in value or not value.keys() <= _RESULT_KEYS:
        return False
    content = value["content"]
    return isinstance(content, list) and all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in content
    )


_PROTOCOL_META = "io.modelcontextprotocol/"


def without_envelope(result: dict[str, Any]) -> dict[str, Any]:
    """An answer as a universe keeps it (a tool's result, a read, a prompt, a completion):
    without the protocol's envelope around it.

    `resultType` (2026-07-28) and the protocol's own `_meta` keys (`io.modelcontextprotocol/...`,
    e.g. the server info) describe the response, not the answer; whatever serves the recording
    adds its own. Everything else is kept as sent.
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
