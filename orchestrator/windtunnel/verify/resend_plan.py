"""Which recorded calls `wt verify` may send to the live server again, and how each is judged.
Pure.

Only a call that cannot change the world is re-sent: its tool is annotated `readOnlyHint: true`
by the live server (what the server says of itself now, not what it said when recorded), or the
user named it with `--allow TOOL`. Everything else is skipped with the reason. Also skipped: a
tool the live server no longer lists (already a breaking finding), and a call whose arguments
hold a redaction placeholder (the live server would be sent `[REDACTED:1]`, not the secret).

Calls go in file order, every recording once, so a sequence-mode tool's calls replay its
recorded session in order.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any, Literal

import msgspec

from ..universe import Universe, UniverseTool
from .findings import CallOutcome

__all__ = ["Comparison", "PlannedCall", "plan_resends"]

Comparison = Literal["shape", "value"]

_PLACEHOLDER = re.compile(r"\[REDACTED(?::\d+)?\]")


class PlannedCall(msgspec.Struct, frozen=True):
    index: int
    tool: str
    args: dict[str, Any]
    by: Comparison


def plan_resends(
    universe: Universe,
    live_tools: Collection[UniverseTool],
    *,
    allow: Collection[str],
    compare: Comparison,
    per_tool: Mapping[str, Comparison],
) -> tuple[list[PlannedCall], list[CallOutcome]]:
    """The calls to re-send, in file order, and the skipped ones with their reasons."""
    live = {tool.name: tool for tool in live_tools}
    planned: list[PlannedCall] = []
    skipped: list[CallOutcome] = []
    for index, recording in enumerate(universe.recordings):
        tool = live.get(recording.tool_name)
        reason = _skip_reason(recording.tool_name, recording.args, tool, allow)
        if reason is not None:
            skipped.append(
                CallOutcome(index=index, tool=recording.tool_name, resent=False, reason=reason)
            )
            continue
        by = per_tool.get(recording.tool_name, compare)
        planned.append(PlannedCall(index, recording.tool_name, recording.args, by))
    return planned, skipped


def _skip_reason(
    name: str, args: dict[str, Any], tool: UniverseTool | None, allow: Collection[str]
) -> str | None:
    if tool is None:
        return "the live server no longer lists the tool"
    read_only = (tool.annotations or {}).get("readOnlyHint") is True
    if not read_only and name not in allow:
        return "not annotated readOnlyHint: true (re-send it with --allow TOOL)"
    if _holds_placeholder(args):
        return "its arguments hold a redacted value"
    return None


def _holds_placeholder(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_holds_placeholder(k) or _holds_placeholder(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_holds_placeholder(item) for item in value)
    return isinstance(value, str) and _PLACEHOLDER.search(value) is not None
