"""`MockMCPServer`: a hand-built server whose tools are Python functions (record mode's source).

    mock = MockMCPServer("crm")

    @mock.tool(description="Look up a client by name or account id.")
    def client_lookup(query: str, verbose: bool = False) -> dict:
        return {"name": query.title()}

A mock can show the rest of a server's surface too: its identity and instructions
(`MockMCPServer("crm", server_info={...}, instructions=...)`), resources with their reads
(`add_resource`), resource templates, prompts with their gets (`add_prompt`) and completions
(`completion`). Serve it like any server (same SPI, same call log), run the agent once, then
`freeze_universe(mock.call_log(), tools=mock.universe_tools(), **mock.surface_parts(),
path=...)` to commit a fixture.
"""

from __future__ import annotations

import inspect
import time
import types as pytypes
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..call_log import CallListener, CallLog
from ..calls import MCPCall
from ..divergence import log_divergence, request_divergence_call, unknown_tool_call
from ..errors import ServerError, UnknownToolError
from ..universe import ServerSurface, ToolMode, UniverseTool
from ._shapes import ServedSurface, ToolSpec
from .spi import MCPServer

__all__ = ["MockMCPServer", "schema_from_signature"]


_JSON_TYPES: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}


def _json_type(annotation: Any) -> dict[str, Any]:
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, pytypes.UnionType):
        names = [_json_type(arg).get("type") for arg in typing.get_args(annotation)]
        kinds = [n for n in names if isinstance(n, str)]
        return {"type": kinds} if len(kinds) == len(names) else {}
    base = origin if origin is not None else annotation
    name = _JSON_TYPES.get(base)
    return {"type": name} if name else {}


def schema_from_signature(fn: Callable[..., Any]) -> dict[str, Any]:
    """A JSON Schema for a function's keyword parameters (types from annotations when simple)."""
    hints = typing.get_type_hints(fn)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for name, param in inspect.signature(fn).parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            continue
        properties[name] = _json_type(hints.get(name, Any))
        if param.default is param.empty:
            required.append(name)
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


@dataclass(frozen=True)
class _MockTool:
    fn: Callable[..., Any]
    spec: ToolSpec
    declared: UniverseTool


