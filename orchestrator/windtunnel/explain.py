"""Explain how a call would be answered, with no side effects (`wt explain`)."""

from __future__ import annotations

from typing import Any

import msgspec

from .canonical import canonical_json
from .matching import Hit, Miss, SequenceState, UniverseIndex
from .miss_answers import empty_request_result
from .surface_matching import REQUEST_METHODS, SurfaceIndex
from .universe import Universe

__all__ = ["Explanation", "explain_call", "explain_request", "render_explanation"]


class Explanation(msgspec.Struct, kw_only=True):
    """Which tier answers a call and why; for a miss, the policy and the nearest recordings."""

    tool: str
    args: dict[str, Any]
    outcome: str  # "exact" | "keyed" | "miss" | "unknown_tool"
    index: int | None = None
    arg_keys: list[str] | None = None
    mode: str | None = None
    reason: str | None = None
    policy: str | None = None
    result: Any = None
    nearest: list[dict[str, Any]] = msgspec.field(default_factory=list)
    null_args: list[str] = msgspec.field(default_factory=list)
    """For a miss: keys the call sends as `null` that the nearest recording does not have."""
    method: str = "tools/call"
    """`tools/call`, or the request explained by `explain_request` (`tool` is its target)."""
    nth: int = 1
    """Which call of the tool this is in a fresh run (earlier ones identical to it): what a
    sequence-mode tool answers depends on it."""
    served: int | None = None
    """For a miss under the `nearest` policy: the recording whose result answers it (of a
    sequence-mode tool, the nearest one the earlier calls left unconsumed); None when none is
    left, and `fail_call` answers."""


def explain_request(
    universe: Universe, method: str, target: str, args: dict[str, Any]
) -> Explanation:
    """How a request other than `tools/call` would be answered (see `surface_matching`):
    `target` and `args` as `MCPCall` logs them."""
    if method not in REQUEST_METHODS:
        raise ValueError(f"{method!r} is not tools/call or one of {', '.join(REQUEST_METHODS)}")
    index = SurfaceIndex(universe).find(method, target, args)
    if index is None:
        policy = universe.matching.policy_for_request(method)
        return Explanation(
            method=method,
            tool=target,
            args=args,
            outcome="miss",
            reason="no_recorded_result",
            policy=policy,
            result=empty_request_result(method) if policy == "empty" else None,
        )
    results = {
        "resources/read": lambda i: universe.resource_reads[i].result,
        "prompts/get": lambda i: universe.prompt_gets[i].result,
        "completion/complete": lambda i: universe.completions[i].result,
    }
    return Explanation(
        method=method,
        tool=target,
        args=args,
        outcome="exact",
        index=index,
        result=results[method](index),
    )


def explain_call(
    universe: Universe, tool_name: str, args: dict[str, Any], *, limit: int = 3, nth: int = 1
) -> Explanation:
    """Resolve a call as a fresh server would, and say why. With `nth` > 1 the call is the nth
    of identical calls of the tool: a sequence-mode tool has consumed what the earlier ones
    were answered from."""
    index = UniverseIndex(universe)
    tool = index.tool(tool_name)
    if tool is None:
        return Explanation(
            tool=tool_name,
            args=args,
            outcome="unknown_tool",
            reason="unknown_tool",
            policy="fail_call",
        )
    arg_keys = universe.matching.arg_keys.get(tool_name)
    state = SequenceState(len(universe.recordings))
    for _ in range(nth - 1):
        _served(index, tool_name, args, state, index.resolve(tool_name, args, state), [])
    outcome = index.resolve(tool_name, args, state)
    nearest = []
    for near in index.nearest(tool_name, args, limit=limit):
        recorded = universe.recordings[near.index].args
        nearest.append(
            {
                **near.to_dict(),
                "differences": {key: _sides(key, recorded, args) for key in near.differing_keys},
            }
        )
    if isinstance(outcome, Hit):
        return Explanation(
            tool=tool_name,
            args=args,
            outcome=outcome.tier,
            index=outcome.index,
            arg_keys=arg_keys,
            mode=tool.mode,
            result=universe.recordings[outcome.index].result,
            nth=nth,
        )
    return Explanation(
        tool=tool_name,
        args=args,
        outcome="miss",
        arg_keys=arg_keys,
        mode=tool.mode,
        reason=outcome.reason,
        policy=outcome.policy,
        nearest=nearest,
        null_args=_null_args(args, universe.recordings[nearest[0]["index"]].args, arg_keys)
        if nearest
        else [],
        nth=nth,
        served=_served(index, tool_name, args, state, outcome, nearest),
    )


def _served(
    index: UniverseIndex,
    tool_name: str,
    args: dict[str, Any],
    state: SequenceState,
    outcome: Hit | Miss,
    nearest: list[dict[str, Any]],
) -> int | None:
    """The recording a fresh server's `nearest` policy answers a miss with, as `Replay` picks
    it: the nearest (`nearest`, ranked), or of a sequence-mode tool the nearest not consumed
    yet, consumed now, so a later call of the same run sees it used."""
    if isinstance(outcome, Hit) or outcome.policy != "nearest":
        return None
    tool = index.tool(tool_name)
    if tool is not None and tool.mode == "sequence":
        taken = index.take_nearest(tool_name, args, state)
        return taken.index if taken is not None else None
    return nearest[0]["index"] if nearest else None


