"""The long campaigns in scripts/ stay runnable: a quick soak round and short fuzz runs."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
import trio

SCRIPTS = Path(__file__).parents[2] / "scripts"


async def test_quick_soak_loses_nothing(tmp_path: Path) -> None:
    """`scripts/soak --quick` injects every fault kind and loses, leaks and mis-ends nothing."""
    with trio.fail_after(120):
        done = await trio.run_process(
            [sys.executable, str(SCRIPTS / "soak"), "--quick", "--out", str(tmp_path)],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stdout.decode()[-3000:]
    report = json.loads((tmp_path / "soak.json").read_text())
    assert (report["ok"], report["lost"], report["unexpected"], report["leaks"]) == (
        True,
        [],
        [],
        [],
    )
    assert report["units"] == report["results_lines"] >= 100
    assert report["calls_made"] == report["calls_served"] == report["calls_in_traces"] > 0
    assert report["divergences"] == report["divergence_events"] > 0
    assert report["faults_injected"] == report["faults_survived"]
    assert set(report["faults_injected"]) == {
        "wander",
        "crash",
        "hang",
        "garbage",
        "hook",
        "flood",
        "cmd_crash",
        "cmd_junk",
    }


atheris = pytest.importorskip("atheris", reason="scripts/fuzz needs atheris (scripts/setup fuzz)")


@pytest.mark.parametrize(
    ("target", "runs"), [("universe", 3000), ("pack", 300), ("jsonrpc", 100), ("http-head", 3000)]
)
async def test_fuzz_smoke(tmp_path: Path, target: str, runs: int) -> None:
    """A short `--light` run of each fuzz target finds nothing and ends cleanly."""
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, str(SCRIPTS / "fuzz"), target, "--runs", str(runs), "--light"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            cwd=tmp_path,
        )
    err = done.stderr.decode()
    assert done.returncode == 0, err[-3000:]
    assert f"stat::number_of_executed_units: {runs}" in err
    assert [name for name in os.listdir(tmp_path) if name.startswith("crash-")] == []
