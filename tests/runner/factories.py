"""Small builders for calls and traces used across the runner tests."""

from __future__ import annotations

from typing import Any

from windtunnel.calls import MCPCall
from windtunnel.runner.trace import Trace, warnings_from_calls


def call(
    tool: str,
    args: dict[str, Any] | None = None,
    *,
    upstream: str | None = "crm",
    result: Any = None,
    reason: str | None = None,
    nearest: dict[str, Any] | None = None,
    started_at: float = 0.0,
) -> MCPCall:
    """A call; with `reason` it carries divergence evidence like the replay engine's."""
    args = args or {}
    extra: dict[str, Any] = {"match": {"tier": "exact", "index": 0}}
    if reason is not None:
        extra = {
            "divergence": {
                "tool": tool,
                "args": args,
                "reason": reason,
                "policy": "fail_call",
                "nearest": nearest,
            }
        }
    return MCPCall(
        tool_name=tool,
        args=args,
        result=result,
        extra=extra,
        upstream=upstream,
        is_error=reason is not None,
        started_at=started_at,
    )


def trace(
    calls: list[MCPCall] | None = None,
    *,
    output: str | None = None,
    error: str | None = None,
    scenario: str = "bluewing",
    repeat: int = 0,
    status: Any = "error",
    duration_s: float = 0.25,
    started_at: float = 1_796_000_000.0,
) -> Trace:
    """A trace of `calls` with its divergence warnings filled in."""
    calls = calls or []
    return Trace(
        unit_id=f"{scenario}#{repeat}",
        scenario=scenario,
        repeat=repeat,
        task="Which invoice is overdue?",
        mcp_calls=calls,
        warnings=warnings_from_calls(calls, scenario),
        output=output,
        error=error,
        status=status,
        started_at=started_at,
        duration_s=duration_s,
    )
