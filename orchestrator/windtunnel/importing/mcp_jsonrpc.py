"""Adapter: raw MCP JSON-RPC logs (JSON lines, or one JSON array) into Contract A.

Each record is a JSON-RPC message, or a capture wrapper `{"ts", "conn", "dir", "msg"}` as a
proxy writes it (`conn` names the upstream, `ts` is an ISO 8601 time or Unix seconds). Requests and
responses pair by (connection, direction, id). This is the wire view: the best source for
fixtures. It holds no task and no final answer; pass `--task`.

Besides tool calls it holds the whole surface (`jsonrpc_surface`): the server's identity, every
tool field in list order, resources, prompts and completions. A message the server sent on its own
(a notification, or a request to the client such as `sampling/createMessage`) belongs to the
`tools/call` it was sent while answering (`server_messages`) by `wt record`'s own rules
(`call_messages.attribute`), on its connection: the request whose HTTP answer carried it (a
record's `in_reply_to`, which `wt record` writes); a `notifications/progress` to the call in flight
whose `_meta.progressToken` it names; else, on a connection whose records never say which request
carried a message (stdio, or another proxy's capture), the one `tools/call` in flight when exactly
one is. A server request is kept with the client's answer (`response`). A 2026-07-28 call answered
`input_required` is one call with its rounds: the input requests join its server messages (with
`input_round`, `input_key`) and the retry's `inputResponses` answer them; the retry's answer is the
call's result. What no rule ties to one call is left out, with one warning that counts it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..call_messages import SERVER_REQUEST_METHODS, AwaitingRetry, CallMessages, attribute, is_final
from ..canonical import nested_deeper_than
from ..universe_surface import MAX_NESTING
from .builder import TraceBuilder
from .document import Document
from .envelope import Call, Identity
from .jsonrpc_surface import SERVER_INFO_META, SURFACE_METHODS, SurfaceCollector
from .normalize import (
    elapsed_ms,
    iso_from_seconds,
    iso_from_text,
    parse_args,
    seconds_of,
    text_result,
    wire_result,
)
from .shape import as_list, as_obj, opt_str
from .sniffing import first_record

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "mcp-jsonrpc"
# What only a server sends: how a log without `dir` tells a server message from a client's.
_SERVER_NOTIFICATIONS = frozenset(
    {
        "notifications/message",
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/elicitation/complete",
    }
)


class _Message(msgspec.Struct):
    line: str
    conn: str | None
    ts: str | None
    msg: dict[str, Any]
    sender: str | None = None  # "c2s" / "s2c" when the capture says
    in_reply_to: Any = None
    """The id of the request whose HTTP answer carried this message, when the capture says."""
    seconds: float | None = None  # `ts` as Unix seconds, at the capture's own precision

    def request_key(self, request_id: Any) -> tuple[str | None, str | None, bytes]:
        """Ids are per connection and per direction: both sides number their own requests."""
        return (self.conn, self.sender, msgspec.json.encode(request_id))

    def response_key(self, request_id: Any) -> tuple[str | None, str | None, bytes]:
        """A response travels the other way from its request."""
        back = {"c2s": "s2c", "s2c": "c2s"}.get(self.sender or "")
        return (self.conn, back, msgspec.json.encode(request_id))


def _is_message(value: Any) -> bool:
    return isinstance(value, dict) and (
        value.get("jsonrpc") == "2.0"
        or (isinstance(value.get("msg"), dict) and value["msg"].get("jsonrpc") == "2.0")
    )


def looks_like(doc: Document) -> bool:
    return _is_message(first_record(doc))


def _timestamp(value: Any) -> str | None:
    if isinstance(value, str):
        return iso_from_text(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return iso_from_seconds(value)
    return None


def _messages(doc: Document) -> list[_Message]:
    if doc.jsonl:
        entries = [(f"line {line}", value) for line, value in doc.records]
    elif isinstance(doc.single, dict):
        entries = [("line 1", doc.single)]
    else:
        items = as_list(doc, doc.single, "$")
        entries = [(f"$[{i}]", value) for i, value in enumerate(items)]
    messages: list[_Message] = []
    for where, value in entries:
        record = as_obj(doc, value, where)
        if "msg" in record and "jsonrpc" not in record:
            msg = as_obj(doc, record["msg"], f"{where}: msg")
            conn = record.get("conn")
            if conn is not None and not isinstance(conn, str):
                doc.fail("`conn` must be a string", where)
            direction = record.get("dir")
            sender = direction if direction in ("c2s", "s2c") else None
            carrier = record.get("in_reply_to")
            messages.append(
                _Message(
                    where,
                    conn or None,
                    _timestamp(record.get("ts")),
                    msg,
                    sender,
                    carrier if _is_id(carrier) else None,
                    seconds_of(record.get("ts")),
                )
            )
        else:
            messages.append(_Message(where, None, None, record))
        if messages[-1].msg.get("jsonrpc") != "2.0":
            doc.fail('not a JSON-RPC 2.0 message (no "jsonrpc": "2.0")', where)
    return messages


def _server_info(result: dict[str, Any]) -> dict[str, Any] | None:
    info = result.get("serverInfo")
    if isinstance(info, dict) and isinstance(info.get("name"), str):
        return info
    meta = result.get("_meta")
    if isinstance(meta, dict):
        info = meta.get(SERVER_INFO_META)
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            return info
    return None


def _upstream_for(builder: TraceBuilder, conn: str | None, info: dict[str, Any] | None) -> str:
    name = opt_str(info.get("name")) if info else None
    version = opt_str(info.get("version")) if info else None
    if conn is not None:
        identity = Identity(source="connection", server_name=name, server_version=version)
        return builder.upstream(conn, identity=identity)
    if name is not None:
        identity = Identity(source="server_info", server_name=name, server_version=version)
        return builder.upstream(name, identity=identity)
    return builder.upstream("default")


class _Pending(msgspec.Struct):
    """A request waiting for its answer."""

    method: str
    params: Any
    call: Call | None = None
    messages: CallMessages | None = None
    """For a `tools/call`: what the server sent while answering it so far (and in the rounds
    before, for the retry of a call answered `input_required`)."""
    line: str = ""
    asked: dict[str, Any] | None = None
    """For a server request tied to a call: its `server_messages` entry, which gets the
    client's `response`."""
    started: float | None = None
    """For a `tools/call`: when its (last) request was sent, as Unix seconds, if the capture
    says; a call answered over `input_required` rounds is timed by its final round, as
    `wt record` times it."""


