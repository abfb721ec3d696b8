"""Plain `tools/call` requests answered inside hypercorn's HTTP/1.1 protocol, before h11 and ASGI.

This is where a plain call over HTTP is answered. Through the SDK, a call's server CPU goes
mostly to the SDK's per-request machinery and the HTTP stack between it and the socket
(hypercorn's `HTTPStream`, its ASGI scope and events, a task for the app, its receive queue, and
h11's pure-Python parsing), far more than to MCP and replay work (docs/benchmarks.md). This
protocol is hypercorn's `H11Protocol` with one more step in front: while h11 sits between requests
with nothing buffered, the bytes that arrive are first read as the one request shape every MCP
client sends for a call (`_fast_path_head`: `POST <path> HTTP/1.1`, a sized body). A head of that
shape which the rules (`_fast_path_http.HTTPFastPath`) accept has its body gathered here (clients
often write it apart from the head); if the rules answer the whole request, the response is
written with the bytes the SDK path sends (`tests/mcp/test_fast_path.py` compares them;
`tests/mcp/test_http_worker.py` holds the connection behaviour to hypercorn's).

Everything else — other targets and methods, another head shape, `Expect` and `Upgrade`, bodies
over the limit, requests the rules decline, the client's EOF with a request half read — is
handed to h11 as the bytes that came, and takes hypercorn's own steps from there.

No access log is written for the requests answered here: `_http` serves with none.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import NamedTuple, Protocol

from ..trusted_hosts import TrustedHosts
from ._fast_path_head import NEED_MORE, Head, read_head
from ._hypercorn_internals import (
    STREAM_ID,
    AppWrapper,
    Body,
    Closed,
    ConnectionState,
    Data,
    EndBody,
    Event,
    H11Protocol,
    HypercornConfig,
    RawData,
    TaskGroup,
    Updated,
    WorkerContextType,
    h11,
)

__all__ = ["BodyComplete", "FastH11Protocol", "HTTPFastPathRules", "PlainResponse"]

_BUSY = Updated(idle=False)  # events are frozen: one of each will do
_IDLE = Updated(idle=True)
_CLOSED = Closed()


class BodyComplete(Event):
    """The request being read has all of its body: the connection's body deadline is off."""


_BODY_COMPLETE = BodyComplete()


class PlainResponse(NamedTuple):
    """The response to a plain request: its status, its own headers in the order the app writes
    them (Date and Server follow, as hypercorn adds them), and its body; `chunked` for a body
    the app streams with no length (an SSE answer), which h11 frames as one chunk."""

    status: int
    headers: list[tuple[bytes, bytes]]
    body: bytes
    chunked: bool = False


class HTTPFastPathRules(Protocol):
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

    async def answer(
        self, version: str, headers: dict[str, str], body: bytes
    ) -> PlainResponse | None:
        """The response, or None to pass the request on (nothing was served)."""
        ...


