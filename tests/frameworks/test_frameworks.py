"""Agent frameworks against Wind Tunnel, over HTTP and stdio: each framework in its own venv with
its own scripted model (tests/frameworks/clients), checked from both sides: what the framework
offered its model and handed back, and what Wind Tunnel recorded.

What every framework must show: the universe's tools with their schemas; a hit returns the
recorded value; a miss reaches the model as a readable tool error (whether `isError` survives is
the framework's choice, pinned here); a tool the universe does not declare is the JSON-RPC error;
a multi-upstream `mcpServers` config (over HTTP, the one `wt serve` prints) loads and works.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .harness import CHARGE, CLIENT, CRM_TOOLS, MISS_ERROR, UNKNOWN_TOOL, open_upstreams, run_client

TRANSPORTS = pytest.mark.parametrize("transport", ["http", "stdio"])


def text_of(value: Any) -> str:
    """The text block Wind Tunnel serves beside an object's `structuredContent`."""
    return json.dumps(value, sort_keys=True)


def assert_recorded(upstreams: Any, crm_calls: list[tuple[str, str]]) -> None:
    """Wind Tunnel's side: the calls it answered, a divergence for each miss. Sorted: the
    frameworks run one turn's tool calls concurrently, so they arrive in either order."""
    assert sorted(upstreams.calls("crm")) == sorted(crm_calls)
    assert sorted(upstreams.divergences("crm")) == sorted(
        (tool, "unknown_tool" if tool == "refund_charge" else "no_recorded_result")
        for tool, tier in crm_calls
        if tier == "miss"
    )
    assert upstreams.calls("billing") == [("charge_lookup", "exact")]


@TRANSPORTS
async def test_pydantic_ai(transport: str, tmp_path: Path) -> None:
    """pydantic-ai: schemas, hit, miss as a retry prompt with the error text, unknown tool, config."""
    async with open_upstreams(transport, tmp_path) as upstreams:
        seen = await run_client("fw-pydantic-ai", "pydantic_ai_client.py", upstreams)
    assert seen["tools"] == CRM_TOOLS
    assert seen["hit"] == {"outcome": "success", "content": CLIENT}
    assert seen["miss"]["outcome"] == "retried"
    assert json.loads(seen["miss"]["content"]) == MISS_ERROR
    assert seen["undeclared"] == f"ModelRetry: {UNKNOWN_TOOL}"
    assert seen["multi_tools"] == ["billing_charge_lookup", "crm_client_lookup", "crm_list_tickets"]
    assert seen["multi"] == [
        {"outcome": "success", "content": CLIENT},
        {"outcome": "success", "content": CHARGE},
    ]
    assert_recorded(
        upstreams,
        [
            ("client_lookup", "exact"),
            ("client_lookup", "miss"),
            ("refund_charge", "miss"),
            ("client_lookup", "exact"),
        ],
    )


@TRANSPORTS
async def test_openai_agents(transport: str, tmp_path: Path) -> None:
    """OpenAI Agents SDK: the model gets text only (no `isError`, no `structuredContent`)."""
    async with open_upstreams(transport, tmp_path) as upstreams:
        seen = await run_client("fw-openai-agents", "openai_agents_client.py", upstreams)
    assert seen["tools"] == CRM_TOOLS
    assert seen["hit"] == [{"type": "input_text", "text": text_of(CLIENT)}]
    assert seen["miss"] == [{"type": "input_text", "text": text_of(MISS_ERROR)}]
    assert seen["undeclared"] == f"MCPError: {UNKNOWN_TOOL}"
    assert seen["multi_tools"] == ["charge_lookup", "client_lookup", "list_tickets"]
    assert seen["multi"] == [
        [{"type": "input_text", "text": text_of(CLIENT)}],
        [{"type": "input_text", "text": text_of(CHARGE)}],
    ]
    assert_recorded(
        upstreams,
        [
            ("client_lookup", "exact"),
            ("client_lookup", "miss"),
            ("refund_charge", "miss"),
            ("client_lookup", "exact"),
        ],
    )


