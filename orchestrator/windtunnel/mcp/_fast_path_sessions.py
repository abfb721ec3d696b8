"""A plain `tools/call` inside a Streamable HTTP session, answered by the HTTP fast path.

A server that hands out sessions (`_http_sessions`) answers each request in a session through
the SDK's session manager, which costs what `--no-fast-path` costs. Most calls in a session
carry no server messages: for those the fast path answers as the session's transport would,
byte for byte (`tests/mcp/test_fast_path_sessions.py` compares whole responses):

- only a session the SDK would serve the request in: one its manager holds, live, whose
  `initialize` was accepted (`live_session`); any other id (unknown, ended, timed out) goes to
  the SDK, which answers its 404, as a request without one goes to the stateless app (main's
  routing: `_http_sessions`);
- at the session's negotiated version, validated as its runner validates a call (`FastPath`);
- the answer is made as the SDK's handler makes it in a session (`MCPServer.
  handle_call_exchanging`, with the session's own state: a sequence position per session,
  shared with the calls the SDK answers in the same session), so the call log and events are
  the same;
- the reply is what the transport writes in a session: a 200 SSE response (the transport's
  headers, `Mcp-Session-Id` among them, chunked by h11) holding one `message` event, the
  JSON-RPC response serialized as the SDK serializes it (`sse_event`: no event id, since no
  event store is kept, so there is nothing random to match);
- while answering, the session counts a request in flight, as the transport counts one, so
  the SDK's idle timeout sees a session whose calls all take the fast path as active.

Which connection a session id names is learnt from the SDK itself: a middleware on the sessions
server notes each session's `Connection` on its first request (`initialize`) and forgets it
when the SDK closes the connection (its `exit_stack`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from mcp.server import Server, ServerRequestContext

from ..calls import MCPCall
from ..errors import ServerError
from ..replay import ClientExchange
from ._fast_path import FastPath, PlainCall
from ._fast_path_h11 import PlainResponse
from ._sdk_internals import (
    HANDSHAKE_PROTOCOL_VERSIONS,
    Connection,
    StreamableHTTPServerTransport,
    holding_session,
    live_session,
    session_connection,
    sse_event,
)
from ._shapes import ExchangingAnswer, SessionState

__all__ = ["Session", "SessionCalls"]

_SSE_HEADERS = [
    (b"cache-control", b"no-cache, no-transform"),
    (b"connection", b"keep-alive"),
    (b"content-type", b"text/event-stream"),
]
"""The headers the session transport gives an SSE answer to a POST, before `mcp-session-id`
and sse-starlette's `x-accel-buffering` (`StreamableHTTPServerTransport._handle_post_request`)."""
_SSE_BUFFERING = (b"x-accel-buffering", b"no")


@dataclass(frozen=True, slots=True)
class Session:
    """A live SDK session: its id, its connection (version, state) and its transport."""

    id: str
    connection: Connection
    transport: StreamableHTTPServerTransport


class SessionCalls:
    """The sessions of one SDK server (the one `_http_sessions` hands sessions from), and the
    fast path's answers to plain calls in them."""

    def __init__(self, server: Server[Any], answer: ExchangingAnswer) -> None:
        self._server = server
        self._answer = answer
        self._connections: dict[str, Connection] = {}
        server.middleware.append(self._note_connection)

    async def _note_connection(self, ctx: ServerRequestContext[Any], call_next: Any) -> Any:
        connection = session_connection(ctx)
        if connection is not None:
            session_id = connection.session_id
            if session_id is not None and session_id not in self._connections:
                self._connections[session_id] = connection
                connection.exit_stack.callback(self._connections.pop, session_id, None)
        return await call_next(ctx)

    def session(self, headers: dict[str, str]) -> Session | None:
        """The live session a request's headers name, if its plain calls may be answered here:
        a handshake-era request (the SDK's manager sends any other version to its 2026-07-28
        entry) in a session whose `initialize` was accepted."""
        version = headers.get("mcp-protocol-version")
        if version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS:
            return None
        session_id = headers.get("mcp-session-id")
        if session_id is None:
            return None
        connection = self._connections.get(session_id)
        if connection is None or not connection.initialize_accepted:
            return None
        transport = live_session(self._server.session_manager, session_id)
        if transport is None:
            return None
        return Session(session_id, connection, transport)

    async def respond(
        self, calls: FastPath, call: PlainCall, session: Session, traceparent: str | None
    ) -> PlainResponse:
        """Answer `call` in `session`, as the session's transport writes the answer."""
        answer = partial(_in_session, self._answer, session.connection.state)
        with holding_session(session.transport):
            reply = await calls.reply(
                call, session.connection.protocol_version, traceparent, answer=answer
            )
        headers = [*_SSE_HEADERS, (b"mcp-session-id", session.id.encode()), _SSE_BUFFERING]
        return PlainResponse(200, headers, sse_event(reply.body), chunked=True)


async def _in_session(
    answer: ExchangingAnswer, state: SessionState, name: str, args: dict[str, Any]
) -> MCPCall:
    return await answer(name, args, _no_messages, state)


async def _no_messages(messages: Sequence[dict[str, Any]]) -> ClientExchange:
    """The fast path answers only tools none of whose recordings hold server messages
    (`MCPServer.fast_path_tools`), so a call it answers has none to exchange."""
    raise ServerError(f"a call answered by the fast path has {len(messages)} server messages")
