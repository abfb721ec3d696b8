"""Agents under test: how Wind Tunnel hands a task and upstream URLs to an agent and gets an answer.

- `CommandAgent`: any program; gets an `mcpServers` config file + env vars, the task on stdin, in a
  file or as an argument; its stdout is the final answer.
- `PythonAgent`: an in-process callable (sync, Trio, or asyncio in a worker thread).
- `ScriptedAgent`: a fixed plan of calls made through the official MCP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from .base import Agent, AgentContext, AgentError, AgentResult, write_mcp_config
    from .command import CommandAgent
    from .python import PythonAgent
    from .scripted import PlannedCall, ScriptedAgent

__all__ = [
    "Agent",
    "AgentContext",
    "AgentError",
    "AgentResult",
    "CommandAgent",
    "PlannedCall",
    "PythonAgent",
    "ScriptedAgent",
    "write_mcp_config",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".base": ("Agent", "AgentContext", "AgentError", "AgentResult", "write_mcp_config"),
        ".command": ("CommandAgent",),
        ".python": ("PythonAgent",),
        ".scripted": ("PlannedCall", "ScriptedAgent"),
    },
)
