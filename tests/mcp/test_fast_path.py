"""The `tools/call` fast path answers exactly as the SDK path does, in both protocol eras."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import h11
import httpx2
import pytest
import trio
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from tests.compat import COMPAT_UNIVERSE
from tests.mcp.fast_path_cases import CALLS as CASES
from tests.mcp.fast_path_cases import UNIVERSE, call, synthesize, with_surface
from windtunnel.calls import MCPCall
from windtunnel.mcp import MCPServer, MockMCPServer, RecordedMCPServer, _http, _http_serving
from windtunnel.mcp._fast_path_http import HTTPFastPath

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
    server.fast_path = fast
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


def _raw_request(body: bytes, headers: dict[str, str], port: int) -> list[bytes]:
    """The head and the body as two writes, as httpx sends them."""
    lines = [b"POST /mcp HTTP/1.1", b"Host: 127.0.0.1:%d" % port, b"Content-Length: %d" % len(body)]
    lines += [f"{name}: {value}".encode() for name, value in headers.items()]
    return [b"\r\n".join(lines) + b"\r\n\r\n", body]


async def _exchange(
    server: MCPServer, exchanges: list[tuple[bytes, dict[str, str]]]
) -> tuple[list[bytes], int]:
    """Every response's bytes (Date blanked) to `exchanges` (body, headers) sent one after the
    other over one kept-alive connection, head and body written apart, and how many requests
    reached the ASGI app."""
    reached_app = 0

    class CountingTrustedHostsOnly(_http_serving.TrustedHostsOnly):
        async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
            nonlocal reached_app
            reached_app += scope["type"] == "http"
            await super().__call__(scope, receive, send)

    responses = []
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_http_serving, "TrustedHostsOnly", CountingTrustedHostsOnly)
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            port = int(url.rsplit(":", 1)[1].split("/")[0])
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            client = h11.Connection(h11.CLIENT)
            for body, headers in exchanges:
                for part in _raw_request(body, headers, port):
                    await stream.send_all(part)
                client.send(h11.Request(method="POST", target="/", headers=[("Host", "x")]))
                client.send(h11.EndOfMessage())
                response = b""
                while not isinstance(event := client.next_event(), h11.EndOfMessage):
                    if event is h11.NEED_DATA:
                        data = await stream.receive_some(65536)
                        client.receive_data(data)
                        response += data
                client.start_next_cycle()
                responses.append(re.sub(rb"date: [^\r]*", b"date: -", response))
            await stream.aclose()
            await server.stop()
    return responses, reached_app


async def _raw_answers(fast: bool) -> tuple[list[bytes], int, list[Any]]:
    server = RecordedMCPServer(COMPAT_UNIVERSE, fast_path=fast)
    exchanges = [(json.dumps(body).encode(), headers) for _, body, headers in requests()]
    responses, reached_app = await _exchange(server, exchanges)
    return responses, reached_app, server.call_log()


async def test_plain_calls_answered_in_the_protocol_are_byte_identical_to_the_sdk_path() -> None:
    """Over one kept-alive HTTP/1.1 connection, with head and body written apart, the responses
    are the same bytes, head included, whether plain calls are answered inside the protocol or
    everything goes through the SDK; the call log is the same, and only the requests the SDK must
    see reach the app."""
    with trio.fail_after(60):
        fast, reached_fast, log_fast = await _raw_answers(fast=True)
        sdk, reached_sdk, log_sdk = await _raw_answers(fast=False)
    labels = [label for label, _, _ in requests()]
    for label, got, want in zip(labels, fast, sdk, strict=True):
        assert got == want, label
    assert reached_sdk == len(labels)
    # Not plain calls: the undeclared tool in each era, and every request after the calls.
    assert reached_fast == 3 + 6
    assert all(a.same_call(b) for a, b in zip(log_fast, log_sdk, strict=True))
    assert len(log_fast) == len(log_sdk) == 3 * len(CALLS) + 1


async def test_plain_calls_for_another_path_are_refused() -> None:
    """Rules written for one path cannot be served at another: a clear error, not silence."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    sdk = server.sdk_server()
    plain = HTTPFastPath(path="/other", tools=[], answer=server.handle_call, server=sdk)
    with trio.fail_after(10), pytest.raises(ValueError, match="'/other' on a server at '/mcp'"):
        await _http.serve_http(sdk, fast_path=plain)