@TRANSPORTS
async def test_langchain(transport: str, tmp_path: Path) -> None:
    """langchain-mcp-adapters + LangGraph: error status on a miss; over stdio only a held
    session keeps a sequence-mode cursor (default tools start a server per call)."""
    async with open_upstreams(transport, tmp_path) as upstreams:
        seen = await run_client("fw-langchain", "langchain_client.py", upstreams)
    assert seen["tools"] == CRM_TOOLS
    assert seen["hit"] == {
        "status": "success",
        "text": [text_of(CLIENT)],
        "artifact": {"structured_content": CLIENT},
    }
    assert seen["miss"] == {"status": "error", "text": [text_of(MISS_ERROR)], "artifact": None}
    assert seen["undeclared"] == f"McpError: {UNKNOWN_TOOL}"
    assert seen["multi_tools"] == ["charge_lookup", "client_lookup", "list_tickets"]
    assert [message["artifact"] for message in seen["multi"]] == [
        {"structured_content": CLIENT},
        {"structured_content": CHARGE},
    ]
    crm_calls = [
        ("client_lookup", "exact"),
        ("client_lookup", "miss"),
        ("refund_charge", "miss"),
        ("client_lookup", "exact"),
    ]
    if transport == "stdio":
        first, second = ["page 1: T-1 double charge"], ["page 2: T-2 refund pending"]
        assert seen["pages"] == {"default": [first, first], "session": [first, second]}
        crm_calls += [("list_tickets", "exact")] * 4
    assert_recorded(upstreams, crm_calls)


@TRANSPORTS
async def test_fastmcp(transport: str, tmp_path: Path) -> None:
    """fastmcp's Client: `.data` from `structuredContent`; a miss raises `ToolError` (or, with
    `raise_on_error=False`, is a result with `is_error`)."""
    async with open_upstreams(transport, tmp_path) as upstreams:
        seen = await run_client("fw-fastmcp", "fastmcp_client.py", upstreams)
    assert seen["tools"] == CRM_TOOLS
    assert seen["hit"] == {"data": CLIENT, "is_error": False, "text": [text_of(CLIENT)]}
    assert seen["miss"] == {"data": None, "is_error": True, "text": [text_of(MISS_ERROR)]}
    assert seen["miss_raised"] == f"ToolError: {text_of(MISS_ERROR)}"
    assert seen["undeclared"] == f"MCPError: {UNKNOWN_TOOL}"
    assert seen["multi_tools"] == ["billing_charge_lookup", "crm_client_lookup", "crm_list_tickets"]
    assert seen["multi"] == [
        {"data": CLIENT, "is_error": False, "text": [text_of(CLIENT)]},
        {"data": CHARGE, "is_error": False, "text": [text_of(CHARGE)]},
    ]
    assert_recorded(
        upstreams,
        [
            ("client_lookup", "exact"),
            ("client_lookup", "miss"),
            ("client_lookup", "miss"),
            ("refund_charge", "miss"),
            ("client_lookup", "exact"),
        ],
    )


async def test_inspect_ai(tmp_path: Path) -> None:
    """inspect-ai over stdio: text only, a miss as `ToolCallError`, cursors held only by react()."""
    async with open_upstreams("stdio", tmp_path) as upstreams:
        seen = await run_client("fw-inspect-ai", "inspect_ai_client.py", upstreams)
    # inspect-ai closes each schema and names every undescribed parameter after itself.
    assert seen["tools"] == {
        name: {
            **schema,
            "properties": {
                key: {**value, "description": key} for key, value in schema["properties"].items()
            },
            "additionalProperties": False,
        }
        for name, schema in CRM_TOOLS.items()
    }
    assert seen["hit"] == {"text": text_of(CLIENT), "error": None}
    assert seen["miss"] == {"text": "", "error": ["unknown", text_of(MISS_ERROR)]}
    first, second = "page 1: T-1 double charge", "page 2: T-2 refund pending"
    assert seen["pages"] == {"held": [first, second], "per_call": [first, first]}
    assert sorted(upstreams.calls("crm")) == sorted(
        [("client_lookup", "exact"), ("client_lookup", "miss")] + [("list_tickets", "exact")] * 4
    )
    assert upstreams.divergences("crm") == [("client_lookup", "no_recorded_result")]
