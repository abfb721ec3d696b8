"""What a recording keeps from the messages that pass through the proxy. Pure: no I/O.

Every JSON-RPC message is seen once, in the order the proxy forwarded it, with its direction
(`c2s` agent to upstream, `s2c` upstream to agent). Requests pair with their responses by
(direction, id), as `wt import` pairs them. The tap keeps the raw log (the `mcp-jsonrpc` capture
format), the live `tools/list` (every page, by tool name), every answered `tools/call` with the
`CallToolResult` exactly as the upstream sent it and the server messages sent while answering it
(`extra["server_messages"]`), and the rest of the surface the agent was shown (`ServerSurface`:
the server's identity, resources, prompts, completions). Payloads lose only the protocol's
envelope (`calls.without_envelope`).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from .. import trace_context
from ..call_messages import AwaitingRetry, CallMessages, attribute, is_final
from ..calls import MCPCall, without_envelope
from ..canonical import canonical_key

__all__ = [
    "SERVER_MESSAGES",
    "LogRecord",
    "ServerSurface",
    "SessionTap",
    "decode_messages",
]

SERVER_MESSAGES = "server_messages"
"""The key of a recorded call's `extra` that holds what the server sent while answering it."""

_OTHER_WAY = {"c2s": "s2c", "s2c": "c2s"}
# mcp_types' SERVER_INFO_META_KEY and PROTOCOL_VERSION_META_KEY (the tap does not load the SDK).
_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"


class LogRecord(msgspec.Struct, gc=False, omit_defaults=True):
    """One line of the capture log: `{"ts", "conn", "dir", "msg"}` (what `wt import` reads),
    and `in_reply_to` for a message the upstream sent on a request's HTTP answer: that request's
    id (so an import ties a server message to its call as the tap did)."""

    ts: float
    conn: str
    dir: str
    msg: Any
    in_reply_to: Any = msgspec.UNSET


def decode_messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages in one body or line (a batch is several); nothing if not JSON-RPC."""
    try:
        value = msgspec.json.decode(body)
    except (msgspec.DecodeError, RecursionError):
        return []
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, dict) and item.get("jsonrpc") == "2.0"]


@dataclass
class _Pending:
    method: str
    params: Any
    started_at: float
    call: CallMessages | None = None
    """For a `tools/call`: what the server sent while answering it (and in the rounds before,
    for the retry of a call answered `input_required`)."""
    entry: dict[str, Any] | None = None
    """For a server-to-client request attributed to a call: its `server_messages` entry, which
    gets the client's `response`."""
    traceparent: str | None = None
    """For an agent's request, when an OpenTelemetry export captures trace context: the
    `traceparent` of its `_meta`, else of the HTTP request that carried it."""


@dataclass
class ServerSurface:
    """Everything but tool calls that the agent was shown, as the universe format holds it."""

    server: dict[str, Any] = field(default_factory=dict)
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    resource_templates: dict[str, dict[str, Any]] = field(default_factory=dict)
    prompts: dict[str, dict[str, Any]] = field(default_factory=dict)
    resource_reads: dict[Any, dict[str, Any]] = field(default_factory=dict)
    prompt_gets: dict[Any, dict[str, Any]] = field(default_factory=dict)
    completions: dict[Any, dict[str, Any]] = field(default_factory=dict)
    """Each keyed by what replay matches on; the first answer to a key is kept."""


_LISTS = {
    "resources/list": ("resources", "resources", "uri"),
    "resources/templates/list": ("resourceTemplates", "resource_templates", "uriTemplate"),
    "prompts/list": ("prompts", "prompts", "name"),
}
"""method -> (the result's list, the surface's section, the key an entry is known by)."""


