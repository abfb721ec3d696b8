"""A recorded world with the whole surface (issue 25): identity, rich tools, resources, prompts,
completions. The serving tests build a reference SDK server from the same data and compare what
clients see live with what they see on replay."""

from __future__ import annotations

import copy
import json
from typing import Any

import mcp
import mcp_types as types

SERVER: dict[str, Any] = {
    "protocol_version": "2025-11-25",
    "info": {
        "name": "everything-ref",
        "version": "1.2.0",
        "title": "Everything (reference)",
        "websiteUrl": "https://example.test/everything",
    },
    "instructions": "Use get_sum for arithmetic. Read test://static-text before answering.",
    "capabilities": {
        "tools": {"listChanged": True},
        "resources": {"subscribe": True, "listChanged": True},
        "prompts": {"listChanged": False},
        "logging": {},
        "completions": {},
    },
}

TOOLS: list[dict[str, Any]] = [
    {
        "name": "get_sum",
        "input_schema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
        "description": "Add two numbers.",
        "title": "Sum",
        "annotations": {"readOnlyHint": True, "idempotentHint": True, "title": "Sum (annotated)"},
        "output_schema": {
            "type": "object",
            "properties": {"sum": {"type": "number"}},
            "required": ["sum"],
        },
        "_meta": {"example.test/cost": 0},
    },
    {
        # No description on the wire: it stays absent on replay.
        "name": "echo",
        "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
        "annotations": {"openWorldHint": False},
        "icons": [{"src": "https://example.test/echo.png", "mimeType": "image/png"}],
        "execution": {"taskSupport": "forbidden"},
    },
]

RECORDINGS: list[dict[str, Any]] = [
    {
        "tool_name": "get_sum",
        "args": {"a": 1, "b": 2},
        "result": {
            "content": [{"type": "text", "text": '{"sum": 3}'}],
            "structuredContent": {"sum": 3},
        },
    },
    {"tool_name": "echo", "args": {"text": "hi"}, "result": "hi"},
]

RESOURCES: list[dict[str, Any]] = [
    {
        "uri": "test://static-text",
        "name": "static-text",
        "title": "Static text",
        "description": "A text resource",
        "mimeType": "text/plain",
    },
    {"uri": "test://static-blob", "name": "static-blob", "mimeType": "application/octet-stream"},
]

RESOURCE_TEMPLATES: list[dict[str, Any]] = [
    {
        "uriTemplate": "test://template/{id}/data",
        "name": "templated",
        "description": "A templated resource",
        "mimeType": "application/json",
    }
]

RESOURCE_READS: list[dict[str, Any]] = [
    {
        "uri": "test://static-text",
        "result": {
            "contents": [
                {"uri": "test://static-text", "mimeType": "text/plain", "text": "Hello, world"}
            ]
        },
    },
    {
        "uri": "test://static-blob",
        "result": {
            "contents": [
                {
                    "uri": "test://static-blob",
                    "mimeType": "application/octet-stream",
                    "blob": "AAEC",
                }
            ]
        },
    },
    {
        "uri": "test://template/7/data",
        "result": {
            "contents": [
                {
                    "uri": "test://template/7/data",
                    "mimeType": "application/json",
                    "text": '{"id":7}',
                }
            ]
        },
    },
]

PROMPTS: list[dict[str, Any]] = [
    {"name": "simple", "description": "A prompt without arguments"},
    {
        "name": "with_args",
        "title": "With arguments",
        "description": "A prompt with arguments",
        "arguments": [
            {"name": "arg1", "description": "First", "required": True},
            {"name": "arg2", "description": "Second"},
        ],
    },
]

PROMPT_GETS: list[dict[str, Any]] = [
    {
        "name": "simple",
        "arguments": {},
        "result": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "Say hello"}}]
        },
    },
    {
        "name": "with_args",
        "arguments": {"arg1": "a", "arg2": "b"},
        "result": {
            "description": "With a and b",
            "messages": [{"role": "user", "content": {"type": "text", "text": "a then b"}}],
        },
    },
]

COMPLETIONS: list[dict[str, Any]] = [
    {
        "ref": {"type": "ref/prompt", "name": "with_args"},
        "argument": {"name": "arg1", "value": "a"},
        "result": {"completion": {"values": ["alpha", "also"], "total": 2, "hasMore": False}},
    },
    {
        "ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
        "argument": {"name": "id", "value": "7"},
        "result": {"completion": {"values": ["7", "70"], "hasMore": True}},
    },
]


def surface_doc(**overrides: Any) -> dict[str, Any]:
    """The whole world as a universe document (a fresh copy; `overrides` replace top-level keys)."""
    doc: dict[str, Any] = {
        "windtunnel_universe": 1,
        "tools": TOOLS,
        "recordings": RECORDINGS,
        "server": SERVER,
        "resources": RESOURCES,
        "resource_templates": RESOURCE_TEMPLATES,
        "resource_reads": RESOURCE_READS,
        "prompts": PROMPTS,
        "prompt_gets": PROMPT_GETS,
        "completions": COMPLETIONS,
    }
    doc.update(overrides)
    return copy.deepcopy(doc)


