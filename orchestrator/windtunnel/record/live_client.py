"""A client session with the live upstream, spoken through `wt record`'s own link and recording.

`wt verify` does not open an SDK client: it sends its requests through the link a
`RecordingProxy` builds (`RecordingProxy.link`: Streamable HTTP or a spawned stdio command, with
the same headers, timeouts, session handling and error texts as `wt record`), so everything the
server answers lands in the proxy's tap and comes out of `proxy.recording()` as the universe
`wt record` would have written for the same session, redacted by the same rules.

The session is the handshake era's: `initialize` (at the protocol version the universe recorded
when the handshake speaks it, else the newest that does), `notifications/initialized`, then
requests one at a time. A request the server sends us (`roots/list`, `sampling/createMessage`,
...) is refused with "method not found": verification declares no client capabilities.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgspec
import trio

from .. import __version__
from .._groups import unwrap_single_error
from ..errors import InputError
from .link import Link, UpstreamFailure
from .proxy import RecordingProxy
from .tap import decode_messages

__all__ = ["HANDSHAKE_VERSIONS", "LiveClient", "LiveRequestError", "open_live_session"]

HANDSHAKE_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
"""The protocol revisions reachable through `initialize`, oldest to newest (`mcp_types.version`
names the same; kept here so a universe's recorded version can be checked without the SDK)."""

_METHOD_NOT_FOUND = -32601


class LiveRequestError(Exception):
    """The server answered a request with a JSON-RPC error (the message is the server's)."""


class LiveClient:
    """Requests to the live upstream over one link, one at a time."""

    def __init__(self, link: Link, proxy: RecordingProxy) -> None:
        self._link = link
        self._proxy = proxy
        self._next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The request's result; `LiveRequestError` for a JSON-RPC error; `InputError` when the
        upstream gave no answer at all (crashed, timed out, unreachable)."""
        self._next_id += 1
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params}
        try:
            line = await self._link.request(msgspec.json.encode(message), message)
        except UpstreamFailure as exc:
            raise self._failure(str(exc)) from None
        answers = [m for m in decode_messages(line) if "method" not in m]
        answer = answers[-1] if answers else {}
        error = answer.get("error")
        if isinstance(error, dict):
            raise LiveRequestError(self._proxy.printable(str(error.get("message", error))))
        result = answer.get("result")
        if not isinstance(result, dict):
            raise LiveRequestError(f"{method} was answered without a result object")
        return result

    async def notify(self, method: str) -> None:
        message = {"jsonrpc": "2.0", "method": method}
        try:
            await self._link.send(msgspec.json.encode(message), [message])
        except UpstreamFailure as exc:
            raise self._failure(str(exc)) from None

    async def handshake(self, recorded_version: str | None) -> dict[str, Any]:
        version = recorded_version if recorded_version in HANDSHAKE_VERSIONS else None
        result = await self.request(
            "initialize",
            {
                "protocolVersion": version or HANDSHAKE_VERSIONS[-1],
                "capabilities": {},
                "clientInfo": {"name": "wt verify", "version": __version__},
            },
        )
        await self.notify("notifications/initialized")
        return result

    async def list_all(self, method: str, key: str) -> list[dict[str, Any]]:
        """Every page of a list (`tools/list`, `resources/list`, ...), in order."""
        items: list[dict[str, Any]] = []
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            result = await self.request(method, {"cursor": cursor} if cursor else {})
            page = result.get(key)
            items += (
                [item for item in page if isinstance(item, dict)] if isinstance(page, list) else []
            )
            cursor = result.get("nextCursor")
            if not isinstance(cursor, str) or cursor in seen:
                return items
            seen.add(cursor)

    def _failure(self, reason: str) -> InputError:
        return InputError(
            f"upstream {self._proxy.name!r} ({self._proxy.source}) {self._proxy.printable(reason)}"
        )


@asynccontextmanager
async def open_live_session(proxy: RecordingProxy) -> AsyncIterator[LiveClient]:
    """A started link to the proxy's upstream (stopped on exit) and a client over it."""
    link = proxy.link()
    with unwrap_single_error():
        async with trio.open_nursery() as nursery:
            try:
                await nursery.start(link.run)
            except UpstreamFailure as exc:
                raise LiveClient(link, proxy)._failure(str(exc)) from None
            nursery.start_soon(_refuse_server_requests, link)
            try:
                yield LiveClient(link, proxy)
            finally:
                nursery.cancel_scope.cancel()


async def _refuse_server_requests(link: Link) -> None:
    """Answer each request the server sends us with "method not found"; drop the rest."""
    async for line in link.server_messages:
        for message in decode_messages(line):
            if isinstance(message.get("method"), str) and "id" in message:
                refusal = {
                    "jsonrpc": "2.0",
                    "id": message["id"],
                    "error": {
                        "code": _METHOD_NOT_FOUND,
                        "message": "wt verify answers no requests",
                    },
                }
                try:
                    await link.send(msgspec.json.encode(refusal), [refusal])
                except UpstreamFailure:
                    return