def era_exchanges(
    era: str, calls: list[tuple[str, dict[str, Any]]], first_id: int = 0
) -> list[tuple[bytes, dict[str, str]]]:
    """`calls` as one era's client sends them, numbered from `first_id` (a non-ASCII string id
    in the 2026-07-28 era)."""
    out = []
    for i, (tool, args) in enumerate(calls, start=first_id):
        if era == "legacy":
            headers = {**BASE, "MCP-Protocol-Version": "2025-11-25"}
            out.append((json.dumps(call(i, tool, args)).encode(), headers))
        else:
            headers = {
                **BASE,
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": tool,
            }
            out.append((json.dumps(call(f"é{i}", tool, args, MODERN_META)).encode(), headers))
    return out


@pytest.mark.parametrize("world", ["tools", "surface"])
@pytest.mark.parametrize("era", ["legacy", "modern"])
async def test_every_result_and_error_is_answered_like_the_sdk(
    tmp_path: Path, era: str, world: str
) -> None:
    """Byte for byte the SDK's response, head included (status, header order), to every call of
    the cases the stdio fast path is held to: hits, misses under every policy, every result
    mapping, non-ASCII text, failing hooks; and to a server that refuses a call with an MCP error
    (which 2026-07-28 maps to an HTTP status) and a mock's tool that fails with non-ASCII text.
    The same with a recorded server identity and rich tools (`surface`; recorded in the
    handshake era, served in both: `both_eras`)."""
    path = tmp_path / "fast.universe.json"
    path.write_text(json.dumps(UNIVERSE if world == "tools" else with_surface(UNIVERSE)))
    exchanges = era_exchanges(era, CASES)
    mock_calls = [("refused", {}), ("crashed", {}), ("unicode", {"name": "Zoë"})]
    mock_exchanges = era_exchanges(era, mock_calls, first_id=100)
    runs = {}
    with trio.fail_after(60):
        for fast in (True, False):
            server = RecordedMCPServer(path, synthesize=synthesize, fast_path=fast, both_eras=True)
            server.log_events = False
            replies, reached = await _exchange(server, exchanges)
            mock_replies, mock_reached = await _exchange(failing_mock(fast), mock_exchanges)
            runs[fast] = (replies + mock_replies, reached + mock_reached, server.call_log())
    (fast_replies, fast_reached, fast_log), (sdk_replies, sdk_reached, sdk_log) = (
        runs[True],
        runs[False],
    )
    for (body, _), got, want in zip(
        exchanges + mock_exchanges, fast_replies, sdk_replies, strict=True
    ):
        assert got == want, body
    assert fast_reached == 0
    assert sdk_reached == len(exchanges) + len(mock_exchanges)
    assert all(a.same_call(b) for a, b in zip(fast_log, sdk_log, strict=True))
    statuses = {reply.split(b" ", 2)[1] for reply in sdk_replies}
    assert statuses == ({b"200", b"400"} if era == "modern" else {b"200"})


class RefusingMock(MockMCPServer):
    """A mock whose `refused` tool is refused by the server itself, with an MCP error: what a
    custom `MCPServer.answer` may raise (the 2026-07-28 transport maps -32602 to HTTP 400)."""

    async def answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        if tool_name == "refused":
            raise MCPError(code=INVALID_PARAMS, message="refusé")
        return await super().answer(tool_name, args)


def failing_mock(fast: bool) -> MockMCPServer:
    mock = RefusingMock("failing", fast_path=fast)
    mock.log_events = False

    @mock.tool()
    def refused() -> str:
        return "never called"

    @mock.tool()
    def crashed() -> str:
        raise RuntimeError("échec")

    @mock.tool()
    def unicode(name: str) -> dict[str, Any]:
        return {"greeting": f"Grüß dich, {name} ✓", "tiny": 1e-7, "big": 2**70}

    return mock