class MockMCPServer(MCPServer):
    """A server whose tools are Python functions (sync or async), called with keyword args.

    A tool that raises answers a tool error: a `CallToolResult` with `isError` and
    `structuredContent` `{"error": <exception type>, "message": ...}`. A call to an undeclared
    tool is a divergence, as in a recorded server.
    """

    def __init__(
        self,
        name: str = "mock",
        *,
        fast_path: bool = True,
        server_info: dict[str, Any] | None = None,
        instructions: str | None = None,
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        super().__init__()
        self.name = name
        self.fast_path = fast_path
        self._tools: dict[str, _MockTool] = {}
        self.log = CallLog()
        self._server: ServerSurface | None = None
        if server_info is not None or instructions is not None or capabilities is not None:
            self._server = ServerSurface(
                info=server_info, instructions=instructions, capabilities=capabilities
            )
        self._resources: list[dict[str, Any]] = []
        self._readers: dict[str, Callable[[], dict[str, Any]]] = {}
        self._templates: list[dict[str, Any]] = []
        self._prompts: list[dict[str, Any]] = []
        self._getters: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}
        self._completer: Callable[[dict[str, Any]], dict[str, Any]] | None = None

    # -- the surface besides tools ---------------------------------------------------------

    def add_resource(
        self, listing: dict[str, Any], read: Callable[[], dict[str, Any]] | dict[str, Any]
    ) -> None:
        """List a resource (`{"uri", "name", ...}` as `resources/list` shows it) and answer its
        `resources/read` with `read()` (or `read` itself): a `ReadResourceResult` object."""
        uri = listing["uri"]
        if uri in self._readers:
            raise ServerError(f"mock server {self.name!r} already has a resource {uri!r}")
        self._resources.append(dict(listing))
        self._readers[uri] = read if callable(read) else (lambda: read)

    def add_resource_template(self, listing: dict[str, Any]) -> None:
        """List a resource template (`{"uriTemplate", "name", ...}`)."""
        self._templates.append(dict(listing))

    def add_prompt(
        self, listing: dict[str, Any], get: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> None:
        """List a prompt (`{"name", "arguments": [...], ...}`) and answer `prompts/get` with
        `get(arguments)`: a `GetPromptResult` object."""
        name = listing["name"]
        if name in self._getters:
            raise ServerError(f"mock server {self.name!r} already has a prompt {name!r}")
        self._prompts.append(dict(listing))
        self._getters[name] = get

    def completion(
        self, fn: Callable[[dict[str, Any]], dict[str, Any]]
    ) -> Callable[[dict[str, Any]], dict[str, Any]]:
        """Answer `completion/complete` with `fn({"ref", "argument", "context"?})`: a
        `CompleteResult` object (usable as a decorator)."""
        self._completer = fn
        return fn

    def surface(self) -> ServedSurface:
        requests = set()
        if self._resources or self._templates:
            requests.add("resources/read")
        if self._prompts:
            requests.add("prompts/get")
        if self._completer is not None:
            requests.add("completion/complete")
        return ServedSurface(
            server=self._server,
            resources=self._resources,
            resource_templates=self._templates,
            prompts=self._prompts,
            requests=frozenset(requests),
        )

    def surface_parts(self) -> dict[str, Any]:
        """The listed surface as `freeze_universe` takes it (the reads, gets and completions
        answered are in the call log)."""
        return {
            "server": self._server,
            "resources": self._resources,
            "resource_templates": self._templates,
            "prompts": self._prompts,
        }

    async def answer_request(self, method: str, target: str, args: dict[str, Any]) -> MCPCall:
        started_at, t0 = time.time(), time.perf_counter()
        answer: Callable[[], dict[str, Any]] | None = None
        if method == "resources/read" and target in self._readers:
            answer = self._readers[target]
        elif method == "prompts/get" and target in self._getters:
            getter = self._getters[target]
            answer = lambda: getter(dict(args))  # noqa: E731
        elif method == "completion/complete" and self._completer is not None:
            completer = self._completer
            answer = lambda: completer(dict(args))  # noqa: E731
        if answer is None:
            call = request_divergence_call(method, target, args, upstream=self.name)
            if self.log_events:
                log_divergence(call, scenario=None)
            return self._record(call, started_at, t0)
        try:
            result = answer()
            call = MCPCall(
                method=method, tool_name=target, args=args, result=result, upstream=self.name
            )
        except Exception as exc:  # a mock's function may fail in any way; the agent sees an error
            call = MCPCall(
                method=method,
                tool_name=target,
                args=args,
                result={"error": type(exc).__name__, "message": str(exc)},
                upstream=self.name,
                is_error=True,
            )
        return self._record(call, started_at, t0)

    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        mode: ToolMode = "stateless",
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as a tool; `mode="sequence"` for stateful tools (kept on freeze);
        `title`, `annotations` and `output_schema` are listed in `tools/list`."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(
                fn,
                name=name,
                description=description,
                input_schema=input_schema,
                mode=mode,
                title=title,
                annotations=annotations,
                output_schema=output_schema,
            )
            return fn

        return register

    def add_tool(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        mode: ToolMode = "stateless",
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        output_schema: dict[str, Any] | None = None,
    ) -> None:
        tool_name = name or fn.__name__
        if tool_name in self._tools:
            raise ServerError(f"mock server {self.name!r} already has a tool named {tool_name!r}")
        declared = UniverseTool(
            tool_name,
            input_schema if input_schema is not None else schema_from_signature(fn),
            description if description is not None else inspect.getdoc(fn) or "",
            mode=mode,
            title=title,
            annotations=annotations,
            output_schema=output_schema,
        )
        spec = ToolSpec(tool_name, declared.input_schema, declared.description, declared.listed())
        self._tools[tool_name] = _MockTool(fn, spec, declared)

    @property
    def listeners(self) -> list[CallListener]:
        return self.log.listeners

    def add_listener(self, listener: CallListener) -> None:
        self.log.listeners.append(listener)

    def tool_specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def universe_tools(self) -> list[UniverseTool]:
        """The tools as universe declarations, for `freeze_universe(..., tools=...)`."""
        return [t.declared for t in self._tools.values()]

    def call_log(self) -> list[MCPCall]:
        return self.log.calls()

    async def answer(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        tool = self._tools.get(tool_name)
        started_at, t0 = time.time(), time.perf_counter()
        if tool is None:
            return self._record(self._unknown(tool_name, args), started_at, t0)
        try:
            value = tool.fn(**args)
            if inspect.isawaitable(value):
                value = await value
            call = MCPCall(tool_name=tool_name, args=args, result=value, upstream=self.name)
        except Exception as exc:  # a mock tool may fail in any way; the agent sees a tool error
            call = self._failure(tool_name, args, exc)
        return self._record(call, started_at, t0)

    def call_tool(self, tool_name: str, args: dict[str, Any]) -> Any:
        """Call a tool in process. Async tools need no running event loop in this thread."""
        tool = self._tools.get(tool_name)
        started_at, t0 = time.time(), time.perf_counter()
        if tool is None:
            self._record(self._unknown(tool_name, args), started_at, t0)
            raise UnknownToolError(tool_name, list(self._tools))
        is_async = inspect.iscoroutinefunction(tool.fn)
        if is_async and _in_trio():
            raise ServerError(
                f"{tool_name!r} is async: inside Trio use `await server.answer(...)` instead"
            )
        try:
            if is_async:
                import trio  # here: `windtunnel.mcp` loads without Trio

                value = trio.run(_call_async, tool.fn, args)
            else:
                value = tool.fn(**args)
            call = MCPCall(tool_name=tool_name, args=args, result=value, upstream=self.name)
        except Exception as exc:  # a mock tool may fail in any way
            call = self._failure(tool_name, args, exc)
        return self._record(call, started_at, t0).result

    def _unknown(self, tool_name: str, args: dict[str, Any]) -> MCPCall:
        call = unknown_tool_call(tool_name, args, upstream=self.name)
        if self.log_events:
            log_divergence(call, scenario=None)
        return call

    def _failure(self, tool_name: str, args: dict[str, Any], exc: Exception) -> MCPCall:
        # Shaped as an MCP CallToolResult so a frozen universe replays it as the same tool error.
        error = {"error": type(exc).__name__, "message": str(exc)}
        return MCPCall(
            tool_name=tool_name,
            args=args,
            result={
                "content": [{"type": "text", "text": f"{error['error']}: {error['message']}"}],
                "structuredContent": error,
                "isError": True,
            },
            upstream=self.name,
            is_error=True,
        )

    def _record(self, call: MCPCall, started_at: float, t0: float) -> MCPCall:
        call.started_at = started_at
        call.duration_ms = (time.perf_counter() - t0) * 1000.0
        self.log.append(call)
        return call


def _in_trio() -> bool:
    try:
        import trio

        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True


async def _call_async(fn: Callable[..., Any], args: dict[str, Any]) -> Any:
    return await fn(**args)