_PendingKey = tuple[str | None, str | None, bytes]


def _from_server(message: _Message) -> bool:
    if message.sender is not None:
        return message.sender == "s2c"
    method = message.msg.get("method")
    return method in SERVER_REQUEST_METHODS or method in _SERVER_NOTIFICATIONS


def _is_id(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def _attribute(
    message: _Message, pending: dict[_PendingKey, _Pending], one_stream: bool
) -> CallMessages | None:
    """The call a server message belongs to (`call_messages.attribute`, on its connection)."""
    carried = None
    if message.in_reply_to is not None:
        key = (message.conn, "c2s", msgspec.json.encode(message.in_reply_to))
        request = pending.get(key)
        carried = request.messages if request is not None else None
    in_flight = [
        p.messages
        for key, p in pending.items()
        if key[0] == message.conn and p.messages is not None
    ]
    return attribute(message.msg, in_flight, carried_by=carried, one_stream=one_stream)


def read(doc: Document, builder: TraceBuilder) -> None:
    messages = _messages(doc)
    stamps = [m.ts for m in messages if m.ts is not None]
    if stamps:
        builder.started_at, builder.ended_at = stamps[0], stamps[-1]
    infos: dict[str | None, dict[str, Any]] = {}
    for message in messages:
        result = message.msg.get("result")
        if isinstance(result, dict) and message.conn not in infos:
            info = _server_info(result)
            if info is not None:
                infos[message.conn] = info
    conns = [m.conn for m in messages]
    upstream_of = {conn: _upstream_for(builder, conn, infos.get(conn)) for conn in conns}
    surface = SurfaceCollector(builder.warn)
    # A connection whose records say which request carried a server message (`wt record` over
    # HTTP) says it of every one: a message without it came on no request's stream.
    carried = {m.conn for m in messages if m.in_reply_to is not None}
    rounds: dict[str | None, AwaitingRetry[_Pending]] = {}
    unattributed: list[str] = []
    # Requests pair with their answers by (connection, direction, id): each side numbers its own.
    pending: dict[_PendingKey, _Pending] = {}
    for message in messages:
        msg = message.msg
        upstream = upstream_of[message.conn]
        method = msg.get("method")
        if isinstance(method, str) and _from_server(message):
            one_stream = message.conn not in carried
            if not _server_message(builder, message, pending, one_stream):
                unattributed.append(message.line)
            continue
        if isinstance(method, str):
            if "id" not in msg:
                _notification(builder, message, pending)
                continue
            surface.request(upstream, msg.get("params"))
            key = message.request_key(msg["id"])
            if method == "tools/call":
                waiting = rounds.setdefault(message.conn, AwaitingRetry())
                pending[key] = _call_sent(doc, builder, message, upstream, waiting)
            else:
                pending[key] = _Pending(method, msg.get("params"))
            continue
        if "id" not in msg:
            doc.fail("a JSON-RPC message with neither method nor id", message.line)
        key = message.response_key(msg["id"])
        if msg["id"] is None and "error" in msg:
            # A handshake-era server refusing a 2026-07-28 client's `server/discover` may not
            # tell the id back (`id: null`): that is the answer to the probe, not an orphan.
            if message.in_reply_to is not None:
                key = (message.conn, "c2s", msgspec.json.encode(message.in_reply_to))
            else:
                key = _refused_probe(message, pending) or key
        if key not in pending:
            builder.warn(
                "orphan_response",
                f"{message.line}: a response to request id {_id_text(msg['id'])} that the log "
                "does not contain; ignored",
            )
            continue
        answered = pending.pop(key)
        if answered.asked is not None:
            answered.asked["response"] = {k: msg[k] for k in ("result", "error") if k in msg}
            continue
        result = msg.get("result")
        if answered.call is not None and isinstance(result, dict) and not is_final(result):
            _not_final(builder, message, answered, rounds.setdefault(message.conn, AwaitingRetry()))
            continue
        if answered.call is not None and answered.messages is not None:
            answered.call.server_messages = _answered_messages(builder, message, answered.messages)
        _response(doc, builder, message, answered.method, answered.call, upstream)
        if answered.call is not None:
            answered.call.duration_ms = elapsed_ms(answered.started, message.seconds)
        if answered.method in SURFACE_METHODS and isinstance(result, dict):
            surface.answered(upstream, message.line, answered.method, answered.params, result)
    surface.fill(builder.surface)
    for waiting in rounds.values():
        for _, asked in waiting.left():
            builder.warn(
                "input_rounds_unfinished",
                f"{asked.line}: the call was answered `input_required` and the capture holds no "
                "retry that answers it; it has no result",
            )
    if unattributed:
        builder.warn(
            "server_messages_unattributed",
            f"{len(unattributed)} server message(s) could not be tied to one tools/call (none "
            f"or several in flight on their connection, first at {unattributed[0]}); left out "
            "of the universe",
        )


def _refused_probe(message: _Message, pending: dict[_PendingKey, _Pending]) -> _PendingKey | None:
    """The pending `server/discover` on the message's connection that an `id: null` error
    answers, when there is one."""
    for key, waiting in pending.items():
        if key[0] == message.conn and waiting.method == "server/discover":
            return key
    return None


def _server_message(
    builder: TraceBuilder,
    message: _Message,
    pending: dict[_PendingKey, _Pending],
    one_stream: bool,
) -> bool:
    """Keep a notification or request the server sent in its call's `server_messages`; False
    when no call takes it. A malformed one is left out with a warning naming its line."""
    msg = message.msg
    if "params" in msg and not isinstance(msg["params"], dict):
        builder.warn(
            "server_message_malformed",
            f"{message.line}: the server's {msg['method']} has `params` that are not an object; "
            "left out of the universe",
        )
        return True
    messages = _attribute(message, pending, one_stream)
    if messages is None:
        return False
    entry = messages.take(msg)
    if "id" in msg:
        key = message.request_key(msg["id"])
        pending[key] = _Pending(msg["method"], msg.get("params"), asked=entry)
    return True


def _call_sent(
    doc: Document,
    builder: TraceBuilder,
    message: _Message,
    upstream: str,
    waiting: AwaitingRetry[_Pending],
) -> _Pending:
    """A `tools/call` request: a new call, or the retry of one answered `input_required`, which
    goes on as the same call (its first request's place, id and start)."""
    msg = message.msg
    params = as_obj(doc, msg.get("params"), f"{message.line}: params")
    name = params.get("name")
    if not isinstance(name, str) or not name:
        doc.fail("tools/call without a tool name", f"{message.line}: params.name")
    retried = waiting.retried(name, params)
    if retried is not None:
        messages, first = retried
        return _Pending(
            "tools/call", params, first.call, messages, first.line, started=message.seconds
        )
    call = builder.call(
        upstream,
        name,
        parse_args(params.get("arguments")),
        call_id=_id_text(msg["id"]),
        started_at=message.ts,
        timing="exact" if message.ts else "none",
        provenance={"line": message.line},
    )
    return _Pending(
        "tools/call", params, call, CallMessages(params), message.line, started=message.seconds
    )


def _not_final(
    builder: TraceBuilder, answer: _Message, call: _Pending, waiting: AwaitingRetry[_Pending]
) -> None:
    """A `tools/call` answer that does not end the call: an `input_required` round waits for
    the retry; any other kind is kept in the log only, with a warning."""
    result = answer.msg["result"]
    params = call.params if isinstance(call.params, dict) else {}
    if result.get("resultType") == "input_required" and call.messages is not None:
        waiting.wait(params.get("name", ""), call.messages, result, call)
        return
    builder.warn(
        "call_result_not_final",
        f"{answer.line}: a tools/call answer with resultType {result.get('resultType')!r}, "
        "which does not end the call; the call keeps no result from it",
    )


def _answered_messages(
    builder: TraceBuilder, answer: _Message, messages: CallMessages
) -> list[dict[str, Any]] | None:
    """A call's server messages, less the requests the client never answered (replay could not
    compare a live answer with anything; a warning says so)."""
    kept = []
    for entry in messages.kept():
        if nested_deeper_than(entry, MAX_NESTING):
            builder.warn(
                "surface_too_deep",
                f"{answer.line}: the server's {entry['method']} sent while answering this call "
                f"nests deeper than {MAX_NESTING} levels, which MCP clients cannot read; left out",
            )
            continue
        kept.append(entry)
    for entry in messages.unanswered():
        builder.warn(
            "server_request_unanswered",
            f"{answer.line}: the call was answered before the client answered the server's "
            f"{entry['method']} request sent while answering it; that request is left out",
        )
    return kept or None


def _id_text(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def _notification(
    builder: TraceBuilder, message: _Message, pending: dict[_PendingKey, _Pending]
) -> None:
    if message.msg.get("method") != "notifications/cancelled":
        return
    params = message.msg.get("params")
    if not isinstance(params, dict) or "requestId" not in params:
        return
    key = message.request_key(params["requestId"])
    entry = pending.pop(key, None)
    if entry is not None and entry.call is not None:
        reason = opt_str(params.get("reason")) or "the client cancelled the request"
        builder.set_error(entry.call, "cancelled", reason)
        entry.call.ended_at = message.ts


def _response(
    doc: Document,
    builder: TraceBuilder,
    message: _Message,
    method: str,
    call: Call | None,
    upstream: str,
) -> None:
    msg = message.msg
    if "error" in msg:
        error = as_obj(doc, msg["error"], f"{message.line}: error")
        if call is not None:
            code = error.get("code")
            builder.set_error(
                call,
                "protocol_error",
                opt_str(error.get("message")) or "JSON-RPC error",
                code=code if isinstance(code, int) and not isinstance(code, bool) else None,
            )
            call.ended_at = message.ts
        return
    result = as_obj(doc, msg.get("result"), f"{message.line}: result")
    if method == "tools/list":
        tools = as_list(doc, result.get("tools"), f"{message.line}: result.tools")
        for i, tool in enumerate(tools):
            tool = as_obj(doc, tool, f"{message.line}: result.tools[{i}]")
            name = tool.get("name")
            if not isinstance(name, str) or not name:
                doc.fail("a tool without a name", f"{message.line}: result.tools[{i}].name")
            builder.declare_tool(
                upstream,
                name,
                input_schema=tool.get("inputSchema"),
                schema_source="tools/list",
                description=tool.get("description"),
                output_schema=tool.get("outputSchema"),
                annotations=tool.get("annotations"),
                listed=tool,
            )
        return
    if call is None:
        return
    call.ended_at = message.ts
    wire = wire_result(result)
    if wire is None:
        # Not a CallToolResult: keep what was sent, as text, and say so.
        text = msgspec.json.encode(result).decode()
        fallback, _ = text_result(text, view="wire")
        builder.set_result(call, fallback, flags=["result_unparseable"])
        return
    value, is_error = wire
    builder.set_result(call, value, is_error=is_error)
