"""Explain how a call would be answered, with no side effects (`wt explain`)."""

from __future__ import annotations

from typing import Any

import msgspec

from .canonical import canonical_json
from .matching import Hit, SequenceState, UniverseIndex
from .universe import Universe

__all__ = ["Explanation", "explain_call", "render_explanation"]


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


def explain_call(
    universe: Universe, tool_name: str, args: dict[str, Any], *, limit: int = 3
) -> Explanation:
    """Resolve a call as a fresh server would (no sequence consumed yet), and say why."""
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
    outcome = index.resolve(tool_name, args, SequenceState(len(universe.recordings)))
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
    )


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
        lines.append("  sequence mode: shown as the first call of a fresh run")
    if exp.outcome in ("exact", "keyed"):
        lines.append(f"  result: {canonical_json(exp.result)}")
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
