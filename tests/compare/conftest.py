"""The demo pack's two runs, shared by the `wt diff` and `wt score` tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from windtunnel.cli.main import main

DEMO = Path(__file__).parents[2] / "configs" / "demo" / "pack.toml"
WANDERING = "{python} agents/support_agent.py --mcp-config {mcp_config} --style wandering"


@pytest.fixture(scope="session")
def demo_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The demo pack run by the careful agent (v1) and by the wandering one (v2)."""
    root = tmp_path_factory.mktemp("demo")
    assert main(["run", str(DEMO), "-o", str(root / "v1"), "--progress", "plain"]) == 0
    v2 = ["run", str(DEMO), "-o", str(root / "v2"), "--progress", "plain"]
    assert main([*v2, "--agent-command", WANDERING]) == 1
    return root / "v1", root / "v2"
