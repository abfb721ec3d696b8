"""The "everything" server the MCP conformance suite's server scenarios expect, on the `mcp` SDK.

`@modelcontextprotocol/conformance` (tests/node) checks a server by fixed names: tools
`test_simple_text` ... `test_reconnection` and `json_schema_2020_12_tool`, resources
`test://static-text`, `test://static-binary`, `test://watched-resource`, the template
`test://template/{id}/data`, prompts `test_simple_prompt` ... `test_prompt_with_image`, plus
completions, `logging/setLevel` and resource subscriptions. Each answer here is the one the suite's
scenario description (its `dist/index.js`) asks for. Built on the SDK's low-level `Server`, so every
tool's schema is exactly as written.

    python tests/conformance/reference_server.py http   # prints its URL on stdout, serves until killed
    python tests/conformance/reference_server.py stdio  # speaks stdio
"""

from __future__ import annotations

import base64
import itertools
import json
import sys
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

TEST_IMAGE = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="
"""A 1x1 PNG (base64)."""
TEST_AUDIO = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA="
"""An empty WAV file (base64)."""

INSTRUCTIONS = "A reference server for the MCP conformance suite: every tool is named test_*."

_NO_ARGS: dict[str, Any] = {"type": "object", "properties": {}}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "test_simple_text",
        "title": "Simple text",
        "description": "Answers one text block.",
        "inputSchema": _NO_ARGS,
        "annotations": {"readOnlyHint": True, "idempotentHint": True},
    },
    {"name": "test_image_content", "description": "Answers a PNG.", "inputSchema": _NO_ARGS},
    {"name": "test_audio_content", "description": "Answers a WAV.", "inputSchema": _NO_ARGS},
    {
        "name": "test_embedded_resource",
        "description": "Answers an embedded resource.",
        "inputSchema": _NO_ARGS,
    },
    {
        "name": "test_multiple_content_types",
        "description": "Answers text, an image and a resource.",
        "inputSchema": _NO_ARGS,
    },
    {
        "name": "test_tool_with_logging",
        "description": "Sends three log messages while it works.",
        "inputSchema": _NO_ARGS,
    },
    {
        "name": "test_error_handling",
        "description": "Always fails.",
        "inputSchema": _NO_ARGS,
        "annotations": {"destructiveHint": False},
    },
    {
        "name": "test_tool_with_progress",
        "description": "Reports progress 0, 50 and 100 of 100.",
        "inputSchema": _NO_ARGS,
        "outputSchema": {
            "type": "object",
            "properties": {"steps": {"type": "integer"}},
            "required": ["steps"],
        },
    },
    {
        "name": "test_sampling",
        "description": "Asks the client's model.",
        "inputSchema": {
            "type": "object",
            "properties": {"prompt": {"type": "string"}},
            "required": ["prompt"],
        },
    },
    {
        "name": "test_elicitation",
        "description": "Asks the user.",
        "inputSchema": {
            "type": "object",
            "properties": {"message": {"type": "string"}},
            "required": ["message"],
        },
    },
    {
        "name": "test_elicitation_sep1034_defaults",
        "description": "Asks the user, with a default for every primitive type.",
        "inputSchema": _NO_ARGS,
    },
    {
        "name": "test_elicitation_sep1330_enums",
        "description": "Asks the user, with every kind of enum.",
        "inputSchema": _NO_ARGS,
    },
    {
        "name": "test_reconnection",
        "description": "Closes its event stream mid-call (SSE polling).",
        "inputSchema": _NO_ARGS,
    },
    {
        "name": "json_schema_2020_12_tool",
        "description": "Tool with JSON Schema 2020-12 features",
        "inputSchema": {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {
                "address": {
                    "type": "object",
                    "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
                }
            },
            "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
            "additionalProperties": False,
        },
    },
]

RESOURCES: list[dict[str, Any]] = [
    {
        "uri": "test://static-text",
        "name": "static-text",
        "description": "A static text resource.",
        "mimeType": "text/plain",
    },
    {
        "uri": "test://static-binary",
        "name": "static-binary",
        "description": "A static PNG.",
        "mimeType": "image/png",
    },
    {
        "uri": "test://watched-resource",
        "name": "watched-resource",
        "description": "A resource to subscribe to.",
        "mimeType": "text/plain",
    },
]

