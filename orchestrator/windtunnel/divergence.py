"""The divergence record: the evidence kept when a call leaves the recording, built only here.

A call that no recording answers carries `extra["divergence"]` in the call log: `tool`, `args`,
`reason` (`no_recorded_result`, `sequence_exhausted`, `unknown_tool`), `policy` (the miss policy
that answered) and `nearest` (the closest recording of the tool: `index`, `shared`,
`differing_keys`; null when there is none). The replay engine and the mock server build it with
`divergence_call`. A request of another method that the recording does not answer
(`resources/read`, `prompts/get`, `completion/complete`: `request_divergence_call`) carries the
same record with `method` added; the tools' record stays as it was. The `universe_divergence` log
line, the fleet's event and the trace's warning are all made from that one record, so the four
cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .calls import MCPCall
from .matching import Nearest
from .miss_answers import unknown_tool_result
from .universe import Universe

__all__ = [
    "divergence_call",
    "divergence_warning",
    "log_divergence",
    "request_divergence_call",
    "unknown_tool_call",
]


def divergence_call(
    tool_name: str,
    args: dict[str, Any],
    *,
    reason: str,
    policy: str,
    nearest: Nearest | None,
    result: Any,
    is_error: bool,
    upstream: str | None,
    fault: str | None = None,
) -> MCPCall:
    """The call-log entry of a call no recording answered, with its divergence record; `fault`
    (a failed `synthesize` hook) fails the scenario with that reason."""
    extra: dict[str, Any] = {
        "divergence": {
            "tool": tool_name,
            "args": args,
            "reason": reason,
            "policy": policy,
            "nearest": nearest.to_dict() if nearest is not None else None,
        }
    }
    if fault is not None:
        extra["fault"] = fault
    return MCPCall(
        tool_name=tool_name,
        args=args,
        result=result,
        extra=extra,
        upstream=upstream,
        is_error=is_error,
    )


def unknown_tool_call(tool_name: str, args: dict[str, Any], *, upstream: str | None) -> MCPCall:
    """The call-log entry of a call to a tool the server does not declare (replay or mock)."""
    return divergence_call(
        tool_name,
        args,
        reason="unknown_tool",
        policy="fail_call",
        nearest=None,
        result=unknown_tool_result(tool_name),
        is_error=True,
        upstream=upstream,
    )


def request_divergence_call(
    method: str, target: str, args: dict[str, Any], *, upstream: str | None
) -> MCPCall:
    """The call-log entry of a request (not a tool call) that no recording answers: it is
    answered with the JSON-RPC error its method prescribes (policy `fail_call`)."""
    return MCPCall(
        method=method,
        tool_name=target,
        args=args,
        result={"error": "no_recorded_result", "method": method, "target": target},
        extra={
            "divergence": {
                "method": method,
                "tool": target,
                "args": args,
                "reason": "no_recorded_result",
                "policy": "fail_call",
                "nearest": None,
            }
        },
        upstream=upstream,
        is_error=True,
    )


def log_divergence(call: MCPCall, *, scenario: str | None) -> None:
    """The `universe_divergence` log line of a divergent call (a server outside a fleet)."""
    # structlog loads here, not with this module: reading a pack (`wt plan`) must not load it.
    import structlog

    divergence = call.divergence
    if divergence is not None:
        structlog.get_logger("windtunnel").warning(
            "universe_divergence", **divergence, upstream=call.upstream, scenario=scenario
        )


def divergence_warning(
    call: MCPCall, scenario: str | None, universe: Universe | None
) -> dict[str, Any] | None:
    """A trace's `universe_divergence` warning for `call` (None when it did not diverge). With
    the call's universe, `nearest` also carries that recording's `args`, so reports can show the
    values that differ. Traces read back from disk may have been edited: absent keys are null."""
    divergence = call.divergence
    if divergence is None:
        return None
    nearest = divergence.get("nearest")
    if isinstance(nearest, Mapping):
        nearest = dict(nearest)
        index = nearest.get("index")
        if (
            universe is not None
            and isinstance(index, int)
            and 0 <= index < len(universe.recordings)
        ):
            nearest["args"] = universe.recordings[index].args
    warning = {
        "event": "universe_divergence",
        "level": "warning",
        "scenario": scenario,
        "upstream": call.upstream,
        "tool": divergence.get("tool", call.tool_name),
        "args": divergence.get("args", call.args),
        "reason": divergence.get("reason"),
        "policy": divergence.get("policy"),
        "nearest": nearest,
    }
    if call.method != "tools/call":
        warning["method"] = call.method
    for key in ("recording", "client"):  # a `client_answer_differs` divergence's evidence
        if key in divergence:
            warning[key] = divergence[key]
    return warning
