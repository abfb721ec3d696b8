"""The public API (DESIGN §2): names here are fixed by the user documentation.

windtunnel-bench's universe names import from here too, and from `windtunnel.api.universe`
(aliases where ours differ), so code written for it runs unchanged.

from windtunnel.api import (ScenarioPack, Scenario, run_scenario, load_universe,
                            freeze_universe, UniverseTool, no_divergence, MCPCall)
"""

from __future__ import annotations

from ..agents import AgentContext, CommandAgent, PythonAgent, ScriptedAgent
from ..calls import MCPCall
from ..errors import (
    ConfigError,
    InputError,
    ServerError,
    UniverseError,
    UnknownToolError,
    WindtunnelError,
)
from ..freeze import freeze_universe
from ..runner.execute import run_scenario, run_scenario_async
from ..runner.scenario import PlanStep, Scenario, ScenarioPack
from ..runner.scoring import (
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
from ..runner.trace import Trace
from ..universe import (
    Matching,
    Recording,
    ServerSurface,
    Universe,
    UniverseTool,
    load_universe,
)
from .universe import (
    UNIVERSE_VERSION,
    SynthesizeHook,
    UniverseFormatError,
    UniverseMatching,
    UniverseRecording,
    save_universe,
)

__all__ = [
    "UNIVERSE_VERSION",
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
    "SynthesizeHook",
    "Trace",
    "Universe",
    "UniverseError",
    "UniverseFormatError",
    "UniverseMatching",
    "UniverseRecording",
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
    "save_universe",
]