def _null_args(
    call: dict[str, Any], recorded: dict[str, Any], arg_keys: list[str] | None
) -> list[str]:
    """Keys the call sends as `null` that the recording lacks and matching does not ignore.

    Clients such as mcp-use send an omitted optional argument as `null`; the exact tier then
    finds nothing, and the keyed tier ignores such a key only when it is not in `arg_keys`.
    """
    return sorted(
        key
        for key, value in call.items()
        if value is None and key not in recorded and (arg_keys is None or key in arg_keys)
    )


def _sides(key: str, recorded: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """The two values of a differing key; a side where the key is absent is left out."""
    sides = {}
    if key in recorded:
        sides["recorded"] = recorded[key]
    if key in call:
        sides["call"] = call[key]
    return sides


def _side(diff: dict[str, Any], name: str) -> str:
    return canonical_json(diff[name]) if name in diff else "(absent)"


def render_explanation(exp: Explanation) -> str:
    """A few lines a person can read."""
    call = f"{exp.tool}({canonical_json(exp.args)})"
    if exp.method != "tools/call":
        return _render_request(exp)
    if exp.outcome == "unknown_tool":
        return (
            f"{call}\n  unknown tool: the universe does not declare {exp.tool!r} (JSON-RPC error)"
        )
    lines = [call]
    if exp.outcome == "exact":
        lines.append(f"  exact hit: recording #{exp.index} has canonically equal arguments")
    elif exp.outcome == "keyed":
        lines.append(
            f"  keyed hit: recording #{exp.index} has equal values on arg_keys {exp.arg_keys}"
        )
    else:
        lines.append(f"  miss ({exp.reason}); policy {exp.policy} answers")
        if exp.arg_keys:
            lines.append(f"  arg_keys for this tool: {exp.arg_keys}")
    if exp.mode == "sequence":
        which = "first" if exp.nth == 1 else f"call number {exp.nth}"
        lines.append(f"  sequence mode: shown as the {which} of identical calls in a fresh run")
    if exp.outcome in ("exact", "keyed"):
        lines.append(f"  result: {canonical_json(exp.result)}")
    if exp.outcome == "miss" and exp.policy == "nearest":
        if exp.served is not None:
            lines.append(f"  policy nearest answers with recording #{exp.served}'s result")
        else:
            left = " not consumed by the earlier calls" if exp.mode == "sequence" else ""
            lines.append(f"  no recording{left} to serve: fail_call answers instead")
    for near in exp.nearest if exp.outcome == "miss" else []:
        lines.append(f"  nearest #{near['index']}: shares {near['shared']} key/value pair(s)")
        for key, diff in near["differences"].items():
            lines.append(
                f"    {key}: recorded {_side(diff, 'recorded')} != call {_side(diff, 'call')}"
            )
    if exp.outcome == "miss" and not exp.nearest:
        lines.append("  no recordings of this tool")
    if exp.null_args and exp.arg_keys is None:
        lines.append(
            f"  null-valued argument(s) the recording lacks: {exp.null_args}; some clients send "
            "omitted optional arguments as null: list the keys that identify this call in "
            f"matching.arg_keys[{exp.tool!r}] so that the others are ignored"
        )
    elif exp.null_args:
        lines.append(
            f"  null-valued argument(s) the recording lacks: {exp.null_args}; they are among "
            "arg_keys, so the recording must have them too"
        )
    return "\n".join(lines)


_REQUEST_LISTS = {
    "resources/read": "resource_reads",
    "prompts/get": "prompt_gets",
    "completion/complete": "completions",
}
_REQUEST_RULES = {
    "resources/read": "the same uri",
    "prompts/get": "the same name and canonically equal arguments",
    "completion/complete": "canonically equal ref, argument and context",
}
_REQUEST_ERRORS = {
    "resources/read": "-32002 Resource not found (-32602 from protocol 2026-07-28)",
    "prompts/get": "-32602",
    "completion/complete": "-32602",
}


def _render_request(exp: Explanation) -> str:
    lines = [f"{exp.method} {exp.tool}({canonical_json(exp.args)})"]
    where = _REQUEST_LISTS[exp.method]
    if exp.outcome == "exact":
        lines.append(f"  hit: {where}[{exp.index}] has {_REQUEST_RULES[exp.method]}")
        lines.append(f"  result: {canonical_json(exp.result)}")
    elif exp.policy == "empty":
        lines.append(
            f"  miss (no_recorded_result): no entry of {where} has {_REQUEST_RULES[exp.method]}; "
            "policy empty (matching.per_method_on_miss) answers"
        )
        lines.append(f"  result: {canonical_json(exp.result)}")
    else:
        lines.append(
            f"  miss (no_recorded_result): no entry of {where} has {_REQUEST_RULES[exp.method]}; "
            f"policy fail_call: the JSON-RPC error {_REQUEST_ERRORS[exp.method]} answers"
        )
    return "\n".join(lines)
