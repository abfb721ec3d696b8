"""Everything Wind Tunnel takes from the MCP SDK beyond its public API, in one place.

Why: the fast path answers a plain `tools/call` with the exact bytes the SDK would send, so it
follows the SDK's own rules with the SDK's own helpers: how a 2026-07-28 request is classified
(`classify_inbound_request`), how a handler's exception becomes a JSON-RPC error
(`handler_exception_to_error_data`, `modern_error_data`) and, over Streamable HTTP in the
2026-07-28 era, an HTTP status (`ERROR_CODE_HTTP_STATUS`), which protocol versions are modern. The
stdio transport stands in for the SDK's and hands it `SessionMessage`s. A handler keeps what
belongs to an MCP session in the SDK's per-connection state (`session_state`), which its
low-level request context does not expose. The HTTP fast path answers a plain call inside a
Streamable HTTP session as the session's transport would (`_fast_path_sessions`): it asks the
session manager whether a session is live (`live_session`), keeps the session's idle timeout as
the transport keeps it (`holding_session`), and frames the answer as the transport's SSE writer
does (`sse_event`). A replay negotiates `initialize` as its recorded server would by changing
the version the request proposes (`propose_version`), and over stdio one recorded from a
handshake-era server runs the SDK's handshake-only loop (`serve_handshake_era`). These are
importable but not documented as stable, so they are imported here and nowhere else.

Checked against mcp 2.1.1 to 2.3.0, the range pyproject.toml allows; CI runs tests/mcp on both ends
(`.venv` has the newest, `.venvs/sdk-lowest` 2.1.1: tests/mcp/test_sdk_range.py). Differences
inside the range are bridged here (`SERVER_TAKES_SCHEMA_LOOKUP`). To widen the range: run
tests/mcp under the new version, then update pyproject.toml, the requirements of
`.venvs/sdk-lowest` and the versions here.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server import Server, ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.runner import modern_error_data, serve_loop
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.shared.inbound import ERROR_CODE_HTTP_STATUS, InboundModernRoute, classify_inbound_request
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data
from mcp.shared.message import SessionMessage
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, MODERN_PROTOCOL_VERSIONS
from sse_starlette import EventSourceResponse, ServerSentEvent

__all__ = [
    "ERROR_CODE_HTTP_STATUS",
    "HANDSHAKE_PROTOCOL_VERSIONS",
    "MODERN_PROTOCOL_VERSIONS",
    "SERVER_TAKES_SCHEMA_LOOKUP",
    "Connection",
    "InboundModernRoute",
    "SessionMessage",
    "StreamableHTTPServerTransport",
    "classify_inbound_request",
    "handler_exception_to_error_data",
    "holding_session",
    "live_session",
    "modern_error_data",
    "propose_version",
    "serve_handshake_era",
    "session_connection",
    "session_state",
    "sse_event",
]

SERVER_TAKES_SCHEMA_LOOKUP = (
    "get_tool_input_schema" in inspect.signature(Server.__init__).parameters
)
"""`Server(get_tool_input_schema=...)` exists from mcp 2.3: without it the 2026-07-28 path runs
`tools/list` again on every call to check its headers (slower, the same answers)."""


def session_connection(ctx: ServerRequestContext[Any]) -> Connection | None:
    """The connection of the Streamable HTTP session `ctx`'s request belongs to (the SDK's
    `Connection`, which lives and ends with the session); None where there is no session:
    stateless HTTP (a connection per request), 2026-07-28, stdio.

    `ServerRequestContext` carries the session (`ServerSession`), whose connection is private
    (`_connection`, in 2.1.1 to 2.3.0); the public `Context.connection` is not what low-level
    handlers get."""
    connection = getattr(ctx.session, "_connection", None)
    if not isinstance(connection, Connection) or connection.session_id is None:
        return None
    return connection


def session_state(ctx: ServerRequestContext[Any]) -> dict[str, Any] | None:
    """The state of the Streamable HTTP session `ctx`'s request belongs to (its connection's
    `state`); None where there is no session (`session_connection`)."""
    connection = session_connection(ctx)
    return None if connection is None else connection.state


def propose_version(params: Any, version: str) -> None:
    """Make an `initialize` request's `params` propose `version` to the SDK's negotiation. The
    SDK reads the same params object twice, to answer (`ServerRunner._handle_initialize`) and
    then to commit the connection's version (`_negotiate_initialize` in `_on_request`, after the
    middleware chain), so a middleware that passed on a changed copy would answer one version
    and serve the connection at another: the object itself is changed (a dict in 2.1.1 to
    2.3.0; tests/mcp/test_recorded_era.py sees the committed version through a session)."""
    if isinstance(params, dict):
        params["protocolVersion"] = version


async def serve_handshake_era(
    server: Server[Any],
    read_stream: MemoryObjectReceiveStream[SessionMessage | Exception],
    write_stream: MemoryObjectSendStream[SessionMessage],
) -> None:
    """`Server.run` serving the handshake era only: the SDK's handshake-only loop (`serve_loop`,
    which its Streamable HTTP session manager runs for a session) in the server's lifespan, in
    place of the dual-era loop `Server.run` drives (`serve_dual_era_loop`, whose first request
    may open a 2026-07-28 connection). There `server/discover` is an unknown method (-32601, as
    a handshake-era SDK server answers it) and a request's `_meta` envelope is not looked at,
    as no handshake-era server looks at it. Like `Server.run`, it owns both streams: the write
    stream is closed on the way out whatever happens (the dispatcher closes it too, in 2.1.1
    to 2.3.0)."""
    try:
        async with server.lifespan(server) as lifespan_state:
            await serve_loop(
                server,
                read_stream,
                write_stream,
                lifespan_state=lifespan_state,
                init_options=server.create_initialization_options(),
            )
    finally:
        await write_stream.aclose()


def live_session(
    manager: StreamableHTTPSessionManager, session_id: str
) -> StreamableHTTPServerTransport | None:
    """The transport of the session `session_id` names, if the manager would hand it a request
    that reaches its server: the session is registered (`_server_instances`, else the manager
    answers 404), its transport not terminated (404) and its idle time not run out (the
    transport terminates it first). The manager's credential check has nothing to compare:
    `wt serve` authenticates no one."""
    transport = manager._server_instances.get(session_id)
    if transport is None or transport.is_terminated:
        return None
    idle = transport.idle_scope
    if idle is not None and idle.cancel_called:
        return None
    return transport


@contextmanager
def holding_session(transport: StreamableHTTPServerTransport) -> Iterator[None]:
    """A request in flight on `transport`'s session, as `StreamableHTTPServerTransport.
    handle_request` counts one: the idle countdown stops while any is, and starts again
    when the last one ends (`_requests_in_flight`, `_idle_timeout`: private, from mcp 2.3; in
    2.1.1 sessions have no idle timeout unless asked for, and `wt serve` asks for none)."""
    idle, timeout = transport.idle_scope, getattr(transport, "_idle_timeout", None)
    if idle is None or timeout is None:
        yield
        return
    transport._requests_in_flight += 1
    idle.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            idle.deadline = anyio.current_time() + timeout


_EVENT_SEPARATOR = EventSourceResponse.DEFAULT_SEPARATOR
_EVENT_PREFIX, _EVENT_SUFFIX = (
    ServerSentEvent(data="\x00", event="message", sep=_EVENT_SEPARATOR).encode().split(b"\x00")
)


def sse_event(data: bytes) -> bytes:
    """A JSON-RPC message as the session transport's SSE writer frames it: an event `message`
    (`_create_event_data`; no `id`, since `wt serve` keeps no event store) encoded by
    sse-starlette with its default separator. JSON holds no raw line break, which the encoder
    would split into several `data:` lines; any other text goes through the encoder itself."""
    if b"\r" in data or b"\n" in data:
        event = ServerSentEvent(data=data.decode(), event="message", sep=_EVENT_SEPARATOR)
        return event.encode()
    return _EVENT_PREFIX + data + _EVENT_SUFFIX
