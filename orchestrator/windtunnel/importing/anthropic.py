"""Adapter: Anthropic Messages transcripts into Contract A.

Input: the last request body (`{"system", "tools", "mcp_servers", "messages"}`), optionally with
the final response under `"response"`; a bare array of messages; or a request/response log (JSON
lines, or an array, of `{"request", "response"}`), read from its last exchange. Client tools
(`tool_use` in an assistant message, `tool_result` in the next user message) land on one upstream
named `default`, since the API does not say which server a client tool belongs to; MCP connector
calls (`mcp_tool_use` / `mcp_tool_result`) land on the upstream their `server_name` names. Results
are the model's view of the output.
"""

from __future__ import annotations

from typing import Any

from .builder import TraceBuilder
from .document import Document
from .envelope import Call, Identity
from .normalize import anthropic_content, parse_args
from .shape import as_list, as_obj, opt_str, read_transcript
from .sniffing import transcript_looks_like

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "anthropic-messages"
_TOOL_BLOCKS = ("tool_use", "tool_result", "mcp_tool_use", "mcp_tool_result")


def _is_response(value: Any) -> bool:
    return isinstance(value, dict) and value.get("type") == "message" and "content" in value


def _uses_tools(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") in _TOOL_BLOCKS for block in content
    )


def looks_like(doc: Document) -> bool:
    return transcript_looks_like(doc, is_response=_is_response, uses_tools=_uses_tools)


def text_of(content: Any) -> str | None:
    """The text of a message content: a string, or its `text` blocks joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [
            block["text"]
            for block in content
            if isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ]
        return "\n".join(texts) if texts else None
    return None


def read(doc: Document, builder: TraceBuilder) -> None:
    found = read_transcript(doc, is_response=_is_response)
    body, messages, response = found.body, found.messages, found.response
    if response is not None:
        builder.trace_id = opt_str(response.get("id"))
        messages.append((found.response_at, {"role": "assistant", **response}))
    builder.system = text_of(body.get("system"))
    default = _declare_tools(doc, builder, body, found.at)
    servers = _mcp_servers(doc, builder, body, found.at)
    pending: dict[str, Call] = {}
    for where, message in messages:
        role = message.get("role")
        content = message.get("content")
        if role == "user" and not builder.prompt:
            text = text_of(content)
            if text:
                builder.prompt = text
        if role == "assistant" and isinstance(content, str) and content:
            builder.final_answer = content
        if not isinstance(content, list):
            continue
        has_tool_use = False
        for j, block in enumerate(content):
            block_where = f"{where}.content[{j}]"
            if not isinstance(block, dict):
                doc.fail("expected a content block object", block_where)
            kind = block.get("type")
            if kind in ("tool_use", "mcp_tool_use"):
                has_tool_use = True
                _tool_use(doc, builder, block, block_where, default, servers, pending)
            elif kind in ("tool_result", "mcp_tool_result"):
                _tool_result(doc, builder, block, block_where, pending)
        if role == "assistant" and not has_tool_use:
            text = text_of(content)
            if text:
                builder.final_answer = text


def _declare_tools(
    doc: Document, builder: TraceBuilder, body: dict[str, Any], at: str
) -> str | None:
    tools = body.get("tools")
    if tools is None:
        return None
    declared = False
    upstream = builder.upstream("default", kind="function")
    for i, tool in enumerate(as_list(doc, tools, f"{at}.tools")):
        tool = as_obj(doc, tool, f"{at}.tools[{i}]")
        name = tool.get("name")
        # Server tools (web search, code execution, MCP toolsets) have a `type`; they are not ours.
        if not isinstance(name, str) or not name or tool.get("type") not in (None, "custom"):
            continue
        declared = True
        builder.declare_tool(
            upstream,
            name,
            input_schema=tool.get("input_schema"),
            schema_source="request_tools",
            description=tool.get("description"),
        )
    return upstream if declared else None


def _mcp_servers(
    doc: Document, builder: TraceBuilder, body: dict[str, Any], at: str
) -> dict[str, str]:
    servers: dict[str, str] = {}
    servers_at = f"{at}.mcp_servers"
    for i, server in enumerate(as_list(doc, body.get("mcp_servers", []), servers_at)):
        server = as_obj(doc, server, f"{servers_at}[{i}]")
        name = opt_str(server.get("name"))
        if name:
            identity = Identity(
                source="server_name", server_name=name, endpoint=opt_str(server.get("url"))
            )
            servers[name] = builder.upstream(name, identity=identity)
    return servers


def _tool_use(
    doc: Document,
    builder: TraceBuilder,
    block: dict[str, Any],
    where: str,
    default: str | None,
    servers: dict[str, str],
    pending: dict[str, Call],
) -> None:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        doc.fail("a tool call without a name", f"{where}.name")
    call_id = opt_str(block.get("id"))
    if block.get("type") == "mcp_tool_use":
        server = opt_str(block.get("server_name")) or "default"
        upstream = servers.get(server) or builder.upstream(
            server, identity=Identity(source="server_name", server_name=server)
        )
    else:
        upstream = default or builder.upstream("default", kind="function")
    call = builder.call(
        upstream, name, parse_args(block.get("input")), call_id=call_id, provenance={"at": where}
    )
    if call_id is not None:
        pending[call_id] = call


def claim_tool_result(
    doc: Document,
    builder: TraceBuilder,
    block: dict[str, Any],
    where: str,
    pending: dict[str, Call],
) -> tuple[Call, Any, Any] | None:
    """The pending call a `tool_result` block answers, with its converted content and flags;
    None (after a warning) for a result no call issued. Shared with Claude Code sessions."""
    call_id = opt_str(block.get("tool_use_id"))
    call = pending.pop(call_id, None) if call_id is not None else None
    if call is None:
        builder.warn(
            "orphan_result",
            f"{where}: a tool result for {call_id!r}, which no call issued; ignored",
        )
        return None
    converted = anthropic_content(block.get("content"))
    if converted is None:
        doc.fail("tool result content must be a string or an array of blocks", f"{where}.content")
    result, flags = converted
    return call, result, flags


def _tool_result(
    doc: Document,
    builder: TraceBuilder,
    block: dict[str, Any],
    where: str,
    pending: dict[str, Call],
) -> None:
    claimed = claim_tool_result(doc, builder, block, where, pending)
    if claimed is not None:
        call, result, flags = claimed
        builder.set_result(call, result, is_error=block.get("is_error") is True, flags=flags)
