"""Adapter: OpenAI Responses API logs into Contract A.

Input: an exchange log, an array (or JSON lines) of `{"request": ..., "response": ...}` pairs, or
one response object. Hosted MCP calls (`mcp_call`) are self-contained and land on the upstream
their `server_label` names, with schemas from `mcp_list_tools`; function calls (`function_call`)
pair with the next request's `function_call_output` by `call_id` and land on `default`. Items a
client re-sends in later requests are counted once. Results are the model's view (`mcp_call.output`
is flattened text).
"""

from __future__ import annotations

from typing import Any

from .builder import TraceBuilder
from .document import Document
from .envelope import Call, CallResult, Identity, Outcome
from .normalize import parse_args, text_block, text_result
from .shape import as_list, as_obj, opt_str
from .sniffing import first_record

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "openai-responses"
_ITEMS = ("function_call", "function_call_output", "mcp_call", "mcp_list_tools", "message")


def _is_response(value: Any) -> bool:
    return isinstance(value, dict) and (
        value.get("object") == "response"
        or (
            isinstance(value.get("output"), list)
            and any(isinstance(i, dict) and i.get("type") in _ITEMS for i in value["output"])
        )
    )


def _is_exchange(value: Any) -> bool:
    return isinstance(value, dict) and "request" in value and _is_response(value.get("response"))


def looks_like(doc: Document) -> bool:
    first = first_record(doc)
    return _is_exchange(first) or _is_response(first)


def _exchanges(doc: Document) -> list[tuple[str, dict[str, Any], str, dict[str, Any]]]:
    """`(request path, request, response path, response)` for each exchange."""
    if doc.jsonl:
        entries = [(f"line {line}", value) for line, value in doc.records]
    elif isinstance(doc.single, list):
        entries = [(f"$[{i}]", value) for i, value in enumerate(doc.single)]
    else:
        entries = [("$", doc.single)]
    exchanges = []
    for where, value in entries:
        record = as_obj(doc, value, where)
        if "request" in record or "response" in record:
            request = as_obj(doc, record.get("request", {}), f"{where}.request")
            response = as_obj(doc, record.get("response"), f"{where}.response")
            exchanges.append((f"{where}.request", request, f"{where}.response", response))
        else:
            exchanges.append((f"{where}.request", {}, where, record))
    return exchanges


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
        return "\n".join(parts) if parts else None
    return None


class _State:
    def __init__(self, doc: Document, builder: TraceBuilder) -> None:
        self.doc = doc
        self.builder = builder
        self.pending: dict[str, Call] = {}
        self.seen: set[str] = set()
        self.approvals: dict[str, dict[str, Any]] = {}

    def once(self, key: str | None) -> bool:
        """False for an item already counted (clients re-send history in later requests)."""
        if key is None:
            return True
        if key in self.seen:
            return False
        self.seen.add(key)
        return True


def read(doc: Document, builder: TraceBuilder) -> None:
    state = _State(doc, builder)
    for where, request, response_where, response in _exchanges(doc):
        if builder.system is None:
            builder.system = opt_str(request.get("instructions"))
        _request_tools(state, request, where)
        request_input = request.get("input")
        if isinstance(request_input, str):
            builder.prompt = builder.prompt or request_input
        elif request_input is not None:
            for i, item in enumerate(as_list(doc, request_input, f"{where}.input")):
                _item(
                    state,
                    as_obj(doc, item, f"{where}.input[{i}]"),
                    f"{where}.input[{i}]",
                )
        builder.trace_id = opt_str(response.get("id")) or builder.trace_id
        output = as_list(doc, response.get("output"), f"{response_where}.output")
        for i, item in enumerate(output):
            _item(
                state,
                as_obj(doc, item, f"{response_where}.output[{i}]"),
                f"{response_where}.output[{i}]",
            )


def _request_tools(state: _State, request: dict[str, Any], where: str) -> None:
    tools = as_list(state.doc, request.get("tools", []), f"{where}.tools")
    for i, tool in enumerate(tools):
        tool = as_obj(state.doc, tool, f"{where}.tools[{i}]")
        if tool.get("type") == "mcp" and isinstance(tool.get("server_label"), str):
            _mcp_upstream(state, tool["server_label"], opt_str(tool.get("server_url")))
        elif tool.get("type") == "function" and isinstance(tool.get("name"), str):
            upstream = state.builder.upstream("default", kind="function")
            state.builder.declare_tool(
                upstream,
                tool["name"],
                input_schema=tool.get("parameters"),
                schema_source="request_tools",
                description=tool.get("description"),
            )