TEMPLATES: list[dict[str, Any]] = [
    {
        "uriTemplate": "test://template/{id}/data",
        "name": "template-data",
        "description": "Data for one id.",
        "mimeType": "application/json",
    }
]

PROMPTS: list[dict[str, Any]] = [
    {"name": "test_simple_prompt", "description": "A prompt without arguments."},
    {
        "name": "test_prompt_with_arguments",
        "description": "A prompt with two required arguments.",
        "arguments": [
            {"name": "arg1", "description": "First test argument", "required": True},
            {"name": "arg2", "description": "Second test argument", "required": True},
        ],
    },
    {
        "name": "test_prompt_with_embedded_resource",
        "description": "A prompt that embeds a resource.",
        "arguments": [{"name": "resourceUri", "description": "The resource", "required": True}],
    },
    {"name": "test_prompt_with_image", "description": "A prompt with an image."},
]

_ELICIT_USER = {
    "type": "object",
    "properties": {
        "username": {"type": "string", "description": "User's response"},
        "email": {"type": "string", "description": "User's email address"},
    },
    "required": ["username", "email"],
}
_ELICIT_DEFAULTS = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {
            "type": "string",
            "enum": ["active", "inactive", "pending"],
            "default": "active",
        },
        "verified": {"type": "boolean", "default": True},
    },
}
_ELICIT_ENUMS = {
    "type": "object",
    "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {
            "type": "string",
            "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"},
            ],
        },
        "legacyEnum": {
            "type": "string",
            "enum": ["opt1", "opt2", "opt3"],
            "enumNames": ["Option One", "Option Two", "Option Three"],
        },
        "untitledMulti": {
            "type": "array",
            "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
        },
        "titledMulti": {
            "type": "array",
            "items": {
                "anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"},
                ]
            },
        },
    },
}


