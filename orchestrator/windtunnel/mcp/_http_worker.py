"""Hypercorn's HTTP protocol code under a leaner Trio worker (DESIGN §5: hypercorn on Trio).

`hypercorn.trio.worker_serve` spends several times the CPU of a bare trio + h11 loop on each
kept-alive request, even for canned bytes (docs/benchmarks.md). A/B rounds put most of the
difference in the worker's Trio plumbing, not in the protocol code:

- every request cancels the keep-alive idle-timeout task and starts a new one (`nursery.start`:
  a task spawn and a wait for it to report started), each step behind a `trio.Lock`;
- every write takes a `trio.Lock` (a scheduler pass even when nobody else holds it), and the
  empty write h11 produces at the end of a sized body costs another; every successful socket
  write passes through the scheduler once more;
- every read sits in a new `fail_after(inf)` cancel scope when no read timeout is set, tries
  the socket before waiting for it (a failed read per request), and passes through the
  scheduler after it succeeds;
- the request body reaches the app through a memory channel: a scheduler pass per message;
- a response goes out in two writes (head, then body), each waking the client;
- the Date header is formatted anew for every response.

This module keeps all of hypercorn's protocol layer (`hypercorn.protocol.ProtocolWrapper`: h11 and
h2 parsing, the HTTP stream state machine, ASGI scopes and events, error responses, keep-alive
recycling, `keep_alive_max_requests`) and its ASGI lifespan, and replaces the Trio I/O around it
through hypercorn's extension points: a `TCPServer` subclass (one idle watcher per connection
whose deadline moves, reads that wait first, a lock taken without a scheduler pass when free,
what the socket takes written at once, a sized HTTP/1.1 response's head written with its body),
a `hypercorn.typing` `TaskGroup` whose per-request inbox wakes the app directly, and a `Config`
subclass that formats the date once a second. Plain-TCP listeners only: Wind Tunnel serves no TLS.
"""

from __future__ import annotations

import os
import random
import time
from collections import deque
from collections.abc import Awaitable, Callable
from functools import partial
from math import inf
from types import TracebackType
from typing import Any

import trio

from ..trusted_hosts import TrustedHosts
from ._connection import CONNECTION, SocketConnection
from ._fast_path_h11 import BodyComplete, FastH11Protocol, HTTPFastPathRules
from ._hypercorn_internals import (
    MAX_RECV,
    AppWrapper,
    ASGIReceiveEvent,
    ASGISendEvent,
    Closed,
    ConnectionState,
    Event,
    HypercornConfig,
    Lifespan,
    LifespanState,
    ProtocolWrapper,
    RawData,
    Scope,
    Sockets,
    TCPServer,
    Updated,
    WorkerContext,
    parse_socket_addr,
    repr_socket_addr,
)

__all__ = ["Config", "serve"]

_REQUEST_TIMEOUT = b"HTTP/1.1 408 \r\ncontent-length: 0\r\nconnection: close\r\n\r\n"


class Config(HypercornConfig):
    """Hypercorn's config; the Date and Server headers are built once a second, not per response.

    `body_timeout`: seconds from an HTTP/1.1 request's head to the end of its body; a client
    slower than that gets 408 and its connection is closed (hypercorn has no such limit: a
    client could hold a connection and its request open forever, a byte at a time).
    """

    body_timeout: float = 30.0

    def __init__(self) -> None:
        super().__init__()
        self._response_headers: dict[str, tuple[int, list[tuple[bytes, bytes]]]] = {}

    def response_headers(self, protocol: str) -> list[tuple[bytes, bytes]]:
        second = int(time.time())
        cached = self._response_headers.get(protocol)
        if cached is None or cached[0] != second:
            cached = (second, super().response_headers(protocol))
            self._response_headers[protocol] = cached
        return list(cached[1])  # callers may extend the list they get


