"""The runner's public surface is pinned."""

from __future__ import annotations

import windtunnel.runner
import windtunnel.runner.scoring


def test_runner_all() -> None:
    """`windtunnel.runner` exports exactly these names."""
    assert sorted(windtunnel.runner.__all__) == [
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
    assert all(hasattr(windtunnel.runner, name) for name in windtunnel.runner.__all__)


def test_scoring_exports_the_builtins() -> None:
    """Policies, scorers and repeat metrics all import from `windtunnel.runner.scoring`."""
    from windtunnel.runner.scoring import (  # noqa: F401
        call_budget,
        call_order,
        contains,
        evaluate,
        forbidden_call,
        json_field,
        no_divergence,
        pass_at_k,
        pass_hat_k,
        regex,
        required_call,
    )

    assert all(hasattr(windtunnel.runner.scoring, n) for n in windtunnel.runner.scoring.__all__)
