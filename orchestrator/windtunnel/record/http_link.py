"""The upstream is a Streamable HTTP server; the agent speaks stdio to us (`wt record --stdio`).

Each message from the agent is POSTed as it came. The headers are the ones the transport adds
(the `mcp` SDK client's own): `Accept` for JSON and event streams, the `Mcp-Session-Id` the
upstream handed out, `MCP-Protocol-Version` (negotiated by `initialize`, or, in the 2026-07-28 era,
taken from the request's own `_meta` envelope) and, in that era, `Mcp-Method` and `Mcp-Name`.
A JSON answer is one line back to the agent; an event stream gives every message it carries, the
response last (read by `SSEDataReader`: linear in the bytes, events up to 64 MiB). An answer not
complete within the timeout (a deadline on the whole answer: a stream kept alive with comments is
cut there), a refused connection or an HTTP error status is an `UpstreamFailure`, its text
redacted (an error body may quote a secret).
"""

from __future__ import annotations

import math
from typing import Any

import httpx2
import trio
from mcp.shared.inbound import MCP_NAME_HEADER, NAME_BEARING_METHODS, encode_header_value
from mcp_types import PROTOCOL_VERSION_META_KEY

from .link import Printable, UpstreamFailure, answer_deadline, shown_as_is
from .sse import SSEDataReader
from .tap import SessionTap, decode_messages

__all__ = ["HTTPLink"]

_SESSION = "mcp-session-id"
_VERSION = "mcp-protocol-version"