async def serve(
    app: AppWrapper,
    config: HypercornConfig,
    *,
    sockets: Sockets,
    shutdown_trigger: Callable[[], Awaitable[Any]],
    fast_path: HTTPFastPathRules | None = None,
    trusted: TrustedHosts | None = None,
    task_status: trio.TaskStatus[list[str]] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Serve `app` on the listening `sockets` until `shutdown_trigger` returns; report the URLs.

    With `fast_path`, HTTP/1.1 connections answer its requests inside the protocol
    (`_fast_path_h11`), those whose `Host` and `Origin` `trusted` does not refuse, if given (the
    app refuses the others, with the same check).

    The same life cycle as `hypercorn.trio.worker_serve`: ASGI lifespan start-up first; at
    shutdown, stop accepting, close idle connections, give in-flight requests
    `config.graceful_timeout` before cancelling them, then the lifespan shutdown.
    """
    if sockets.secure_sockets or sockets.quic_sockets:
        raise ValueError("this worker serves plain TCP sockets only")
    lifespan_state: LifespanState = {}
    lifespan = Lifespan(app, config, lifespan_state)
    max_requests = None
    if config.max_requests is not None:
        max_requests = config.max_requests + random.randint(0, config.max_requests_jitter)
    context = WorkerContext(max_requests)
    async with trio.open_nursery() as lifespan_nursery:
        await lifespan_nursery.start(lifespan.handle_lifespan)
        await lifespan.wait_for_startup()
        listeners = []
        binds = []
        for sock in sockets.insecure_sockets:
            listeners.append(trio.SocketListener(trio.socket.from_stdlib_socket(sock)))
            binds.append(f"http://{repr_socket_addr(sock.family, sock.getsockname())}")
        in_protocol = (fast_path, trusted)
        handler = partial(
            _Connection, app, config, context, ConnectionState(lifespan_state.copy()), in_protocol
        )
        async with trio.open_nursery() as connections:
            task_status.started(binds)
            try:
                async with trio.open_nursery() as accepting:
                    serve_listeners = partial(trio.serve_listeners, handler_nursery=connections)
                    accepting.start_soon(serve_listeners, handler, listeners)
                    # Like hypercorn: stop on the trigger, or once `max_requests` were served.
                    for trigger in (shutdown_trigger, context.terminate.wait):
                        accepting.start_soon(_cancel_after, trigger, accepting.cancel_scope)
            finally:
                await context.terminated.set()
                connections.cancel_scope.deadline = trio.current_time() + config.graceful_timeout
        await lifespan.wait_for_shutdown()
        lifespan_nursery.cancel_scope.cancel()


async def _cancel_after(trigger: Callable[[], Awaitable[Any]], scope: trio.CancelScope) -> None:
    await trigger()
    scope.cancel()  # stops accepting; `trio.serve_listeners` closes the listeners


class _Connection(TCPServer):
    """One client connection: hypercorn's `TCPServer` with cheaper idle, read and write steps."""

    def __init__(
        self,
        app: AppWrapper,
        config: HypercornConfig,
        context: WorkerContext,
        state: ConnectionState,
        fast_path: tuple[HTTPFastPathRules | None, TrustedHosts | None],
        stream: trio.SocketStream,
    ) -> None:
        super().__init__(app, config, context, state, stream)  # type: ignore[arg-type]
        self._fast_path = fast_path
        self._idle = True
        self._idle_scope = trio.CancelScope()
        """Around the idle watcher: its deadline is the keep-alive expiry while idle, else inf."""
        self._reading = True
        self._corked: list[bytes] | None = None
        """Writes held back while a response's head and body are produced (see `_coalesced`)."""

    async def run(self) -> None:
        stream: trio.SocketStream = self.stream  # type: ignore[assignment]
        # What an injected fault (`_faulted`) needs of this connection; its requests inherit it.
        connection = SocketConnection(stream.socket)
        CONNECTION.set(connection)
        try:
            client = parse_socket_addr(stream.socket.family, stream.socket.getpeername())
            server = parse_socket_addr(stream.socket.family, stream.socket.getsockname())
            async with _TaskGroup(self) as task_group:
                self.protocol = ProtocolWrapper(
                    self.app,
                    self.config,
                    self.context,
                    task_group,
                    ConnectionState(self.state),
                    False,
                    client,
                    server,
                    self.protocol_send,
                    "http/1.1",
                )
                self.protocol.protocol = _fast_protocol(self.protocol, *self._fast_path)
                await self.protocol.initiate()
                self._set_idle(True)
                task_group.spawn(self._close_when_idle)
                try:
                    await self._read_data()
                finally:
                    self._reading = False
                    self._idle_scope.cancel()
                    connection.closed()
        except OSError:
            pass
        finally:
            await self._close()

    async def _read_data(self) -> None:
        if self.config.read_timeout is not None:
            await super()._read_data()
            return
        while (data := await self._receive()) is not None:
            await self.protocol.handle(RawData(data))
            if data == b"":
                break
        await self.protocol.handle(Closed())

    async def _receive(self) -> bytes | None:
        """The next bytes from the client (b"" at its EOF); None once the socket is closed or
        broken.

        Trio's `receive_some` tries a read first, and when the client has sent nothing yet (the
        usual case once a request is answered) that read fails and it waits; after a read that
        succeeds it passes through the scheduler. Waiting first costs one scheduler pass and
        one read per wake-up, and the wait is the checkpoint that keeps connections fair.
        """
        sock = self.stream.socket
        # The fd is -1 once the socket is closed (here, or while we waited): never touch a
        # number the OS may have given to another connection.
        while sock.fileno() != -1:
            try:
                await trio.lowlevel.wait_readable(sock)
            except trio.ClosedResourceError:
                return None
            if (fd := sock.fileno()) == -1:
                return None
            try:
                return os.read(fd, MAX_RECV)
            except BlockingIOError:
                continue
            except OSError:  # ECONNRESET and the like: the client is gone
                return None
        return None

    async def protocol_send(self, event: Event) -> None:
        if isinstance(event, RawData):
            if self._corked is not None:
                self._corked.append(event.data)
            elif event.data:  # h11 ends a sized body with b"": nothing to write
                await self._write(event.data)
        elif isinstance(event, Updated):
            self._set_idle(event.idle)
        elif isinstance(event, BodyComplete):
            self._idle_scope.deadline = inf
        else:
            # `Closed`: the protocol closes the connection after this response. Shielded:
            # hypercorn 0.18.0's `TCPServer` closes in whichever task sends `Closed`, unshielded,
            # and its `_close` starts at a checkpoint (`send_eof`). At the keep-alive limit or at
            # shutdown that task is the app's, inside its last `http.response.body`, and h11's
            # protocol has just handed the app `http.disconnect`: sse-starlette's
            # `EventSourceResponse` (every SSE answer of the SDK's session transport) cancels
            # its task group as soon as its listener takes that message, so whenever Trio ran
            # the listener first, the close was cancelled at that checkpoint and the socket
            # stayed open after a response that said `connection: close`.
            with trio.CancelScope(shield=True):
                if self._corked:
                    await self._write(b"".join(self._corked))
                    self._corked.clear()
                await super().protocol_send(event)

    def cork(self) -> None:
        """Hold writes back until `uncork`, to send them in one go."""
        self._corked = []

    async def uncork(self) -> None:
        held, self._corked = self._corked, None
        if held:
            await self._write(b"".join(held))

    async def _write(self, data: bytes) -> None:
        # `trio.Lock.acquire` minus its scheduler pass when the lock is free: a cancelled task
        # still stops here, before writing anything.
        await trio.lowlevel.checkpoint_if_cancelled()
        try:
            self.send_lock.acquire_nowait()
        except trio.WouldBlock:
            await self.send_lock.acquire()
        try:
            sent = self._send_now(data)
            if sent < len(data):
                # Shielded as in hypercorn: a cancelled app must not leave half a response.
                with trio.CancelScope(shield=True):
                    await self.stream.send_all(memoryview(data)[sent:])
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            await self.protocol.handle(Closed())
        finally:
            self.send_lock.release()

    def _send_now(self, data: bytes) -> int:
        """Write what the socket takes now; `send_all` waits for the rest.

        Trio's `send` passes through the scheduler after every successful write; a response is
        always followed by a read that waits (and so yields) when the client has nothing more.
        """
        fd = self.stream.socket.fileno()  # -1 once closed: never write to a reused number
        if fd == -1:
            raise trio.ClosedResourceError
        try:
            return os.write(fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:  # EPIPE, ECONNRESET, or EOF already sent
            raise trio.BrokenResourceError from exc

    def _set_idle(self, idle: bool) -> None:
        self._idle = idle
        if not idle:
            # Busy from a request's head on: its body must come in time (`BodyComplete`, or the
            # answer that makes the connection idle again, lifts the deadline).
            self._idle_scope.deadline = trio.current_time() + getattr(
                self.config, "body_timeout", inf
            )
        elif self.context.terminated.is_set():
            self._idle_scope.deadline = -inf  # shutting down: an idle connection closes now
        else:
            self._idle_scope.deadline = trio.current_time() + self.config.keep_alive_timeout

    async def _close_when_idle(self) -> None:
        """Close the connection once idle past the keep-alive timeout, or idle at shutdown, or
        when a request's body is not in `body_timeout` after its head (with a 408).

        hypercorn restarts a task for this at every request; here one task waits all along and
        `_set_idle` moves the deadline of the scope it waits in. A busy deadline that passes
        with no body awaited (an answer still being made, an HTTP/2 stream) is no reason to
        close: the task waits on, for the next deadline `_set_idle` sets.
        """
        while True:
            with self._idle_scope:
                await self.context.terminated.wait()
                if not self._idle:
                    # Shutdown during a request: h11 closes after the response; h2 goes idle
                    # later.
                    await trio.sleep_forever()
            overdue = self._body_overdue()
            if self._idle or overdue is not None or not self._reading:
                break
            self._idle_scope = trio.CancelScope()
        if self._reading:
            with trio.CancelScope(shield=True):
                if overdue is not None and overdue.may_answer():
                    await self._write(_REQUEST_TIMEOUT)  # RFC 9110 §15.5.9
                await self._initiate_server_close()

    def _body_overdue(self) -> FastH11Protocol | None:
        """The HTTP/1.1 protocol, if busy awaiting a request's body (its deadline has passed)."""
        protocol = self.protocol.protocol
        if not self._idle and isinstance(protocol, FastH11Protocol) and protocol.awaiting_body():
            return protocol
        return None


def _fast_protocol(
    wrapper: ProtocolWrapper, fast_path: HTTPFastPathRules | None, trusted: TrustedHosts | None
) -> FastH11Protocol:
    """The HTTP/1.1 protocol `wrapper` starts with, answering `fast_path` itself if given (an
    upgrade to HTTP/2 still replaces it with hypercorn's `H2Protocol`)."""
    return FastH11Protocol(
        fast_path,
        trusted,
        wrapper.app,
        wrapper.config,
        wrapper.context,
        wrapper.task_group,
        wrapper.state,
        wrapper.ssl,
        wrapper.client,
        wrapper.server,
        wrapper.send,
    )


class _TaskGroup:
    """`hypercorn.typing.TaskGroup` for one connection: its app tasks and helpers."""

    _nursery: trio.Nursery
    _manager: Any

    def __init__(self, connection: _Connection) -> None:
        self._connection = connection

    async def spawn_app(
        self,
        app: AppWrapper,
        config: HypercornConfig,
        scope: Scope,
        send: Callable[[ASGISendEvent | None], Awaitable[None]],
    ) -> Callable[[ASGIReceiveEvent], Awaitable[None]]:
        inbox = _Inbox(config.max_app_queue_size)
        if scope["type"] == "http" and scope["http_version"] in ("1.0", "1.1"):
            send = _coalesced(send, self._connection)
        self._nursery.start_soon(_run_app, app, config, scope, inbox.get, send)
        return inbox.put

    def spawn(self, func: Callable[..., Awaitable[Any]], *args: Any) -> None:
        self._nursery.start_soon(func, *args)

    async def __aenter__(self) -> _TaskGroup:
        self._manager = trio.open_nursery()
        self._nursery = await self._manager.__aenter__()
        return self

    async def __aexit__(self, exc_type: type, exc_value: BaseException, tb: TracebackType) -> None:
        # The nursery raises whatever must propagate; like hypercorn's, this never swallows one.
        await self._manager.__aexit__(exc_type, exc_value, tb)


class _Inbox:
    """A request's ASGI receive queue, bounded like hypercorn's memory channel.

    `put` and `get` return at once when they need not wait: a memory channel passes through the
    scheduler on every message even then, three times per request.
    """

    def __init__(self, size: int) -> None:
        self._messages: deque[ASGIReceiveEvent] = deque()
        self._size = size
        self._readers = trio.lowlevel.ParkingLot()
        self._writers = trio.lowlevel.ParkingLot()

    async def put(self, message: ASGIReceiveEvent) -> None:
        while len(self._messages) >= self._size:
            await self._writers.park()
        self._messages.append(message)
        self._readers.unpark()

    async def get(self) -> ASGIReceiveEvent:
        while not self._messages:
            await self._readers.park()
        message = self._messages.popleft()
        self._writers.unpark()
        return message


def _coalesced(
    send: Callable[[ASGISendEvent | None], Awaitable[None]], connection: _Connection
) -> Callable[[ASGISendEvent | None], Awaitable[None]]:
    """An ASGI `send` that writes a sized response's head together with the first body part.

    hypercorn writes the head as soon as the app sends `http.response.start`, then the body:
    two writes, two scheduler passes, and two wake-ups for the client. A head that declares
    its `content-length` is held back until the app's next message and written with it.
    Streams (SSE, chunked) have no length: their head goes out at once, as before.
    """
    held: ASGISendEvent | None = None

    async def coalesced(message: ASGISendEvent | None) -> None:
        nonlocal held
        if held is not None:
            start, held = held, None
            connection.cork()
            try:
                await send(start)
                await send(message)
            finally:
                await connection.uncork()
        elif (
            message is not None
            and message["type"] == "http.response.start"
            and any(name.lower() == b"content-length" for name, _ in message.get("headers", ()))
        ):
            held = message
        else:
            await send(message)

    return coalesced


async def _run_app(
    app: AppWrapper,
    config: HypercornConfig,
    scope: Scope,
    receive: Callable[[], Awaitable[ASGIReceiveEvent]],
    send: Callable[[ASGISendEvent | None], Awaitable[None]],
) -> None:
    """Run the app for one request, as hypercorn does: log a crash, then `send(None)` (a 500 if
    no response started, else the end of the stream)."""
    try:
        await app(scope, receive, send, trio.to_thread.run_sync, trio.from_thread.run)
    except trio.Cancelled:
        raise
    except BaseExceptionGroup as error:
        _, others = error.split(trio.Cancelled)
        if others is None:
            raise
        await config.log.exception("Error in ASGI Framework")
    except Exception:
        await config.log.exception("Error in ASGI Framework")
    finally:
        await send(None)
