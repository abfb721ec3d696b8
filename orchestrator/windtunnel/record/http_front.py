"""The agent reaches the proxy over Streamable HTTP at `/mcp`: two ASGI apps, served by hypercorn.

- `ReverseProxyApp` (the upstream is HTTP too): every request goes to the upstream with its method,
  headers and body as they came (hop-by-hop headers aside, and `Accept-Encoding: identity` so the
  tap can read bodies), and the answer comes back the same way, event streams byte for byte as they
  arrive. Sessions, both protocol eras and server-sent streams are the upstream's own.
- `LinkApp` (the upstream is a stdio server): one session toward the agent (its `Mcp-Session-Id`
  comes with the answer to `initialize`, so SDK clients open their GET stream; one stdio server is
  one session, so a DELETE ends only the id). A POSTed request gets the upstream's answer as JSON,
  or as an event stream when the upstream sends anything for it first: its logs, progress and
  requests (sampling, elicitation, roots) reach the agent while the call runs, and the agent's
  answers go back as any POSTed response does. What belongs to no request goes on the GET stream
  (one at a time, as the transport says). Notifications and responses get 202.

Both are served by `wt serve`'s HTTP serving layer (`mcp._http_serving.serve_asgi`): the same
worker, Host and Origin check on every bind (DNS rebinding: 421 / 403, `TrustedHosts`), body limit
(413 over 4 MiB) and graceful stop. A request the upstream does not answer gets a JSON-RPC error
naming the upstream and why (timeout, crash, refused connection).
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2
import structlog
import trio

from .. import trace_context
from .link import (
    Link,
    Printable,
    UpstreamFailure,
    answer_deadline,
    error_response,
    one_line,
    shown_as_is,
)
from .routing import ServerMessageRouter
from .sse import SSEDataReader
from .tap import SessionTap, decode_messages

__all__ = ["LinkApp", "ReverseProxyApp", "with_query"]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]

_log = structlog.get_logger("windtunnel.record")

_HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"host",
        b"content-length",
        b"accept-encoding",
        b"content-encoding",
    }
)


class _Refused(Exception):
    def __init__(self, status: int, text: str) -> None:
        self.status = status
        self.text = text


class _Guard:
    """The path check and the body read shared by both apps.

    Host and Origin (DNS rebinding: 421 / 403) and the body limit (413) are the serving layer's
    (`mcp._http_serving`, as for `wt serve`): a request refused there never reaches an app.
    """

    def __init__(self, *, path: str) -> None:
        self.path = path

    def check(self, scope: Scope) -> None:
        if scope["path"].rstrip("/") != self.path:
            raise _Refused(404, "not found")

    async def body(self, receive: Receive) -> bytes:
        chunks: list[bytes] = []
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Refused(400, "client disconnected")
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                return b"".join(chunks)


async def _lifespan(receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


async def _respond(
    send: Send, status: int, body: bytes, content_type: bytes = b"text/plain; charset=utf-8"
) -> None:
    headers = [(b"content-type", content_type), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _request_id(messages: list[dict[str, Any]]) -> tuple[bool, Any]:
    """(True, id) when the body is one request, which a JSON-RPC error can answer."""
    if len(messages) == 1 and isinstance(messages[0].get("method"), str) and "id" in messages[0]:
        return True, messages[0]["id"]
    return False, None


class ReverseProxyApp:
    """HTTP agent, HTTP upstream: forward requests and answers unchanged, tapping both."""

    def __init__(
        self,
        upstream_url: str,
        *,
        tap: SessionTap,
        timeout_s: float | None,
        path: str = "/mcp",
        printable: Printable = shown_as_is,
    ) -> None:
        self.upstream_url = upstream_url
        self.tap = tap
        self.timeout_s = timeout_s
        self.printable = printable
        self.guard = _Guard(path=path)
        self.client: httpx2.AsyncClient | None = None

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Hold the upstream connection pool while serving."""
        async with httpx2.AsyncClient(timeout=httpx2.Timeout(self.timeout_s)) as client:
            self.client = client
            try:
                task_status.started()
                await trio.sleep_forever()
            finally:
                self.client = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            self.guard.check(scope)
            body = await self.guard.body(receive)
        except _Refused as refused:
            await _respond(send, refused.status, refused.text.encode())
            return
        messages = decode_messages(body) if scope["method"] == "POST" else []
        header = trace_context.raw_header(scope["headers"]) if trace_context.capturing else None
        for message in messages:
            self.tap.observe("c2s", message, traceparent=header)
        await self._forward(scope, body, messages, send)

    async def _forward(
        self, scope: Scope, body: bytes, messages: list[dict[str, Any]], send: Send
    ) -> None:
        client = self.client
        if client is None:
            await _respond(send, 503, b"proxy is stopping")
            return
        headers = [
            (name.decode("latin-1"), value.decode("latin-1"))
            for name, value in scope["headers"]
            if name.lower() not in _HOP_BY_HOP
        ]
        headers.append(("accept-encoding", "identity"))
        # A GET is a long-lived event stream: the timeout bounds connecting, not waiting.
        read = self.timeout_s if scope["method"] != "GET" else None
        url = with_query(self.upstream_url, scope["query_string"].decode("latin-1"))
        request = client.build_request(
            scope["method"],
            url,
            headers=headers,
            content=body if body else None,
            timeout=httpx2.Timeout(self.timeout_s, read=read),
        )
        # A POST's whole answer is due within the timeout (a stream kept alive with comments
        # does not extend it); a GET stream lives as long as the session.
        deadline = answer_deadline(self.timeout_s) if scope["method"] == "POST" else math.inf
        response: httpx2.Response | None = None
        unreachable: httpx2.HTTPError | None = None
        with trio.move_on_at(deadline):
            try:
                response = await client.send(request, stream=True)
            except httpx2.TimeoutException:
                pass
            except httpx2.HTTPError as exc:
                unreachable = exc
        if unreachable is not None:
            await self._failed(send, messages, f"cannot be reached: {unreachable}", 502)
            return
        if response is None:
            await self._failed(send, messages, f"did not answer within {self.timeout_s:g} s", 504)
            return
        try:
            await self._relay(response, messages, send, deadline)
        finally:
            with trio.CancelScope(shield=True), trio.move_on_after(2.0):
                await response.aclose()

    async def _failed(
        self, send: Send, messages: list[dict[str, Any]], reason: str, status: int
    ) -> None:
        reason = self.printable(reason)
        _log.warning("upstream_failed", upstream=self.tap.upstream, error=reason)
        is_request, request_id = _request_id(messages)
        if is_request:
            await _respond(
                send,
                200,
                error_response(request_id, self.tap.upstream, reason),
                b"application/json",
            )
        else:
            await _respond(send, status, f"upstream {self.tap.upstream!r} {reason}".encode())

    async def _relay(
        self,
        response: httpx2.Response,
        messages: list[dict[str, Any]],
        send: Send,
        deadline: float,
    ) -> None:
        headers = [
            (name, value) for name, value in response.headers.raw if name.lower() not in _HOP_BY_HOP
        ]
        if not response.headers.get("content-type", "").startswith("text/event-stream"):
            await self._relay_whole(response, messages, headers, send, deadline)
            return
        agent = _AgentStream(send)
        await agent.send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        reader = SSEDataReader()
        failure: str | None = f"did not answer within {self.timeout_s:g} s"
        with trio.move_on_at(deadline):
            try:
                async for chunk in response.aiter_raw():
                    for data in reader.feed(chunk):
                        self._tap_answer(data.encode(), messages)
                    await agent.send(
                        {"type": "http.response.body", "body": chunk, "more_body": True}
                    )
                failure = None
            except httpx2.TimeoutException:
                pass
            except httpx2.HTTPError as exc:
                failure = f"broke the connection: {exc}"
        if failure is not None:
            await self._stream_failed(agent, messages, failure)
        await agent.send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _relay_whole(
        self,
        response: httpx2.Response,
        messages: list[dict[str, Any]],
        headers: list[tuple[bytes, bytes]],
        send: Send,
        deadline: float,
    ) -> None:
        """A JSON (or empty) answer: read whole, then sent with its length in one piece; until
        then a failing upstream can still be answered with a JSON-RPC error."""
        body: bytes | None = None
        broken: httpx2.HTTPError | None = None
        with trio.move_on_at(deadline):
            try:
                body = await response.aread()
            except httpx2.TimeoutException:
                pass
            except httpx2.HTTPError as exc:
                broken = exc
        if broken is not None:
            await self._failed(send, messages, f"broke the connection: {broken}", 502)
            return
        if body is None:
            await self._failed(send, messages, f"did not answer within {self.timeout_s:g} s", 504)
            return
        self._tap_answer(body, messages)
        headers.append((b"content-length", str(len(body)).encode()))
        agent = _AgentStream(send)
        await agent.send(
            {"type": "http.response.start", "status": response.status_code, "headers": headers}
        )
        await agent.send({"type": "http.response.body", "body": body})

    def _tap_answer(self, body: bytes, sent: list[dict[str, Any]]) -> None:
        _, request_id = _request_id(sent)  # what an `id: null` error answers
        for message in decode_messages(body):
            self.tap.observe("s2c", message, in_reply_to=request_id)

    async def _stream_failed(
        self, agent: _AgentStream, messages: list[dict[str, Any]], reason: str
    ) -> None:
        """Mid-answer: an event stream can still carry the JSON-RPC error to the request."""
        reason = self.printable(reason)
        _log.warning("upstream_failed", upstream=self.tap.upstream, error=reason)
        is_request, request_id = _request_id(messages)
        if is_request:
            error = error_response(request_id, self.tap.upstream, reason)
            await agent.send(
                {
                    "type": "http.response.body",
                    "body": b"event: message\ndata: " + error + b"\n\n",
                    "more_body": True,
                }
            )


