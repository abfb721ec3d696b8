"""The public API (DESIGN §2): names here are fixed by the user documentation.

from windtunnel.api import (ScenarioPack, Scenario, run_scenario, load_universe,
                            freeze_universe, UniverseTool, no_divergence, MCPCall)
"""

from __future__ import annotations

from .agents import AgentContext, CommandAgent, PythonAgent, ScriptedAgent
from .calls import MCPCall
from .errors import (
    ConfigError,
    InputError,
    ServerError,
    UniverseError,
    UnknownToolError,
    WindtunnelError,
)
from .freeze import freeze_universe
from .runner.execute import run_scenario, run_scenario_async
from .runner.scenario import PlanStep, Scenario, ScenarioPack
from .runner.scoring import (
    Policy,
    Scorer,
    call_budget,
    call_order,
    contains,
    coverage,
    forbidden_call,
    json_field,
    no_divergence,
    regex,
    required_call,
)
from .runner.trace import Trace
from .universe import (
    Matching,
    Recording,
    ServerSurface,
    Universe,
    UniverseTool,
    load_universe,
)

__all__ = [
    "AgentContext",
    "CommandAgent",
    "ConfigError",
    "InputError",
    "MCPCall",
    "Matching",
    "PlanStep",
    "Policy",
    "PythonAgent",
    "Recording",
    "Scenario",
    "ScenarioPack",
    "Scorer",
    "ScriptedAgent",
    "ServerError",
    "ServerSurface",
    "Trace",
    "Universe",
    "UniverseError",
    "UniverseTool",
    "UnknownToolError",
    "WindtunnelError",
    "call_budget",
    "call_order",
    "contains",
    "coverage",
    "forbidden_call",
    "freeze_universe",
    "json_field",
    "load_universe",
    "no_divergence",
    "regex",
    "required_call",
    "run_scenario",
    "run_scenario_async",
]
