"""Work units: one run of one scenario, with a stable id and a seed derived from it.

A unit's id is `"<scenario name>#<repeat>"` (repeats count from 0); its seed is the first 8 bytes
of sha256(id) as a big-endian integer, shifted right once to fit a signed 64-bit integer. Seeds
never come from a global RNG or `hash()`, so every process and every shard agrees on them.
"""

from __future__ import annotations

import fnmatch
import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ..errors import ConfigError
from .scenario import Scenario, ScenarioPack

__all__ = [
    "ScenarioFilter",
    "WorkUnit",
    "count_units",
    "iter_units",
    "parse_unit_id",
    "plan_units",
    "unit_id",
    "unit_seed",
]

ScenarioFilter = str | Callable[[Scenario], bool]


def unit_id(scenario_name: str, repeat: int) -> str:
    return f"{scenario_name}#{repeat}"


def parse_unit_id(unit_id_text: str) -> tuple[str, int] | None:
    """(scenario name, repeat) of an id as `unit_id` writes it, or None for any other text."""
    name, sep, repeat = unit_id_text.rpartition("#")
    if not sep or not repeat.isdigit() or not repeat.isascii():
        return None
    parsed = int(repeat)
    return (name, parsed) if unit_id(name, parsed) == unit_id_text else None


def unit_seed(unit_id: str) -> int:
    """A 63-bit seed from the unit id (sha256), the same on every machine."""
    digest = hashlib.sha256(unit_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass(frozen=True, eq=False)
class WorkUnit:
    """One run of one scenario."""

    scenario: Scenario
    repeat: int

    @property
    def id(self) -> str:
        return unit_id(self.scenario.name, self.repeat)

    @property
    def seed(self) -> int:
        return unit_seed(self.id)

    def to_dict(self) -> dict[str, str | int]:
        """The unit as plan-manifest data (`wt plan`): id, scenario, repeat, seed."""
        return {
            "id": self.id,
            "scenario": self.scenario.name,
            "repeat": self.repeat,
            "seed": self.seed,
        }


def _matches(scenario: Scenario, scenario_filter: ScenarioFilter | None) -> bool:
    if scenario_filter is None:
        return True
    if isinstance(scenario_filter, str):
        return fnmatch.fnmatchcase(scenario.name, scenario_filter)
    return bool(scenario_filter(scenario))


def _check_repeats(repeats: int | None) -> None:
    if repeats is not None and repeats < 1:
        raise ConfigError(f"repeats must be at least 1, got {repeats}")


def iter_units(
    pack: ScenarioPack,
    *,
    scenario_filter: ScenarioFilter | None = None,
    repeats: int | None = None,
) -> Iterator[WorkUnit]:
    """`plan_units` one unit at a time: a run holds the units in flight, never the plan.

    `repeats` is checked at the call, before the first unit is asked for.
    """
    _check_repeats(repeats)
    return (
        WorkUnit(scenario, repeat)
        for scenario in pack.scenarios
        if _matches(scenario, scenario_filter)
        for repeat in range(repeats if repeats is not None else scenario.repeats)
    )


def count_units(
    pack: ScenarioPack,
    *,
    scenario_filter: ScenarioFilter | None = None,
    repeats: int | None = None,
) -> int:
    """How many units `plan_units` would return, without making them."""
    _check_repeats(repeats)
    return sum(
        repeats if repeats is not None else scenario.repeats
        for scenario in pack.scenarios
        if _matches(scenario, scenario_filter)
    )


def plan_units(
    pack: ScenarioPack,
    *,
    scenario_filter: ScenarioFilter | None = None,
    repeats: int | None = None,
) -> list[WorkUnit]:
    """Every unit of the pack in order: scenarios in pack order, then repeats 0..n-1.

    `scenario_filter` is a glob on the scenario name or a predicate; `repeats` overrides every
    scenario's own count.
    """
    return list(iter_units(pack, scenario_filter=scenario_filter, repeats=repeats))
