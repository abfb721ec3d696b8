"""The Trio worker under hypercorn's protocol code keeps hypercorn's connection behaviour:
keep-alive and its limits, graceful shutdown, request bodies under backpressure, crashes, HTTP/2.

Each behaviour test runs against our worker, against our worker answering plain requests inside
the protocol (`_fast_path_h11`, with rules that answer what the test app would), and against
`hypercorn.trio.worker_serve`, so a difference between them fails here."""

from __future__ import annotations

import hashlib
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import h11
import httpx2
import pytest
import trio
import trio.testing
from hypercorn.app_wrappers import ASGIWrapper
from hypercorn.trio.run import worker_serve
from sse_starlette import EventSourceResponse

from windtunnel.mcp import _http_worker
from windtunnel.mcp._fast_path_h11 import PlainResponse
from windtunnel.mcp._http_serving import bind_sockets, worker_config

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]


async def _read_body(receive: Receive) -> bytes:
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _respond(send: Send, body: bytes, status: int = 200) -> None:
    headers = [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def digest_app(gates: dict[str, trio.Event] | None = None) -> App:
    """Answers with the sha256 of the request body; `/wait/NAME` first waits for `gates[NAME]`."""

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise NotImplementedError  # no lifespan support: the server carries on without
        body = await _read_body(receive)
        if scope["path"].startswith("/wait/") and gates is not None:
            await gates[scope["path"][6:]].wait()
        if scope["path"] == "/crash":
            raise RuntimeError("app crashed")
        await _respond(send, hashlib.sha256(body).hexdigest().encode())

    return app


class DigestRequests:
    """Plain-request rules answering POSTs to `/` as `digest_app` does, except bodies that start
    with `decline` (passed on) or `crash` (raises); `seen` lists the bodies answered."""

    target = b"/"
    body_limit = 64 * 1024

    def __init__(self) -> None:
        self.seen: list[bytes] = []

    def version(self, headers: dict[str, str]) -> str | None:
        return None if headers.get("x-pass") else "test"

    async def answer(
        self, version: str, headers: dict[str, str], body: bytes
    ) -> PlainResponse | None:
        if body.startswith(b"decline"):
            return None
        if body.startswith(b"crash"):
            raise RuntimeError("the rules crashed")
        self.seen.append(body)
        digest = sha(body)
        length = b"%d" % len(digest)
        return PlainResponse(
            200, [(b"content-type", b"text/plain"), (b"content-length", length)], digest
        )


def _answering_in_protocol(*args: Any, **kwargs: Any) -> Awaitable[None]:
    return _http_worker.serve(*args, fast_path=DigestRequests(), **kwargs)


WORKERS = {
    "ours": _http_worker.serve,
    "ours-in-protocol": _answering_in_protocol,
    "hypercorn": worker_serve,
}


@pytest.fixture(params=sorted(WORKERS))
def worker(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@asynccontextmanager
async def serving(
    worker: str, app: App, *, fast_path: DigestRequests | None = None, **settings: Any
) -> AsyncIterator[tuple[int, trio.Event, trio.Event]]:
    """(port, shutdown, finished) of `app` served by `worker` with the bridge's config (with
    `fast_path`: by our worker answering those requests in the protocol)."""
    config = worker_config("127.0.0.1", 0)
    for name, value in settings.items():
        setattr(config, name, value)
    sockets = bind_sockets("127.0.0.1", 0)
    port = sockets.insecure_sockets[0].getsockname()[1]
    shutdown, finished = trio.Event(), trio.Event()

    serve = (
        WORKERS[worker] if fast_path is None else partial(_http_worker.serve, fast_path=fast_path)
    )

    async def run() -> None:
        try:
            await serve(
                ASGIWrapper(app),  # type: ignore[arg-type]
                config,
                sockets=sockets,
                shutdown_trigger=shutdown.wait,
            )
        finally:
            finished.set()

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run)
        yield port, shutdown, finished
        shutdown.set()


class Client:
    """One raw HTTP/1.1 connection, parsed with h11, so the test sees exactly what the server does."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.CLIENT)

    @classmethod
    async def connect(cls, port: int) -> Client:
        return cls(await trio.open_tcp_stream("127.0.0.1", port))

    async def send_request(
        self, path: str, body: bytes = b"", *, piece: int = 0, extra: tuple[str, ...] = ()
    ) -> None:
        """POST `body`, written `piece` bytes at a time (0: all at once); `extra` headers are
        names, each sent with the value 1."""
        data = request_bytes(path, body, extra=extra)
        self.sent_elsewhere()
        for start in range(0, len(data), piece or len(data)):
            await self.stream.send_all(data[start : start + (piece or len(data))])

    def sent_elsewhere(self) -> None:
        """Make our h11 expect a response to a request whose bytes were written directly."""
        self.h11.send(h11.Request(method="POST", target="/", headers=[("Host", "x")]))
        self.h11.send(h11.EndOfMessage())

    async def read_response(self) -> tuple[int, dict[str, str], bytes]:
        status, headers, body = 0, {}, b""
        while True:
            event = self.h11.next_event()
            if event is h11.NEED_DATA:
                self.h11.receive_data(await self.stream.receive_some(65536))
            elif isinstance(event, h11.Response):
                status = event.status_code
                headers = {k.decode(): v.decode() for k, v in event.headers}
            elif isinstance(event, h11.Data):
                body += event.data
            elif isinstance(event, h11.EndOfMessage):
                if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
                    self.h11.start_next_cycle()
                return status, headers, body
            else:
                raise AssertionError(f"unexpected {event!r}")

    async def request(self, path: str, body: bytes = b"") -> tuple[int, dict[str, str], bytes]:
        await self.send_request(path, body)
        return await self.read_response()

    async def closed_by_server(self) -> bool:
        """Wait until the server closes the connection; True if it sent nothing more first."""
        return await self.stream.receive_some(65536) == b""


def request_bytes(path: str, body: bytes = b"", *, extra: tuple[str, ...] = ()) -> bytes:
    headers = [("Host", "127.0.0.1"), ("Content-Length", str(len(body)))]
    headers += [(name, "1") for name in extra]
    client = h11.Connection(h11.CLIENT)
    data = client.send(h11.Request(method="POST", target=path, headers=headers))
    return data + client.send(h11.Data(data=body)) + client.send(h11.EndOfMessage())


def sha(body: bytes) -> bytes:
    return hashlib.sha256(body).hexdigest().encode()


async def test_keep_alive_serves_in_order_then_closes_after_max_requests(worker: str) -> None:
    """One connection carries `keep_alive_max_requests` requests; the last says `close`, then EOF."""
    with trio.fail_after(10):
        async with serving(worker, digest_app(), keep_alive_max_requests=5) as (port, _, _):
            client = await Client.connect(port)
            answers = [await client.request("/", b"call %d" % i) for i in range(5)]
            assert [body for _, _, body in answers] == [sha(b"call %d" % i) for i in range(5)]
            assert [h.get("connection") for _, h, _ in answers] == [None] * 4 + ["close"]
            assert await client.closed_by_server()


def sse_app() -> App:
    """Answers with one event through sse-starlette's `EventSourceResponse` (what the SDK's
    session transport answers with), which cancels its own tasks once it reads
    `http.disconnect`."""

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise NotImplementedError
        await _read_body(receive)

        async def one_event() -> AsyncIterator[dict[str, str]]:
            yield {"event": "message", "data": "hi"}

        await EventSourceResponse(one_event())(scope, receive, send)

    return app


async def test_an_sse_answer_that_says_close_is_followed_by_the_close() -> None:
    """At `keep_alive_max_requests` the last answer, an SSE stream, says `close`, then EOF, on
    every connection. hypercorn 0.18.0 closes in the app's task, which sse-starlette cancels as
    it reads the `http.disconnect` the close hands it: before the shielded close, 19 of 40
    connections were left open with our worker, 40 of 40 with hypercorn's own (not run here)."""
    with trio.fail_after(30):
        async with serving("ours", sse_app(), keep_alive_max_requests=2) as (port, _, _):
            for i in range(10):
                client = await Client.connect(port)
                answers = [await client.request("/", b"call") for _ in range(2)]
                # sse-starlette's own `keep-alive`; on the last, hypercorn's `close` after it.
                assert [h.get("connection") for _, h, _ in answers] == ["keep-alive", "close"]
                event = b"event: message\r\ndata: hi\r\n\r\n"
                assert [body for _, _, body in answers] == [event, event]
                closed = False
                with trio.move_on_after(10):
                    closed = await client.closed_by_server()
                assert closed, f"connection {i} left open"
                await client.stream.aclose()


