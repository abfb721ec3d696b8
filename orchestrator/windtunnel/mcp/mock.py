"""`MockMCPServer`: a hand-built server whose tools are Python functions (record mode's source).

    mock = MockMCPServer("crm")

    @mock.tool(description="Look up a client by name or account id.")
    def client_lookup(query: str, verbose: bool = False) -> dict:
        return {"name": query.title()}

Serve it like any server (same SPI, same call log), run the agent once, then
`freeze_universe(mock.call_log(), tools=mock.universe_tools(), path=...)` to commit a fixture.
"""

from __future__ import annotations

import inspect
import time
import types as pytypes
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import trio

from ..call_log import CallListener, CallLog
from ..calls import MCPCall
from ..divergence import log_divergence, unknown_tool_call
from ..errors import ServerError, UnknownToolError
from ..universe import ToolMode, UniverseTool
from ._sdk_server import ToolSpec
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
    mode: ToolMode


class MockMCPServer(MCPServer):
    """A server whose tools are Python functions (sync or async), called with keyword args.

    A tool that raises answers a tool error: a `CallToolResult` with `isError` and
    `structuredContent` `{"error": <exception type>, "message": ...}`. A call to an undeclared
    tool is a divergence, as in a recorded server.
    """

    def __init__(self, name: str = "mock", *, fast_path: bool = True) -> None:
        super().__init__()
        self.name = name
        self.fast_path = fast_path
        self._tools: dict[str, _MockTool] = {}
        self.log = CallLog()

    def tool(
        self,
        name: str | None = None,
        *,
        description: str | None = None,
        input_schema: dict[str, Any] | None = None,
        mode: ToolMode = "stateless",
    ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a function as a tool; `mode="sequence"` for stateful tools (kept on freeze)."""

        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self.add_tool(
                fn, name=name, description=description, input_schema=input_schema, mode=mode
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
    ) -> None:
        tool_name = name or fn.__name__
        if tool_name in self._tools:
            raise ServerError(f"mock server {self.name!r} already has a tool named {tool_name!r}")
        spec = ToolSpec(
            tool_name,
            input_schema if input_schema is not None else schema_from_signature(fn),
            description if description is not None else inspect.getdoc(fn) or "",
        )
        self._tools[tool_name] = _MockTool(fn, spec, mode)

    @property
    def listeners(self) -> list[CallListener]:
        return self.log.listeners

    def add_listener(self, listener: CallListener) -> None:
        self.log.listeners.append(listener)

    def tool_specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values()]

    def universe_tools(self) -> list[UniverseTool]:
        """The tools as universe declarations, for `freeze_universe(..., tools=...)`."""
        return [
            UniverseTool(t.spec.name, t.spec.input_schema, t.spec.description, mode=t.mode)
            for t in self._tools.values()
        ]

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
            value = trio.run(_call_async, tool.fn, args) if is_async else tool.fn(**args)
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
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True


async def _call_async(fn: Callable[..., Any], args: dict[str, Any]) -> Any:
    return await fn(**args)