@dataclass
class SessionTap:
    """The recording of one upstream, fed by `observe` in forwarding order."""

    upstream: str
    one_stream: bool = False
    """The upstream speaks over one stream (stdio): a server message that names no request is
    attributed to the `tools/call` in flight when exactly one is (see `_attribute`)."""
    log: list[LogRecord] = field(default_factory=list)
    tools: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[MCPCall] = field(default_factory=list)
    surface: ServerSurface = field(default_factory=ServerSurface)
    failed_calls: int = 0
    """`tools/call` requests answered with a JSON-RPC error (kept in the log only)."""
    incomplete_calls: int = 0
    """`tools/call` answers that were not final (2026-07-28 `resultType` other than complete):
    the `input_required` rounds, kept in the final answer's server messages (`call_messages`)."""
    unattributed: int = 0
    """Server notifications and requests that could not be tied to one call (log only)."""
    changes: int = 0
    """Bumped whenever something a universe holds changed (tools or calls)."""
    on_change: Callable[[MCPCall | None], None] | None = None
    """Told of every change: with the call it completed, or None for anything else."""
    _pending: dict[tuple[str, bytes], _Pending] = field(default_factory=dict)
    _input_rounds: AwaitingRetry[None] = field(default_factory=AwaitingRetry)
    """The calls answered `input_required` and not retried yet."""

    def observe(
        self,
        direction: str,
        message: dict[str, Any],
        *,
        in_reply_to: Any = None,
        traceparent: str | None = None,
    ) -> MCPCall | None:
        """Take one message; return the call it completed, if it answered a `tools/call`.

        `in_reply_to` is the id of the agent's request whose HTTP answer (its JSON body or its
        event stream) carried this message, when the transport says: a server message there
        belongs to that request's call (the strongest tie, see `_attribute`), and an error with
        `id: null` (the upstream could not tell the id, e.g. a handshake-era server refusing
        `server/discover`) answers that request. `traceparent` is the HTTP `traceparent`
        header of an agent's request, for an OpenTelemetry export (`_meta`'s comes first)."""
        now = time.time()
        record = LogRecord(ts=now, conn=self.upstream, dir=direction, msg=message)
        if in_reply_to is not None and direction == "s2c":
            record.in_reply_to = in_reply_to
        self.log.append(record)
        method = message.get("method")
        if direction == "c2s" and isinstance(method, str):
            self._note_era(message)
        if direction == "s2c" and isinstance(method, str):
            entry = self._attribute(message, in_reply_to)
            if entry is not None and "id" in message and _hashable_id(message["id"]):
                key = msgspec.json.encode(message["id"])
                self._pending[(direction, key)] = _Pending(
                    method, message.get("params"), now, entry=entry
                )
                return None
        message_id = message.get("id")
        if message_id is None and "error" in message and method is None:
            message_id = in_reply_to
        if message_id is None or not _hashable_id(message_id):
            return None
        key = msgspec.json.encode(message_id)
        if isinstance(method, str):
            request = _Pending(method, message.get("params"), now)
            if trace_context.capturing and direction == "c2s":
                request.traceparent = trace_context.meta_traceparent(request.params) or traceparent
            self._pending[(direction, key)] = request
            if direction == "c2s" and method == "tools/call":
                self._call_sent(request)
            return None
        pending = self._pending.pop((_OTHER_WAY.get(direction, ""), key), None)
        if pending is None:
            return None
        if direction == "c2s":
            if pending.entry is not None:
                answer = {k: message[k] for k in ("result", "error") if k in message}
                pending.entry["response"] = answer
            return None
        return self._answered(pending, message, now)

    def unanswered(self) -> list[str]:
        """Methods of agent requests still waiting for the upstream."""
        return [p.method for (direction, _), p in self._pending.items() if direction == "c2s"]

    # -- server messages during a call ---------------------------------------------------------

    def _attribute(self, message: dict[str, Any], stream: Any) -> dict[str, Any] | None:
        """Tie a server notification or request to the `tools/call` it was sent while answering
        (`call_messages.attribute`: the agent request whose HTTP answer carried it, a progress
        token, over a one-stream upstream the one call in flight); its entry, or None when it
        stays in the log only."""
        carried = self._pending_call(stream) if stream is not None else None
        in_flight = [] if carried is not None else self._calls_in_flight()
        call = attribute(message, in_flight, carried_by=carried, one_stream=self.one_stream)
        if call is None:
            self.unattributed += 1
            return None
        return call.take(message)

    def _pending_call(self, request_id: Any) -> CallMessages | None:
        if not _hashable_id(request_id):
            return None
        pending = self._pending.get(("c2s", msgspec.json.encode(request_id)))
        return pending.call if pending is not None else None

    def _calls_in_flight(self) -> list[CallMessages]:
        return [
            p.call for (way, _), p in self._pending.items() if way == "c2s" and p.call is not None
        ]

    def _call_sent(self, request: _Pending) -> None:
        """An agent's `tools/call`: a new call, or the retry of one answered `input_required`
        (whose messages so far it carries on)."""
        params = request.params if isinstance(request.params, dict) else {}
        name = params.get("name")
        retried = self._input_rounds.retried(name, params) if isinstance(name, str) else None
        request.call = retried[0] if retried is not None else CallMessages(params)

    # -- answers -------------------------------------------------------------------------------

    def _answered(self, pending: _Pending, message: dict[str, Any], now: float) -> MCPCall | None:
        result = message.get("result")
        if pending.method == "tools/call":
            return self._call_answered(pending, result, now)
        if not isinstance(result, dict):
            return None  # an error answer: kept in the log only
        params = pending.params if isinstance(pending.params, dict) else {}
        if pending.method == "tools/list":
            for tool in result.get("tools") or []:
                if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                    self.tools[tool["name"]] = tool
        elif pending.method in ("initialize", "server/discover"):
            self._note_server(pending.method, result)
        elif pending.method in _LISTS:
            items, section, key = _LISTS[pending.method]
            listed: dict[str, dict[str, Any]] = getattr(self.surface, section)
            for item in result.get(items) or []:
                if isinstance(item, dict) and isinstance(item.get(key), str):
                    listed[item[key]] = item
        elif not self._note_answer(pending.method, params, result):
            return None
        self._changed(None)
        return None

    def _note_answer(self, method: str, params: dict[str, Any], result: dict[str, Any]) -> bool:
        """A `resources/read`, `prompts/get` or `completion/complete` answer: kept, the first
        answer to each request (as replay matches it). False for any other method."""
        answer = without_envelope(result)
        if method == "resources/read" and isinstance(params.get("uri"), str):
            self.surface.resource_reads.setdefault(
                params["uri"], {"uri": params["uri"], "result": answer}
            )
            return True
        if method == "prompts/get" and isinstance(params.get("name"), str):
            arguments = params.get("arguments")
            arguments = arguments if isinstance(arguments, dict) else {}
            key = (params["name"], canonical_key(arguments))
            entry = {"name": params["name"], "arguments": arguments, "result": answer}
            self.surface.prompt_gets.setdefault(key, entry)
            return True
        if method == "completion/complete":
            request: dict[str, Any] = {
                k: params[k] for k in ("ref", "argument", "context") if k in params
            }
            self.surface.completions.setdefault(
                canonical_key(request), {**request, "result": answer}
            )
            return True
        return False

    def _note_server(self, method: str, result: dict[str, Any]) -> None:
        """Who the server said it was: `initialize` (handshake era) or `server/discover`
        (2026-07-28: the server info rides in the result's `_meta`, the version the session
        uses in every request's `_meta`)."""
        server = self.surface.server
        if method == "initialize":
            if isinstance(result.get("protocolVersion"), str):
                server["protocol_version"] = result["protocolVersion"]
            info = result.get("serverInfo")
        else:
            meta = result.get("_meta")
            info = meta.get(_SERVER_INFO) if isinstance(meta, dict) else None
        if isinstance(info, dict):
            server["info"] = info
        if isinstance(result.get("instructions"), str):
            server["instructions"] = result["instructions"]
        if isinstance(result.get("capabilities"), dict):
            server["capabilities"] = result["capabilities"]

    def _note_era(self, message: dict[str, Any]) -> None:
        """2026-07-28: the protocol version is the one each request carries in its `_meta`."""
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        version = meta.get(_PROTOCOL_VERSION) if isinstance(meta, dict) else None
        if isinstance(version, str) and "protocol_version" not in self.surface.server:
            self.surface.server["protocol_version"] = version

    def _call_answered(self, pending: _Pending, result: Any, now: float) -> MCPCall | None:
        params = pending.params if isinstance(pending.params, dict) else {}
        name = params.get("name")
        if not isinstance(name, str):
            return None
        if not isinstance(result, dict):
            self.failed_calls += 1
            return None
        if not is_final(result):
            self.incomplete_calls += 1  # asks the agent for input; the final answer comes later
            if result.get("resultType") == "input_required" and pending.call is not None:
                self._input_rounds.wait(name, pending.call, result, None)
            return None
        arguments = params.get("arguments")
        messages = pending.call.kept() if pending.call is not None else []
        call = MCPCall(
            tool_name=name,
            args=dict(arguments) if isinstance(arguments, dict) else {},
            result=without_envelope(result),
            upstream=self.upstream,
            is_error=result.get("isError") is True,
            started_at=pending.started_at,
            duration_ms=(now - pending.started_at) * 1000.0,
            extra={SERVER_MESSAGES: messages} if messages else {},
        )
        self.calls.append(call)
        trace_context.note_value(call, pending.traceparent)
        self._changed(call)
        return call

    def _changed(self, call: MCPCall | None) -> None:
        self.changes += 1
        if self.on_change is not None:
            self.on_change(call)


def _hashable_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)
