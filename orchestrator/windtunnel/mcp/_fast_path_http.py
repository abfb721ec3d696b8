"""A fast path for the hot method: `tools/call` over Streamable HTTP, answered without the SDK.

Profiles put most of a call's server CPU in the SDK's per-request machinery (a stateless
session, tasks and memory-stream hops, pydantic validation), far more than in our matcher
(docs/benchmarks.md).
`HTTPFastPath` holds the rules: only requests it can prove are plain, valid `tools/call`s,
in either protocol era, for a declared tool are answered, with the same response the SDK would
send (`_fast_path`, shared with the stdio fast path). Two places apply them: `FastPathASGI`, an
ASGI layer in front of the SDK app, and `_fast_path_h11`, inside hypercorn's HTTP/1.1 protocol
before any ASGI (HTTP/1.1 requests are answered there; the ASGI layer serves HTTP/2). Anything else
(other methods, unknown tools, odd headers, bad JSON, bodies near the limit, 2026-07-28
requests with `Mcp-Param-*` headers) goes to the SDK untouched, so errors and
edge cases keep the SDK's exact behaviour. A foreign Host or Origin never gets this far: the
HTTP layer refuses it on every path (`trusted_hosts`, `_http.TrustedHostsOnly`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any

from mcp.server import Server
from mcp_types import DEFAULT_NEGOTIATED_VERSION

from ._fast_path import FastPath, PlainCall, decode_message
from ._sdk_server import Answer

__all__ = [
    "LEGACY_VERSIONS",
    "MODERN_VERSION",
    "ASGIApp",
    "FastPathASGI",
    "HTTPFastPath",
    "header_dict",
]

LEGACY_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
MODERN_VERSION = "2026-07-28"
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
# Bodies this large go to the SDK, which owns the size limit and its 413.
_FAST_BODY_LIMIT = 1024 * 1024

ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


class HTTPFastPath:
    """Which Streamable HTTP requests at `path` are plain calls, and their answers.

    Shared by the two places that answer them: `FastPathASGI` (ASGI, in front of the SDK app)
    and `_fast_path_h11.FastH11Protocol` (inside hypercorn's HTTP/1.1 protocol, before any ASGI).
    """

    def __init__(
        self,
        *,
        path: str,
        tools: Collection[str],
        answer: Answer,
        server: Server[Any],
    ) -> None:
        self.path = path
        self.target = path.encode()
        self.body_limit = _FAST_BODY_LIMIT
        self.calls = FastPath(server, tools, answer)

    def version(self, headers: dict[str, str]) -> str | None:
        """The protocol version the SDK serves the request at, or None when it should see it."""
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        if content_type != "application/json" or "application/json" not in headers.get(
            "accept", ""
        ):
            return None
        if "mcp-session-id" in headers or any(k.startswith("mcp-param-") for k in headers):
            return None
        version = headers.get("mcp-protocol-version")
        if version is None:
            return DEFAULT_NEGOTIATED_VERSION  # what the SDK's stateless legacy path assumes
        if version in LEGACY_VERSIONS:
            return version
        if version == MODERN_VERSION and headers.get("mcp-method") == "tools/call":
            return version
        return None

    async def answer(self, version: str, headers: dict[str, str], body: bytes) -> bytes | None:
        """The response body for a plain call served at `version`; None when it is not one."""
        if len(body) > _FAST_BODY_LIMIT:
            return None
        call = _parse(self.calls, body, version, headers)
        return None if call is None else await self.calls.reply(call, version)


class FastPathASGI:
    """ASGI middleware: answer the plain calls of `plain` POSTed to its path, pass on the rest."""

    def __init__(self, app: ASGIApp, fast_path: HTTPFastPath) -> None:
        self.app = app
        self.fast_path = fast_path

    async def __call__(
        self,
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[Any]],
        send: Callable[[Any], Awaitable[None]],
    ) -> None:
        if (
            scope["type"] != "http"
            or scope["method"] != "POST"
            or scope["path"] != self.fast_path.path
        ):
            await self.app(scope, receive, send)
            return
        headers = header_dict(scope["headers"])
        version = self.fast_path.version(headers) if headers is not None else None
        if version is None:
            await self.app(scope, receive, send)
            return
        body, more, messages = await _read_body(receive)
        answer = None if more else await self.fast_path.answer(version, headers or {}, body)
        if answer is None:
            await self.app(scope, _replay(messages, receive), send)
            return
        await _respond(send, answer)


def header_dict(pairs: Iterable[tuple[bytes, bytes]]) -> dict[str, str] | None:
    """Lower-cased headers; None when one appears twice (the SDK decides those)."""
    headers: dict[str, str] = {}
    for raw_key, raw_value in pairs:
        key = raw_key.decode("latin-1").lower()
        if key in headers:
            return None
        headers[key] = raw_value.decode("latin-1")
    return headers


async def _read_body(
    receive: Callable[[], Awaitable[Any]],
) -> tuple[bytes, bool, list[Any]]:
    """Read up to the fast-path limit; return (body, more_left, messages read so far)."""
    messages: list[Any] = []
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return b"", True, messages
        chunk = message.get("body", b"")
        chunks.append(chunk)
        size += len(chunk)
        if size > _FAST_BODY_LIMIT:
            return b"", True, messages
        if not message.get("more_body", False):
            return b"".join(chunks), False, messages


def _replay(
    messages: list[Any], receive: Callable[[], Awaitable[Any]]
) -> Callable[[], Awaitable[Any]]:
    """A `receive` that hands the SDK the messages already read, then the rest of the stream."""
    pending = list(messages)

    async def replay() -> Any:
        if pending:
            return pending.pop(0)
        return await receive()

    return replay


def _parse(calls: FastPath, body: bytes, version: str, headers: dict[str, str]) -> PlainCall | None:
    """A plain, valid `tools/call` for a declared tool the SDK would serve at `version`."""
    call = calls.parse(decode_message(body))
    if call is None:
        return None
    if version == MODERN_VERSION:
        # The SDK's modern HTTP entry: the envelope in `_meta` and headers that agree with it.
        meta = call.params.get("_meta") or {}
        if (
            headers.get("mcp-name") != call.name
            or meta.get(_META_VERSION) != MODERN_VERSION
            or not isinstance(meta.get(_META_CAPABILITIES), dict)
        ):
            return None
    return call if calls.accepted(call, version) else None


async def _respond(send: Callable[[Any], Awaitable[None]], body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
