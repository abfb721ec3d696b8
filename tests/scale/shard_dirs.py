"""Shard run directories built from traces (no runtime), for the merge tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from tests.runner.factories import trace
from windtunnel.rundir.manifest import build_manifest, write_manifest
from windtunnel.rundir.results import write_traces
from windtunnel.runner.scenario import Scenario, ScenarioPack
from windtunnel.runner.trace import Status, Trace
from windtunnel.runner.units import WorkUnit, plan_units
from windtunnel.scale.shards import ShardSpec, select_shard

StatusOf = Callable[[WorkUnit], Status]


def small_pack(name: str = "shop", scenarios: int = 6, repeats: int = 2) -> ScenarioPack:
    """`scenarios` scenarios `s0..` with `repeats` runs each (never run: traces are made up)."""
    return ScenarioPack(
        name, [Scenario(name=f"s{i}", task="t", repeats=repeats) for i in range(scenarios)]
    )


def unit_trace(unit: WorkUnit, status: Status = "passed") -> Trace:
    """A finished trace of `unit`, started at a time fixed by the unit's seed."""
    return trace(
        scenario=unit.scenario.name,
        repeat=unit.repeat,
        status=status,
        started_at=1_796_000_000.0 + unit.seed % 1000,
        output=f"answer of {unit.id}",
    )


def write_shards(
    root: Path,
    pack: ScenarioPack,
    count: int,
    *,
    status_of: StatusOf = lambda unit: "passed",
    skip: frozenset[str] = frozenset(),
) -> list[Path]:
    """Every shard of `pack` cut `count` ways as `root/s<i>`; units in `skip` left unfinished."""
    plan = plan_units(pack)
    dirs = []
    for index in range(1, count + 1):
        spec = ShardSpec(index, count)
        run_dir = root / f"s{index}"
        write_manifest(run_dir, build_manifest(pack.name, plan, spec))
        units = [u for u in select_shard(plan, spec) if u.id not in skip]
        write_traces(run_dir, [unit_trace(u, status_of(u)) for u in units], pack.name)
        dirs.append(run_dir)
    return dirs
