"""A unit's faults given to the servers it runs against, with the unit's seed and id.

Each declared fault goes to every server that can inject faults (a `RecordedMCPServer`) and
whose universe declares the fault's tool (`*`: every such server); a fault with no such server
cannot fire, which `fault_checks` then reports as making the unit `invalid`, with the reason
kept here. A server that has no unit id of its own gets the unit's seed and id, so a `fraction`
draws the same calls on every machine, process and shard; one built with its own keeps them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..faults.spec import ALL_TOOLS, Fault
from ..mcp.recorded import RecordedMCPServer

__all__ = ["arm_servers"]


def arm_servers(
    servers: Mapping[str, Any], faults: Sequence[Fault], *, seed: int, unit_id: str
) -> dict[str, str]:
    """Add `faults` to the servers that serve their tools (a `ConfigError` if one does not fit
    its universe, e.g. a recording index past its end); return, by fault id, why each fault
    that reached no server cannot fire."""
    armable = {
        name: server for name, server in servers.items() if isinstance(server, RecordedMCPServer)
    }
    for server in armable.values():
        if not server.unit_id:
            server.fault_seed = seed
            server.unit_id = unit_id
    tools = {name: {t.name for t in server.universe.tools} for name, server in armable.items()}
    given: dict[str, list[Fault]] = {name: [] for name in armable}
    unplaced: dict[str, str] = {}
    for fault in faults:
        takers = [name for name in armable if fault.tool in (ALL_TOOLS, *tools[name])]
        for name in takers:
            given[name].append(fault)
        if not takers:
            unplaced[fault.fault_id] = _why_unplaced(fault, servers, armable)
    for name, server in armable.items():
        # Rebuilt even without new faults: the universe's own faults draw from the unit's seed.
        if given[name] or server.faults:
            server.set_faults([*server.faults, *given[name]])
    return unplaced


def _why_unplaced(
    fault: Fault, servers: Mapping[str, Any], armable: Mapping[str, RecordedMCPServer]
) -> str:
    if not servers:
        return "the scenario has no upstream"
    if not armable:
        return "none of the scenario's upstreams can inject faults (not recorded servers)"
    names = ", ".join(sorted(armable))
    return f"no upstream of the scenario ({names}) declares the tool {fault.tool!r}"
