"""windtunnel-bench's universe names, where its code imports them (`windtunnel.api.universe`).

A project moving from windtunnel-bench changes no import: each name is ours, under the
original's name where ours differs (`UniverseMatching` is `Matching`, `UniverseRecording` is
`Recording`, `UniverseFormatError` is `UniverseError`, `save_universe` is `write_universe`,
`UNIVERSE_VERSION` is `FORMAT_VERSION`). The lookup helpers answer as a fresh server's first
call would, by our matching rules (docs/universe.md lists where those differ from the original).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..canonical import args_key, canonical_key
from ..errors import UniverseError
from ..freeze import freeze_universe
from ..miss_answers import SynthesizeHook
from ..universe import (
    FORMAT_VERSION,
    POLICIES,
    Matching,
    Recording,
    Universe,
    UniverseTool,
    flatten_wire_args,
    load_universe,
    write_universe,
)

__all__ = [
    "MATCH_MODES",
    "MISS_POLICIES",
    "UNIVERSE_VERSION",
    "SynthesizeHook",
    "Universe",
    "UniverseFormatError",
    "UniverseMatching",
    "UniverseRecording",
    "UniverseTool",
    "empty_result_for",
    "fail_call_result",
    "find_exact_recording",
    "find_keyed_recording",
    "find_nearest_recording",
    "freeze_universe",
    "load_universe",
    "normalize_tool_args",
    "save_universe",
    "tools_by_name",
]

UNIVERSE_VERSION = FORMAT_VERSION
MISS_POLICIES = frozenset(POLICIES)
MATCH_MODES = frozenset({"stateless", "sequence"})
UniverseFormatError = UniverseError
UniverseMatching = Matching
UniverseRecording = Recording
save_universe = write_universe


def tools_by_name(tools: Iterable[UniverseTool]) -> dict[str, UniverseTool]:
    """The tools by name."""
    return {tool.name: tool for tool in tools}


def normalize_tool_args(
    args: Mapping[str, Any] | None, tool_name: str | None = None
) -> dict[str, Any]:
    """The flat arguments of a call (`flatten_wire_args`); `None` is `{}`. Without `tool_name`,
    a wrapper's own name is taken for the tool's."""
    if args is None:
        return {}
    flat = dict(args)
    if tool_name is None:
        function = flat.get("function")
        named = function.get("name") if isinstance(function, dict) else flat.get("name")
        tool_name = named if isinstance(named, str) else ""
    return flatten_wire_args(tool_name, flat)


def _indices(universe: Universe, tool_name: str, candidates: Iterable[int] | None) -> list[int]:
    if candidates is None:
        return [i for i, r in enumerate(universe.recordings) if r.tool_name == tool_name]
    return [i for i in candidates if universe.recordings[i].tool_name == tool_name]


def find_exact_recording(
    universe: Universe,
    tool_name: str,
    args: dict[str, Any],
    candidate_indices: Iterable[int] | None = None,
) -> int | None:
    """The first recording of the tool (among the candidates) with canonically equal args."""
    wanted = args_key(args)
    for index in _indices(universe, tool_name, candidate_indices):
        if args_key(universe.recordings[index].args) == wanted:
            return index
    return None


def find_keyed_recording(
    universe: Universe,
    tool_name: str,
    args: dict[str, Any],
    candidate_indices: Iterable[int] | None = None,
) -> int | None:
    """The first recording equal to the call on the tool's `arg_keys` (each present on both
    sides); None when the tool has no `arg_keys` entry."""
    keys = universe.matching.arg_keys.get(tool_name)
    if keys is None or not all(key in args for key in keys):
        return None
    for index in _indices(universe, tool_name, candidate_indices):
        recorded = universe.recordings[index].args
        if all(
            key in recorded and canonical_key(recorded[key]) == canonical_key(args[key])
            for key in keys
        ):
            return index
    return None


def find_nearest_recording(
    universe: Universe,
    tool_name: str,
    args: dict[str, Any],
    candidate_indices: Iterable[int] | None = None,
) -> int | None:
    """The recording sharing the most (key, value) pairs with the call; ties to the earliest."""
    best: int | None = None
    best_shared = -1
    for index in _indices(universe, tool_name, candidate_indices):
        recorded = universe.recordings[index].args
        shared = sum(
            1
            for key, value in args.items()
            if key in recorded and canonical_key(recorded[key]) == canonical_key(value)
        )
        if shared > best_shared:
            best, best_shared = index, shared
    return best


def empty_result_for(tool: UniverseTool | None) -> Any:
    """The `empty` policy's value for a tool with a `result_schema`, as our servers answer it
    (docs/universe.md); without a schema, `{}` (a server with recordings of the tool takes the
    type of the first one)."""
    from ..matching import UniverseIndex
    from ..miss_answers import empty_result

    if tool is None:
        return {}
    lone = Universe(windtunnel_universe=FORMAT_VERSION, tools=[tool])
    return empty_result(UniverseIndex(lone), tool.name)


def fail_call_result(tool_name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The seed's fields of the `fail_call` answer (our servers add `reason`, `message` and
    `nearest`)."""
    return {"error": "no_recorded_result", "tool": tool_name, "args": args}
