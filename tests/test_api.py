"""The public surface: the names DESIGN §2 fixes, and nothing removed by accident."""

from __future__ import annotations

import importlib

import windtunnel.api
import windtunnel.errors
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
        "Fault",
        "INTERCHANGE_VERSION",
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
        "UNIVERSE_VERSION",
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
    assert sorted(windtunnel.mcp.__all__) == [
        "MCPServer",
        "MockMCPServer",
        "RecordedMCPHandle",
        "RecordedMCPServer",
        "ServedSurface",
        "ServerHandle",
        "ToolSpec",
    ]


ORIGINAL_UNIVERSE_NAMES = [
    "MATCH_MODES",
    "MISS_POLICIES",
    "SynthesizeHook",
    "UNIVERSE_VERSION",
    "Universe",
    "UniverseFormatError",
    "UniverseMatching",
    "UniverseRecording",
    "UniverseTool",
    "empty_result_for",
    "fail_call_result",
    "find_exact_recording",
    "find_keyed_recording",
    "find_nearest_recording",
    "freeze_universe",
    "load_universe",
    "normalize_tool_args",
    "save_universe",
    "tools_by_name",
]
"""windtunnel-bench 0.13.0's `windtunnel.api.universe` public names."""


def test_windtunnel_bench_imports_work_unchanged() -> None:
    """A project moving from windtunnel-bench keeps its universe and server imports."""
    from windtunnel.api import (  # noqa: F401
        UNIVERSE_VERSION,
        SynthesizeHook,
        Universe,
        UniverseFormatError,
        UniverseMatching,
        UniverseRecording,
        UniverseTool,
        freeze_universe,
        load_universe,
        save_universe,
    )
    from windtunnel.mcp import RecordedMCPHandle, RecordedMCPServer  # noqa: F401
    from windtunnel.mcp.recorded import RecordedMCPHandle as Handle  # noqa: F401
    from windtunnel.spi.mcp_server import MCPCall, MCPHandle, MCPServer  # noqa: F401

    universe_module = importlib.import_module("windtunnel.api.universe")
    assert sorted(universe_module.__all__) == ORIGINAL_UNIVERSE_NAMES
    assert UNIVERSE_VERSION == 1
    assert UniverseFormatError is windtunnel.errors.UniverseError
    assert MCPHandle is RecordedMCPHandle is windtunnel.mcp.ServerHandle
