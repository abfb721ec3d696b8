"""Plain `tools/call` requests answered inside hypercorn's HTTP/1.1 protocol, before any ASGI.

With only `FastToolCalls` in front of the SDK app, a plain call cost ~20 µs of MCP and replay
work and ~190 µs of HTTP stack (docs/benchmarks.md), much of it hypercorn's per-request
machinery between h11 and the app: an `HTTPStream`, its ASGI scope and events, a task for the
app, its receive queue. This
protocol is hypercorn's `H11Protocol` with one more step: a request whose head the shared rules
(`_fast_call.HTTPPlainCalls`) accept has its body gathered here (clients often write it apart
from the head); if the rules answer the whole request, the response goes out through the same h11
connection, which is recycled as hypercorn does, with the bytes the ASGI path would send
(`tests/serving/test_fast_path.py` compares them; `tests/serving/test_http_worker.py` holds the
connection behaviour to hypercorn's). Everything else — other targets and
methods, `Expect` and `Upgrade`, bodies over the limit, requests the rules decline, protocol
errors, connections closed mid-body — takes hypercorn's own steps, in the same order, with the
events already read.

No access log is written for the requests answered here: `_http` serves with none.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import h11
from hypercorn.config import Config
from hypercorn.events import Closed, Event, RawData, Updated
from hypercorn.protocol.events import Body, Data, EndBody
from hypercorn.protocol.h11 import STREAM_ID, H11Protocol
from hypercorn.typing import AppWrapper, ConnectionState, TaskGroup, WorkerContext

from ._fast_call import header_dict

__all__ = ["FastH11Protocol", "PlainRequests"]

_BUSY = Updated(idle=False)  # events are frozen: one of each will do
_CLOSED = Closed()


class PlainRequests(Protocol):
    """The rules: which POSTs to `target` are answered here, and with what JSON body."""

    @property
    def target(self) -> bytes: ...

    @property
    def body_limit(self) -> int:
        """Bodies larger than this are passed on as they arrive."""
        ...

    def version(self, headers: dict[str, str]) -> str | None:
        """The protocol version to answer at, judged on headers alone; None to pass it on."""
        ...

    async def answer(self, version: str, headers: dict[str, str], body: bytes) -> bytes | None:
        """The response body, or None to pass the request on (nothing was served)."""
        ...


@dataclass(slots=True)
class _Pending:
    """A plain request whose body is still being read."""

    request: h11.Request
    version: str
    headers: dict[str, str]
    body: list[h11.Data] = field(default_factory=list)
    size: int = 0


class FastH11Protocol(H11Protocol):
    """hypercorn's `H11Protocol`, answering `plain` requests without a stream or an app task."""

    def __init__(
        self,
        plain: PlainRequests,
        app: AppWrapper,
        config: Config,
        context: WorkerContext,
        task_group: TaskGroup,
        connection_state: ConnectionState,
        ssl: bool,
        client: tuple[str, int] | None,
        server: tuple[str, int] | None,
        send: Callable[[Event], Awaitable[None]],
    ) -> None:
        super().__init__(
            app, config, context, task_group, connection_state, ssl, client, server, send
        )
        self._plain = plain
        self._pending: _Pending | None = None

    async def _handle_events(self) -> None:
        # hypercorn's loop (`H11Protocol._handle_events`), with a detour for plain requests.
        while True:
            if self.connection.they_are_waiting_for_100_continue:
                await self._send_h11_event(
                    h11.InformationalResponse(
                        status_code=100, headers=self.config.response_headers("h11")
                    )
                )
            try:
                event = self.connection.next_event()
            except h11.RemoteProtocolError as error:
                await self._hand_over()
                await self._refuse(error)
                break
            if self._pending is not None:
                if not await self._plain_body(self._pending, event):
                    break
            elif isinstance(event, h11.Request) and self.stream is None:
                plain = self._plain_version(event)
                if plain is None:
                    await self._handle_event(event)
                else:
                    # Its body follows (clients often write it separately): gather it here.
                    self._pending = _Pending(event, *plain)
                    await self.send(_BUSY)
            elif not await self._handle_event(event):
                break

    async def _plain_body(self, pending: _Pending, event: Any) -> bool:
        """One more event of a plain request's body; False where hypercorn's loop stops."""
        if isinstance(event, h11.Data):
            pending.body.append(event)
            pending.size += len(event.data)
            if pending.size > self._plain.body_limit:
                await self._hand_over()
            return True
        if event is h11.NEED_DATA:
            return False  # more of the body when the socket has it
        if isinstance(event, h11.EndOfMessage):
            body = b"".join(data.data for data in pending.body)
            try:
                answer = await self._plain.answer(pending.version, pending.headers, body)
            except Exception:
                # As hypercorn treats an app that crashes before responding: log it, answer
                # 500 and close this connection; the server and its other connections go on.
                self._pending = None
                logging.getLogger("windtunnel").exception("answering a plain tools/call failed")
                await self._send_error_response(500)
                await self.send(_CLOSED)
                return False
            if answer is not None:
                self._pending = None
                await self._respond(answer)
                return True
        await self._hand_over()
        return await self._handle_event(event)

    async def _hand_over(self) -> None:
        """Not ours after all: hypercorn's own steps for the events gathered so far."""
        pending, self._pending = self._pending, None
        if pending is not None:
            await self._handle_event(pending.request)
            for data in pending.body:
                await self._handle_event(data)

    def _plain_version(self, request: h11.Request) -> tuple[str, dict[str, str]] | None:
        if (
            request.method != b"POST"
            or request.target != self._plain.target
            or request.http_version != b"1.1"
            or not isinstance(self.connection, h11.Connection)
        ):
            return None
        headers = header_dict(request.headers)
        if headers is None or "expect" in headers or "upgrade" in headers:
            return None
        version = self._plain.version(headers)
        return None if version is None else (version, headers)

    async def _respond(self, body: bytes) -> None:
        """What the ASGI path writes for the same answer, in one write, then the recycle."""
        self.keep_alive_requests += 1
        await self.context.mark_request()
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", b"%d" % len(body)),
            *self.config.response_headers("h11"),
        ]
        if self.keep_alive_requests >= self.config.keep_alive_max_requests:
            headers.append((b"connection", b"close"))
        connection = self.connection
        data = connection.send(h11.Response(status_code=200, headers=headers))
        data += connection.send(h11.Data(data=body))
        data += connection.send(h11.EndOfMessage())
        await self.send(RawData(data=data))
        await self._maybe_recycle()

    async def _handle_event(self, event: Any) -> bool:
        """One event, as hypercorn's loop handles it; False where that loop stops."""
        if isinstance(event, h11.Request):
            await self.send(_BUSY)
            await self._check_protocol(event)
            await self._create_stream(event)
        elif event is h11.PAUSED:
            await self.can_read.clear()
            await self.can_read.wait()
        elif (
            isinstance(event, h11.ConnectionClosed) or event is h11.NEED_DATA or self.stream is None
        ):
            return False
        elif isinstance(event, h11.Data):
            await self.stream.handle(Body(stream_id=STREAM_ID, data=event.data))
        elif isinstance(event, h11.EndOfMessage):
            await self.stream.handle(EndBody(stream_id=STREAM_ID))
        elif isinstance(event, Data):  # WebSocket data passing through
            await self.stream.handle(event)
        return True

    async def _refuse(self, error: h11.RemoteProtocolError) -> None:
        if self.connection.our_state in {h11.IDLE, h11.SEND_RESPONSE}:
            await self._send_error_response(error.error_status_hint)
        await self.send(_CLOSED)
