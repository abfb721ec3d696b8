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


class LogRecord(msgspec.Struct, gc=False):
    """One line of the capture log: `{"ts", "conn", "dir", "msg"}` (what `wt import` reads)."""

    ts: float
    conn: str
    dir: str
    msg: Any


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
    server_messages: list[tuple[dict[str, Any], bool]] = field(default_factory=list)
    """For a `tools/call`: what the server sent while answering it, in order (each entry with
    whether it is a request, which is kept only once the client's answer is in it)."""
    entry: dict[str, Any] | None = None
    """For a server-to-client request attributed to a call: its `server_messages` entry, which
    gets the client's `response`."""
    traceparent: str | None = None
    """For an agent's request, when an OpenTelemetry export captures trace context: the
    `traceparent` of its `_meta`, else of the HTTP request that carried it."""
    input_rounds: _InputRounds | None = None
    """For the retry of a call answered `input_required`: the rounds so far."""


@dataclass
class _InputRounds:
    """A call's 2026-07-28 `input_required` rounds so far: what the server sent in them, in
    order (notifications, and the input requests with their round and key), and the requests of
    the last round, which the agent's retry answers."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    round: int = 0
    open: list[dict[str, Any]] = field(default_factory=list)


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
    the `input_required` rounds, kept in the final answer's server messages (`_InputRounds`)."""
    unattributed: int = 0
    """Server notifications and requests that could not be tied to one call (log only)."""
    changes: int = 0
    """Bumped whenever something a universe holds changed (tools or calls)."""
    on_change: Callable[[MCPCall | None], None] | None = None
    """Told of every change: with the call it completed, or None for anything else."""
    _pending: dict[tuple[str, bytes], _Pending] = field(default_factory=dict)
    _input_rounds: dict[tuple[str, Any], _InputRounds] = field(default_factory=dict)
    """Per call (tool, canonical arguments) answered `input_required` and not retried yet."""

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
        self.log.append(LogRecord(ts=now, conn=self.upstream, dir=direction, msg=message))
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
                self._resume_rounds(request)
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
        """Tie a server notification or request to the `tools/call` it was sent while answering.

        In order: the agent request whose HTTP response stream carried it; for a progress
        notification, the call whose `_meta.progressToken` it names; over a one-stream upstream
        (stdio), the one call in flight. Anything else stays in the log only.
        """
        call = self._pending_call(stream) if stream is not None else None
        params = message.get("params")
        if call is None and message.get("method") == "notifications/progress":
            token = params.get("progressToken") if isinstance(params, dict) else None
            if token is not None:
                call = next(
                    (p for p in self._calls_in_flight() if _progress_token(p.params) == token),
                    None,
                )
        if call is None and self.one_stream:
            in_flight = self._calls_in_flight()
            call = in_flight[0] if len(in_flight) == 1 else None
        if call is None:
            self.unattributed += 1
            return None
        entry: dict[str, Any] = {"method": message["method"]}
        if "params" in message:
            entry["params"] = params
        call.server_messages.append((entry, "id" in message))
        return entry

    def _pending_call(self, request_id: Any) -> _Pending | None:
        if not _hashable_id(request_id):
            return None
        pending = self._pending.get(("c2s", msgspec.json.encode(request_id)))
        return pending if pending is not None and pending.method == "tools/call" else None

    def _calls_in_flight(self) -> list[_Pending]:
        return [
            p for (way, _), p in self._pending.items() if way == "c2s" and p.method == "tools/call"
        ]

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
        if result.get("resultType", "complete") != "complete":
            self.incomplete_calls += 1  # asks the agent for input; the final answer comes later
            if result.get("resultType") == "input_required":
                self._note_input_round(name, params, pending, result)
            return None
        arguments = params.get("arguments")
        messages = _kept(pending.server_messages)
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

    # -- 2026-07-28 input_required rounds ---------------------------------------------------

    def _note_input_round(
        self, name: str, params: dict[str, Any], pending: _Pending, result: dict[str, Any]
    ) -> None:
        """An `input_required` answer: its input requests become server messages of the call
        (with the round and key they had), answered when the agent retries."""
        rounds = pending.input_rounds or _InputRounds()  # a retry carries the rounds so far
        rounds.messages = _kept(pending.server_messages)
        rounds.round += 1
        rounds.open = []
        requests = result.get("inputRequests")
        for input_key, request in (requests if isinstance(requests, dict) else {}).items():
            if not isinstance(request, dict) or not isinstance(request.get("method"), str):
                continue
            entry: dict[str, Any] = {"method": request["method"]}
            if isinstance(request.get("params"), dict):
                entry["params"] = request["params"]
            entry.update(input_round=rounds.round, input_key=input_key)
            rounds.open.append(entry)
            rounds.messages.append(entry)
        self._input_rounds[(name, _arguments_key(params))] = rounds

    def _resume_rounds(self, retry: _Pending) -> None:
        """The agent's retry of a call answered `input_required`: its `inputResponses` answer
        the open round, and the retry's answer carries every round so far."""
        params = retry.params if isinstance(retry.params, dict) else {}
        if "inputResponses" not in params and "requestState" not in params:
            return
        name = params.get("name")
        if not isinstance(name, str):
            return
        rounds = self._input_rounds.pop((name, _arguments_key(params)), None)
        if rounds is None:
            return
        responses = params.get("inputResponses")
        responses = responses if isinstance(responses, dict) else {}
        for entry in rounds.open:
            if entry["input_key"] in responses:
                entry["response"] = {"result": responses[entry["input_key"]]}
        retry.server_messages = [
            (entry, "response" in entry or "input_round" in entry) for entry in rounds.messages
        ]
        retry.input_rounds = rounds

    def _changed(self, call: MCPCall | None) -> None:
        self.changes += 1
        if self.on_change is not None:
            self.on_change(call)


def _kept(messages: list[tuple[dict[str, Any], bool]]) -> list[dict[str, Any]]:
    """A call's server messages as recorded: a request only once the client's answer is in."""
    return [entry for entry, is_request in messages if not is_request or "response" in entry]


def _arguments_key(params: dict[str, Any]) -> Any:
    arguments = params.get("arguments")
    return canonical_key(arguments if isinstance(arguments, dict) else {})


def _progress_token(params: Any) -> Any:
    meta = params.get("_meta") if isinstance(params, dict) else None
    return meta.get("progressToken") if isinstance(meta, dict) else None


def _hashable_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)
