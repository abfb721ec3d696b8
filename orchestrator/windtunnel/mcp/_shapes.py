"""The shapes servers and transports exchange, without the MCP SDK: what a server offers
(`ToolSpec`, `ServedSurface`) and how it answers (`Answer`, `SyncAnswer`, ...).

Kept apart from `_sdk_server` and `_surface_server` (which build the SDK's server from them) so
that `windtunnel.mcp` and the servers in it import without the SDK: a process that never builds
an SDK server (`wt record --stdio`'s proxy) never pays for importing it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..calls import MCPCall
from ..replay import ClientExchange
from ..universe import ServerSurface

__all__ = [
    "Answer",
    "Exchange",
    "ExchangingAnswer",
    "Request",
    "ServedSurface",
    "SessionState",
    "SyncAnswer",
    "ToolSpec",
    "tool_text",
]

Answer = Callable[[str, dict[str, Any]], Awaitable[MCPCall]]
"""Resolve one call and record it; the returned `MCPCall` says what to send."""

Exchange = Callable[[Sequence[dict[str, Any]]], Awaitable[ClientExchange]]
"""Send a recording's server messages on the live request; say how it went."""

SessionState = dict[str, Any]
"""One MCP session's own state, kept by the SDK for as long as the session lives (a Streamable
HTTP session's connection state); what a server keeps there (a sequence position) ends with it."""

ExchangingAnswer = Callable[
    [str, dict[str, Any], Exchange, SessionState | None], Awaitable[MCPCall]
]
"""`Answer` for a transport that can exchange server messages with the client (stdio, HTTP
sessions), with the state of the call's MCP session (None where the protocol has none)."""


@dataclass(frozen=True)
class SyncAnswer:
    """A server's answers without Trio, for a transport that answers outside it (the stdio
    reader thread): `answer` resolves and records a call, callable from any thread; `written`
    runs once the answer is on the wire and tells the listeners, off the critical path."""

    answer: Callable[[str, dict[str, Any]], MCPCall]
    written: Callable[[], None]


@dataclass(frozen=True)
class ToolSpec:
    """What `tools/list` offers for one tool. `listing`, when given, is the whole entry as
    listed (a universe tool's `listed()`: title, annotations, output schema, ... as recorded)."""

    name: str
    input_schema: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    description: str = ""
    listing: dict[str, Any] | None = None

    def listed(self) -> dict[str, Any]:
        if self.listing is not None:
            return self.listing
        tool: dict[str, Any] = {"name": self.name}
        if self.description:
            tool["description"] = self.description
        tool["inputSchema"] = self.input_schema
        return tool


Request = Callable[[str, str, dict[str, Any]], Awaitable[MCPCall]]
"""Answer and record one request other than `tools/call`: (method, target, args), as `MCPCall`
logs it."""


@dataclass(frozen=True)
class ServedSurface:
    """What a server shows besides its tools. `server` is the recorded identity (None: Wind
    Tunnel's own); `requests` the methods `request` answers (`resources/read`, `prompts/get`,
    `completion/complete`)."""

    server: ServerSurface | None = None
    resources: list[dict[str, Any]] = field(default_factory=list)
    resource_templates: list[dict[str, Any]] = field(default_factory=list)
    prompts: list[dict[str, Any]] = field(default_factory=list)
    requests: frozenset[str] = frozenset()
    protocol_version: str | None = None
    """The version the recorded server presented: a handshake-era one keeps the replay to that
    era and to it and earlier versions (`_protocol_era`); None, or 2026-07-28: both eras."""

    def capabilities(self) -> Mapping[str, Any]:
        server = self.server
        return server.capabilities or {} if server is not None else {}

    def serves_resources(self) -> bool:
        return bool(
            "resources" in self.capabilities()
            or self.resources
            or self.resource_templates
            or "resources/read" in self.requests
        )

    def serves_prompts(self) -> bool:
        return bool(
            "prompts" in self.capabilities() or self.prompts or "prompts/get" in self.requests
        )


def tool_text(value: Any) -> dict[str, Any]:
    """The text block a tool's answer is shown as: a string as it is, anything else its JSON."""
    # Sorted keys: a live mock and its frozen replay render the same text, whatever the key order.
    text = (
        value if isinstance(value, str) else json.dumps(value, sort_keys=True, ensure_ascii=False)
    )
    return {"type": "text", "text": text}
