"""Freeze a call log into a universe file (record mode, DESIGN §4 "freeze_universe")."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from .calls import MCPCall
from .canonical import canonical_key, is_json_value
from .errors import UniverseError
from .universe import (
    FORMAT_VERSION,
    Matching,
    Recording,
    Universe,
    UniverseTool,
    flatten_wire_args,
    validate_universe,
    write_universe,
)

__all__ = ["RECORDING_META", "freeze_universe"]

# A call log entry's `extra[RECORDING_META]` becomes its recording's `meta` (provenance).
RECORDING_META = "recording_meta"


def freeze_universe(
    call_log: Iterable[MCPCall],
    *,
    tools: Sequence[UniverseTool] | Mapping[str, UniverseTool],
    matching: Matching | None = None,
    path: str | os.PathLike[str] | None,
    include_divergent: bool = False,
    meta: dict[str, Any] | None = None,
) -> Universe:
    """Turn the calls that were answered without divergence into a universe, and write it.

    Stateless tools keep the first of identical (tool, canonical args) calls; sequence-mode tools
    keep every call in order. Divergent calls are left out unless `include_divergent`. Calls to
    tools not in `tools` are refused, so the file always loads. A call whose
    `extra["recording_meta"]` is a non-empty object passes it on as its recording's `meta`.
    """
    tool_list = list(tools.values()) if isinstance(tools, Mapping) else list(tools)
    modes = {tool.name: tool.mode for tool in tool_list}
    file = os.fspath(path) if path is not None else "<frozen universe>"
    seen: set[tuple[str, Any]] = set()
    recordings: list[Recording] = []
    for position, call in enumerate(call_log):
        if call.divergence is not None and not include_divergent:
            continue
        if call.tool_name not in modes:
            raise UniverseError(
                f"call {position} is to {call.tool_name!r}, which is not among the tools given "
                f"({', '.join(sorted(modes)) or 'none'})",
                file=file,
            )
        args = flatten_wire_args(call.tool_name, call.args)
        if not is_json_value(args) or not is_json_value(call.result):
            raise UniverseError(
                f"call {position} to {call.tool_name!r} has arguments or a result that are not "
                "JSON data",
                file=file,
            )
        if modes[call.tool_name] == "stateless":
            key = (call.tool_name, canonical_key(args))
            if key in seen:
                continue
            seen.add(key)
        recording = Recording(tool_name=call.tool_name, args=args, result=call.result)
        provenance = call.extra.get(RECORDING_META)
        if isinstance(provenance, dict) and provenance:
            recording.meta = dict(provenance)
        recordings.append(recording)
    universe = Universe(
        windtunnel_universe=FORMAT_VERSION,
        tools=tool_list,
        recordings=recordings,
        matching=matching if matching is not None else Matching(),
        meta=dict(meta or {}),
    )
    validate_universe(universe, file=file)
    if path is not None:
        write_universe(universe, path)
    return universe
