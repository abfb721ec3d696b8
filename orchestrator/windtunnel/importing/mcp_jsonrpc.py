"""Adapter: raw MCP JSON-RPC logs (JSON lines, or one JSON array) into Contract A.

Each record is a JSON-RPC message, or a capture wrapper `{"ts", "conn", "dir", "msg"}` as a
proxy writes it (`conn` names the upstream, `ts` is an ISO 8601 time or Unix seconds). Requests and
responses pair by (connection, direction, id). This is the wire view: the best source for
fixtures. It holds no task and no final answer; pass `--task`.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .builder import TraceBuilder
from .document import Document
from .envelope import Call, Identity
from .normalize import iso_from_seconds, iso_from_text, parse_args, text_result, wire_result
from .shape import as_list, as_obj, opt_str
from .sniffing import first_record

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "mcp-jsonrpc"
_SERVER_INFO_META = "io.modelcontextprotocol/serverInfo"


class _Message(msgspec.Struct):
    line: str
    conn: str | None
    ts: str | None
    msg: dict[str, Any]
    sender: str | None = None  # "c2s" / "s2c" when the capture says

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
            messages.append(
                _Message(where, conn or None, _timestamp(record.get("ts")), msg, sender)
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
        info = meta.get(_SERVER_INFO_META)
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
    # Only requests a client sends are paired; the server's own requests have their own ids.
    pending: dict[tuple[str | None, str | None, bytes], tuple[str, Call | None]] = {}
    for message in messages:
        msg = message.msg
        upstream = upstream_of[message.conn]
        method = msg.get("method")
        if isinstance(method, str):
            if "id" not in msg:
                _notification(builder, message, pending)
                continue
            key = message.request_key(msg["id"])
            call: Call | None = None
            if method == "tools/call":
                params = as_obj(doc, msg.get("params"), f"{message.line}: params")
                name = params.get("name")
                if not isinstance(name, str) or not name:
                    doc.fail("tools/call without a tool name", f"{message.line}: params.name")
                call = builder.call(
                    upstream,
                    name,
                    parse_args(params.get("arguments")),
                    call_id=_id_text(msg["id"]),
                    started_at=message.ts,
                    timing="exact" if message.ts else "none",
                    provenance={"line": message.line},
                )
            pending[key] = (method, call)
            continue
        if "id" not in msg:
            doc.fail("a JSON-RPC message with neither method nor id", message.line)
        key = message.response_key(msg["id"])
        if key not in pending:
            builder.warn(
                "orphan_response",
                f"{message.line}: a response to request id {_id_text(msg['id'])} that the log "
                "does not contain; ignored",
            )
            continue
        method, call = pending.pop(key)
        _response(doc, builder, message, method, call, upstream)


def _id_text(value: Any) -> str:
    return value if isinstance(value, str) else msgspec.json.encode(value).decode()


def _notification(
    builder: TraceBuilder,
    message: _Message,
    pending: dict[tuple[str | None, str | None, bytes], tuple[str, Call | None]],
) -> None:
    if message.msg.get("method") != "notifications/cancelled":
        return
    params = message.msg.get("params")
    if not isinstance(params, dict) or "requestId" not in params:
        return
    key = message.request_key(params["requestId"])
    entry = pending.pop(key, None)
    if entry is not None and entry[1] is not None:
        reason = opt_str(params.get("reason")) or "the client cancelled the request"
        builder.set_error(entry[1], "cancelled", reason)
        entry[1].ended_at = message.ts


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
