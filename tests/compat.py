"""The compatibility script every real MCP client runs against a served universe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

COMPAT_UNIVERSE = Path(__file__).parent / "data" / "compat.universe.json"
TOOL_NAMES = ["client_lookup", "charge_card", "motd", "snapshot"]
BLUEWING = {"name": "Bluewing Logistics", "email": "ops@bluewing.example"}

# (tool, args) in order: exact hit, keyed hit, fail_call miss, recorded tool error, unknown tool.
CALLS: list[dict[str, Any]] = [
    {"tool": "client_lookup", "args": {"query": "Bluewing Logistics"}},
    {"tool": "client_lookup", "args": {"query": "Bluewing Logistics", "verbose": True}},
    {"tool": "client_lookup", "args": {"query": "Bluewing"}},
    {"tool": "charge_card", "args": {"amount": 120}},
    {"tool": "refund_card", "args": {"amount": 120}},
]
MISS_NEAREST = {"index": 0, "shared": 0, "differing_keys": ["query"]}


def assert_compat_call_log(calls: list[Any]) -> None:
    """The server's own call log after CALLS: tiers and divergences, in order."""
    assert [c.tool_name for c in calls] == [c["tool"] for c in CALLS]
    assert [c.args for c in calls] == [c["args"] for c in CALLS]
    assert calls[0].extra == {"match": {"tier": "exact", "index": 0}}
    assert calls[1].extra == {"match": {"tier": "keyed", "index": 0}}
    assert calls[2].extra["divergence"] == {
        "tool": "client_lookup",
        "args": {"query": "Bluewing"},
        "reason": "no_recorded_result",
        "policy": "fail_call",
        "matched": None,
        "nearest": MISS_NEAREST,
    }
    assert calls[3].extra == {"match": {"tier": "exact", "index": 1}}
    assert calls[3].is_error is True
    assert calls[4].extra["divergence"]["reason"] == "unknown_tool"


def fail_call_payload() -> dict[str, Any]:
    return {
        "error": "no_recorded_result",
        "tool": "client_lookup",
        "args": {"query": "Bluewing"},
        "reason": "no_recorded_result",
        "message": "no recording of 'client_lookup' matches these arguments",
        "nearest": MISS_NEAREST,
    }


async def observe_compat_script(client: Any) -> dict[str, Any]:
    """Run the compatibility script through an official `mcp.Client`; everything it saw, as plain
    data (results dumped the way the SDK decoded them), for comparing two servers exactly."""
    import mcp

    listed = await client.list_tools()
    seen: dict[str, Any] = {
        "tools": [tool.model_dump(mode="json") for tool in listed.tools],
        "results": [],
    }
    for step in CALLS[:4]:
        result = await client.call_tool(step["tool"], step["args"])
        seen["results"].append(result.model_dump(mode="json"))
    for tool in ("motd", "snapshot"):
        seen["results"].append((await client.call_tool(tool, {})).model_dump(mode="json"))
    try:
        await client.call_tool(CALLS[4]["tool"], CALLS[4]["args"])
    except mcp.MCPError as exc:
        seen["unknown_tool"] = {"code": exc.code, "message": str(exc)}
    return seen


def assert_compat_observed(seen: dict[str, Any]) -> None:
    """What every client must see from the compatibility universe, fast path or not."""
    assert [tool["name"] for tool in seen["tools"]] == TOOL_NAMES
    exact, keyed, miss, recorded_error, motd, snapshot = seen["results"]
    assert (exact["is_error"], exact["structured_content"]) == (False, BLUEWING)
    assert (keyed["is_error"], keyed["structured_content"]) == (False, BLUEWING)
    assert (miss["is_error"], miss["structured_content"]) == (True, fail_call_payload())
    assert recorded_error["is_error"] is True
    assert recorded_error["content"][0]["text"] == "card declined: insufficient funds"
    assert [(block["type"], block["text"]) for block in motd["content"]] == [
        ("text", "All systems nominal.")
    ]
    assert [block["type"] for block in snapshot["content"]] == ["image", "text"]
    assert seen["unknown_tool"] == {"code": -32602, "message": "Unknown tool: refund_card"}