def _mcp_upstream(state: _State, label: str, url: str | None = None) -> str:
    identity = Identity(source="server_label", server_name=label, endpoint=url)
    return state.builder.upstream(label, kind="mcp", identity=identity)


def _item(state: _State, item: dict[str, Any], where: str) -> None:
    builder = state.builder
    kind = item.get("type")
    if kind == "message" or (kind is None and "role" in item):
        text = _text(item.get("content"))
        if item.get("role") == "user" and text and not builder.prompt:
            builder.prompt = text
        elif item.get("role") == "assistant" and text and state.once(opt_str(item.get("id"))):
            builder.final_answer = text
    elif kind == "mcp_list_tools" and state.once(opt_str(item.get("id"))):
        label = opt_str(item.get("server_label")) or "default"
        upstream = _mcp_upstream(state, label)
        for i, tool in enumerate(as_list(state.doc, item.get("tools"), f"{where}.tools")):
            tool = as_obj(state.doc, tool, f"{where}.tools[{i}]")
            if isinstance(tool.get("name"), str) and tool["name"]:
                builder.declare_tool(
                    upstream,
                    tool["name"],
                    input_schema=tool.get("input_schema"),
                    schema_source="mcp_list_tools",
                    description=tool.get("description"),
                    annotations=tool.get("annotations"),
                )
    elif kind == "mcp_call" and state.once(opt_str(item.get("id"))):
        _mcp_call(state, item, where)
    elif kind == "mcp_approval_request":
        state.approvals[opt_str(item.get("id")) or ""] = item
    elif kind == "mcp_approval_response" and item.get("approve") is False:
        request = state.approvals.get(opt_str(item.get("approval_request_id")) or "")
        if request is not None and state.once(f"denied:{item.get('approval_request_id')}"):
            name = _name(state, request, where)
            upstream = _mcp_upstream(state, opt_str(request.get("server_label")) or "default")
            call = builder.call(
                upstream, name, parse_args(request.get("arguments")), provenance={"at": where}
            )
            builder.set_error(call, "denied", opt_str(item.get("reason")) or "approval refused")
    elif kind == "function_call" and state.once(f"call:{item.get('call_id')}"):
        name = _name(state, item, where)
        upstream = state.builder.upstream("default", kind="function")
        call_id = opt_str(item.get("call_id"))
        call = builder.call(
            upstream,
            name,
            parse_args(item.get("arguments")),
            call_id=call_id,
            provenance={"at": where},
        )
        if call_id is not None:
            state.pending[call_id] = call
    elif kind == "function_call_output" and state.once(f"output:{item.get('call_id')}"):
        call_id = opt_str(item.get("call_id"))
        answered = state.pending.pop(call_id, None) if call_id is not None else None
        if answered is None:
            builder.warn(
                "orphan_result",
                f"{where}: an output for {call_id!r}, which no call issued; ignored",
            )
            return
        text = _text(item.get("output"))
        if text is None:
            state.doc.fail("function_call_output.output must be text", f"{where}.output")
        result, flags = text_result(text)
        builder.set_result(answered, result, flags=flags)


def _name(state: _State, item: dict[str, Any], where: str) -> str:
    name = item.get("name")
    if not isinstance(name, str) or not name:
        state.doc.fail("a tool call without a name", f"{where}.name")
    return name


def _mcp_call(state: _State, item: dict[str, Any], where: str) -> None:
    builder = state.builder
    name = _name(state, item, where)
    upstream = _mcp_upstream(state, opt_str(item.get("server_label")) or "default")
    call = builder.call(
        upstream,
        name,
        parse_args(item.get("arguments")),
        call_id=opt_str(item.get("id")),
        provenance={"at": where},
    )
    error = item.get("error")
    if isinstance(error, str) and error:
        result = CallResult(content=[text_block(error)], view="model")
        builder.set_result(call, result, is_error=True, flags=["result_from_error_text"])
    elif isinstance(error, dict):
        kind = error.get("type")
        message = opt_str(error.get("message")) or opt_str(error.get("content")) or "error"
        if kind == "mcp_tool_execution_error":
            content = error.get("content")
            text = _text(content) or message
            result = CallResult(content=[text_block(text)], view="model")
            builder.set_result(call, result, is_error=True, flags=["result_from_error_text"])
        else:
            outcome: Outcome = "transport_error" if kind == "http_error" else "protocol_error"
            code = error.get("code")
            builder.set_error(
                call,
                outcome,
                message,
                code=code if isinstance(code, int | str) and not isinstance(code, bool) else None,
            )
    elif isinstance(item.get("output"), str):
        result, flags = text_result(item["output"])
        builder.set_result(call, result, flags=flags)