class _AgentStream:
    """Sends to the agent; once the agent is gone, the rest of the upstream's answer is still
    read (and recorded) but no longer sent."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.gone = False

    async def send(self, message: dict[str, Any]) -> None:
        if self.gone:
            return
        try:
            await self._send(message)
        except (OSError, trio.BrokenResourceError, trio.ClosedResourceError):
            self.gone = True


class LinkApp:
    """HTTP agent, stdio upstream: one session toward the agent, the upstream's own messages on
    the request streams or the GET stream (`ServerMessageRouter`)."""

    def __init__(self, link: Link, *, path: str = "/mcp") -> None:
        self.link = link
        self.guard = _Guard(path=path)
        self.router = ServerMessageRouter(link.server_messages)
        self.session: str | None = None
        """Handed out with the answer to `initialize`: the agent then opens its GET stream
        (the SDK clients open it only once they hold a session)."""
        self._stream_open = False

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Route the upstream's own messages while serving."""
        task_status.started()
        await self.router.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await _lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            self.guard.check(scope)
            self._check_session(scope)
            if scope["method"] == "GET":
                await self._events(send)
                return
            if scope["method"] == "DELETE":
                self.session = None  # one stdio server is one session: it lives on
                await _respond(send, 200, b"")
                return
            if scope["method"] != "POST":
                raise _Refused(405, "method not allowed")
            body = await self.guard.body(receive)
        except _Refused as refused:
            await _respond(send, refused.status, refused.text.encode())
            return
        try:
            line = one_line(body)
        except ValueError:
            line = body  # not JSON: the upstream answers it with its own parse error
        messages = decode_messages(line)
        is_request, _ = _request_id(messages)
        if not is_request:
            try:
                await self.link.send(line, messages)
            except UpstreamFailure as exc:
                _log.warning("upstream_failed", upstream=self.link.name, error=str(exc))
                await _respond(send, 502, f"upstream {self.link.name!r} {exc}".encode())
                return
            await _respond(send, 202, b"")
            return
        await self._answer(scope, line, messages[0], send)

    def _check_session(self, scope: Scope) -> None:
        """A request naming another session than the one handed out is refused (404: the
        agent starts over); one naming none is served (clients of one session only)."""
        sessions = [v for n, v in scope["headers"] if n == b"mcp-session-id"]
        if sessions and self.session is not None and sessions[0].decode("latin-1") != self.session:
            raise _Refused(404, "session not found")

    async def _answer(self, scope: Scope, line: bytes, message: dict[str, Any], send: Send) -> None:
        """The upstream's answer: as JSON, or as an event stream once the upstream sends
        anything for this request before it (an agent that accepts event streams only)."""
        accepts = b",".join(v for n, v in scope["headers"] if n == b"accept")
        outbox = self.router.open(message) if b"text/event-stream" in accepts else None
        agent = _AgentStream(send)
        async with trio.open_nursery() as nursery:

            async def ask() -> None:
                try:
                    answer = await self.link.request(line, message)
                except UpstreamFailure as exc:
                    _log.warning("upstream_failed", upstream=self.link.name, error=str(exc))
                    answer = error_response(message["id"], self.link.name, str(exc))
                await self.router.finish(message, answer)
                if outbox is None:
                    await self._send_json(agent, message, answer)

            nursery.start_soon(ask)
            if outbox is None:
                return
            streaming = False
            async for final, item in outbox.receive:
                if final and not streaming:
                    await self._send_json(agent, message, item)
                    return
                if not streaming:
                    streaming = True
                    headers = [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-cache"),
                    ]
                    headers += self._session_headers(message, item)
                    await agent.send(
                        {"type": "http.response.start", "status": 200, "headers": headers}
                    )
                event = b"event: message\ndata: " + item + b"\n\n"
                await agent.send({"type": "http.response.body", "body": event, "more_body": True})
                if final:
                    await agent.send(
                        {"type": "http.response.body", "body": b"", "more_body": False}
                    )
                    return

    def _session_headers(self, message: dict[str, Any], answer: bytes) -> list[tuple[bytes, bytes]]:
        """A session starts with the upstream's answer to `initialize`."""
        if message.get("method") != "initialize" or b'"result"' not in answer:
            return []
        self.session = secrets.token_hex(16)
        return [(b"mcp-session-id", self.session.encode())]

    async def _send_json(self, agent: _AgentStream, message: dict[str, Any], answer: bytes) -> None:
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(answer)).encode()),
        ]
        headers += self._session_headers(message, answer)
        await agent.send({"type": "http.response.start", "status": 200, "headers": headers})
        await agent.send({"type": "http.response.body", "body": answer})

    async def _events(self, send: Send) -> None:
        if self._stream_open:
            raise _Refused(409, "conflict: an event stream is already open")
        self._stream_open = True
        try:
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [
                        (b"content-type", b"text/event-stream"),
                        (b"cache-control", b"no-cache"),
                    ],
                }
            )
            agent = _AgentStream(send)
            async for line in self.router.for_get:
                await agent.send(
                    {
                        "type": "http.response.body",
                        "body": b"event: message\ndata: " + line + b"\n\n",
                        "more_body": True,
                    }
                )
                if agent.gone:
                    break
            await agent.send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self._stream_open = False


def with_query(url: str, query: str) -> str:
    """`url` with the agent's query added to its own (an upstream URL may carry one, such as a
    token: the agent's is appended with `&`, never a second `?`)."""
    if not query:
        return url
    base, hash_, fragment = url.partition("#")
    joined = f"{base}&{query}" if "?" in base else f"{base}?{query}"
    return joined + hash_ + fragment
