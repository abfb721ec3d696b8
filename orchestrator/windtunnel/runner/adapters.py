"""Turn what a pack or a caller says about the agent into a runnable `Agent`."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agents import Agent, CommandAgent, PlannedCall, PythonAgent, ScriptedAgent
from ..errors import ConfigError
from .agent_spec import AgentSpec
from .scenario import Scenario

__all__ = ["AgentLike", "resolve_agent"]

AgentLike = Agent | AgentSpec | Callable[..., Any]


def _import_callable(spec: str, base_dir: Path | None) -> Callable[..., Any]:
    module_name, _, attribute = spec.partition(":")
    if base_dir is not None and str(base_dir) not in sys.path:
        # The pack's own directory: `callable = "agents.mine:run"` next to the TOML file.
        sys.path.insert(0, str(base_dir))
    try:
        value: Any = importlib.import_module(module_name)
        for part in attribute.split("."):
            value = getattr(value, part)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"cannot import agent {spec!r}: {exc}", path="agent.callable") from None
    if not callable(value):
        raise ConfigError(f"agent {spec!r} is not callable", path="agent.callable")
    return value  # type: ignore[no-any-return]


def resolve_agent(
    agent: AgentLike | None, scenario: Scenario, *, base_dir: Path | None = None
) -> Agent:
    """An `Agent` for one run of `scenario`.

    `agent` may be an adapter instance, an `AgentSpec` (from a pack), a plain callable (run as a
    `PythonAgent`), or None, which means the scenario's own spec, else its scripted plan.
    """
    if agent is None:
        agent = scenario.agent
    if agent is None:
        if not scenario.plan:
            raise ConfigError(f"scenario {scenario.name!r} has no agent and no scripted plan")
        agent = AgentSpec(kind="scripted")
    if isinstance(agent, AgentSpec):
        return _from_spec(agent, scenario, base_dir)
    if isinstance(agent, CommandAgent | PythonAgent | ScriptedAgent) or hasattr(agent, "run"):
        return agent  # type: ignore[return-value]
    if callable(agent):
        return PythonAgent(agent)
    raise ConfigError(f"cannot use {agent!r} as an agent")


def _from_spec(spec: AgentSpec, scenario: Scenario, base_dir: Path | None) -> Agent:
    if spec.kind == "command":
        return CommandAgent(
            spec.command, task_via=spec.task_via, env=spec.env, cwd=base_dir, python=spec.python
        )
    if spec.kind == "python":
        assert spec.callable is not None  # validated by AgentSpec
        return PythonAgent(_import_callable(spec.callable, base_dir))
    plan = [PlannedCall(step.tool, dict(step.args), step.upstream) for step in scenario.plan]
    return ScriptedAgent(plan, final_answer=scenario.final_answer or "")