class _Replayed:
    """An HTTP error status whose body is a JSON-RPC message: forwarded, not raised."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self.body = body


class HTTPLink:
    """POSTs to one Streamable HTTP endpoint, keeping the session and era it negotiated."""

    def __init__(
        self,
        name: str,
        url: str,
        *,
        tap: SessionTap,
        timeout_s: float | None,
        printable: Printable = shown_as_is,
    ) -> None:
        self.name = name
        self.url = url
        self.tap = tap
        self.timeout_s = timeout_s
        self.printable = printable
        self._client: httpx2.AsyncClient | None = None
        self._session: str | None = None
        self._version: str | None = None
        self._to_agent, self.server_messages = trio.open_memory_channel[bytes](math.inf)

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        timeout = httpx2.Timeout(self.timeout_s)
        async with httpx2.AsyncClient(timeout=timeout) as client:
            self._client = client
            try:
                task_status.started()
                await trio.sleep_forever()
            finally:
                self._client = None
                self._to_agent.close()
                with trio.CancelScope(shield=True), trio.move_on_after(2.0):
                    await self._end_session(client)

    async def _end_session(self, client: httpx2.AsyncClient) -> None:
        """Tell a stateful upstream the session is over, as the SDK client does on exit."""
        if self._session is None:
            return
        try:
            await client.delete(self.url, headers=self._headers(None))
        except httpx2.HTTPError:
            return

    def _headers(self, message: dict[str, Any] | None) -> dict[str, str]:
        headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
        }
        if self._session is not None:
            headers[_SESSION] = self._session
        version = self._version
        method = message.get("method") if message is not None else None
        params = message.get("params") if message is not None else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        envelope = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
        if isinstance(envelope, str) and isinstance(method, str) and isinstance(params, dict):
            version = envelope
            headers["mcp-method"] = method
            name_key = NAME_BEARING_METHODS.get(method)
            name = params.get(name_key) if name_key is not None else None
            if isinstance(name, str):
                headers[MCP_NAME_HEADER] = encode_header_value(name)
        if version is not None and method != "initialize":
            headers[_VERSION] = version
        return headers

    async def _post(
        self, line: bytes, message: dict[str, Any] | None
    ) -> httpx2.Response | _Replayed:
        client = self._client
        if client is None:
            raise UpstreamFailure("is not connected")
        request = client.build_request(
            "POST", self.url, content=line, headers=self._headers(message)
        )
        try:
            response = await client.send(request, stream=True)
        except httpx2.TimeoutException:
            raise self._too_slow() from None
        except httpx2.HTTPError as exc:
            raise self._failure(f"cannot be reached at {self.url}: {exc}") from None
        session = response.headers.get(_SESSION)
        if session:
            self._session = session
        if response.status_code >= 400:
            try:
                body = (await response.aread()).strip()
            finally:
                await _close(response)
            if decode_messages(body):
                # A JSON-RPC error with an HTTP error status (the SDK's own refusals): the
                # agent gets it as the upstream sent it.
                return _Replayed(response.status_code, body)
            # Redacted whole, then cut: cutting first could leave half a secret unrecognised.
            text = self.printable(body.decode("utf-8", "replace"))[:200]
            raise UpstreamFailure(f"answered HTTP {response.status_code}: {text}")
        return response

    def _failure(self, reason: str) -> UpstreamFailure:
        return UpstreamFailure(self.printable(reason))

    def _too_slow(self) -> UpstreamFailure:
        return UpstreamFailure(f"did not answer within {self.timeout_s:g} s")

    async def request(self, line: bytes, message: dict[str, Any]) -> bytes:
        self.tap.observe("c2s", message)
        with trio.move_on_at(answer_deadline(self.timeout_s)):
            return await self._answer(line, message)
        raise self._too_slow()

    async def _answer(self, line: bytes, message: dict[str, Any]) -> bytes:
        response = await self._post(line, message)
        if isinstance(response, _Replayed):
            return self._received(response.body, message)
        try:
            if response.headers.get("content-type", "").startswith("text/event-stream"):
                return await self._from_events(response, message)
            return self._received((await response.aread()).strip(), message)
        except httpx2.TimeoutException:
            raise self._too_slow() from None
        except httpx2.HTTPError as exc:
            raise self._failure(f"broke the connection: {exc}") from None
        finally:
            await _close(response)

    def _received(self, body: bytes, request: dict[str, Any]) -> bytes:
        messages = decode_messages(body)
        for received in messages:
            self.tap.observe("s2c", received, in_reply_to=request.get("id"))
            self._note_version(request, received)
        if not messages:
            text = self.printable(body.decode("utf-8", "replace"))[:200]
            raise UpstreamFailure(f"answered something that is not JSON-RPC: {text!r}")
        return body

    async def _from_events(self, response: httpx2.Response, request: dict[str, Any]) -> bytes:
        reader = SSEDataReader()
        async for chunk in response.aiter_bytes():
            for event in reader.feed(chunk):
                if not event:
                    continue  # a priming event (resumability), not a message
                data = event.encode()
                messages = decode_messages(data)
                for received in messages:
                    self.tap.observe("s2c", received, in_reply_to=request["id"])
                    self._note_version(request, received)
                if any(_answers(m, request["id"]) for m in messages):
                    return data
                self._to_agent.send_nowait(data)
        raise UpstreamFailure("closed its event stream without answering")

    def _note_version(self, request: dict[str, Any], received: dict[str, Any]) -> None:
        if request.get("method") != "initialize" or received.get("id") != request.get("id"):
            return
        result = received.get("result")
        if isinstance(result, dict) and isinstance(result.get("protocolVersion"), str):
            self._version = result["protocolVersion"]

    async def send(self, line: bytes, messages: list[dict[str, Any]]) -> None:
        for message in messages:
            self.tap.observe("c2s", message)
        with trio.move_on_at(answer_deadline(self.timeout_s)):
            await self._deliver(line, messages)
            return
        raise self._too_slow()

    async def _deliver(self, line: bytes, messages: list[dict[str, Any]]) -> None:
        response = await self._post(line, messages[0] if len(messages) == 1 else None)
        if isinstance(response, _Replayed):
            self._to_agent.send_nowait(response.body)
            return
        try:
            body = await response.aread()
        except httpx2.TimeoutException:
            raise self._too_slow() from None
        except httpx2.HTTPError as exc:
            raise self._failure(f"broke the connection: {exc}") from None
        finally:
            await _close(response)
        if body.strip():
            # A batch is answered with its responses: the agent gets them as they came.
            for received in decode_messages(body):
                self.tap.observe("s2c", received)
            self._to_agent.send_nowait(body.strip())

    async def aclose(self) -> None:
        self._to_agent.close()


def _answers(message: dict[str, Any], request_id: Any) -> bool:
    """The response to the request: its id, or `null` on an error (the id could not be read)."""
    if "method" in message:
        return False
    return message.get("id") == request_id or ("error" in message and message.get("id") is None)


async def _close(response: httpx2.Response) -> None:
    """Close even when the deadline has just cancelled us (the connection must not linger)."""
    with trio.CancelScope(shield=True), trio.move_on_after(2.0):
        await response.aclose()
