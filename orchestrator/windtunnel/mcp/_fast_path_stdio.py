"""The stdio fast path: `tools/call` lines answered without the SDK's session, by its rules.

The SDK serves a stdio connection in the era its first request opens (`serve_dual_era_loop`):
a request other than `initialize` carrying the 2026-07-28 `_meta` envelope opens a modern
connection, anything else a handshake (legacy) one; a replay of a handshake-era server serves
every connection in the handshake era (`handshake_only`: the SDK's handshake-only loop). This
class follows the same messages (the lines handed to the SDK, the messages it writes back) and
answers a plain `tools/call` of a declared tool (`_fast_path`) itself only when the SDK would
serve it:

- modern: every request carries its envelope; the call must pass the SDK's envelope ladder
  (`classify_inbound_request`) and its request validation at the envelope's version;
- legacy: the SDK refuses calls before an `initialize` succeeded (-32602), and calls carrying the
  modern envelope (-32600; the handshake-only loop serves them, not looking at `_meta`: either
  way the SDK answers them); a call is answered here once the SDK's answer to an `initialize`
  has been written, at the version it negotiated, and never while another `initialize` is
  pending.

Everything else, including every line before the first request, goes to the SDK, which is the
only safe way to be wrong: a line handed over gets exactly the SDK's answer.

`plain` decides on the stdio reader thread, for every line, while `handed_over` runs on Trio and
`sent` in a writer thread: the era state is only ever read there, and a stale read errs towards
the SDK (an `initialize` still looks pending). The answer is made on the reader thread too when
the server answers without Trio (`SyncAnswer`: `answer_now`), else on Trio (`answer`).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Literal

import mcp_types as types
import msgspec
from mcp.server import Server
from mcp_types import PROTOCOL_VERSION_META_KEY

from ._fast_path import FastPath, PlainCall, decode_message, remember
from ._sdk_internals import InboundModernRoute, classify_inbound_request
from ._sdk_server import Answer, SyncAnswer

_UNDECIDED: Any = object()

__all__ = ["StdioFastPath"]


class StdioFastPath:
    """Decides, line by line, whether a stdin line is answered here (see the module docstring)."""

    def __init__(
        self,
        server: Server[Any],
        tools: Collection[str],
        answer: Answer,
        now: SyncAnswer | None = None,
        *,
        handshake_only: bool = False,
    ) -> None:
        self._calls = FastPath(server, tools, answer)
        self.now = now
        """The server's answers without Trio, if it has them: then `answer_now` answers on the
        reader thread, else `answer` on Trio."""
        self._era: Literal["legacy", "modern"] | None = "legacy" if handshake_only else None
        self._version: str | None = None
        """Legacy: the version the last successful `initialize` negotiated."""
        self._initializing: set[types.RequestId] = set()
        """Legacy: the ids of `initialize` requests handed over and not answered yet."""
        self._served_at: dict[tuple[str, str | None, bytes], str | None] = {}
        """The version a plain call is answered at (None: the SDK's), by era, version, `_meta`."""

    def plain(self, line: str) -> tuple[PlainCall, str] | None:
        """The plain call in `line` and the version to answer it at, if answered here; None:
        hand `line` to the SDK."""
        if self._era is None or (
            self._era == "legacy" and (self._version is None or self._initializing)
        ):
            return None
        call = self._calls.parse(decode_message(line))
        if call is None:
            return None
        # The verdict depends on the connection's era and version and on the call's `_meta`
        # only (name and arguments are already known to be fine): remembered by those.
        key = (self._era, self._version, msgspec.json.encode(call.params.get("_meta")))
        version = self._served_at.get(key, _UNDECIDED)
        if version is _UNDECIDED:
            version = self._version_for(call)
            if version is not None and not self._calls.accepted(call, version):
                version = None
            remember(self._served_at, key, version)
        return None if version is None else (call, version)

    def answer_now(self, plain: tuple[PlainCall, str]) -> bytes:
        """The response line (no newline) to a call from `plain`, answered without Trio. Needs
        `now`; call `written` once the response is written."""
        assert self.now is not None
        return self._calls.reply_now(*plain, self.now).body

    def written(self) -> None:
        """A response from `answer_now` is on the wire: let the server tell its listeners."""
        assert self.now is not None
        self.now.written()

    async def answer(self, plain: tuple[PlainCall, str]) -> bytes:
        """The response line (no newline) to a call from `plain`, answered on Trio."""
        return (await self._calls.reply(*plain)).body

    def handed_over(self, message: types.JSONRPCMessage) -> None:
        """Follow a message given to the SDK: its first request decides the era."""
        if not isinstance(message, types.JSONRPCRequest):
            return
        if self._era is None:
            opens_modern = message.method != "initialize" and _has_modern_envelope(message.params)
            self._era = "modern" if opens_modern else "legacy"
        if self._era == "legacy" and message.method == "initialize":
            self._initializing.add(message.id)

    def sent(self, message: types.JSONRPCMessage) -> None:
        """Follow a message the SDK wrote: the answer to a pending `initialize`."""
        if not self._initializing:
            return
        if isinstance(message, types.JSONRPCResponse) and message.id in self._initializing:
            version = message.result.get("protocolVersion")
            if isinstance(version, str):  # not some other request that reused the id
                # In this order: the reader thread never sees an old version with no
                # `initialize` pending.
                self._version = version
                self._initializing.discard(message.id)
        elif isinstance(message, types.JSONRPCError) and message.id in self._initializing:
            self._initializing.discard(message.id)  # refused: the SDK's state is unchanged

    def _version_for(self, call: PlainCall) -> str | None:
        """The version the SDK serves `call` at on this connection, or None if it refuses it."""
        if self._era == "legacy":
            return None if _has_modern_envelope(call.params) else self._version
        route = classify_inbound_request({"method": "tools/call", "params": call.params})
        return route.protocol_version if isinstance(route, InboundModernRoute) else None


def _has_modern_envelope(params: Mapping[str, Any] | None) -> bool:
    """`mcp.server.runner._has_modern_envelope`: the reserved version key in `params._meta`."""
    meta = (params or {}).get("_meta")
    return isinstance(meta, Mapping) and PROTOCOL_VERSION_META_KEY in meta
