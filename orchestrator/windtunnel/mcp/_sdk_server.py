"""The one place that builds the `mcp` SDK server (DESIGN §5); `_http` and `_stdio` serve it.

Everything above this package speaks `MCPCall`s and plain dicts; this module translates them to the
SDK's low-level `Server` and maps answers to `CallToolResult`s:

- a recorded MCP `CallToolResult` (see `is_tool_result`) is served as recorded;
- an object becomes `structuredContent` plus a text block with its JSON (sorted keys);
- a string becomes a text block; anything else becomes a text block with its JSON;
- an answer flagged as an error (`fail_call`, a failed hook, a raising mock tool) sets `isError`;
- a call to an undeclared tool is the JSON-RPC error -32602 naming the tool.
"""

from __future__ import annotations

import logging
from functools import partial
from typing import Any

import mcp_types as types
import pydantic
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND

from .. import trace_context
from ..calls import MCPCall, is_tool_result
from ..errors import ServerError
from ..replay import InputRequired
from ._protocol_era import NegotiateAsRecorded, served_versions
from ._request_spans import request_middleware
from ._sdk_internals import SERVER_TAKES_SCHEMA_LOOKUP, session_state
from ._server_messages import exchange_messages
from ._shapes import (
    Answer,
    Exchange,
    ExchangingAnswer,
    Request,
    ServedSurface,
    SessionState,
    SyncAnswer,
    ToolSpec,
    tool_text,
)
from ._surface_server import identity_kwargs, install_surface

__all__ = [
    "Answer",
    "Exchange",
    "ExchangingAnswer",
    "SessionState",
    "SyncAnswer",
    "ToolSpec",
    "answer_call",
    "answer_call_now",
    "build_sdk_server",
    "call_failed",
    "checked_call",
    "to_call_tool_result",
]

# The SDK logs client mistakes (bad Host headers, malformed bodies) and handler tracebacks through
# stdlib logging; the CLI decides where they go.
logging.getLogger("mcp").addHandler(logging.NullHandler())


def to_call_tool_result(call: MCPCall) -> types.CallToolResult:
    """Map an answered call to the `CallToolResult` the agent receives."""
    result = call.result
    if is_tool_result(result):
        try:
            return types.CallToolResult.model_validate(result)
        except pydantic.ValidationError:
            pass  # blocks the SDK cannot represent: fall back to their JSON as text
    wire: dict[str, Any] = {"content": [tool_text(result)]}
    if isinstance(result, dict):
        wire["structuredContent"] = result
    if call.is_error:
        wire["isError"] = True
    return types.CallToolResult.model_validate(wire)


async def answer_call(answer: Answer, name: str, args: dict[str, Any]) -> MCPCall:
    """The `tools/call` handler's answer to one call, before result mapping (the fast paths
    share it). Raises `MCPError`: -32602 for a tool the server does not declare, -32603 when
    answering failed (never a traceback on the wire, and one tool cannot break the server)."""
    try:
        call = await answer(name, args)
    except (MCPError, InputRequired):
        raise
    except Exception as exc:
        raise call_failed(name, exc) from exc
    return checked_call(call, name)


def answer_call_now(answer: SyncAnswer, name: str, args: dict[str, Any]) -> MCPCall:
    """`answer_call` for a `SyncAnswer`: the same answers and errors, without Trio."""
    try:
        call = answer.answer(name, args)
    except MCPError:
        raise
    except Exception as exc:
        raise call_failed(name, exc) from exc
    return checked_call(call, name)


def call_failed(name: str, exc: Exception) -> MCPError:
    """The error for a call whose answer raised `exc` (call it where `exc` is handled: it logs
    the traceback)."""
    logging.getLogger("windtunnel").exception("tool call failed")
    return MCPError(code=INTERNAL_ERROR, message=f"tool {name!r} failed: {exc}")


def checked_call(call: MCPCall, name: str) -> MCPCall:
    """`call`, unless it names a tool the server does not declare: then the SDK's error."""
    divergence = call.divergence
    if divergence is not None and divergence.get("reason") == "unknown_tool":
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
    return call


def build_sdk_server(
    name: str,
    version: str,
    tools: list[ToolSpec],
    answer: Answer,
    surface: ServedSurface | None = None,
    request: Request | None = None,
    exchanging: ExchangingAnswer | None = None,
) -> Server[Any]:
    """A low-level SDK server whose only sources of answers are `answer` (tool calls) and
    `request` (the other requests `surface` names: see `_surface_server`). With `exchanging`,
    tool calls are answered by it instead of `answer`, with a way to exchange a recording's
    server messages with the live client on the request's session (`_server_messages`) and the
    state of the MCP session the call belongs to."""
    try:
        listed = types.ListToolsResult(tools=[types.Tool.model_validate(t.listed()) for t in tools])
    except pydantic.ValidationError as exc:
        raise ServerError(f"a tool is not a valid MCP Tool: {exc}") from None
    schemas = {t.name: t.input_schema for t in tools}

    async def on_list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listed

    async def on_call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        try:
            return await answer_tool_call(ctx, params)
        except InputRequired as asked:  # 2026-07-28: the client is asked first (_input_rounds)
            return types.InputRequiredResult.model_validate(asked.result, by_name=False)

    async def answer_tool_call(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        answering = answer
        if exchanging is not None:
            exchange = partial(exchange_messages, ctx)
            # Only a Streamable HTTP session's connection outlives its request: stateless HTTP
            # makes one per request, and stdio's one connection is the server's own state.
            session = session_state(ctx)
            answering = partial(_exchanging_answer, exchanging, exchange, session)
        if trace_context.capturing:
            with trace_context.carried_by(params.meta, trace_context.header_of(ctx.request)):
                call = await answer_call(answering, params.name, dict(params.arguments or {}))
                trace_context.note(call)
        else:
            call = await answer_call(answering, params.name, dict(params.arguments or {}))
        return to_call_tool_result(call)

    lookup: dict[str, Any] = (
        {"get_tool_input_schema": schemas.get} if SERVER_TAKES_SCHEMA_LOOKUP else {}
    )
    identity: dict[str, Any] = {"name": name, "version": version}
    if surface is not None:
        identity.update(identity_kwargs(surface.server))
    server: Server[Any] = Server(
        **identity, on_list_tools=on_list_tools, on_call_tool=on_call_tool, **lookup
    )
    # The default middleware is OpenTelemetry's; replay servers export their own spans, only
    # while an export is open (`_request_spans`, for the requests that leave no call record).
    server.middleware = request_middleware(name)
    if surface is not None:
        install_surface(server, surface, request or _no_requests)
        versions = served_versions(surface.protocol_version)
        if versions is not None:
            server.middleware.append(NegotiateAsRecorded(versions))
    return server


async def _exchanging_answer(
    exchanging: ExchangingAnswer,
    exchange: Exchange,
    session: SessionState | None,
    name: str,
    args: dict[str, Any],
) -> MCPCall:
    return await exchanging(name, args, exchange, session)


async def _no_requests(method: str, target: str, args: dict[str, Any]) -> MCPCall:
    raise MCPError(code=METHOD_NOT_FOUND, message="Method not found", data=method)
