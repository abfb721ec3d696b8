"""Streamable HTTP: an SDK server served by hypercorn's protocol code on our Trio worker
(`_http_worker`), DESIGN §5."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import Any

import trio
from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.applications import Starlette
from starlette.responses import Response

from ..trusted_hosts import NO_EXTRA_NAMES, AllowedNames, TrustedHosts
from . import _http_worker
from ._fast_path_http import HTTPFastPath
from ._http_sessions import SessionRouter
from ._hypercorn_internals import ASGIWrapper, HypercornConfig, Sockets

__all__ = ["MAX_REQUEST_BODY", "HTTPServing", "bind_sockets", "serve_http"]

MAX_REQUEST_BODY = 4 * 1024 * 1024
GRACEFUL_TIMEOUT_S = 0.5

ASGIApp = Callable[
    [dict[str, Any], Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]],
    Awaitable[None],
]


def _bind(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclass
class HTTPServing:
    """A running HTTP server: its URL and the handles that stop it."""

    url: str
    shutdown: trio.Event
    cancel_scope: trio.CancelScope
    finished: trio.Event

    async def stop(self, *, grace_s: float = 2.0) -> None:
        """Graceful shutdown, then a hard cancel if it takes longer than `grace_s`."""
        self.shutdown.set()
        with trio.move_on_after(grace_s):
            await self.finished.wait()
            return
        self.cancel_scope.cancel()
        await self.finished.wait()


def _config(host: str, port: int) -> HypercornConfig:
    config = _http_worker.Config()
    config.bind = [_bind(host, port)]
    config.accesslog = None
    config.errorlog = None
    config.graceful_timeout = GRACEFUL_TIMEOUT_S
    return config


def bind_sockets(host: str, port: int) -> Sockets:
    """Bind and listen now, so a taken port is a plain `OSError` for the caller."""
    config = _config(host, port)
    sockets = config.create_sockets()
    for sock in sockets.insecure_sockets:
        sock.listen(config.backlog)
    return sockets


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
    403, the SDK's answers); the SDK limits request bodies to 4 MiB (HTTP 413). With `fast_path`
    (whose path must be `path`), HTTP/1.1 connections answer its plain `tools/call`s inside the
    protocol, without the SDK (`_fast_path_h11`).
    """
    stateless = _sdk_app(server, path, sessions=False)
    app: Any = stateless
    if sessions_server is not None:
        sessions = _sdk_app(sessions_server, path, sessions=True)
        app = SessionRouter(sessions, stateless, messaging_tools, MAX_REQUEST_BODY)
    if fast_path is not None and fast_path.path != path:
        raise ValueError(f"plain calls at {fast_path.path!r} on a server at {path!r}")
    if sockets is None:
        sockets = bind_sockets(host, port)
    trusted = TrustedHosts(
        host, (sock.getsockname()[1] for sock in sockets.insecure_sockets), allowed
    )
    served: Any = TrustedHostsOnly(app, trusted)  # hypercorn types scopes narrower than ASGI dicts
    config = _config(host, port)
    shutdown = trio.Event()
    finished = trio.Event()
    scope = trio.CancelScope()

    async def run(task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED) -> None:
        await _http_worker.serve(
            ASGIWrapper(served),
            config,
            sockets=sockets,
            shutdown_trigger=shutdown.wait,
            fast_path=fast_path,
            trusted=trusted,
            task_status=task_status,
        )

    try:
        with scope:
            async with trio.open_nursery() as nursery:
                binds: list[str] = await nursery.start(run)
                task_status.started(HTTPServing(binds[0] + path, shutdown, scope, finished))
    finally:
        for sock in sockets.insecure_sockets:
            sock.close()  # hypercorn closes its listeners; this covers a cancel before it started
        finished.set()


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


class TrustedHostsOnly:
    """ASGI middleware: refuse a request whose `Host` (421) or `Origin` (403) `trusted` does not
    allow, with the SDK's own answers, before anything else sees it (HTTP/2 included)."""

    def __init__(self, app: ASGIApp, trusted: TrustedHosts) -> None:
        self.app = app
        self.trusted = trusted

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = self.trusted.judge_headers(scope["headers"])
        if refusal is None:
            await self.app(scope, receive, send)
            return
        # Read the body first (up to the size limit, kept nowhere): hypercorn's HTTP/2 protocol
        # fails on DATA frames for a stream that was answered before its body came.
        size = 0
        while size <= MAX_REQUEST_BODY:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
            size += len(message.get("body", b""))
        await Response(refusal.text, status_code=refusal.status)(scope, receive, send)
