"""A fast path for the hot method: `tools/call` over Streamable HTTP, answered without the SDK.

Profiles put most of a call's server CPU in the SDK's per-request machinery (a stateless
session, tasks and memory-stream hops, pydantic validation), far more than in our matcher
(docs/benchmarks.md).
`HTTPFastPath` holds the rules: only requests it can prove are plain, valid `tools/call`s,
in either protocol era, for a declared tool are answered, with the same response the SDK would
send (`_fast_path`, shared with the stdio fast path). `_fast_path_h11` applies them inside
hypercorn's HTTP/1.1 protocol, before h11 and ASGI, to the one request shape MCP clients send for
a call. Anything else (other methods, unknown tools, odd headers, bad JSON, bodies near the limit,
2026-07-28 requests with `Mcp-Param-*` headers, HTTP/2, HTTP/1.1 of another shape) goes to the
SDK untouched, so errors and edge cases keep the SDK's exact behaviour. A request that names a
session (`Mcp-Session-Id`) is answered here only with `sessions`, in a live session, as the
session's transport answers it (`_fast_path_sessions`). A foreign Host or Origin
never gets this far: the HTTP layer refuses it on every path (`trusted_hosts`,
`_http_serving.TrustedHostsOnly`).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from mcp.server import Server
from mcp_types import DEFAULT_NEGOTIATED_VERSION

from ._fast_path import FastPath, PlainCall, decode_message
from ._fast_path_h11 import PlainResponse
from ._fast_path_sessions import SessionCalls
from ._sdk_internals import ERROR_CODE_HTTP_STATUS
from ._sdk_server import Answer

__all__ = ["LEGACY_VERSIONS", "MODERN_VERSION", "HTTPFastPath"]

LEGACY_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"})
MODERN_VERSION = "2026-07-28"
_META_VERSION = "io.modelcontextprotocol/protocolVersion"
_META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
# Bodies this large go to the SDK, which owns the size limit and its 413.
_FAST_BODY_LIMIT = 1024 * 1024
_JSON = b"application/json"


class HTTPFastPath:
    """Which Streamable HTTP requests at `path` are plain calls, and their answers
    (`_fast_path_h11.FastH11Protocol` asks)."""

    def __init__(
        self,
        *,
        path: str,
        tools: Collection[str],
        answer: Answer,
        server: Server[Any],
        sessions: SessionCalls | None = None,
        versions: Collection[str] | None = None,
    ) -> None:
        self.path = path
        self.target = path.encode()
        self.body_limit = _FAST_BODY_LIMIT
        self.calls = FastPath(server, tools, answer, http=True)
        self.sessions = sessions
        """The server's HTTP sessions, when it hands them out: calls in them are answered too."""
        self.versions = None if versions is None else frozenset(versions)
        """The protocol versions the server speaks, if not all (`_protocol_era`): a request
        naming another goes to the HTTP layer, which refuses it."""

    def version(self, headers: dict[str, str]) -> str | None:
        """The protocol version the SDK serves the request at, or None when it should see it."""
        content_type = headers.get("content-type", "").split(";")[0].strip().lower()
        accept = headers.get("accept", "")
        if content_type != "application/json" or "application/json" not in accept:
            return None
        if any(k.startswith("mcp-param-") for k in headers):
            return None
        version = headers.get("mcp-protocol-version")
        if version is not None and self.versions is not None and version not in self.versions:
            return None
        if "mcp-session-id" in headers:
            return self._session_version(headers, accept)
        if version is None:
            return DEFAULT_NEGOTIATED_VERSION  # what the SDK's stateless legacy path assumes
        if version in LEGACY_VERSIONS:
            return version
        if version == MODERN_VERSION and headers.get("mcp-method") == "tools/call":
            return version
        return None

    def _session_version(self, headers: dict[str, str], accept: str) -> str | None:
        """The version of the live session a request names, if its call may be answered here:
        the transport answers on an SSE stream, so the client must accept both media types
        (else its 406); literal types only, a wildcard is the SDK's to judge. Its content type
        check has no case folding."""
        if self.sessions is None:
            return None
        if headers["content-type"].split(";")[0].strip() != "application/json":
            return None
        types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
        if "text/event-stream" not in types or "application/json" not in types:
            return None
        session = self.sessions.session(headers)
        return None if session is None else session.connection.protocol_version

    async def answer(
        self, version: str, headers: dict[str, str], body: bytes
    ) -> PlainResponse | None:
        """The response to a plain call served at `version`; None when it is not one."""
        if len(body) > _FAST_BODY_LIMIT:
            return None
        if "mcp-session-id" in headers:
            return await self._answer_in_session(headers, body)
        call = _parse(self.calls, body, version, headers)
        if call is None:
            return None
        reply = await self.calls.reply(call, version, headers.get("traceparent"))
        length = b"%d" % len(reply.body)
        if version != MODERN_VERSION:  # the SDK's `_create_json_response`
            return PlainResponse(
                200, [(b"content-type", _JSON), (b"content-length", length)], reply.body
            )
        # The SDK's modern `_write`: a starlette `Response` with a media type, and an HTTP
        # status for some error codes.
        status = (
            200 if reply.error_code is None else ERROR_CODE_HTTP_STATUS.get(reply.error_code, 200)
        )
        return PlainResponse(
            status, [(b"content-length", length), (b"content-type", _JSON)], reply.body
        )

    async def _answer_in_session(
        self, headers: dict[str, str], body: bytes
    ) -> PlainResponse | None:
        sessions = self.sessions
        # Looked up again: the session may have ended while the body came.
        session = None if sessions is None else sessions.session(headers)
        if sessions is None or session is None:
            return None
        call = self.calls.parse(decode_message(body))
        if call is None or not self.calls.accepted(call, session.connection.protocol_version):
            return None
        return await sessions.respond(self.calls, call, session, headers.get("traceparent"))


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
