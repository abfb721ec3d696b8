"""A live WebSocket feed of events (trio-websocket): any number of subscribers, none can slow us.

A new subscriber first gets a `feed_subscribed` event (for it only, so without `seq`), then every
event from then on. Each subscriber has a bounded buffer. When it is full the event is dropped for
that subscriber only and counted; as soon as there is room again the subscriber first gets an
`events_dropped` event with the count, so a gap is never silent. Vanished subscribers are forgotten.
"""

from __future__ import annotations

from typing import Any

import msgspec
import trio
from trio_websocket import ConnectionClosed, WebSocketRequest, serve_websocket

from ..canonical import encode_json
from ..trusted_hosts import HOST_REFUSED, NO_EXTRA_NAMES, AllowedNames, Refusal, TrustedHosts
from .events import make_event

__all__ = ["WebSocketFeed"]

SUBSCRIBER_BUFFER = 1024


def _refusal(request: WebSocketRequest, trusted: TrustedHosts) -> Refusal | None:
    """The listeners' one check (`TrustedHosts`) on a handshake, on every bind address.

    Browsers send `Origin` on every WebSocket handshake, also after DNS rebinding (the page keeps
    its own origin), and `Host` names the name the page used; `wt watch` and log shippers send
    no `Origin`. Without the check any page the user visits could read every event, arguments
    included.
    """
    origins = [value.decode("latin-1") for name, value in request.headers if name == b"origin"]
    host = _handshake_host(request)
    return trusted.judge([] if host is None else [host], origins)


def _handshake_host(request: WebSocketRequest) -> str | None:
    """The handshake's `Host` (h11 has refused one sent twice; wsproto keeps it apart from
    `headers`, and trio-websocket 0.12 has no accessor for it: it is wsproto's `Request.host` on
    the request's private `_event`). None, refused as no `Host`, if that ever moves."""
    host = getattr(getattr(request, "_event", None), "host", None)
    return host if isinstance(host, str) else None


class _Subscriber:
    def __init__(self, buffer: int) -> None:
        self.send, self.receive = trio.open_memory_channel[bytes](buffer)
        self.dropped = 0  # total, for the stop report
        self.pending_dropped = 0  # not yet announced to this subscriber

    def offer(self, payload: bytes) -> None:
        if self.pending_dropped:
            notice = make_event("events_dropped", level="warning", dropped=self.pending_dropped)
            try:
                self.send.send_nowait(msgspec.json.encode(notice))
            except trio.WouldBlock:
                self._drop()
                return
            self.pending_dropped = 0
        try:
            self.send.send_nowait(payload)
        except trio.WouldBlock:
            self._drop()
        except trio.BrokenResourceError:
            pass  # the subscriber is leaving

    def _drop(self) -> None:
        self.dropped += 1
        self.pending_dropped += 1


class WebSocketFeed:
    """A sink serving events at `ws://HOST:PORT/`; start it with `await nursery.start(feed.run)`."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        buffer: int = SUBSCRIBER_BUFFER,
        allowed: AllowedNames = NO_EXTRA_NAMES,
    ) -> None:
        self.host = host
        self.port = port
        self.allowed = allowed
        self.buffer = buffer
        self.url: str | None = None
        self._trusted_hosts: TrustedHosts | None = None
        self._subscribers: set[_Subscriber] = set()
        self._handlers_done = trio.Event()
        self._handlers = 0
        self._closing = False
        self.dropped = 0
        self.subscribed = trio.Event()
        """Set whenever a subscriber joins (tests wait on it instead of sleeping)."""

    @property
    def subscribers(self) -> int:
        return len(self._subscribers)

    @property
    def total_dropped(self) -> int:
        """Events dropped for slow subscribers, gone or still connected."""
        return self.dropped + sum(s.dropped for s in self._subscribers)

    def publish(self, event: dict[str, Any]) -> None:
        if not self._subscribers:
            return
        payload = encode_json(event)
        for subscriber in self._subscribers:
            subscriber.offer(payload)

    async def run(self, *, task_status: trio.TaskStatus[str] = trio.TASK_STATUS_IGNORED) -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(
                lambda task_status: serve_websocket(
                    self._handle, self.host, self.port, None, task_status=task_status
                )
            )
            self._trusted_hosts = TrustedHosts(self.host, [server.port], self.allowed)
            host = self.host
            if ":" in host and not host.startswith("["):
                host = f"[{host}]"  # an IPv6 address, as a URL writes it
            self.url = f"ws://{host}:{server.port}/"
            task_status.started(self.url)

    async def aclose(self, *, deadline_s: float = 5.0) -> None:
        """Stop taking subscribers, deliver what each has buffered, and close their sockets."""
        self._closing = True
        for subscriber in list(self._subscribers):
            subscriber.send.close()
        with trio.move_on_after(deadline_s):
            while self._handlers:
                await self._handlers_done.wait()

    async def _handle(self, request: WebSocketRequest) -> None:
        if self._closing:
            await request.reject(503)
            return
        trusted = self._trusted_hosts
        refusal = HOST_REFUSED if trusted is None else _refusal(request, trusted)
        if refusal is not None:
            # Any web page can open a WebSocket to localhost: without this, a page the user
            # visits (or a DNS-rebound name) could read every event, args included.
            await request.reject(refusal.status, body=refusal.text.encode())
            return
        connection = await request.accept()
        subscriber = _Subscriber(self.buffer)
        hello = make_event("feed_subscribed", buffer=self.buffer)
        subscriber.send.send_nowait(msgspec.json.encode(hello))
        self._subscribers.add(subscriber)
        self._handlers += 1
        self.subscribed.set()
        self.subscribed = trio.Event()
        try:
            async with trio.open_nursery() as nursery:

                async def watch_close() -> None:
                    # Subscribers only listen; anything they send is ignored until they leave.
                    try:
                        while True:
                            await connection.get_message()
                    except ConnectionClosed:
                        nursery.cancel_scope.cancel()

                nursery.start_soon(watch_close)
                try:
                    async with subscriber.receive:
                        async for payload in subscriber.receive:
                            await connection.send_message(payload.decode())
                except ConnectionClosed:
                    pass  # the subscriber left
                nursery.cancel_scope.cancel()
        finally:
            self._subscribers.discard(subscriber)
            self.dropped += subscriber.dropped
            subscriber.send.close()
            self._handlers -= 1
            self._handlers_done.set()
            self._handlers_done = trio.Event()