def reference_server() -> Any:
    """A real SDK server showing this world live: the same identity, tools, resources, prompts
    and completions, answered by its own handlers (what `wt record` would have stood in front
    of)."""
    import mcp_types as types
    from mcp.server import Server
    from mcp.shared.exceptions import MCPError

    reads = {read["uri"]: read["result"] for read in RESOURCE_READS}
    gets = {(get["name"], json_key(get["arguments"])): get["result"] for get in PROMPT_GETS}
    completions = {
        json_key({"ref": c["ref"], "argument": c["argument"]}): c["result"] for c in COMPLETIONS
    }

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        return types.ListToolsResult.model_validate({"tools": [wire_tool(t) for t in TOOLS]})

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "get_sum":
            args = params.arguments or {}
            total = args["a"] + args["b"]
            return types.CallToolResult.model_validate(
                {
                    "content": [{"type": "text", "text": json.dumps({"sum": total})}],
                    "structuredContent": {"sum": total},
                }
            )
        text = (params.arguments or {}).get("text", "")
        return types.CallToolResult.model_validate({"content": [{"type": "text", "text": text}]})

    async def list_resources(ctx: Any, params: Any) -> types.ListResourcesResult:
        return types.ListResourcesResult.model_validate({"resources": RESOURCES})

    async def list_templates(ctx: Any, params: Any) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult.model_validate(
            {"resourceTemplates": RESOURCE_TEMPLATES}
        )

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        result = reads.get(str(params.uri))
        if result is None:
            raise MCPError(code=-32002, message="Resource not found", data={"uri": params.uri})
        return types.ReadResourceResult.model_validate(result)

    async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
        return types.ListPromptsResult.model_validate({"prompts": PROMPTS})

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        result = gets.get((params.name, json_key(params.arguments or {})))
        if result is None:
            raise MCPError(code=-32602, message="unknown prompt")
        return types.GetPromptResult.model_validate(result)

    async def complete(ctx: Any, params: types.CompleteRequestParams) -> types.CompleteResult:
        asked = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        key = json_key({"ref": asked["ref"], "argument": asked["argument"]})
        return types.CompleteResult.model_validate(completions[key])

    async def acknowledge(ctx: Any, params: Any) -> types.EmptyResult:
        return types.EmptyResult()

    info = SERVER["info"]
    server: Server[Any] = Server(
        info["name"],
        version=info["version"],
        title=info["title"],
        website_url=info["websiteUrl"],
        instructions=SERVER["instructions"],
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=acknowledge,
        on_unsubscribe_resource=acknowledge,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, acknowledge)
    server.middleware = []
    return server


def json_key(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def wire_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """A universe tool as `tools/list` gives it."""
    names = {"input_schema": "inputSchema", "output_schema": "outputSchema"}
    return {names.get(key, key): value for key, value in tool.items()}


def wire(model: Any) -> Any:
    return model.model_dump(by_alias=True, mode="json", exclude_none=True)


def _ref(ref: dict[str, Any]) -> Any:
    if ref["type"] == "ref/prompt":
        return types.PromptReference(type="ref/prompt", name=ref["name"])
    return types.ResourceTemplateReference(type="ref/resource", uri=ref["uri"])


def without_envelope(result: dict[str, Any]) -> dict[str, Any]:
    """A result as a producer keeps it: no protocol envelope (`resultType`, cache hints, the
    2026-07-28 `_meta` stamps)."""
    kept = {k: v for k, v in result.items() if k not in ("resultType", "ttlMs", "cacheScope")}
    meta = {k: v for k, v in kept.pop("_meta", {}).items() if not k.startswith("io.modelcontext")}
    if meta:
        kept["_meta"] = meta
    return kept


async def observe(client: mcp.Client) -> dict[str, Any]:
    """Everything the client can see of the server's surface, as wire JSON."""
    seen: dict[str, Any] = {
        "server_info": wire(client.server_info) if client.server_info else None,
        "capabilities": wire(client.server_capabilities),
        "instructions": client.instructions,
        "tools": wire(await client.list_tools())["tools"],
        "resources": wire(await client.list_resources())["resources"],
        "resource_templates": wire(await client.list_resource_templates())["resourceTemplates"],
        "prompts": wire(await client.list_prompts())["prompts"],
        "reads": [
            without_envelope(wire(await client.read_resource(read["uri"])))
            for read in RESOURCE_READS
        ],
        "gets": [
            without_envelope(wire(await client.get_prompt(get["name"], get["arguments"])))
            for get in PROMPT_GETS
        ],
        "completions": [
            without_envelope(
                wire(await client.complete(_ref(c["ref"]), c["argument"], c.get("context")))
            )
            for c in COMPLETIONS
        ],
        "calls": [
            without_envelope(wire(await client.call_tool(r["tool_name"], r["args"])))
            for r in RECORDINGS
        ],
    }
    if client.protocol_version < "2026":
        await client.set_logging_level("info")
        await client.subscribe_resource("test://static-text")
        await client.unsubscribe_resource("test://static-text")
    return seen


def recorded_from(live: dict[str, Any]) -> dict[str, Any]:
    """The universe a producer writes from what the client saw live."""
    names = {"inputSchema": "input_schema", "outputSchema": "output_schema"}
    server: dict[str, Any] = {"info": live["server_info"], "capabilities": live["capabilities"]}
    if live["instructions"] is not None:
        server["instructions"] = live["instructions"]
    return surface_doc(
        server=server,
        tools=[{names.get(k, k): v for k, v in tool.items()} for tool in live["tools"]],
        resources=live["resources"],
        resource_templates=live["resource_templates"],
        prompts=live["prompts"],
        resource_reads=[
            {"uri": read["uri"], "result": result}
            for read, result in zip(RESOURCE_READS, live["reads"], strict=True)
        ],
        prompt_gets=[
            {**get, "result": result} for get, result in zip(PROMPT_GETS, live["gets"], strict=True)
        ],
        completions=[
            {**c, "result": result}
            for c, result in zip(COMPLETIONS, live["completions"], strict=True)
        ],
        recordings=[
            {**r, "result": result} for r, result in zip(RECORDINGS, live["calls"], strict=True)
        ],
    )
