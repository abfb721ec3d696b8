"""`AgentSpec`: which agent runs a pack, as data. The adapters that run it live elsewhere.

- `command`: a subprocess from a template list. Placeholders: `{mcp_config}` (path of the rendered
  `mcpServers` JSON), `{task}`, `{task_file}`, `{scenario}`, `{seed}`, `{workdir}`, `{python}`
  (the agent's interpreter: `python` when given, else the one running Wind Tunnel). Any other
  `{identifier}` is refused as a likely typo; other braces (JSON arguments) are literal text.
  `python` names the agent's own interpreter for `{python}` (an agent with its own venv); a
  command given in its place (`wt run --agent-command`) keeps it (`with_interpreter_of`).
  `task_via` says how the task reaches it: `stdin`, `file` (the template must use `{task_file}`)
  or `arg` (the template must use `{task}`).
- `python`: a `"module:attr"` callable (sync, Trio or asyncio); imported only when a run starts.
- `scripted`: each scenario's `plan` of MCP calls, then its `final_answer`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, TypeAlias

import msgspec

from ..agents.command_template import TEMPLATE_FIELDS, render_command
from ..agents.command_template import template_fields as command_template_fields
from ..errors import ConfigError

__all__ = ["TEMPLATE_FIELDS", "AgentKind", "AgentSpec", "TaskVia", "template_fields"]

AgentKind: TypeAlias = Literal["command", "python", "scripted"]
TaskVia: TypeAlias = Literal["stdin", "file", "arg"]
_CALLABLE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


def template_fields(part: str) -> list[str]:
    """The placeholder names used in one template element; `ConfigError` for an unknown one."""
    try:
        return command_template_fields(part)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


class AgentSpec(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """The agent under test: how to start it and hand it the task."""

    kind: AgentKind
    command: list[str] = msgspec.field(default_factory=list)
    task_via: TaskVia = "stdin"
    env: dict[str, str] = msgspec.field(default_factory=dict)
    callable: str | None = None
    python: str | None = None

    def __post_init__(self) -> None:
        self.validate()

    def validate(self) -> None:
        """Raise `ConfigError` when the spec cannot run (messages name the field)."""
        if self.kind == "command":
            if not self.command:
                raise ConfigError("kind 'command' needs a non-empty command list", path="command")
            used: set[str] = set()
            for i, part in enumerate(self.command):
                try:
                    used.update(template_fields(part))
                except ConfigError as exc:
                    raise ConfigError(exc.message, path=f"command[{i}]") from None
            needed = {"file": "task_file", "arg": "task"}.get(self.task_via)
            if needed and needed not in used:
                raise ConfigError(
                    f"task_via {self.task_via!r} needs {{{needed}}} in the command",
                    path="task_via",
                )
        if self.python is not None and self.kind != "command":
            raise ConfigError(f"not used by agent kind {self.kind!r}", path="python")
        if self.python == "":
            raise ConfigError("an empty interpreter path", path="python")
        if self.kind == "python" and not _CALLABLE.match(self.callable or ""):
            raise ConfigError(
                f"kind 'python' needs callable = 'module:attr', got {self.callable!r}",
                path="callable",
            )

    def with_interpreter_of(self, own: AgentSpec | None) -> AgentSpec:
        """This command with the interpreter `own` (the pack's agent) names, unless it names
        one itself: `--agent-command '{python} agent.py'` runs in the pack's agent venv."""
        if self.kind != "command" or self.python is not None or own is None:
            return self
        if own.kind != "command" or own.python is None:
            return self
        return msgspec.structs.replace(self, python=own.python)

    def render_command(self, values: Mapping[str, str]) -> list[str]:
        """The command with placeholders filled in (each element stays one argument, no shell)."""
        return render_command(self.command, values)
