"""Safe defaults of the HTTP endpoint: loopback, Host/Origin checks, body limit, bad JSON-RPC."""

from __future__ import annotations

import json
import socket
from typing import Any

import httpx2
import mcp
import trio

from tests.compat import COMPAT_UNIVERSE
from windtunnel.mcp import RecordedMCPServer

HEADERS = {
    "Content-Type": "application/json",
    "Accept": "application/json, text/event-stream",
    "MCP-Protocol-Version": "2025-11-25",
}


def tools_call(name: str, args: dict[str, Any], request_id: int = 1) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": args},
    }


async def test_binds_loopback_only_by_default() -> None:
    """The default server listens on 127.0.0.1 and nowhere else."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            assert url == f"http://127.0.0.1:{port}/mcp"
            outward = socket.gethostbyname(socket.gethostname())
            if outward != "127.0.0.1" and not outward.startswith("127."):
                probe = trio.socket.socket()
                with probe:
                    try:
                        await probe.connect((outward, port))
                        reachable = True
                    except OSError:
                        reachable = False
                assert reachable is False
            await server.stop()


async def test_rejects_foreign_host_and_origin_then_keeps_serving() -> None:
    """DNS-rebinding defence: a foreign Host gets 421, a foreign Origin 403; good calls still work."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=10) as http:
                body = tools_call("motd", {})
                bad_host = await http.post(
                    url, json=body, headers={**HEADERS, "Host": "evil.example"}
                )
                bad_origin = await http.post(
                    url, json=body, headers={**HEADERS, "Origin": "http://evil.example"}
                )
                good = await http.post(url, json=body, headers=HEADERS)
            await server.stop()
    assert bad_host.status_code == 421
    assert bad_origin.status_code == 403
    assert good.status_code == 200
    assert good.json()["result"]["content"][0]["text"] == "All systems nominal."
    assert len(server.call_log()) == 1


async def test_body_over_4_mib_is_413() -> None:
    """A request body over 4 MiB is refused with HTTP 413 before it reaches the matcher."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=10) as http:
                huge = tools_call("client_lookup", {"query": "x" * (4 * 1024 * 1024)})
                response = await http.post(url, json=huge, headers=HEADERS)
                after = await http.post(url, json=tools_call("motd", {}), headers=HEADERS)
            await server.stop()
    assert response.status_code == 413
    assert after.status_code == 200
    assert [c.tool_name for c in server.call_log()] == ["motd"]


async def test_malformed_json_rpc_gets_errors_and_server_keeps_serving() -> None:
    """Malformed JSON, wrong shapes, unknown methods and wrong content types are errors, not crashes."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with httpx2.AsyncClient(timeout=10) as http:
                parse = await http.post(url, content=b"{not json", headers=HEADERS)
                shape = await http.post(url, json={"id": 1, "method": 5}, headers=HEADERS)
                method = await http.post(
                    url, json={"jsonrpc": "2.0", "id": 2, "method": "foo/bar"}, headers=HEADERS
                )
                no_name = await http.post(
                    url,
                    json={"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}},
                    headers=HEADERS,
                )
                utf8 = await http.post(
                    url, content=b'{"jsonrpc": "2.0", "\xff": 1}', headers=HEADERS
                )
                ctype = await http.post(
                    url,
                    content=json.dumps(tools_call("motd", {})),
                    headers={**HEADERS, "Content-Type": "text/plain"},
                )
            async with mcp.Client(url) as client:
                still = await client.call_tool("motd", {})
            await server.stop()
    assert (parse.status_code, parse.json()["error"]["code"]) == (400, -32700)
    assert shape.status_code == 400
    assert "error" in shape.json()
    assert method.json()["error"]["code"] == -32601
    assert no_name.json()["error"]["code"] == -32602
    assert utf8.status_code == 400
    assert ctype.status_code == 400
    assert still.content[0].text == "All systems nominal."
    assert [c.tool_name for c in server.call_log()] == ["motd"]