async def test_http_1_0_request_gets_its_whole_answer_then_the_connection_closes(
    worker: str,
) -> None:
    """An HTTP/1.0 request (no keep-alive) gets the full response, then the server closes."""
    with trio.fail_after(10):
        async with serving(worker, digest_app()) as (port, _, _):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(b"POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi")
            received = b""
            while chunk := await stream.receive_some(65536):
                received += chunk
    head, _, body = received.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 ") or head.startswith(b"HTTP/1.0 200 ")
    assert body == sha(b"hi")


async def test_responses_carry_date_and_server_headers(worker: str) -> None:
    """Every response has hypercorn's Date (HTTP date, current) and Server headers."""
    with trio.fail_after(10):
        async with serving(worker, digest_app()) as (port, _, _):
            client = await Client.connect(port)
            _, headers, _ = await client.request("/")
    from email.utils import parsedate_to_datetime
    from time import time

    assert headers["server"] == "hypercorn-h11"
    assert abs(parsedate_to_datetime(headers["date"]).timestamp() - time()) < 5


def test_cached_response_headers_are_a_fresh_list_each_time() -> None:
    """Callers extend the header list they get; the cached one must not grow."""
    config = _http_worker.Config()
    config.response_headers("h11").append((b"connection", b"close"))
    assert [name for name, _ in config.response_headers("h11")] == [b"date", b"server"]


