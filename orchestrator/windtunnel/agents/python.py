"""`PythonAgent`: an in-process callable as the agent under test."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any, Literal

import trio

from .base import AgentContext, AgentError, AgentResult, write_mcp_config

__all__ = ["PythonAgent"]

Flavor = Literal["auto", "sync", "trio", "asyncio"]


class PythonAgent:
    """`fn(ctx: AgentContext)` returning the final answer (any value; non-strings become `str`).

    `flavor` says how to run it: `sync` in a worker thread; `trio` awaited in the run's own task;
    `asyncio` in a worker thread with its own event loop. `auto` (default) picks `sync` for plain
    functions and `asyncio` for `async def` ones (most agent frameworks are asyncio): say
    `flavor="trio"` for Trio agents. An exception from the agent fails the run with its message.
    """

    def __init__(
        self, fn: Callable[[AgentContext], Any], *, flavor: Flavor = "auto", name: str | None = None
    ) -> None:
        if flavor == "auto":
            flavor = "asyncio" if inspect.iscoroutinefunction(fn) else "sync"
        self.fn = fn
        self.flavor = flavor
        self.name: str = name or str(getattr(fn, "__qualname__", "python-agent"))

    async def run(self, ctx: AgentContext) -> AgentResult:
        write_mcp_config(ctx)
        try:
            if self.flavor == "trio":
                value = await self.fn(ctx)
            elif self.flavor == "asyncio":
                value = await trio.to_thread.run_sync(
                    lambda: asyncio.run(self.fn(ctx)), abandon_on_cancel=True
                )
            else:
                value = await trio.to_thread.run_sync(self.fn, ctx, abandon_on_cancel=True)
        except trio.Cancelled:
            raise
        except Exception as exc:  # the agent under test may fail in any way
            # An error inside the agent's own nursery or task group (an MCP client session is
            # one) arrives wrapped: name the error, not "ExceptionGroup: ... (1 sub-exception)".
            cause: BaseException = exc
            while isinstance(cause, BaseExceptionGroup) and len(cause.exceptions) == 1:
                cause = cause.exceptions[0]
            raise AgentError(f"agent raised {type(cause).__name__}: {cause}") from exc
        return AgentResult(output=None if value is None else str(value))
