"""The MCP endpoint under fuzzed requests: only JSON-RPC or HTTP errors, and it keeps serving."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx2
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.compat import COMPAT_UNIVERSE
from tests.reliability.threaded_server import serve_in_thread
from windtunnel.mcp import RecordedMCPServer

ERAS = ["2025-11-25", "2026-07-28"]
ACCEPT = "application/json, text/event-stream"
META_2026 = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}
MOTD_TEXT = "All systems nominal."
# Every status the endpoint may answer a bad request with; never a 5xx.
CLIENT_ERRORS = {400, 404, 405, 406, 413, 415, 421, 422}
METHODS = [
    "tools/call",
    "tools/list",
    "initialize",
    "ping",
    "server/discover",
    "resources/list",
    "notifications/initialized",
    "foo/bar",
    "",
    "tools/call/x",
]

json_leaf = (
    st.none()
    | st.booleans()
    | st.integers(-(2**70), 2**70)
    | st.floats(allow_nan=False)
    | st.text(max_size=20)
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
params = st.one_of(
    json_value,
    st.fixed_dictionaries(
        {},
        optional={
            "name": st.sampled_from(["motd", "client_lookup", "ghost", ""]) | json_value,
            "arguments": st.dictionaries(st.text(max_size=8), json_value, max_size=4) | json_value,
            "_meta": st.just(META_2026) | json_value,
        },
    ),
)
rpc_message = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2]) | json_value,
        "id": st.integers() | st.text(max_size=8) | json_value,
        "method": st.sampled_from(METHODS) | json_value,
        "params": params,
        "result": json_value,
        "error": json_value,
    },
)


def good_call(era: str, request_id: int = 1) -> dict[str, Any]:
    body: dict[str, Any] = {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": "motd", "arguments": {}},
    }
    if era == "2026-07-28":
        body["params"]["_meta"] = META_2026
    return body


def headers_for(era: str | None, method: str = "tools/call", name: str = "motd") -> dict[str, str]:
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    if era is not None:
        headers["MCP-Protocol-Version"] = era
    if era == "2026-07-28":
        headers["Mcp-Method"] = method
        headers["Mcp-Name"] = name
    return headers


@st.composite
def bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["bytes", "message", "batch", "mutated", "nested", "bad-utf8"]))
    if kind == "bytes":
        return draw(st.binary(max_size=400))
    if kind == "message":
        return json.dumps(draw(rpc_message)).encode()
    if kind == "batch":
        return json.dumps(
            draw(st.lists(rpc_message | st.just(good_call("2025-11-25")), max_size=4))
        ).encode()
    valid = json.dumps(good_call(draw(st.sampled_from(ERAS)))).encode()
    if kind == "mutated":
        at = draw(st.integers(0, len(valid) - 1))
        cut = draw(st.integers(0, 8))
        return valid[:at] + draw(st.binary(max_size=6)) + valid[at + cut :]
    if kind == "nested":
        depth = draw(st.integers(1, 20_000))
        opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
        inner = (opener * depth + "1" + closer * depth).encode()
        return valid.replace(b'"arguments": {}', b'"arguments": {"deep": ' + inner + b"}")
    return valid.replace(b"motd", b"mo\xff\xfetd")


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[str, RecordedMCPServer]]:
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with serve_in_thread(server) as url:
        yield url, server


@pytest.fixture(scope="module")
def http() -> Iterator[httpx2.Client]:
    with httpx2.Client(timeout=20) as client:
        yield client


def assert_still_serving(http: httpx2.Client, url: str, server: RecordedMCPServer) -> None:
    before = len(server.call_log())
    for era in ERAS:
        response = http.post(url, json=good_call(era), headers=headers_for(era))
        assert response.status_code == 200, response.text
        assert response.json()["result"]["content"][0]["text"] == MOTD_TEXT
    assert [c.tool_name for c in server.call_log()[before:]] == ["motd", "motd"]


def assert_proper_answer(response: httpx2.Response) -> None:
    assert response.status_code in {200, 202} | CLIENT_ERRORS, response.text
    if response.status_code == 202 or not response.content:
        return
    if "json" in response.headers.get("content-type", ""):
        answer = response.json()
        assert answer["jsonrpc"] == "2.0"
        assert ("result" in answer) != ("error" in answer), answer
        if "error" in answer:
            assert isinstance(answer["error"]["code"], int)
            assert isinstance(answer["error"]["message"], str)


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    body=bodies(),
    era=st.sampled_from([*ERAS, None, "1999-01-01", "2025-06-18"]),
    content_type=st.sampled_from(
        [
            "application/json",
            "text/plain",
            "application/json; charset=latin-1",
            "",
            "multipart/form-data",
        ]
    ),
    accept=st.sampled_from([ACCEPT, "application/json", "text/html", "*/*"]),
    verb=st.sampled_from(["POST", "POST", "POST", "PUT", "PATCH", "DELETE"]),
)
def test_fuzzed_requests_get_proper_errors_and_server_keeps_serving(
    served: tuple[str, RecordedMCPServer],
    http: httpx2.Client,
    body: bytes,
    era: str | None,
    content_type: str,
    accept: str,
    verb: str,
) -> None:
    """Any fuzzed request gets a JSON-RPC or 4xx answer, and good calls in both eras work right after."""
    url, server = served
    headers = headers_for(era)
    headers["Content-Type"] = content_type
    headers["Accept"] = accept
    response = http.request(verb, url, content=body, headers=headers)
    assert_proper_answer(response)
    assert_still_serving(http, url, server)


@pytest.mark.parametrize("era", ERAS)
@pytest.mark.parametrize(
    ("label", "body", "status", "code"),
    [
        ("parse error", b"{not json", 400, -32700),
        ("empty body", b"", 400, -32700),
        ("batch", json.dumps([good_call("2025-11-25")] * 2).encode(), 400, None),
        ("empty batch", b"[]", 400, None),
        ("scalar", b"5", 400, None),
        ("deep nesting", b"[" * 100_000 + b"]" * 100_000, 400, -32700),
        (
            "huge number",
            b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": 1' + b"0" * 5000 + b"}",
            400,
            -32700,
        ),
    ],
)
def test_named_bad_bodies_in_both_eras(
    served: tuple[str, RecordedMCPServer],
    http: httpx2.Client,
    era: str,
    label: str,
    body: bytes,
    status: int,
    code: int | None,
) -> None:
    """Each classic bad body gets its JSON-RPC error with HTTP 400 in both protocol eras."""
    url, server = served
    response = http.post(url, content=body, headers=headers_for(era))
    assert response.status_code == status, (label, response.text)
    error = response.json()["error"]
    if code is not None:
        assert error["code"] == code
    else:
        assert error["code"] in (-32600, -32602)
    assert_still_serving(http, url, server)


def test_unknown_method_and_unknown_tool_in_both_eras(
    served: tuple[str, RecordedMCPServer], http: httpx2.Client
) -> None:
    """An unknown method is -32601 and an unknown tool -32602 naming it, in both eras."""
    url, server = served
    unknown_method = {"jsonrpc": "2.0", "id": 7, "method": "foo/bar", "params": {}}
    response = http.post(url, json=unknown_method, headers=headers_for("2025-11-25"))
    assert response.json()["error"]["code"] == -32601
    for era in ERAS:
        body = good_call(era)
        body["params"]["name"] = "ghost"
        response = http.post(url, json=body, headers=headers_for(era, name="ghost"))
        assert response.json()["error"] == {"code": -32602, "message": "Unknown tool: ghost"}
    assert_still_serving(http, url, server)


def test_chunked_body_over_the_limit_is_refused(
    served: tuple[str, RecordedMCPServer], http: httpx2.Client
) -> None:
    """A chunked body past 4 MiB is refused (413 or a closed connection) and the server keeps serving."""
    url, server = served

    def chunks() -> Iterator[bytes]:
        yield b'{"jsonrpc": "2.0", "id": 1, "method": "ping", "x": "'
        for _ in range(6):
            yield b"x" * (1024 * 1024)
        yield b'"}'

    # Its own connection: the server may close it before the client has finished sending.
    with httpx2.Client(timeout=20) as own:
        try:
            response = own.post(url, content=chunks(), headers=headers_for("2025-11-25"))
            assert response.status_code == 413
        except httpx2.TransportError:
            pass
    assert_still_serving(http, url, server)


def test_body_just_under_the_limit_is_served(
    served: tuple[str, RecordedMCPServer], http: httpx2.Client
) -> None:
    """A 3 MiB call is below the limit: it is answered (a miss) and logged."""
    url, server = served
    body = good_call("2025-11-25")
    body["params"] = {"name": "client_lookup", "arguments": {"query": "x" * (3 * 1024 * 1024)}}
    response = http.post(url, json=body, headers=headers_for("2025-11-25"))
    assert response.status_code == 200
    assert response.json()["result"]["isError"] is True
    assert server.call_log()[-1].args == body["params"]["arguments"]
    assert_still_serving(http, url, server)


def test_get_without_event_stream_accept_is_406(
    served: tuple[str, RecordedMCPServer], http: httpx2.Client
) -> None:
    """A GET that does not accept an event stream is refused with 406, not left hanging."""
    url, server = served
    response = http.get(url, headers={"Accept": "application/json"})
    assert response.status_code == 406
    assert_still_serving(http, url, server)
