"""The protocol era and versions a replay speaks: those its recorded server presented (issue 25).

A universe recorded from a handshake-era server (its `server.protocol_version` one of the
`initialize` versions: 2025-11-25 and earlier) is served as that server was:

- the 2026-07-28 revision is not offered: over HTTP a request naming a version the recorded
  server did not speak (`MCP-Protocol-Version`: 2026-07-28's `server/discover` probe and every
  request of that revision, or a handshake version newer than the recorded one) is refused as a
  handshake-era server refuses one, with HTTP 400 and a JSON-RPC error (`EraGate`); over stdio
  the SDK's handshake-only loop serves the connection (`serve_handshake_era`, in place of the
  dual-era loop whose first request picks the era), where `server/discover` is an unknown method
  (-32601, as from a handshake-era server) and a `_meta` envelope is not looked at. An SDK
  client in `auto` mode takes either refusal as a handshake-era server and falls back to
  `initialize`;
- `initialize` negotiates as the recorded server would: the client's version if the recorded
  server spoke it (it and every earlier one), else the recorded version (`NegotiateAsRecorded`),
  so the client ends at the version it ended at live, and sees the world as that version shows
  it (the SDK's per-version models: `execution` on tools, for one, is 2025-11-25's).

A universe without a recorded version, or recorded at 2026-07-28 (whose servers speak both eras),
keeps both eras, as does `both_eras` (`wt serve --both-eras`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from mcp.server import ServerRequestContext
from starlette.types import ASGIApp, Receive, Scope, Send

from ._sdk_internals import HANDSHAKE_PROTOCOL_VERSIONS, propose_version

__all__ = ["EraGate", "NegotiateAsRecorded", "served_versions"]

_INVALID_REQUEST = -32600


def served_versions(recorded: str | None) -> tuple[str, ...] | None:
    """The versions a server that presented `recorded` speaks, oldest first: every handshake
    version up to it (servers negotiate down to a client's older version, never up). None (both
    eras, every version the SDK speaks) for a 2026-07-28 version, one the SDK does not know, or
    none."""
    if recorded not in HANDSHAKE_PROTOCOL_VERSIONS:
        return None
    return tuple(version for version in HANDSHAKE_PROTOCOL_VERSIONS if version <= recorded)


class NegotiateAsRecorded:
    """SDK middleware: `initialize` proposes the version the recorded server would have agreed
    to, so the SDK answers and commits that one."""

    def __init__(self, versions: Sequence[str]) -> None:
        self._versions = tuple(versions)

    async def __call__(self, ctx: ServerRequestContext[Any], call_next: Any) -> Any:
        if ctx.method == "initialize":
            asked = (ctx.params or {}).get("protocolVersion")
            if isinstance(asked, str) and asked not in self._versions:
                propose_version(ctx.params, self._versions[-1])
        return await call_next(ctx)


class EraGate:
    """ASGI: a request naming a protocol version outside `versions` is refused (400) before the
    app sees it; one naming none is the oldest clients' and passes, as every other does."""

    def __init__(self, app: ASGIApp, versions: Sequence[str]) -> None:
        self.app = app
        self.versions = frozenset(versions)
        self._supported = ", ".join(versions)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            version = next(
                (v for k, v in scope["headers"] if k.lower() == b"mcp-protocol-version"), None
            )
            if version is not None and version.decode("latin-1") not in self.versions:
                await self._refuse(version.decode("latin-1"), receive, send)
                return
        await self.app(scope, receive, send)

    async def _refuse(self, version: str, receive: Receive, send: Send) -> None:
        # The body is read to its end so the connection stays usable (keep-alive).
        while True:
            message = await receive()
            if message["type"] != "http.request" or not message.get("more_body", False):
                break
        error = {
            "code": _INVALID_REQUEST,
            "message": f"Bad Request: Unsupported protocol version: {version} "
            f"(supported versions: {self._supported})",
        }
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(body))]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": body})
