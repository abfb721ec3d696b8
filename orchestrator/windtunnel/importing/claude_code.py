"""Adapter: Claude Code session transcripts (`~/.claude/projects/.../<session>.jsonl`).

The format is internal to Claude Code and undocumented; this reads the shape observed in
versions 2.x. Each line is an event with `type`, `sessionId`, `timestamp` and an Anthropic
`message`. MCP tools are named `mcp__<server>__<tool>` and land on upstream `<server>`; built-in
tools (`Bash`, `Read`, ...) land on the pseudo-upstream `claude-code` of kind `builtin`, which is
kept in the envelope but never served. Line timestamps make call times approximate. Results are
the model's view (Claude Code caps and may replace large outputs).
"""

from __future__ import annotations

from typing import Any

from .anthropic import claim_tool_result, text_of
from .builder import TraceBuilder
from .document import Document
from .envelope import Call, Identity
from .normalize import iso_from_text, parse_args
from .shape import as_obj, opt_str

__all__ = ["FORMAT", "looks_like", "read", "split_tool_name"]

FORMAT = "claude-code-jsonl"
BUILTIN_UPSTREAM = "claude-code"
_EVENTS = ("user", "assistant")
_SKIP_PROMPTS = ("<command-", "<local-command", "This session is being continued")
# Texts Claude Code itself writes into a tool result (not the server's answer).
_DENIED = "The user doesn't want to proceed with this tool use"
_INTERRUPTED = "[Request interrupted by user"


def looks_like(doc: Document) -> bool:
    if not doc.jsonl:
        return False
    return any(
        isinstance(value, dict) and "sessionId" in value and value.get("type") in _EVENTS
        for _, value in doc.records[:20]
    )


def split_tool_name(name: str) -> tuple[str, str] | None:
    """`mcp__<server>__<tool>` → `(server, tool)`; None for a built-in tool."""
    if not name.startswith("mcp__"):
        return None
    server, sep, tool = name[len("mcp__") :].partition("__")
    if not sep or not server or not tool:
        return None
    return server, tool


def read(doc: Document, builder: TraceBuilder) -> None:
    pending: dict[str, Call] = {}
    if not any(isinstance(v, dict) and v.get("type") in _EVENTS for _, v in doc.records):
        doc.fail('no "user" or "assistant" lines: not a Claude Code session transcript')
    for line, value in doc.records:
        where = f"line {line}"
        event = as_obj(doc, value, where)
        if builder.trace_id is None:
            builder.trace_id = opt_str(event.get("sessionId"))
        if event.get("type") not in ("user", "assistant"):
            continue
        message = as_obj(doc, event.get("message"), f"{where}: message")
        at = iso_from_text(event["timestamp"]) if isinstance(event.get("timestamp"), str) else None
        if at is not None:
            builder.started_at = builder.started_at or at
            builder.ended_at = at
        main_chain = event.get("isSidechain") is not True
        content = message.get("content")
        if event["type"] == "user":
            if main_chain and not builder.prompt and event.get("isMeta") is not True:
                text = content if isinstance(content, str) else None
                if text and not text.startswith(_SKIP_PROMPTS):
                    builder.prompt = text
            if isinstance(content, list):
                for j, block in enumerate(content):
                    if isinstance(block, dict) and block.get("type") == "tool_result":
                        _tool_result(doc, builder, block, f"{where}: content[{j}]", at, pending)
            continue
        if not isinstance(content, list):
            continue
        for j, block in enumerate(content):
            if not isinstance(block, dict):
                doc.fail("expected a content block object", f"{where}: content[{j}]")
            if block.get("type") == "tool_use":
                _tool_use(doc, builder, block, f"{where}: content[{j}]", at, main_chain, pending)
            elif block.get("type") == "text" and main_chain:
                text = text_of([block])
                if text:
                    builder.final_answer = text


def _tool_use(
    doc: Document,
    builder: TraceBuilder,
    block: dict[str, Any],
    where: str,
    at: str | None,
    main_chain: bool,
    pending: dict[str, Call],
) -> None:
    name = block.get("name")
    if not isinstance(name, str) or not name:
        doc.fail("a tool call without a name", f"{where}.name")
    split = split_tool_name(name)
    if split is None:
        upstream = builder.upstream(
            BUILTIN_UPSTREAM, kind="builtin", identity=Identity(source="tool_prefix")
        )
        tool = name
    else:
        server, tool = split
        upstream = builder.upstream(
            server, identity=Identity(source="tool_prefix", server_name=server)
        )
    provenance: dict[str, Any] = {"at": where}
    if not main_chain:
        provenance["sidechain"] = True
    call_id = opt_str(block.get("id"))
    call = builder.call(
        upstream,
        tool,
        parse_args(block.get("input")),
        call_id=call_id,
        started_at=at,
        timing="approx" if at else "none",
        provenance=provenance,
        source_name=name,
    )
    if call_id is not None:
        pending[call_id] = call


def _tool_result(
    doc: Document,
    builder: TraceBuilder,
    block: dict[str, Any],
    where: str,
    at: str | None,
    pending: dict[str, Call],
) -> None:
    claimed = claim_tool_result(doc, builder, block, where, pending)
    if claimed is None:
        return
    call, result, flags = claimed
    call.ended_at = at
    is_error = block.get("is_error") is True
    text = text_of(result.content) or ""
    if is_error and text.startswith(_DENIED):
        builder.set_error(call, "denied", text)
    elif is_error and text.startswith(_INTERRUPTED):
        builder.set_error(call, "cancelled", text)
    else:
        builder.set_result(call, result, is_error=is_error, flags=flags)
