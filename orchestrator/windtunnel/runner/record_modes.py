"""Record modes in a pack (`[record]` in the TOML, or `WT_RECORD_MODE`): the factory that gives
each scenario's upstreams the server their mode needs (`record.mode_servers`). Light: the serving
stack loads when a run asks for servers, not when a pack is read.

    [record]
    mode = "new_episodes"                 # every upstream (else WT_RECORD_MODE, else none)
    [record.upstreams.crm]
    mode = "once"                         # this one records crm's universe if it is missing
    live = "https://crm.staging/mcp"      # or a command line; default: the universe's meta
    redact = ["key:api_key"]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..record.modes import RecordMode, choose_record_mode

if TYPE_CHECKING:
    from .scenario import Scenario

__all__ = ["PackRecording", "UpstreamRecording"]


@dataclass(frozen=True)
class UpstreamRecording:
    mode: RecordMode | None = None
    live: str | None = None
    redact: tuple[str, ...] = ()


@dataclass(frozen=True)
class PackRecording:
    """A pack's `mcp_factory` under record modes: one server per upstream of the scenario."""

    mode: RecordMode | None = None
    upstreams: Mapping[str, UpstreamRecording] = field(default_factory=dict)
    where: str = "[record]"

    def mode_of(self, upstream: str) -> RecordMode:
        own = self.upstreams.get(upstream, UpstreamRecording()).mode
        return choose_record_mode(own or self.mode, where=self.where)

    def __call__(self, scenario: Scenario) -> dict[str, Any]:
        from ..errors import ConfigError
        from ..mcp.recorded import RecordedMCPServer
        from ..record.mode_servers import server_for_mode
        from ..record.redact import RedactionRules, parse_rule
        from ..record.upstream_source import given_upstream

        servers: dict[str, Any] = {}
        for name, source in scenario.upstreams.items():
            if not isinstance(source, str | os.PathLike):
                # A universe given as an object has no file to record into or append to.
                if self.mode_of(name) != "none":
                    raise ConfigError(
                        f"upstream {name!r} of scenario {scenario.name!r} is a universe object: "
                        "a record mode needs its file",
                        file=self.where,
                    )
                servers[name] = RecordedMCPServer(source, name=name, scenario=scenario.name)
                continue
            config = self.upstreams.get(name, UpstreamRecording())
            rules = RedactionRules()
            for spec in config.redact:
                rules.extend(parse_rule(spec, where=f"{self.where}.upstreams.{name}.redact"))
            live = config.live
            servers[name] = server_for_mode(
                source,
                mode=self.mode_of(name),
                upstream=None if live is None else given_upstream(live, where=self.where),
                redact=rules,
                name=name,
                scenario=scenario.name,
            )
        return servers
