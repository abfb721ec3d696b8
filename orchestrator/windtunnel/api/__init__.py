"""The public API (DESIGN §2): names here are fixed by the user documentation.

windtunnel-bench's universe and envelope names import from here too, and from
`windtunnel.api.universe`, `windtunnel.api.interchange` and `windtunnel.api.importer` (aliases
where ours differ), so code written for it runs unchanged.

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
from ..faults.spec import Fault
from ..freeze import freeze_universe
from ..runner.execute import run_scenario, run_scenario_async
from ..runner.fault_policies import (
    did_not_fabricate,
    no_call_after_fault,
    reported_failure,
    retried_after_fault,
)
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
from .importer import ImportResult, write_imported_scenario
from .interchange import (
    INTERCHANGE_VERSION,
    InterchangeFormatError,
    InterchangeMessage,
    InterchangePart,
    InterchangeToolDefinition,
    InterchangeTrace,
    InterchangeWitnessedCall,
    TextPart,
    ToolCallPart,
    ToolCallResponsePart,
    build_envelope,
    load_interchange,
    parse_interchange,
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
    "INTERCHANGE_VERSION",
    "UNIVERSE_VERSION",
    "AgentContext",
    "CommandAgent",
    "ConfigError",
    "Fault",
    "ImportResult",
    "InputError",
    "InterchangeFormatError",
    "InterchangeMessage",
    "InterchangePart",
    "InterchangeToolDefinition",
    "InterchangeTrace",
    "InterchangeWitnessedCall",
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
    "TextPart",
    "ToolCallPart",
    "ToolCallResponsePart",
    "Trace",
    "Universe",
    "UniverseError",
    "UniverseFormatError",
    "UniverseMatching",
    "UniverseRecording",
    "UniverseTool",
    "UnknownToolError",
    "WindtunnelError",
    "build_envelope",
    "call_budget",
    "call_order",
    "contains",
    "coverage",
    "did_not_fabricate",
    "forbidden_call",
    "freeze_universe",
    "json_field",
    "load_interchange",
    "load_universe",
    "no_call_after_fault",
    "no_divergence",
    "parse_interchange",
    "regex",
    "reported_failure",
    "required_call",
    "retried_after_fault",
    "run_scenario",
    "run_scenario_async",
    "save_universe",
    "write_imported_scenario",
]