def _text(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _result(content: list[dict[str, Any]], **extra: Any) -> types.CallToolResult:
    return types.CallToolResult.model_validate({"content": content, **extra})


async def _call_tool(
    ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
) -> types.CallToolResult:
    name, args = params.name, params.arguments or {}
    session, request_id = ctx.session, ctx.request_id
    if name == "test_simple_text":
        return _result([_text("This is a simple text response for testing.")])
    if name == "test_image_content":
        return _result([{"type": "image", "data": TEST_IMAGE, "mimeType": "image/png"}])
    if name == "test_audio_content":
        return _result([{"type": "audio", "data": TEST_AUDIO, "mimeType": "audio/wav"}])
    if name == "test_embedded_resource":
        resource = {
            "uri": "test://embedded-resource",
            "mimeType": "text/plain",
            "text": "This is an embedded resource content.",
        }
        return _result([{"type": "resource", "resource": resource}])
    if name == "test_multiple_content_types":
        resource = {
            "uri": "test://mixed-content-resource",
            "mimeType": "application/json",
            "text": '{"test":"data","value":123}',
        }
        return _result(
            [
                _text("Multiple content types test:"),
                {"type": "image", "data": TEST_IMAGE, "mimeType": "image/png"},
                {"type": "resource", "resource": resource},
            ]
        )
    if name == "test_tool_with_logging":
        for step, message in enumerate(
            ["Tool execution started", "Tool processing data", "Tool execution completed"]
        ):
            if step:
                await anyio.sleep(0.05)
            await session.send_log_message("info", message, related_request_id=request_id)
        return _result([_text("Tool with logging executed successfully")])
    if name == "test_error_handling":
        return _result(
            [_text("This tool intentionally returns an error for testing")], isError=True
        )
    if name == "test_tool_with_progress":
        token = ctx.meta.get("progress_token") if ctx.meta is not None else None
        for progress in (0, 50, 100):
            if progress:
                await anyio.sleep(0.05)
            if token is not None:
                await session.send_progress_notification(
                    token,
                    progress,
                    100,
                    related_request_id=request_id,  # type: ignore[arg-type]
                )
        return _result([_text("Progress reported: 3 steps")], structuredContent={"steps": 3})
    if name == "test_sampling":
        sampled = await session.create_message(
            [
                types.SamplingMessage(
                    role="user", content=types.TextContent(type="text", text=str(args["prompt"]))
                )
            ],
            max_tokens=100,
            related_request_id=request_id,
        )
        content = sampled.content
        text = content.text if isinstance(content, types.TextContent) else "No response"
        return _result([_text(f"LLM response: {text}")])
    if name in (
        "test_elicitation",
        "test_elicitation_sep1034_defaults",
        "test_elicitation_sep1330_enums",
    ):
        message, schema, label = {
            "test_elicitation": (str(args.get("message", "")), _ELICIT_USER, "User response"),
            "test_elicitation_sep1034_defaults": (
                "Please provide user information",
                _ELICIT_DEFAULTS,
                "Elicitation completed",
            ),
            "test_elicitation_sep1330_enums": (
                "Please select values using different enum schema types",
                _ELICIT_ENUMS,
                "Elicitation completed",
            ),
        }[name]
        answer = await session.elicit_form(
            message,
            schema,
            related_request_id=request_id,
        )
        content_json = json.dumps(answer.content or {}, separators=(",", ":"))
        return _result([_text(f"{label}: action={answer.action}, content={content_json}")])
    if name == "test_reconnection":
        await session.send_log_message("info", "Before disconnect", related_request_id=request_id)
        if ctx.close_sse_stream is not None:
            await ctx.close_sse_stream()
        await anyio.sleep(0.2)
        await session.send_log_message("info", "After reconnect", related_request_id=request_id)
        return _result([_text("Reconnection test completed")])
    if name == "json_schema_2020_12_tool":
        return _result([_text(f"Received: {json.dumps(args, sort_keys=True)}")])
    return _result([_text(f"Unknown tool: {name}")], isError=True)


async def _list_tools(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListToolsResult:
    return types.ListToolsResult.model_validate({"tools": TOOLS})


async def _list_resources(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourcesResult:
    return types.ListResourcesResult.model_validate({"resources": RESOURCES})


async def _list_templates(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult.model_validate({"resourceTemplates": TEMPLATES})


def _contents(uri: str) -> dict[str, Any] | None:
    if uri == "test://static-text":
        return {
            "uri": uri,
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource.",
        }
    if uri == "test://static-binary":
        return {"uri": uri, "mimeType": "image/png", "blob": TEST_IMAGE}
    if uri == "test://watched-resource":
        return {"uri": uri, "mimeType": "text/plain", "text": "Watched resource content"}
    parts = uri.split("/")
    if uri.startswith("test://template/") and len(parts) == 5 and parts[4] == "data":
        item = parts[3]
        data = {"id": item, "templateTest": True, "data": f"Data for ID: {item}"}
        return {
            "uri": uri,
            "mimeType": "application/json",
            "text": json.dumps(data, separators=(",", ":")),
        }
    return None


async def _read_resource(
    ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
) -> types.ReadResourceResult:
    contents = _contents(str(params.uri))
    if contents is None:
        from mcp.shared.exceptions import MCPError

        raise MCPError(code=-32002, message=f"Resource not found: {params.uri}")
    return types.ReadResourceResult.model_validate({"contents": [contents]})


async def _subscribe(
    ctx: ServerRequestContext[Any], params: types.SubscribeRequestParams
) -> types.EmptyResult:
    return types.EmptyResult()


async def _unsubscribe(
    ctx: ServerRequestContext[Any], params: types.UnsubscribeRequestParams
) -> types.EmptyResult:
    return types.EmptyResult()


async def _list_prompts(
    ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
) -> types.ListPromptsResult:
    return types.ListPromptsResult.model_validate({"prompts": PROMPTS})


async def _get_prompt(
    ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
) -> types.GetPromptResult:
    args = params.arguments or {}
    messages: list[dict[str, Any]]
    if params.name == "test_simple_prompt":
        messages = [{"role": "user", "content": _text("This is a simple prompt for testing.")}]
    elif params.name == "test_prompt_with_arguments":
        text = f"Prompt with arguments: arg1='{args.get('arg1')}', arg2='{args.get('arg2')}'"
        messages = [{"role": "user", "content": _text(text)}]
    elif params.name == "test_prompt_with_embedded_resource":
        resource = {
            "uri": args.get("resourceUri", ""),
            "mimeType": "text/plain",
            "text": "Embedded resource content for testing.",
        }
        messages = [
            {"role": "user", "content": {"type": "resource", "resource": resource}},
            {"role": "user", "content": _text("Please process the embedded resource above.")},
        ]
    elif params.name == "test_prompt_with_image":
        messages = [
            {
                "role": "user",
                "content": {"type": "image", "data": TEST_IMAGE, "mimeType": "image/png"},
            },
            {"role": "user", "content": _text("Please analyze the image above.")},
        ]
    else:
        from mcp.shared.exceptions import MCPError

        raise MCPError(code=-32602, message=f"Unknown prompt: {params.name}")
    return types.GetPromptResult.model_validate({"messages": messages})


async def _complete(
    ctx: ServerRequestContext[Any], params: types.CompleteRequestParams
) -> types.CompleteResult:
    words = ["paris", "park", "party", "test", "testing"]
    values = [word for word in words if word.startswith(params.argument.value)]
    return types.CompleteResult.model_validate(
        {"completion": {"values": values, "total": len(values), "hasMore": False}}
    )


async def _set_level(
    ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
) -> types.EmptyResult:
    return types.EmptyResult()


class MemoryEventStore(EventStore):
    """Every event of every stream, in memory, so a client can resume a closed stream."""

    def __init__(self) -> None:
        self._events: list[tuple[str, str, types.JSONRPCMessage | None]] = []
        self._ids = itertools.count(1)

    async def store_event(self, stream_id: str, message: types.JSONRPCMessage | None) -> str:
        event_id = str(next(self._ids))
        self._events.append((stream_id, event_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        stream = next((s for s, e, _ in self._events if e == last_event_id), None)
        if stream is None:
            return None
        for stream_id, event_id, message in self._events:
            if stream_id == stream and int(event_id) > int(last_event_id) and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


def build_server() -> Server[Any]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # logging/setLevel is deprecated in the 2026-07-28 era
        return Server(
            "conformance-reference",
            version="1.0.0",
            title="Conformance reference server",
            instructions=INSTRUCTIONS,
            on_list_tools=_list_tools,
            on_call_tool=_call_tool,
            on_list_resources=_list_resources,
            on_list_resource_templates=_list_templates,
            on_read_resource=_read_resource,
            on_subscribe_resource=_subscribe,
            on_unsubscribe_resource=_unsubscribe,
            on_list_prompts=_list_prompts,
            on_get_prompt=_get_prompt,
            on_completion=_complete,
            on_set_logging_level=_set_level,
        )


async def serve_http(port: int = 0) -> None:
    """Serve on 127.0.0.1 (stateful, resumable event streams); print the URL once bound."""
    import hypercorn.config
    import hypercorn.trio
    import trio

    app = build_server().streamable_http_app(event_store=MemoryEventStore(), retry_interval=100)
    config = hypercorn.config.Config()
    config.bind = [f"127.0.0.1:{port}"]
    config.accesslog = None
    config.errorlog = None
    async with trio.open_nursery() as nursery:
        binds: list[str] = await nursery.start(
            lambda task_status: hypercorn.trio.serve(app, config, task_status=task_status)  # type: ignore[arg-type]
        )
        print(binds[0] + "/mcp", flush=True)


async def serve_stdio() -> None:
    from mcp.server.stdio import stdio_server

    server = build_server()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str]) -> int:
    import trio

    mode = argv[1] if len(argv) > 1 else "http"
    if mode == "http":
        trio.run(serve_http)
    elif mode == "stdio":
        anyio.run(serve_stdio, backend="trio")
    else:
        print(f"usage: {argv[0]} http|stdio", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    base64.b64decode(TEST_IMAGE)  # fail early on a broken constant
    sys.exit(main(sys.argv))
