"""Shard assignment: a pure function of the unit id, complete, disjoint and stable."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from windtunnel.errors import ConfigError
from windtunnel.runner.scenario import Scenario, ScenarioPack
from windtunnel.runner.units import plan_units
from windtunnel.scale.shards import (
    ShardSpec,
    parse_shard,
    plan_hash,
    select_shard,
    shard_dirname,
    shard_from_dirname,
    shard_of,
)

names = st.lists(
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), min_size=1),
    min_size=0,
    max_size=40,
    unique=True,
)


def pack_of(scenario_names: list[str], repeats: int = 1) -> ScenarioPack:
    return ScenarioPack("p", [Scenario(name=n, task="t", repeats=repeats) for n in scenario_names])


@settings(max_examples=200)
@given(names, st.integers(min_value=1, max_value=3), st.integers(min_value=1, max_value=64))
def test_shards_partition_the_plan(scenario_names: list[str], repeats: int, count: int) -> None:
    """For any N, the N shards together hold every unit of the plan exactly once, in plan order."""
    plan = plan_units(pack_of(scenario_names, repeats))
    shards = [select_shard(plan, ShardSpec(i, count)) for i in range(1, count + 1)]
    ids = [unit.id for shard in shards for unit in shard]
    assert sorted(ids) == sorted(unit.id for unit in plan)
    assert len(ids) == len(set(ids))
    for shard in shards:
        positions = [plan.index(unit) for unit in shard]
        assert positions == sorted(positions)


@settings(max_examples=200)
@given(names, st.text(min_size=1), st.integers(min_value=1, max_value=64))
def test_adding_a_scenario_moves_no_other_unit(
    scenario_names: list[str], added: str, count: int
) -> None:
    """A unit's shard depends on its id alone: a new scenario leaves every other unit in place."""
    before = {u.id: shard_of(u.id, count) for u in plan_units(pack_of(scenario_names))}
    grown = plan_units(pack_of([n for n in [*scenario_names, added] if n != added] + [added]))
    after = {u.id: shard_of(u.id, count) for u in grown}
    assert {uid: after[uid] for uid in before} == before


@settings(max_examples=200)
@given(st.text(min_size=1), st.integers(min_value=1, max_value=200))
def test_one_more_shard_only_moves_units_to_the_new_shard(unit_id: str, count: int) -> None:
    """Going from N to N+1 shards, a unit either stays put or moves to the new shard N+1."""
    assert shard_of(unit_id, count + 1) in (shard_of(unit_id, count), count + 1)


def test_assignment_is_pinned() -> None:
    """The assignment never changes between versions: shards of one run may come from several."""
    assert [shard_of("a#0", n) for n in (1, 2, 3, 4, 10, 100)] == [1, 2, 2, 2, 6, 30]
    assert [shard_of("b#0", n) for n in (1, 2, 3, 4, 10, 100)] == [1, 1, 3, 3, 3, 59]
    assert [shard_of("client-contact-lookup#0", n) for n in (2, 4, 100)] == [1, 4, 23]


def test_assignment_is_balanced_on_a_big_plan() -> None:
    """10,000 units over 10 shards: sizes as a fair hash gives them (within 2 sd of 1,000)."""
    ids = [f"scenario-{i:05d}#0" for i in range(10_000)]
    sizes = [0] * 10
    for uid in ids:
        sizes[shard_of(uid, 10) - 1] += 1
    assert sum(sizes) == 10_000
    assert sizes == [982, 1000, 993, 1040, 982, 1052, 985, 1026, 972, 968]


@pytest.mark.parametrize(
    ("text", "spec"),
    [("1/1", ShardSpec(1, 1)), ("2/4", ShardSpec(2, 4)), (" 4 / 4 ", ShardSpec(4, 4))],
)
def test_parse_shard(text: str, spec: ShardSpec) -> None:
    """`i/N` is 1-based; surrounding spaces are allowed."""
    assert parse_shard(text) == spec
    assert str(spec) == text.replace(" ", "")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("0/4", "shard index must be in 1..4 (1-based), got 0"),
        ("5/4", "shard index must be in 1..4 (1-based), got 5"),
        ("1/0", "shard count must be at least 1, got 0"),
        ("2", "--shard expects i/N with 1 <= i <= N (e.g. 1/4), got '2'"),
        ("a/b", "--shard expects i/N with 1 <= i <= N (e.g. 1/4), got 'a/b'"),
        ("-1/4", "--shard expects i/N with 1 <= i <= N (e.g. 1/4), got '-1/4'"),
    ],
)
def test_parse_shard_refuses(text: str, message: str) -> None:
    """Bad shard specs are one ConfigError saying what is expected."""
    with pytest.raises(ConfigError) as caught:
        parse_shard(text)
    assert str(caught.value) == message


def test_plan_hash_and_dirname() -> None:
    """The plan hash covers the pack name and the ids in order; shard dirs are named i-of-N."""
    digest = plan_hash("p", ["a#0", "b#0"])
    assert digest == "5533c9b651b1abbbb51ab08b79516562b01a7c2d0a405038667a1d13d69baf16"
    assert plan_hash("p", ["b#0", "a#0"]) != digest
    assert plan_hash("q", ["a#0", "b#0"]) != digest
    assert shard_dirname(ShardSpec(2, 4)) == "2-of-4"


def test_shard_dirnames_read_back() -> None:
    """`shard_from_dirname` inverts `shard_dirname` and refuses every other name."""
    for count in range(1, 6):
        for index in range(1, count + 1):
            spec = ShardSpec(index, count)
            assert shard_from_dirname(shard_dirname(spec)) == spec
    for name in ["0-of-4", "5-of-4", "2-of-0", "x-of-4", "2of4", "2-of-", "merged", ""]:
        assert shard_from_dirname(name) is None
