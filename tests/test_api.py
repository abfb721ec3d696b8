"""The public surface: the names DESIGN §2 fixes, and nothing removed by accident."""

from __future__ import annotations

import windtunnel.api
import windtunnel.mcp


def test_design_names_are_importable() -> None:
    """DESIGN §2's import line works."""
    from windtunnel.api import (  # noqa: F401
        MCPCall,
        Scenario,
        ScenarioPack,
        UniverseTool,
        freeze_universe,
        load_universe,
        no_divergence,
        run_scenario,
    )
    from windtunnel.mcp import MCPServer, MockMCPServer, RecordedMCPServer  # noqa: F401


def test_api_all_is_pinned() -> None:
    """Adding a public name is a decision; removing one breaks users."""
    assert sorted(windtunnel.api.__all__) == [
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
    assert sorted(windtunnel.mcp.__all__) == [
        "MCPServer",
        "MockMCPServer",
        "RecordedMCPServer",
        "ServedSurface",
        "ToolSpec",
    ]
