"""Scenarios and packs: what to run, against which upstreams, judged by which policies.

`ScenarioPack.mcp_factory(scenario)` returns the servers of one run: one server, a list, or a
`{name: server}` mapping. `normalize_servers` turns any of these into `{name: server}`; the default
factory builds one `RecordedMCPServer` per entry of `scenario.upstreams`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

import msgspec

from ..errors import ConfigError
from ..faults.spec import Fault, parse_fault
from ..universe import Universe
from .agent_spec import AgentSpec

if TYPE_CHECKING:
    from ..mcp.recorded import RecordedMCPServer
from .policies import Policy
from .scorers import Scorer

__all__ = [
    "McpFactory",
    "PlanStep",
    "Scenario",
    "ScenarioPack",
    "UpstreamSource",
    "default_mcp_factory",
    "normalize_servers",
]

UpstreamSource: TypeAlias = "str | os.PathLike[str] | Universe"
McpFactory: TypeAlias = "Callable[[Scenario], Any]"


class PlanStep(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One MCP call of a scripted agent's plan; `upstream` may be left out with one upstream."""

    tool: str
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    upstream: str | None = None


@dataclass(frozen=True, eq=False)
class Scenario:
    """A task for the agent, the upstreams it runs against, and how the run is judged."""

    name: str
    task: str
    upstreams: Mapping[str, UpstreamSource] = field(default_factory=dict)
    policies: Sequence[Policy] = ()
    scorers: Sequence[Scorer] = ()
    repeats: int = 1
    timeout_s: float = 60.0
    tags: Sequence[str] = ()
    plan: Sequence[PlanStep] = ()
    final_answer: str | None = None
    agent: AgentSpec | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    faults: Sequence[Fault | str] = ()
    """Faults injected into this scenario's upstreams (`Fault`s or their command-line spellings,
    `"charge=timeout"`); each must be injected into at least one call of a run, or the run is
    `invalid`."""

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("a scenario needs a non-empty name")
        faults = tuple(
            parse_fault(fault, path=f"scenario {self.name!r} faults[{i}]")
            if isinstance(fault, str)
            else fault
            for i, fault in enumerate(self.faults)
        )
        for i, fault in enumerate(faults):
            if not isinstance(fault, Fault):
                raise ConfigError(
                    f"scenario {self.name!r}: faults[{i}] is a {type(fault).__name__}, expected "
                    "a Fault or its spelling (e.g. 'charge=timeout')"
                )
        object.__setattr__(self, "faults", faults)
        if self.repeats < 1:
            raise ConfigError(f"scenario {self.name!r}: repeats must be at least 1")
        if not self.timeout_s > 0:
            raise ConfigError(f"scenario {self.name!r}: timeout_s must be positive")
        for attr in ("policies", "scorers", "tags", "plan"):
            object.__setattr__(self, attr, tuple(getattr(self, attr)))

    @property
    def declared_faults(self) -> tuple[Fault, ...]:
        """`faults`, every one a `Fault` (spellings are parsed when the scenario is made)."""
        return tuple(fault for fault in self.faults if isinstance(fault, Fault))


@dataclass(frozen=True, eq=False)
class ScenarioPack:
    """Scenarios run together: the unit of `wt run`, a results directory and a JUnit suite."""

    name: str
    scenarios: Sequence[Scenario]
    mcp_factory: McpFactory | None = None
    agent: AgentSpec | None = None
    concurrency: int = 4
    source: str | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ConfigError("a pack needs a non-empty name")
        if self.concurrency < 1:
            raise ConfigError(f"pack {self.name!r}: concurrency must be at least 1")
        object.__setattr__(self, "scenarios", tuple(self.scenarios))
        seen: set[str] = set()
        for scenario in self.scenarios:
            if scenario.name in seen:
                raise ConfigError(f"pack {self.name!r}: duplicate scenario name {scenario.name!r}")
            seen.add(scenario.name)

    def scenario(self, name: str) -> Scenario:
        for scenario in self.scenarios:
            if scenario.name == name:
                return scenario
        raise KeyError(name)

    def servers_for(self, scenario: Scenario) -> dict[str, Any]:
        """The servers of one run of `scenario`, by upstream name."""
        factory = self.mcp_factory or default_mcp_factory
        return normalize_servers(factory(scenario))

    def agent_for(self, scenario: Scenario) -> AgentSpec | None:
        """The scenario's own agent, else the pack's."""
        return scenario.agent or self.agent


def default_mcp_factory(scenario: Scenario) -> dict[str, Any]:
    """One `RecordedMCPServer` per upstream, named after it; universes load here, lazily. Under
    a record mode from `WT_RECORD_MODE`, the server that mode needs (`record_modes`)."""
    from ..mcp.recorded import RecordedMCPServer  # the serving stack, only when a run serves
    from ..record.modes import RECORD_MODE_ENV, choose_record_mode
    from .record_modes import PackRecording

    if choose_record_mode(None, where=RECORD_MODE_ENV) != "none":
        return PackRecording()(scenario)

    servers: dict[str, RecordedMCPServer] = {}
    for name, source in scenario.upstreams.items():
        servers[name] = RecordedMCPServer(source, name=name, scenario=scenario.name)
    return servers


def _server_name(server: object) -> str:
    name = getattr(server, "name", None)
    return name if isinstance(name, str) and name else "mcp"


def normalize_servers(result: Any) -> dict[str, Any]:
    """A factory's answer (one server, a list, or `{name: server}`) as `{name: server}`.

    Listed servers are named by their `.name` ("mcp" when they have none); a name already taken
    gets `-2`, `-3`, ... in list order, so the same list always gives the same names.
    """
    if result is None:
        raise ConfigError("mcp_factory returned None; expected a server, a list or a mapping")
    if isinstance(result, Mapping):
        servers: dict[str, Any] = {}
        for name, server in result.items():
            if not isinstance(name, str) or not name:
                raise ConfigError(f"mcp_factory mapping has a bad upstream name {name!r}")
            servers[name] = server
        return servers
    listed = list(result) if isinstance(result, list | tuple) else [result]
    servers = {}
    for server in listed:
        base = _server_name(server)
        name, n = base, 1
        while name in servers:
            n += 1
            name = f"{base}-{n}"
        servers[name] = server
    return servers
