"""Which SDK app answers a Streamable HTTP request when a server hands out sessions (issue 25).

A universe whose recordings hold server messages, or that has sequence-mode tools, is served by
two SDK apps: the SDK's session manager (`sessions`: SSE responses that carry the messages a
server sends while answering, requests to the client whose answers come back through the
session, a sequence position per session) and the stateless JSON app every other server uses
(`stateless`). A client asks for a session by opening one; so the rule is:

- a request that names a session (`Mcp-Session-Id`) goes to the session manager, which checks
  it (404 for one it does not know);
- a handshake-era `POST` of `initialize` opens a session there;
- a 2026-07-28 `tools/call` of a tool whose recordings hold server messages goes there too: that
  era has no sessions, but the manager answers it on an SSE stream that carries the call's
  notifications;
- everything else (a client that never initialized: plain calls, raw `curl`, a 2026-07-28 call of
  any other tool) is answered statelessly, as by a server without sessions, and byte for byte as
  the HTTP fast path answers it; its sequence position is the server's own.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from contextlib import AsyncExitStack

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.applications import Starlette
from starlette.types import Message, Receive, Scope, Send

__all__ = ["SessionRouter"]


class SessionRouter:
    """ASGI app: each request to the session manager (`sessions`) or the stateless app, by the
    rule above; both apps' lifespans run as one."""

    def __init__(
        self,
        sessions: Starlette,
        stateless: Starlette,
        messaging_tools: Collection[str],
        max_body: int,
    ) -> None:
        self.sessions = sessions
        self.stateless = stateless
        self.messaging_tools = frozenset(messaging_tools)
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            await self.stateless(scope, receive, send)
            return
        headers = {name.lower(): value for name, value in scope["headers"]}
        if b"mcp-session-id" in headers:
            await self.sessions(scope, receive, send)
            return
        version = headers.get(b"mcp-protocol-version", b"").decode("latin-1")
        if version and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            named = headers.get(b"mcp-name", b"").decode("latin-1")
            messaging = (
                headers.get(b"mcp-method") == b"tools/call" and named in self.messaging_tools
            )
            await (self.sessions if messaging else self.stateless)(scope, receive, send)
            return
        if scope["method"] != "POST":
            await self.stateless(scope, receive, send)
            return
        body, replay = await self._read_body(receive)
        app = self.sessions if body is not None and _is_initialize(body) else self.stateless
        await app(scope, replay, send)

    async def _read_body(self, receive: Receive) -> tuple[bytes | None, Receive]:
        """The request's body (None past the size limit, which the app then refuses with its
        413), and a `receive` that gives the app the same messages again."""
        messages: list[Message] = []
        size = 0
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > self.max_body or not message.get("more_body", False):
                break
        pending = list(messages)

        async def replay() -> Message:
            if pending:
                return pending.pop(0)
            return await receive()

        if size > self.max_body or messages[-1].get("more_body", False):
            return None, replay
        return b"".join(m.get("body", b"") for m in messages if m["type"] == "http.request"), replay

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        """Both apps' start-up (the session managers' task groups) and shutdown, as one."""
        message = await receive()
        assert message["type"] == "lifespan.startup"
        async with AsyncExitStack() as stack:
            try:
                for app in (self.sessions, self.stateless):
                    await stack.enter_async_context(app.router.lifespan_context(app))
            except Exception as exc:
                await send({"type": "lifespan.startup.failed", "message": str(exc)})
                return
            await send({"type": "lifespan.startup.complete"})
            message = await receive()
        await send({"type": "lifespan.shutdown.complete"})


def _is_initialize(body: bytes) -> bool:
    try:
        message = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth
        return False
    return isinstance(message, dict) and message.get("method") == "initialize"
