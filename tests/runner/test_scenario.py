"""Scenarios, packs, server normalization, the default factory and work units."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from windtunnel.errors import ConfigError
from windtunnel.mcp.recorded import RecordedMCPServer
from windtunnel.runner.agent_spec import AgentSpec
from windtunnel.runner.scenario import (
    Scenario,
    ScenarioPack,
    default_mcp_factory,
    normalize_servers,
)
from windtunnel.runner.units import plan_units, unit_seed
from windtunnel.universe import load_universe

CRM = Path(__file__).parents[2] / "configs" / "examples" / "crm.universe.json"


class Named:
    def __init__(self, name: str | None) -> None:
        self.name = name


def test_normalize_a_single_server() -> None:
    """One server becomes a one-entry mapping under its own name."""
    server = Named("crm")
    assert normalize_servers(server) == {"crm": server}


def test_normalize_a_list_deduplicates_names_in_order() -> None:
    """Listed servers keep their names; repeats get -2, -3 in list order; nameless ones are mcp."""
    a, b, c, d, e = Named("crm"), Named("crm"), Named("billing"), Named(None), Named("crm")
    servers = normalize_servers([a, b, c, d, e])
    assert list(servers) == ["crm", "crm-2", "billing", "mcp", "crm-3"]
    assert [servers[n] for n in servers] == [a, b, c, d, e]


def test_normalize_a_mapping_keeps_its_names() -> None:
    """A mapping is taken as given."""
    a, b = Named("x"), Named("y")
    assert normalize_servers({"crm": a, "billing": b}) == {"crm": a, "billing": b}


@pytest.mark.parametrize(
    ("result", "message"),
    [
        (None, "mcp_factory returned None; expected a server, a list or a mapping"),
        ({"": Named("x")}, "mcp_factory mapping has a bad upstream name ''"),
    ],
)
def test_normalize_refuses_nonsense(result: object, message: str) -> None:
    """A factory answer that names no servers is a ConfigError."""
    with pytest.raises(ConfigError) as info:
        normalize_servers(result)
    assert str(info.value) == message


def test_default_factory_builds_one_recorded_server_per_upstream() -> None:
    """Each upstream gets its own RecordedMCPServer named after it, tagged with the scenario."""
    universe = load_universe(CRM)
    scenario = Scenario("s", "task", upstreams={"crm": CRM, "crm_copy": universe})
    servers = default_mcp_factory(scenario)
    assert list(servers) == ["crm", "crm_copy"]
    assert all(isinstance(s, RecordedMCPServer) for s in servers.values())
    assert [s.name for s in servers.values()] == ["crm", "crm_copy"]
    assert servers["crm"].replay.scenario == "s"
    assert servers["crm_copy"].universe is universe
    # Two runs never share state: each call builds fresh servers.
    assert default_mcp_factory(scenario)["crm"] is not servers["crm"]


def test_pack_uses_its_factory_and_normalizes() -> None:
    """`servers_for` runs the pack's factory and normalizes its answer."""
    server = Named("crm")
    pack = ScenarioPack("p", [Scenario("s", "t")], mcp_factory=lambda s: [server])
    assert pack.servers_for(pack.scenarios[0]) == {"crm": server}


def test_scenario_agent_overrides_pack_agent() -> None:
    """A scenario's own agent wins over the pack's."""
    mine = AgentSpec(kind="scripted")
    theirs = AgentSpec(kind="python", callable="agents.support:run")
    pack = ScenarioPack("p", [Scenario("a", "t", agent=mine), Scenario("b", "t")], agent=theirs)
    assert pack.agent_for(pack.scenarios[0]) is mine
    assert pack.agent_for(pack.scenarios[1]) is theirs


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Scenario("", "t"), "a scenario needs a non-empty name"),
        (lambda: Scenario("s", "t", repeats=0), "scenario 's': repeats must be at least 1"),
        (lambda: Scenario("s", "t", timeout_s=0), "scenario 's': timeout_s must be positive"),
        (
            lambda: ScenarioPack("p", [Scenario("s", "t"), Scenario("s", "u")]),
            "pack 'p': duplicate scenario name 's'",
        ),
        (lambda: ScenarioPack("p", [], concurrency=0), "pack 'p': concurrency must be at least 1"),
    ],
)
def test_invalid_scenarios_and_packs(build: object, message: str) -> None:
    """Python-built scenarios and packs are checked like TOML ones."""
    with pytest.raises(ConfigError) as info:
        build()  # type: ignore[operator]
    assert str(info.value) == message


def test_units_have_stable_ids_and_seeds() -> None:
    """Units are scenario-major, repeat-minor, with ids name#repeat and sha256-derived seeds."""
    pack = ScenarioPack("p", [Scenario("a", "t", repeats=2), Scenario("b", "t")])
    units = plan_units(pack)
    assert [u.id for u in units] == ["a#0", "a#1", "b#0"]
    assert [u.seed for u in units] == [unit_seed(u.id) for u in plan_units(pack)]
    assert all(0 <= u.seed < 2**63 for u in units)
    assert units[1].to_dict() == {
        "id": "a#1",
        "scenario": "a",
        "repeat": 1,
        "seed": unit_seed("a#1"),
    }
    assert len({u.seed for u in units}) == 3


def test_unit_seed_is_pinned() -> None:
    """The seed is the first 8 bytes of sha256(id), big-endian, shifted right once."""
    digest = hashlib.sha256(b"bluewing#3").digest()
    assert unit_seed("bluewing#3") == int.from_bytes(digest[:8], "big") >> 1
    assert unit_seed("bluewing#3") == 2062476440242352970


def test_plan_filters_and_overrides_repeats() -> None:
    """A glob or predicate selects scenarios; `repeats` overrides every scenario's own."""
    pack = ScenarioPack(
        "p",
        [
            Scenario("billing-overdue", "t", repeats=3, tags=["billing"]),
            Scenario("crm-lookup", "t"),
        ],
    )
    assert [u.id for u in plan_units(pack, scenario_filter="billing-*")] == [
        "billing-overdue#0",
        "billing-overdue#1",
        "billing-overdue#2",
    ]
    assert [u.id for u in plan_units(pack, repeats=1)] == ["billing-overdue#0", "crm-lookup#0"]
    picked = plan_units(pack, scenario_filter=lambda s: "billing" not in s.tags, repeats=2)
    assert [u.id for u in picked] == ["crm-lookup#0", "crm-lookup#1"]
    with pytest.raises(ConfigError, match="repeats must be at least 1, got 0"):
        plan_units(pack, repeats=0)
