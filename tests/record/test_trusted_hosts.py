"""`wt record`'s proxy checks Host and Origin as `wt serve` does: on every bind, exactly."""

from __future__ import annotations

import json

import httpx2
import pytest
import trio

from tests.record.upstreams import SDK_UPSTREAM, sdk_http_upstream
from windtunnel.record import RecordingProxy

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}
LOOKUP = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {
        "name": "lookup",
        "arguments": {"query": "acme"},
        "_meta": {  # the stateless era: no initialize needed, on either kind of upstream
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {},
        },
    },
}


@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2"])
@pytest.mark.parametrize("upstream_kind", ["stdio", "http"])
async def test_a_rebound_host_or_a_foreign_origin_never_reaches_the_upstream(
    bind: str, upstream_kind: str
) -> None:
    """421 for a foreign Host (also one that only starts with ours), 403 for a foreign Origin
    (another local port's page too); only the request from the proxy's own origin is forwarded
    and recorded."""
    statuses: list[int] = []
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery, sdk_http_upstream(stateless=True) as http:
            proxy = RecordingProxy(SDK_UPSTREAM if upstream_kind == "stdio" else http, name="sdk")
            url = await proxy.start(nursery, host=bind)
            authority = url.split("/")[2]
            async with httpx2.AsyncClient(timeout=30) as client:
                for extra in (
                    {"Host": "evil.example"},
                    {"Host": f"evil.example:{url.rsplit(':', 1)[1].split('/')[0]}"},
                    {"Host": f"{authority}.evil.example"},
                    {"Origin": "http://evil.example"},
                    {"Origin": f"http://{authority}.evil.example"},
                    {"Origin": "http://localhost:3000"},
                    # Our own page under a loopback name (one the HTTP upstream, which gets
                    # the Origin as it came, also takes).
                    {"Origin": f"http://localhost:{authority.rsplit(':', 1)[1]}"},
                ):
                    response = await client.post(
                        url, content=json.dumps(LOOKUP), headers={**HEADERS, **extra}
                    )
                    statuses.append(response.status_code)
            await proxy.stop()
    assert statuses == [421, 421, 421, 403, 403, 403, 200]
    assert [call.tool_name for call in proxy.call_log()] == ["lookup"]
