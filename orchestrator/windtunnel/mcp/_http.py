"""Streamable HTTP: an SDK server, the engine that answers `wt serve`'s requests, served by the
one HTTP serving layer (`_http_serving`: listeners, the Host/Origin check, the body limit, the
graceful stop), DESIGN §5."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import trio
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette

from ..trusted_hosts import NO_EXTRA_NAMES, AllowedNames
from ._fast_path_http import HTTPFastPath
from ._http_serving import MAX_REQUEST_BODY, HTTPServing, bind_sockets, serve_asgi
from ._http_sessions import SessionRouter
from ._hypercorn_internals import Sockets
from ._protocol_era import EraGate

__all__ = ["serve_http"]


async def serve_http(
    server: Server[Any],
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    sockets: Sockets | None = None,
    path: str = "/mcp",
    fast_path: HTTPFastPath | None = None,
    allowed: AllowedNames = NO_EXTRA_NAMES,
    sessions_server: Server[Any] | None = None,
    messaging_tools: Collection[str] = (),
    versions: Sequence[str] | None = None,
    task_status: trio.TaskStatus[HTTPServing] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `server` over Streamable HTTP until stopped; report an `HTTPServing` when bound.

    Stateless JSON mode answers both protocol eras (the `initialize` handshake, and 2026-07-28)
    with no per-client session state. With `sessions_server` (the same server, answering calls
    with their recorded server messages), clients that ask for a session get one from the
    SDK's session manager (`_http_sessions` routes each request): `initialize` opens it
    (`Mcp-Session-Id`), later requests name it (404 for one that ended), `DELETE` ends it, `GET`
    opens its standalone SSE stream, and each request in it is answered on an SSE stream that
    also carries the messages the server sends while answering (notifications, requests to the
    client, whose answers come back through the session); so is a 2026-07-28 call of one of
    `messaging_tools`. Requests that name no session are answered statelessly, as without.

    Every request, on every path and protocol, must carry a `Host` and `Origin` that
    `TrustedHosts` allows for the bound address and port, or that `allowed` adds (else 421 or
    403, the SDK's answers); bodies over 4 MiB get 413 (`_http_serving`). With `fast_path`
    (whose path must be `path`), HTTP/1.1 connections answer its plain `tools/call`s inside the
    protocol, without the SDK (`_fast_path_h11`). With `versions`, a request naming another
    protocol version is refused (400), as by a server of the era they belong to
    (`_protocol_era`).
    """
    stateless = _sdk_app(server, path, sessions=False)
    app: Any = stateless
    if sessions_server is not None:
        sessions = _sdk_app(sessions_server, path, sessions=True)
        app = SessionRouter(sessions, stateless, messaging_tools, MAX_REQUEST_BODY)
    if versions is not None:
        app = EraGate(app, versions)
    if fast_path is not None and fast_path.path != path:
        raise ValueError(f"plain calls at {fast_path.path!r} on a server at {path!r}")
    if sockets is None:
        sockets = bind_sockets(host, port)
    await serve_asgi(
        app,
        host=host,
        sockets=sockets,
        path=path,
        allowed=allowed,
        fast_path=fast_path,
        task_status=task_status,
    )


def _sdk_app(server: Server[Any], path: str, *, sessions: bool) -> Starlette:
    """The SDK's Streamable HTTP app for `server`: stateless JSON, or with sessions (SSE)."""
    return server.streamable_http_app(
        streamable_http_path=path,
        stateless_http=not sessions,
        json_response=not sessions,
        # The SDK's own Host/Origin check (on for three loopback binds only) is off: it compared
        # names with case, took an Origin on any port and refused `https`, so it refused
        # requests the fast path answered. `TrustedHostsOnly` decides alone, for every path.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_request_body_size=MAX_REQUEST_BODY,
    )
