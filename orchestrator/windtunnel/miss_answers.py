"""What the agent is given when a call misses: one function per divergence policy (DESIGN §4)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .matching import Miss, Nearest, UniverseIndex
from .universe import Universe

__all__ = [
    "SynthesizeHook",
    "empty_request_result",
    "empty_result",
    "fail_call_result",
    "request_error_result",
    "unknown_tool_result",
]

SynthesizeHook = Callable[[str, dict[str, Any], Universe], Any]
"""`hook(tool_name, args, universe)` returns the payload for a `synthesize` miss."""

_EMPTY_BY_TYPE: dict[str, Any] = {
    "array": [],
    "object": {},
    "string": "",
    "number": 0,
    "integer": 0,
    "boolean": False,
    "null": None,
}


def _empty_of(value: Any) -> Any:
    if isinstance(value, list):
        return []
    if isinstance(value, dict):
        return {}
    if isinstance(value, str):
        return ""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return 0
    return None


def empty_result(index: UniverseIndex, tool_name: str) -> Any:
    """A schema-shaped empty value: `result_schema`, else the first recording's type, else {}."""
    tool = index.tool(tool_name)
    schema = tool.result_schema if tool is not None else None
    if schema is not None:
        declared = schema.get("type")
        if isinstance(declared, list):
            # Among several types the container or string one answers, in windtunnel-bench's
            # order; else the first that is not null.
            preferred = [t for t in ("array", "object", "string") if t in declared]
            others = [t for t in declared if t != "null"]
            declared = (preferred or others or declared or [None])[0]
        if isinstance(declared, str) and declared in _EMPTY_BY_TYPE:
            return _EMPTY_BY_TYPE[declared]
        if "items" in schema:
            return []
        return {}
    recorded = index.recordings_of(tool_name)
    if recorded:
        return _empty_of(index.universe.recordings[recorded[0]].result)
    return {}


def fail_call_result(
    tool_name: str, args: dict[str, Any], miss: Miss, nearest: Nearest | None
) -> dict[str, Any]:
    """The structured tool error of the `fail_call` policy: the seed's `{"error":
    "no_recorded_result", "tool", "args"}` and why (`reason`, `message`, `nearest`)."""
    if miss.reason == "sequence_exhausted":
        message = f"every recording of {tool_name!r} matching these arguments was already used"
    elif miss.reason == "client_answer_differs":
        message = (
            f"the client answered a request made while answering {tool_name!r} otherwise than "
            "when it was recorded"
        )
    else:
        message = f"no recording of {tool_name!r} matches these arguments"
    return {
        "error": "no_recorded_result",
        "tool": tool_name,
        "args": args,
        "reason": miss.reason,
        "message": message,
        "nearest": nearest.to_dict() if nearest is not None else None,
    }


def empty_request_result(method: str) -> dict[str, Any]:
    """The `empty` answer to a request other than `tools/call` that no entry answers: the
    method's result with nothing in it (a `ReadResourceResult` without contents, a
    `GetPromptResult` without messages, a `CompleteResult` without values)."""
    if method == "resources/read":
        return {"contents": []}
    if method == "prompts/get":
        return {"messages": []}
    return {"completion": {"values": []}}


def request_error_result(method: str, target: str) -> dict[str, Any]:
    """What the call log holds for the `fail_call` answer to such a request; over MCP the agent
    gets the JSON-RPC error its method prescribes."""
    return {"error": "no_recorded_result", "method": method, "target": target}


def unknown_tool_result(tool_name: str) -> dict[str, Any]:
    """What the call log holds for a call of a tool the server does not declare (replay or mock);
    over MCP the agent gets the JSON-RPC error instead."""
    return {
        "error": "unknown_tool",
        "tool": tool_name,
        "message": f"this server does not declare a tool named {tool_name!r}",
    }