class FastH11Protocol(H11Protocol):
    """hypercorn's `H11Protocol`, answering `fast_path` requests with no h11, stream or app task.

    Every HTTP/1.1 connection of our worker speaks it, with rules or without (`fast_path` None:
    `wt serve --no-fast-path`, `wt record`'s front), so the body deadline and the RFC 9112 rules
    of `_handle_events` hold on every listener."""

    def __init__(
        self,
        fast_path: HTTPFastPathRules | None,
        trusted: TrustedHosts | None,
        app: AppWrapper,
        config: HypercornConfig,
        context: WorkerContextType,
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
        self._fast_path = fast_path
        self._trusted = trusted
        self._request_line = b"" if fast_path is None else b"POST %s HTTP/1.1" % fast_path.target
        self._held = bytearray()
        """Bytes read as a plain request that h11 has not seen: a head, a body in the making."""
        self._awaiting_body: tuple[Head, str] | None = None
        """The head at the front of `_held` and its version, read once, while its body comes."""

    async def handle(self, event: Event) -> None:
        if self._fast_path is None:
            await super().handle(event)
            return
        if isinstance(event, RawData) and (self._held or self._between_requests()):
            if event.data:
                self._held += event.data
                await self._answer_held()
                return
            # The client's EOF: h11 gets what it has not seen, then the EOF, and decides.
            if self._held:
                self.connection.receive_data(bytes(self._held))
                self._held.clear()
                self._awaiting_body = None
        await super().handle(event)
        if isinstance(event, RawData):
            await self._answer_held()  # what `_maybe_recycle` took back from h11, if anything

    def _between_requests(self) -> bool:
        connection = self.connection
        return (
            type(connection) is h11.Connection
            and self.stream is None
            and connection.their_state is h11.IDLE
            and connection.our_state is h11.IDLE
            and not connection.trailing_data[0]
        )

    async def _answer_held(self) -> None:
        """Answer the plain requests held, in order; hand the rest to h11 from the first one
        that is not, and carry on if h11 gives bytes back (`_maybe_recycle`)."""
        while self._held and self._between_requests():
            if await self._answer_plain():
                return
            # Not ours: h11 reads these bytes as if they had just come, and hypercorn goes on.
            rest = bytes(self._held)
            self._held.clear()
            self.connection.receive_data(rest)
            await self._handle_events()

    async def _answer_plain(self) -> bool:
        """Answer the plain requests at the front of the held bytes; True when done with them
        for now (all answered, the rest still to come, or the connection closing), False when
        the first one left is not ours."""
        held = self._held
        rules = self._fast_path
        assert rules is not None  # nothing is held without rules (`handle`, `_maybe_recycle`)
        while held:
            if self._awaiting_body is not None:
                head, version = self._awaiting_body
            else:
                read = read_head(held, self._request_line)
                if read == NEED_MORE:
                    return True
                if not isinstance(read, Head):
                    return False
                headers = read.headers
                trusted = self._trusted
                if (
                    trusted is not None
                    and trusted.refusal(headers.get("host"), headers.get("origin")) is not None
                ):
                    # The app answers 421 or 403 (`_http_serving.TrustedHostsOnly`), asking the same
                    # check: the head reader left no header sent twice, so it judges alike.
                    return False
                head, plain_version = read, rules.version(headers)
                if plain_version is None or head.content_length > rules.body_limit:
                    return False
                version = plain_version
                await self.send(_BUSY)  # as hypercorn marks a request it has a head of
            end = head.size + head.content_length
            if len(held) < end:
                # The body follows (clients often write it apart from the head).
                self._awaiting_body = head, version
                return True
            self._awaiting_body = None
            try:
                answer = await rules.answer(version, head.headers, bytes(held[head.size : end]))
            except Exception:
                # As hypercorn treats an app that crashes before responding: log it, answer
                # 500 and close this connection; the server and its other connections go on.
                held.clear()
                logging.getLogger("windtunnel").exception("answering a plain tools/call failed")
                # hypercorn's 500 for an app that crashed before responding, byte for byte.
                closing = [(b"content-length", b"0"), (b"connection", b"close")]
                await self.send(RawData(data=self._head(b"500", closing)))
                await self.send(_CLOSED)
                return True
            if answer is None:
                return False
            del held[:end]
            if not await self._respond(answer):
                held.clear()
        return True

    async def _handle_events(self) -> None:
        """hypercorn's (0.18) loop over h11's events, with three rules of RFC 9112 it leaves out:

        - a request with both `Content-Length` and `Transfer-Encoding` is answered 400 and the
          connection closed (§6.1, §6.3): h11 frames it by `Transfer-Encoding`, and what the
          sender framed by `Content-Length` would otherwise be read as a request of its own;
        - nothing after a request that closes the connection (`Connection: close`, HTTP/1.0
          without keep-alive) is read (§9.6): h11 raises on such bytes, and hypercorn then
          answered 400 in place of the answer to the request already running;
        - an absolute-form target (`POST http://host:port/mcp`) is the origin-form one, with
          the target's authority as `Host` (§3.2.2), not a 404.
        """
        while True:
            connection = self.connection
            if connection.their_state is h11.MUST_CLOSE:
                break
            if connection.they_are_waiting_for_100_continue:
                await self._send_h11_event(
                    h11.InformationalResponse(
                        status_code=100, headers=self.config.response_headers("h11")
                    )
                )
            try:
                event = connection.next_event()
            except h11.RemoteProtocolError as error:
                if connection.our_state in {h11.IDLE, h11.SEND_RESPONSE}:
                    await self._send_error_response(error.error_status_hint)
                await self.send(_CLOSED)
                break
            if isinstance(event, h11.Request):
                await self.send(_BUSY)
                if _framed_twice(event):
                    await self._send_error_response(400)
                    await self.send(_CLOSED)
                    break
                await self._check_protocol(event)
                await self._create_stream(_origin_form(event))
            elif event is h11.PAUSED:
                await self.can_read.clear()
                await self.can_read.wait()
            elif (
                isinstance(event, h11.ConnectionClosed)
                or event is h11.NEED_DATA
                or self.stream is None
            ):
                break
            elif isinstance(event, h11.Data):
                await self.stream.handle(Body(stream_id=STREAM_ID, data=event.data))
            elif isinstance(event, h11.EndOfMessage):
                await self.send(_BODY_COMPLETE)
                await self.stream.handle(EndBody(stream_id=STREAM_ID))
            elif isinstance(event, Data):  # WebSocket pass-through, as in hypercorn
                await self.stream.handle(event)

    def awaiting_body(self) -> bool:
        """Whether a request is in and its body is not, whoever reads it (h11 or us)."""
        connection = self.connection
        return self._awaiting_body is not None or (
            type(connection) is h11.Connection and connection.their_state is h11.SEND_BODY
        )

    def may_answer(self) -> bool:
        """Whether nothing of a response was written yet (a 408 would still be one)."""
        connection = self.connection
        return type(connection) is h11.Connection and connection.our_state in (
            h11.IDLE,
            h11.SEND_RESPONSE,
        )

    async def _maybe_recycle(self) -> None:
        await super()._maybe_recycle()
        if self._fast_path is None:
            return
        # Requests pipelined behind one h11 handled wait in its buffer; once it is between
        # requests again, they are ours to read first (h11 starts afresh, as after a recycle).
        connection = self.connection
        if (
            type(connection) is h11.Connection
            and connection.their_state is h11.IDLE
            and connection.our_state is h11.IDLE
        ):
            pipelined, closed = connection.trailing_data
            if pipelined and not closed:
                self.connection = h11.Connection(
                    h11.SERVER, max_incomplete_event_size=self.config.h11_max_incomplete_size
                )
                self._held[:0] = pipelined

    async def _respond(self, response: PlainResponse) -> bool:
        """Write `response` as hypercorn writes the app's, in one write; False if the
        connection closes after it, as hypercorn closes it (max requests, shutting down)."""
        self.keep_alive_requests += 1
        await self.context.mark_request()
        close = (
            self.keep_alive_requests >= self.config.keep_alive_max_requests
            or self.context.terminated.is_set()
        )
        last = [(b"connection", b"close")] if close else []
        body = response.body
        if response.chunked:
            # h11's framing of a body without a length: `Transfer-Encoding` after every other
            # header, the body as one chunk (the app sends it in one message), the last chunk.
            last.append((b"Transfer-Encoding", b"chunked"))
            body = b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body) if body else b"0\r\n\r\n"
        head = self._head(b"%d" % response.status, response.headers, last)
        await self.send(RawData(data=head + body))
        if close:
            await self.send(_CLOSED)
            return False
        await self.send(_IDLE)
        return True

    def _head(
        self,
        status: bytes,
        first: list[tuple[bytes, bytes]],
        last: list[tuple[bytes, bytes]] | None = None,
    ) -> bytes:
        """A response head as h11 writes hypercorn's: `first`, its Date and Server, `last`."""
        headers = first + self.config.response_headers("h11") + (last or [])
        lines = b"".join(b"%s: %s\r\n" % pair for pair in headers)
        return b"HTTP/1.1 %s \r\n%s\r\n" % (status, lines)


def _framed_twice(request: h11.Request) -> bool:
    names = {name for name, _ in request.headers}  # h11 gives them lower-cased
    return b"content-length" in names and b"transfer-encoding" in names


def _origin_form(request: h11.Request) -> h11.Request:
    """`request` with an absolute-form target turned into origin-form, its authority as `Host`."""
    target = request.target
    scheme, sep, rest = target.partition(b"://")
    if not sep or scheme.lower() not in (b"http", b"https"):
        return request
    authority, slash, path = rest.partition(b"/")
    headers = [(b"host", authority)]
    headers += [(name, value) for name, value in request.headers if name != b"host"]
    return h11.Request(
        method=request.method,
        target=slash + path if slash else b"/",
        headers=headers,
        http_version=request.http_version,
    )
