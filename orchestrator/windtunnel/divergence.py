"""The divergence record: the evidence kept when a call leaves the recording, built only here.

A call that no recording answers carries `extra["divergence"]` in the call log, made from one
typed `Divergence`: `tool`, `args`, `reason` (`no_recorded_result`, `sequence_exhausted`,
`unknown_tool`, `client_answer_differs`), `policy` (the tool's miss policy), `matched` (the
recording served, as the seed names it: the `nearest` policy's choice, else null) and `nearest`
(the closest recording of the tool: `index`, `shared`, `differing_keys`; null when there is
none). The replay engine and the mock server build it with `divergence_call`. A request of
another method that the recording does not answer (`resources/read`, `prompts/get`,
`completion/complete`: `request_divergence_call`) carries the same record with `method` added
and its method's miss policy (`fail_call` or `empty`). The `universe_divergence` log line, the
fleet's event and the trace's warning are all made from that one record, so the four cannot
drift apart; reports name what diverged with `divergence_label`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, TypeAlias

import msgspec

from .calls import MCPCall
from .matching import MissReason, Nearest
from .miss_answers import empty_request_result, request_error_result, unknown_tool_result
from .universe import MissPolicy, RequestMissPolicy, Universe

__all__ = [
    "Divergence",
    "DivergencePolicy",
    "DivergenceReason",
    "LiveOutcome",
    "divergence_call",
    "divergence_label",
    "divergence_warning",
    "log_divergence",
    "request_divergence_call",
    "unknown_tool_call",
]


DivergenceReason: TypeAlias = MissReason | Literal["recorded_live"]
"""`recorded_live`: the `new_episodes` record mode had the live upstream answer the call."""
DivergencePolicy: TypeAlias = MissPolicy | Literal["new_episodes"]
LiveOutcome: TypeAlias = Literal["appended", "already_recorded", "failed"]
"""What became of a live answer under `new_episodes` (the record's `live`)."""


class Divergence(msgspec.Struct, frozen=True, omit_defaults=True, kw_only=True):
    """The record of a call that left the recording: the call's `extra["divergence"]`.

    The seed's fields (`policy`; `matched`, the recording served, null when none was) beside
    ours. `method` is set for a request other than `tools/call`; `recording` (the index that
    matched) and `client` (the exchange) for a `client_answer_differs` divergence; `live` for a
    `recorded_live` one."""

    method: str | msgspec.UnsetType = msgspec.UNSET
    tool: str
    args: dict[str, Any]
    reason: DivergenceReason
    policy: DivergencePolicy
    matched: int | None = None
    nearest: Nearest | None = None
    recording: int | msgspec.UnsetType = msgspec.UNSET
    client: dict[str, Any] | msgspec.UnsetType = msgspec.UNSET
    live: LiveOutcome | msgspec.UnsetType = msgspec.UNSET

    def to_dict(self) -> dict[str, Any]:
        """The record as the call log and traces hold it (`matched` and `nearest` always
        written, null when there is none)."""
        record: dict[str, Any] = msgspec.to_builtins(self)
        record.setdefault("matched", None)
        record.setdefault("nearest", None)
        return record


def divergence_call(
    divergence: Divergence,
    *,
    result: Any,
    is_error: bool,
    upstream: str | None,
    fault: str | None = None,
) -> MCPCall:
    """The call-log entry of a call no recording answered, with its divergence record; `fault`
    (a failed `synthesize` hook) fails the scenario with that reason."""
    extra: dict[str, Any] = {"divergence": divergence.to_dict()}
    if fault is not None:
        extra["fault"] = fault
    call = MCPCall(
        tool_name=divergence.tool,
        args=divergence.args,
        result=result,
        extra=extra,
        upstream=upstream,
        is_error=is_error,
    )
    if divergence.method is not msgspec.UNSET:
        call.method = divergence.method
    return call


def unknown_tool_call(tool_name: str, args: dict[str, Any], *, upstream: str | None) -> MCPCall:
    """The call-log entry of a call to a tool the server does not declare (replay or mock)."""
    return divergence_call(
        Divergence(tool=tool_name, args=args, reason="unknown_tool", policy="fail_call"),
        result=unknown_tool_result(tool_name),
        is_error=True,
        upstream=upstream,
    )


def request_divergence_call(
    method: str,
    target: str,
    args: dict[str, Any],
    *,
    upstream: str | None,
    policy: RequestMissPolicy = "fail_call",
) -> MCPCall:
    """The call-log entry of a request (not a tool call) that no recording answers, answered
    by `policy`: `fail_call`, the JSON-RPC error its method prescribes (an error entry), or
    `empty`, the method's empty result (the universe's `matching.per_method_on_miss`)."""
    empty = policy == "empty"
    return divergence_call(
        Divergence(
            method=method, tool=target, args=args, reason="no_recorded_result", policy=policy
        ),
        result=empty_request_result(method) if empty else request_error_result(method, target),
        is_error=not empty,
        upstream=upstream,
    )


def divergence_label(warning: Mapping[str, Any]) -> str:
    """What diverged, as reports name it: `crm.client_lookup` for a tool call; for another
    request its method, then its target (URI, prompt name, completion ref): `crm resources/read
    test://a`. `warning` is a trace's warning or a divergence event (read back from disk: any
    field may be missing or of another type)."""
    upstream = warning.get("upstream")
    where = upstream if isinstance(upstream, str) and upstream else None
    target = str(warning.get("tool"))
    method = warning.get("method", "tools/call")
    if method == "tools/call":
        return f"{where}.{target}" if where else target
    return f"{where} {method} {target}" if where else f"{method} {target}"


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
        "matched": divergence.get("matched"),
        "nearest": nearest,
    }
    if call.method != "tools/call":
        warning["method"] = call.method
    for key in ("recording", "client"):  # a `client_answer_differs` divergence's evidence
        if key in divergence:
            warning[key] = divergence[key]
    return warning
