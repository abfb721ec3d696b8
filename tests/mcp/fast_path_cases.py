"""What every fast path must answer exactly as the SDK does: a universe with hits (exact, keyed),
a miss under every policy, every result mapping (structured, text, blocks, non-ASCII text, odd
floats, null, invalid blocks), failing and non-JSON synthesize hooks, and a sequence tool
consumed past its end. `test_stdio_fast_path` and `test_fast_path` (HTTP) send them. And a way to
see which calls reach the SDK's handler, for the tests that show real clients' calls do not."""

from __future__ import annotations

from typing import Any

import pytest

from windtunnel.calls import MCPCall
from windtunnel.mcp import _sdk_server
from windtunnel.mcp._sdk_server import Answer
from windtunnel.universe import Universe

__all__ = ["CALLS", "UNIVERSE", "call", "calls_through_the_sdk", "synthesize", "with_surface"]

TEXT = {"type": "text", "text": "chart"}
UNIVERSE = {
    "windtunnel_universe": 1,
    "tools": [
        {"name": "client_lookup", "input_schema": {"type": "object"}},
        {"name": "charge_card"},
        {"name": "motd"},
        {"name": "snapshot"},
        {"name": "numbers"},
        {"name": "nothing"},
        {"name": "odd_blocks"},
        {"name": "listed"},
        {"name": "pages", "result_schema": {"type": "array"}},
        {"name": "near"},
        {"name": "made"},
        {"name": "counter", "mode": "sequence"},
    ],
    "recordings": [
        {
            "tool_name": "client_lookup",
            "args": {"query": "Bluewing"},
            "result": {"name": "Bluewing", "tags": ["a", None], "score": 1.5e-7},
        },
        {
            "tool_name": "charge_card",
            "args": {"amount": 120},
            "result": {"content": [{"type": "text", "text": "declined"}], "isError": True},
        },
        {"tool_name": "motd", "args": {}, "result": "All systems nominal. é ✓"},
        {
            "tool_name": "snapshot",
            "args": {},
            "result": {
                "content": [
                    {"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"},
                    TEXT,
                ]
            },
        },
        {"tool_name": "numbers", "args": {}, "result": [1, 2.5, True, None]},
        {"tool_name": "nothing", "args": {}, "result": None},
        {"tool_name": "odd_blocks", "args": {}, "result": {"content": [{"type": "hologram"}]}},
        {
            "tool_name": "listed",
            "args": {},
            "result": {"content": [TEXT], "structuredContent": [1]},
        },
        {"tool_name": "pages", "args": {"page": 1}, "result": ["p1"]},
        {"tool_name": "near", "args": {"a": 1, "b": 2}, "result": {"near": True}},
        {"tool_name": "counter", "args": {}, "result": {"n": 1}},
        {"tool_name": "counter", "args": {}, "result": {"n": 2}},
    ],
    "matching": {
        "on_miss": "fail_call",
        "arg_keys": {"client_lookup": ["query"]},
        "per_tool_on_miss": {"pages": "empty", "near": "nearest", "made": "synthesize"},
    },
}
# (tool, args): hits (exact, keyed), a miss under every policy, every result mapping, and a
# sequence tool consumed past its end; the fast path must send the SDK's bytes for each.
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("client_lookup", {"query": "Bluewing"}),
    ("client_lookup", {"query": "Bluewing", "verbose": True}),
    ("client_lookup", {"query": "Nobody"}),
    ("charge_card", {"amount": 120}),
    ("motd", {}),
    ("snapshot", {}),
    ("numbers", {}),
    ("nothing", {}),
    ("odd_blocks", {}),
    ("listed", {}),
    ("pages", {"page": 9}),
    ("near", {"a": 1, "b": 3}),
    ("made", {"x": 1}),
    ("made", {"boom": True}),
    ("made", {"date": True}),
    ("counter", {}),
    ("counter", {}),
    ("counter", {}),
]


def synthesize(tool: str, args: dict[str, Any], universe: Universe) -> Any:
    if args.get("boom"):
        raise RuntimeError("hook failed")
    if args.get("date"):
        return {"when": object()}  # not JSON data: the replay records a fault
    return {"made": args}


def call(
    request_id: Any, tool: str, args: Any, meta: dict[str, Any] | None = None
) -> dict[str, Any]:
    params: dict[str, Any] = {"name": tool, "arguments": args}
    if meta is not None:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def calls_through_the_sdk(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tool names of the calls the SDK's `tools/call` handler answers from now on (those
    the fast path answers never reach it), in order."""
    names: list[str] = []
    sdk_answer = _sdk_server.answer_call

    async def counted(answer: Answer, name: str, args: dict[str, Any]) -> MCPCall:
        names.append(name)
        return await sdk_answer(answer, name, args)

    monkeypatch.setattr(_sdk_server, "answer_call", counted)
    return names


def with_surface(universe: dict[str, Any]) -> dict[str, Any]:
    """`universe` with a recorded identity (stamped on every 2026-07-28 result) and rich tools."""
    return {
        **universe,
        "tools": [
            {**tool, "title": f"The {tool['name']}", "annotations": {"readOnlyHint": True}}
            for tool in universe["tools"]
        ],
        "server": {
            "protocol_version": "2025-11-25",
            "info": {
                "name": "recorded-upstream",
                "version": "9.9.9",
                "title": "Recorded Upstream",
                "websiteUrl": "https://example.test",
                "icons": [{"src": "https://example.test/i.png"}],
            },
            "instructions": "Use the tools.",
            "capabilities": {"tools": {"listChanged": True}, "logging": {}},
        },
    }
