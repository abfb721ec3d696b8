"""The `tools/call` fast path answers exactly as the SDK path does, in both protocol eras."""

from __future__ import annotations

import json
from typing import Any

import httpx2
import pytest
import trio

from tests.serving.compat import COMPAT_UNIVERSE
from windtunnel.mcp import RecordedMCPServer

BASE = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("client_lookup", {"query": "Bluewing Logistics"}),
    ("client_lookup", {"query": "Bluewing Logistics", "verbose": True}),
    ("client_lookup", {"query": "Nobody"}),
    ("charge_card", {"amount": 120}),
    ("motd", {}),
    ("snapshot", {}),
    ("refund_card", {"amount": 1}),
]


def requests() -> list[tuple[str, dict[str, Any], dict[str, str]]]:
    """(label, body, headers) for every call in each era, plus requests the SDK must keep."""
    out = []
    for i, (tool, args) in enumerate(CALLS):
        legacy = {
            "jsonrpc": "2.0",
            "id": i,
            "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        }
        out.append((f"legacy {tool}", legacy, {**BASE, "MCP-Protocol-Version": "2025-11-25"}))
        out.append((f"no-version {tool}", legacy, BASE))
        modern = {**legacy, "id": f"m{i}", "params": {**legacy["params"], "_meta": MODERN_META}}
        headers = {
            **BASE,
            "MCP-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call",
            "Mcp-Name": tool,
        }
        out.append((f"modern {tool}", modern, headers))
    call = {
        "jsonrpc": "2.0",
        "id": 99,
        "method": "tools/call",
        "params": {"name": "motd", "arguments": {}},
    }
    out += [
        (
            "modern without envelope",
            call,
            {
                **BASE,
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "motd",
            },
        ),
        (
            "modern name header mismatch",
            {**call, "params": {**call["params"], "_meta": MODERN_META}},
            {
                **BASE,
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "other",
            },
        ),
        ("bool id", {**call, "id": True}, BASE),
        ("extra params key", {**call, "params": {**call["params"], "task": {}}}, BASE),
        ("arguments not an object", {**call, "params": {"name": "motd", "arguments": [1]}}, BASE),
        ("tools/list", {"jsonrpc": "2.0", "id": 5, "method": "tools/list"}, BASE),
    ]
    return out


async def answers(fast: bool) -> tuple[list[tuple[int, bytes]], list[Any]]:
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    server.fast_calls = fast
    replies: list[tuple[int, bytes]] = []
    async with trio.open_nursery() as nursery:
        url = await server.start(nursery)
        async with httpx2.AsyncClient(timeout=10) as http:
            for _, body, headers in requests():
                response = await http.post(url, content=json.dumps(body), headers=headers)
                replies.append((response.status_code, response.content))
        await server.stop()
    return replies, server.call_log()


async def test_fast_path_answers_like_the_sdk() -> None:
    """Same status, the same response bytes and the same call log with and without the fast
    path."""
    with trio.fail_after(60):
        fast, fast_log = await answers(fast=True)
        sdk, sdk_log = await answers(fast=False)
    labels = [label for label, _, _ in requests()]
    for label, got, want in zip(labels, fast, sdk, strict=True):
        assert got == want, label
    # Every call in each era, and the one extra request the SDK also answers (unknown params key).
    assert len(sdk_log) == len(fast_log) == 3 * len(CALLS) + 1
    assert all(a.same_call(b) for a, b in zip(fast_log, sdk_log, strict=True))


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"Host": "evil.example"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Content-Type": "text/plain"}, 400),
    ],
)
async def test_fast_path_leaves_rejections_to_the_sdk(
    headers: dict[str, str], expected: int
) -> None:
    """Foreign Host/Origin and wrong content types still get the SDK's refusals."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "motd", "arguments": {}},
    }
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=10) as http:
                response = await http.post(
                    url, content=json.dumps(body), headers={**BASE, **headers}
                )
            await server.stop()
    assert response.status_code == expected
    assert server.call_log() == []