async def test_idle_connection_is_closed_after_the_keep_alive_timeout(
    worker: str,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """An idle kept-alive connection is closed once `keep_alive_timeout` (5 s) passes, not before."""
    with trio.fail_after(60):
        async with serving(worker, digest_app()) as (port, _, _):
            client = await Client.connect(port)
            await client.request("/")
            idle_since = trio.current_time()
            assert await client.closed_by_server()
            assert 5.0 <= trio.current_time() - idle_since < 6.0


async def test_a_slow_request_is_not_cut_by_the_keep_alive_timeout(
    worker: str,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A request still being answered after `keep_alive_timeout` completes, and the connection
    stays open for the next one."""
    gates = {"slow": trio.Event()}
    with trio.fail_after(60):
        async with (
            serving(worker, digest_app(gates)) as (port, _, _),
            trio.open_nursery() as nursery,
        ):
            client = await Client.connect(port)
            await client.send_request("/wait/slow", b"slow")
            start = trio.current_time()

            async def open_gate_later() -> None:
                await trio.sleep(20)  # virtual time: four keep-alive timeouts
                gates["slow"].set()

            nursery.start_soon(open_gate_later)
            assert (await client.read_response())[2] == sha(b"slow")
            assert trio.current_time() - start >= 20
            assert (await client.request("/", b"next"))[2] == sha(b"next")


async def test_shutdown_closes_idle_connections_and_lets_requests_in_flight_finish(
    worker: str,
) -> None:
    """At shutdown an idle connection is closed at once; a request in flight gets its whole answer,
    then its connection is closed and the server stops."""
    gates = {"busy": trio.Event()}
    with trio.fail_after(10):
        # Timeouts far past the deadline: only the shutdown itself may close these connections.
        settings = {"graceful_timeout": 60, "keep_alive_timeout": 60}
        async with serving(worker, digest_app(gates), **settings) as (port, shutdown, finished):
            idle, busy = await Client.connect(port), await Client.connect(port)
            await idle.request("/")
            await busy.send_request("/wait/busy", b"in flight")
            await trio.testing.wait_all_tasks_blocked()
            shutdown.set()
            assert await idle.closed_by_server()
            assert not finished.is_set()
            gates["busy"].set()
            assert (await busy.read_response())[::2] == (200, sha(b"in flight"))
            assert await busy.closed_by_server()
            await finished.wait()


async def test_shutdown_cancels_requests_still_running_after_the_grace_period(
    worker: str,
    autojump_clock: trio.testing.MockClock,
) -> None:
    """A request that outlives `graceful_timeout` after shutdown is cancelled, its connection
    closed without an answer, and the server stops."""
    gates = {"never": trio.Event()}
    with trio.fail_after(60):
        async with serving(worker, digest_app(gates), graceful_timeout=3) as (
            port,
            shutdown,
            finished,
        ):
            client = await Client.connect(port)
            await client.send_request("/wait/never")
            await trio.testing.wait_all_tasks_blocked()
            start = trio.current_time()
            shutdown.set()
            await finished.wait()
            assert 3.0 <= trio.current_time() - start < 4.0
            assert await client.closed_by_server()


async def test_server_stops_after_max_requests(worker: str) -> None:
    """With `max_requests` set, the server shuts itself down once it has served that many
    (hypercorn counts the request that crosses the limit): it answers it and stops."""
    with trio.fail_after(10):
        async with serving(worker, digest_app(), max_requests=3) as (port, _, finished):
            client = await Client.connect(port)
            answers = [await client.request("/", b"%d" % i) for i in range(4)]
            await finished.wait()
            assert await client.closed_by_server()
    assert [body for _, _, body in answers] == [sha(b"%d" % i) for i in range(4)]


async def test_large_body_reaches_the_app_whole_and_in_order_under_backpressure(
    worker: str,
) -> None:
    """A 3 MiB body sent in small pieces to an app that reads slowly arrives byte for byte, with
    at most `max_app_queue_size` pieces waiting."""
    body = bytes(range(256)) * (3 * 4096)

    async def slow_reader(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise NotImplementedError
        digest = hashlib.sha256()
        while True:
            await trio.testing.wait_all_tasks_blocked()  # let the reader fill the queue first
            message = await receive()
            digest.update(message.get("body", b""))
            if not message.get("more_body", False):
                break
        await _respond(send, digest.hexdigest().encode())

    with trio.fail_after(30):
        async with serving(worker, slow_reader, max_app_queue_size=2) as (port, _, _):
            client = await Client.connect(port)
            await client.send_request("/", body, piece=4096)
            assert (await client.read_response())[2] == sha(body)


async def test_inbox_holds_at_most_its_size_and_keeps_order() -> None:
    """A full inbox makes `put` wait until the app takes a message; messages keep their order."""
    inbox = _http_worker._Inbox(2)
    put: list[int] = []

    async def producer() -> None:
        for i in range(5):
            await inbox.put({"type": "http.request", "body": b"%d" % i, "more_body": i < 4})
            put.append(i)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(producer)
            await trio.testing.wait_all_tasks_blocked()
            assert put == [0, 1]
            got = [await inbox.get()]
            await trio.testing.wait_all_tasks_blocked()
            assert put == [0, 1, 2]
            while len(got) < 5:
                got.append(await inbox.get())
    assert [m["body"] for m in got] == [b"0", b"1", b"2", b"3", b"4"]


def two_part_app(gate: trio.Event, *, sized: bool) -> App:
    """Sends the response head, waits for `gate`, then sends the body: sized or streamed."""

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise NotImplementedError
        await _read_body(receive)
        headers = [(b"content-type", b"text/plain")]
        if sized:
            headers.append((b"content-length", b"4"))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await gate.wait()
        await send({"type": "http.response.body", "body": b"body"})

    return app


async def _available(stream: trio.SocketStream) -> bytes:
    """What the server has sent so far, without waiting for more."""
    await trio.testing.wait_all_tasks_blocked()
    with socket.fromfd(stream.socket.fileno(), socket.AF_INET, socket.SOCK_STREAM) as peek:
        try:
            return peek.recv(65536, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return b""


async def test_a_sized_head_is_written_with_its_body() -> None:
    """A response with a content-length reaches the client in one write: head and body together."""
    gate = trio.Event()
    with trio.fail_after(10):
        async with serving("ours", two_part_app(gate, sized=True)) as (port, _, _):
            client = await Client.connect(port)
            await client.send_request("/")
            assert await _available(client.stream) == b""
            gate.set()
            data = await _available(client.stream)
    assert data.startswith(b"HTTP/1.1 200 ") and data.endswith(b"\r\n\r\nbody")


async def test_a_streamed_head_goes_out_before_the_body(worker: str) -> None:
    """A response without a content-length (SSE, chunked) sends its head at once: a client
    waiting for the first event already has the status and headers."""
    gate = trio.Event()
    with trio.fail_after(10):
        async with serving(worker, two_part_app(gate, sized=False)) as (port, _, _):
            client = await Client.connect(port)
            await client.send_request("/app")
            head = await _available(client.stream)
            assert head.startswith(b"HTTP/1.1 200 ") and head.endswith(b"\r\n\r\n")
            gate.set()
            client.h11.receive_data(head)
            assert (await client.read_response())[::2] == (200, b"body")


async def test_app_crash_is_a_500_and_the_server_keeps_serving(worker: str) -> None:
    """An app that raises before responding gets hypercorn's 500; later requests are answered."""
    with trio.fail_after(10):
        async with serving(worker, digest_app()) as (port, _, _):
            crashed = await (await Client.connect(port)).request("/crash")
            fine = await (await Client.connect(port)).request("/", b"ok")
    assert crashed[0] == 500
    assert fine[0] == 200 and fine[2] == sha(b"ok")


@pytest.mark.parametrize("requests", [1, 20])
async def test_http2_with_prior_knowledge_serves_concurrent_streams(
    worker: str,
    requests: int,
) -> None:
    """hypercorn's HTTP/2 (cleartext, prior knowledge) still works: concurrent streams on one
    connection, whose frames share the connection's writes."""
    with trio.fail_after(20):
        async with (
            serving(worker, digest_app()) as (port, _, _),
            httpx2.AsyncClient(http1=False, http2=True, timeout=10) as http,
        ):
            answers: dict[int, Any] = {}

            async def post(i: int) -> None:
                answers[i] = await http.post(f"http://127.0.0.1:{port}/", content=b"h2 %d" % i)

            async with trio.open_nursery() as nursery:
                for i in range(requests):
                    nursery.start_soon(post, i)
    assert {r.http_version for r in answers.values()} == {"HTTP/2"}
    assert {i: r.content for i, r in answers.items()} == {
        i: sha(b"h2 %d" % i) for i in range(requests)
    }


def test_worker_refuses_tls_sockets() -> None:
    """The worker serves plain TCP only: handing it TLS sockets is a clear error, not a hang."""
    sockets = bind_sockets("127.0.0.1", 0)
    sockets.secure_sockets.append(sockets.insecure_sockets.pop())
    try:
        with pytest.raises(ValueError, match="plain TCP"):
            trio.run(
                lambda: _http_worker.serve(
                    ASGIWrapper(digest_app()),  # type: ignore[arg-type]
                    worker_config("127.0.0.1", 0),
                    sockets=sockets,
                    shutdown_trigger=trio.sleep_forever,
                )
            )
    finally:
        for sock in sockets.secure_sockets:
            sock.close()


def recording_app(bodies: list[bytes]) -> App:
    """`digest_app`, noting every body it answers."""
    digest = digest_app()

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        async def noting_receive() -> dict[str, Any]:
            message = await receive()
            if not message.get("more_body", False):
                bodies.append(b"".join([*parts, message.get("body", b"")]))
            else:
                parts.append(message.get("body", b""))
            return message

        parts: list[bytes] = []
        await digest(scope, noting_receive, send)

    return app


# (path, body, extra headers): answered in the protocol, or by the app (declined by the rules,
# another path, a header the rules refuse).
MIXED = [
    ("/", b"one", ()),
    ("/", b"decline me", ()),
    ("/other", b"two", ()),
    ("/", b"three", ("x-pass",)),
    ("/", b"four", ()),
]


@pytest.mark.parametrize("piece", [0, 1, 7])
async def test_plain_requests_are_answered_in_the_protocol_the_rest_by_the_app(piece: int) -> None:
    """On one kept-alive connection, plain requests never reach the app, whether a body arrives
    with its head or a byte at a time; the others reach it whole; all answers in order."""
    rules, app_bodies = DigestRequests(), []
    with trio.fail_after(10):
        async with serving("ours", recording_app(app_bodies), fast_path=rules) as (port, _, _):
            client = await Client.connect(port)
            answers = []
            for path, body, extra in MIXED:
                await client.send_request(path, body, piece=piece, extra=extra)
                answers.append(await client.read_response())
    assert [(status, answer) for status, _, answer in answers] == [
        (200, sha(body)) for _, body, _ in MIXED
    ]
    assert rules.seen == [b"one", b"four"]
    assert app_bodies == [b"decline me", b"two", b"three"]


async def test_pipelined_requests_are_answered_in_order_in_either_place() -> None:
    """Requests written in one go, plain and not, are answered in the order they came."""
    rules, app_bodies = DigestRequests(), []
    with trio.fail_after(10):
        async with serving("ours", recording_app(app_bodies), fast_path=rules) as (port, _, _):
            client = await Client.connect(port)
            await client.stream.send_all(
                b"".join(request_bytes(path, body, extra=extra) for path, body, extra in MIXED)
            )
            answers = []
            for _ in MIXED:
                client.sent_elsewhere()
                answers.append(await client.read_response())
    assert [answer for _, _, answer in answers] == [sha(body) for _, body, _ in MIXED]
    assert rules.seen == [b"one", b"four"]


async def test_a_body_over_the_rules_limit_reaches_the_app_whole() -> None:
    """A plain request whose body outgrows `body_limit` mid-way is handed to the app with every
    byte already read, in order."""
    rules, app_bodies = DigestRequests(), []
    body = bytes(range(256)) * 1024  # 256 KiB, four times the limit
    with trio.fail_after(10):
        async with serving("ours", recording_app(app_bodies), fast_path=rules) as (port, _, _):
            client = await Client.connect(port)
            await client.send_request("/", body, piece=4096)
            answer = await client.read_response()
            small = await client.request("/", b"small")
    assert answer[2] == sha(body) and small[2] == sha(b"small")
    assert app_bodies == [body]
    assert rules.seen == [b"small"]


async def test_a_connection_closed_mid_body_is_not_answered_and_serving_goes_on() -> None:
    """A client gone half-way through a plain request's body gets nothing answered by the rules;
    the next connection is served."""
    rules = DigestRequests()
    with trio.fail_after(10):
        async with serving("ours", digest_app(), fast_path=rules) as (port, _, _):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(request_bytes("/", b"0123456789")[:-5])
            await stream.aclose()
            answer = await (await Client.connect(port)).request("/", b"next")
    assert answer[2] == sha(b"next")
    assert rules.seen == [b"next"]


async def test_a_malformed_body_gets_hypercorns_400(worker: str) -> None:
    """A broken chunked body on a request the rules would take is refused with hypercorn's 400."""
    head = b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
    with trio.fail_after(10):
        async with serving(worker, digest_app()) as (port, _, _):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            await stream.send_all(head + b"3\r\nabc\r\nzz\r\n")
            received = b""
            while chunk := await stream.receive_some(65536):
                received += chunk
    assert received.startswith(b"HTTP/1.1 400 ")


async def test_a_response_larger_than_the_socket_buffers_arrives_whole(worker: str) -> None:
    """A response the socket cannot take at once (the client reads only after the server has
    filled its buffers) arrives byte for byte: the rest is written as the client drains it."""
    big = bytes(range(256)) * (32 * 1024)  # 8 MiB

    async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise NotImplementedError
        await _read_body(receive)
        await _respond(send, big)

    with trio.fail_after(20):
        async with serving(worker, app) as (port, _, _):
            client = await Client.connect(port)
            await client.send_request("/app")
            await trio.testing.wait_all_tasks_blocked()  # the server is stuck on a full socket
            status, _, body = await client.read_response()
    assert status == 200 and body == big


async def test_rules_that_crash_get_a_500_and_the_server_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An exception while answering a plain request is logged, answered with a 500 and closes
    that connection, as hypercorn does for an app that crashes; other connections are served."""
    rules = DigestRequests()
    with trio.fail_after(10):
        async with serving("ours", digest_app(), fast_path=rules) as (port, _, _):
            client = await Client.connect(port)
            crashed = await client.request("/", b"crash now")
            assert await client.closed_by_server()
            fine = await (await Client.connect(port)).request("/", b"fine")
    assert crashed[0] == 500
    assert fine[::2] == (200, sha(b"fine"))
    assert [r.getMessage() for r in caplog.records if r.exc_info] == [
        "answering a plain tools/call failed"
    ]


# Byte streams a client may write; requests to `/` are plain ones. Those cut short are followed
# by the client's EOF, those that do not end with a close by CLOSER: the app answers a request
# only while the connection is open (hypercorn treats EOF as a disconnect), so each run ends
# the same way.
CUT_SHORT = ("a head cut short", "a body cut short")
CLOSING = ("the client asks to close", "a plain request, then HTTP/1.0")
CLOSER = b"POST /other HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
ODD_STREAMS = {
    "a head cut short": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Le",
    "a body cut short": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n01234",
    "the client asks to close": (
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi"
    ),
    "a plain request, then garbage": request_bytes("/", b"one") + b"BAD\r\n\r\n",
    "a plain request, then HTTP/1.0": (
        request_bytes("/", b"one") + b"POST / HTTP/1.0\r\nContent-Length: 2\r\n\r\nhi"
    ),
    "pipelined, plain and not": b"".join(request_bytes(p, b, extra=e) for p, b, e in MIXED),
    "a blank line first": b"\r\n" + request_bytes("/", b"one"),
    "bare LF line ends": b"POST / HTTP/1.1\nHost: x\nContent-Length: 2\n\nhi",
    "a chunked body": (
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n"
    ),
    "no Host": b"POST / HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
    "two lengths": b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\nhi",
}


async def _transcript(port: int, data: bytes, *, eof: bool = False) -> bytes:
    """Everything the server writes back to `data` (and the client's EOF) until it closes, Date
    lines blanked and the content type left out (the test app says text/plain, the rules
    application/json)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    await stream.send_all(data)
    if eof:
        await stream.send_eof()
    received = b""
    while chunk := await stream.receive_some(65536):
        received += chunk
    lines = received.split(b"\r\n")
    return b"\r\n".join(
        b"date: -" if line.startswith(b"date: ") else line
        for line in lines
        if not line.startswith(b"content-type: ")
    )


@pytest.mark.parametrize("name", ODD_STREAMS)
async def test_odd_streams_get_the_same_bytes_with_or_without_the_in_protocol_answers(
    name: str,
) -> None:
    """Whatever a client writes, reading plain requests in the protocol changes no byte of what
    it gets back, nor when the connection closes."""
    cut = name in CUT_SHORT
    data = ODD_STREAMS[name] + (b"" if cut or name in CLOSING else CLOSER)
    with trio.fail_after(10):
        async with serving("ours", digest_app()) as (port, _, _):
            expected = await _transcript(port, data, eof=cut)
        async with serving("ours", digest_app(), fast_path=DigestRequests()) as (port, _, _):
            got = await _transcript(port, data, eof=cut)
    assert got == expected
    assert expected.startswith(b"HTTP/1.1 ")


async def test_rules_that_crash_get_the_bytes_of_an_app_that_crashes() -> None:
    """The 500 written in the protocol is hypercorn's own for an app that crashed."""
    with trio.fail_after(10):
        async with serving("ours", digest_app()) as (port, _, _):
            expected = await _transcript(port, request_bytes("/crash", b"x"))
        async with serving("ours", digest_app(), fast_path=DigestRequests()) as (port, _, _):
            got = await _transcript(port, request_bytes("/", b"crash"))
    assert got == expected
    assert expected.startswith(b"HTTP/1.1 500 \r\n")
