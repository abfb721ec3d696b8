"""The runner's pure layers: scenarios and packs, work units, traces, scoring, results.

    pack_config  TOML / module:attribute  ->  ScenarioPack (scenario, agent_spec)
    units        ScenarioPack             ->  WorkUnit list (stable ids, sha256 seeds)
    trace        call logs                ->  Trace (+ universe_divergence warnings)
    scoring      Trace                    ->  verdicts (policies), scores (scorers), status
    (the run directory they are written to is `windtunnel.rundir`)

The runtime (serving, agents, `run_scenario`) calls these; nothing here starts Trio.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_exports

if TYPE_CHECKING:
    from ..rundir.results import RunWriter, read_results
    from .agent_spec import AgentSpec
    from .pack_config import load_pack, load_pack_toml
    from .scenario import PlanStep, Scenario, ScenarioPack, default_mcp_factory, normalize_servers
    from .scoring import (
        Policy,
        Score,
        Scorer,
        Verdict,
        call_budget,
        call_order,
        contains,
        coverage,
        evaluate,
        forbidden_call,
        json_field,
        no_divergence,
        pass_at_k,
        pass_hat_k,
        regex,
        required_call,
    )
    from .summary import Summary, summarize
    from .trace import Trace, merge_call_logs, warnings_from_calls
    from .units import WorkUnit, plan_units

__all__ = [
    "AgentSpec",
    "PlanStep",
    "Policy",
    "RunWriter",
    "Scenario",
    "ScenarioPack",
    "Score",
    "Scorer",
    "Summary",
    "Trace",
    "Verdict",
    "WorkUnit",
    "call_budget",
    "call_order",
    "contains",
    "coverage",
    "default_mcp_factory",
    "evaluate",
    "forbidden_call",
    "json_field",
    "load_pack",
    "load_pack_toml",
    "merge_call_logs",
    "no_divergence",
    "normalize_servers",
    "pass_at_k",
    "pass_hat_k",
    "plan_units",
    "read_results",
    "regex",
    "required_call",
    "summarize",
    "warnings_from_calls",
]

__getattr__, __dir__ = lazy_exports(
    globals(),
    {
        ".agent_spec": ("AgentSpec",),
        ".pack_config": ("load_pack", "load_pack_toml"),
        "..rundir.results": ("RunWriter", "read_results"),
        ".scenario": (
            "PlanStep",
            "Scenario",
            "ScenarioPack",
            "default_mcp_factory",
            "normalize_servers",
        ),
        ".scoring": (
            "Policy",
            "Score",
            "Scorer",
            "Verdict",
            "call_budget",
            "call_order",
            "contains",
            "coverage",
            "evaluate",
            "forbidden_call",
            "json_field",
            "no_divergence",
            "pass_at_k",
            "pass_hat_k",
            "regex",
            "required_call",
        ),
        ".summary": ("Summary", "summarize"),
        ".trace": ("Trace", "merge_call_logs", "warnings_from_calls"),
        ".units": ("WorkUnit", "plan_units"),
    },
)
