"""Which declared faults a unit's calls received: the integrity check behind the `invalid` status.

A server that injects a fault into a call logs it with the call (`extra["injected_fault"]`,
`Fault.evidence`: the fault's `id`, `kind`, `target` and arguments). A unit declares its faults
(the scenario's, `wt run --fault`'s and its universes' own); each is counted over the unit's
call log by its id, and one injected into no call makes the unit `invalid`: it did not test
what it was meant to. (`extra["fault"]` is something else: a server's own failure, such as a
`synthesize` hook raising, which fails the unit as an error.)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..calls import MCPCall
from ..faults.spec import FAULT_EXTRA_KEY, Fault
from .trace import FaultCheck

__all__ = ["check_faults", "count_injected", "fault_label", "injected_fault"]


def injected_fault(call: MCPCall) -> dict[str, Any] | None:
    """The record of the fault injected into `call`, or None when it was answered normally."""
    fault = call.extra.get(FAULT_EXTRA_KEY)
    return fault if isinstance(fault, dict) else None


def fault_label(fault: dict[str, Any]) -> str:
    """How reports name an injected fault: its id (its spelling, `charge=timeout`, unless the
    fault was given one), with its kind when the id does not say it."""
    fault_id, kind = fault.get("id"), fault.get("kind")
    if not isinstance(fault_id, str) or not fault_id:
        return str(kind or "fault")
    return fault_id if not isinstance(kind, str) or kind in fault_id else f"{fault_id} ({kind})"


def count_injected(calls: Iterable[MCPCall]) -> int:
    """Calls answered with an injected fault."""
    return sum(1 for call in calls if injected_fault(call) is not None)


def check_faults(
    declared: Sequence[Fault],
    calls: Iterable[MCPCall],
    notes: Mapping[str, str] | None = None,
) -> list[FaultCheck]:
    """Each declared fault (by its id) with the number of calls it was injected into, and the
    note on why one could not fire (`notes`, by id); faults sharing an id are one check."""
    counts = dict.fromkeys((fault.fault_id for fault in declared), 0)
    for call in calls:
        fault = injected_fault(call)
        fault_id = fault.get("id") if fault is not None else None
        if isinstance(fault_id, str) and fault_id in counts:
            counts[fault_id] += 1
    notes = notes or {}
    return [
        FaultCheck(fault=fault_id, injected=count, note=None if count else notes.get(fault_id))
        for fault_id, count in counts.items()
    ]
