"""Freeze a call log into a universe file (record mode, DESIGN §4 "freeze_universe")."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import msgspec

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
    matching: Matching | Mapping[str, Any] | None = None,
    path: str | os.PathLike[str] | None,
    include_divergent: bool = False,
    meta: dict[str, Any] | None = None,
) -> Universe:
    """Turn the calls that were answered without divergence into a universe, and write it.

    Stateless tools keep the first of identical (tool, canonical args) calls; sequence-mode tools
    keep every call in order. Divergent calls are left out unless `include_divergent`. Calls to
    tools not in `tools` are refused, so the file always loads. A call whose
    `extra["recording_meta"]` is a non-empty object passes it on as its recording's `meta`.
    `matching` is a `Matching` or its mapping form, as in the file
    (`{"arg_keys": {"client_lookup": ["query"]}}`). Any problem is a `UniverseError` raised
    before anything is written.
    """
    tool_list = list(tools.values()) if isinstance(tools, Mapping) else list(tools)
    modes = {tool.name: tool.mode for tool in tool_list}
    file = os.fspath(path) if path is not None else "<frozen universe>"
    rules = _matching(matching, file)
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
        provenance = call.extra.get(RECORDING_META)
        recordings.append(
            Recording(
                tool_name=call.tool_name,
                args=args,
                result=call.result,
                meta=dict(provenance)
                if isinstance(provenance, dict) and provenance
                else msgspec.UNSET,
            )
        )
    universe = Universe(
        windtunnel_universe=FORMAT_VERSION,
        tools=tool_list,
        recordings=recordings,
        matching=rules,
        meta=dict(meta or {}),
    )
    validate_universe(universe, file=file)
    if path is not None:
        write_universe(universe, path)
    return universe


def _matching(matching: Matching | Mapping[str, Any] | None, file: str) -> Matching:
    """The matching rules, from a `Matching` or the mapping form a universe file holds."""
    if matching is None:
        return Matching()
    if isinstance(matching, Matching):
        return matching
    if not isinstance(matching, Mapping):
        raise UniverseError(
            f"matching must be a Matching or a mapping, got {type(matching).__name__}",
            file=file,
            path="$.matching",
        )
    try:
        return msgspec.convert(dict(matching), Matching)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `")
        path = "$.matching" + where.rstrip("`").removeprefix("$") if where else "$.matching"
        raise UniverseError(message, file=file, path=_name_the_key(matching, path)) from None


def _name_the_key(matching: Mapping[str, Any], path: str) -> str:
    """msgspec writes a mapping's key as `[...]`: put the key that fails in its place."""
    field, sep, _ = path.removeprefix("$.matching.").partition("[...]")
    entries = matching.get(field)
    if not sep or not isinstance(entries, Mapping):
        return path
    for key, value in entries.items():
        try:
            msgspec.convert({field: {key: value}}, Matching)
        except msgspec.ValidationError:
            return path.replace("[...]", f".{key}", 1)
    return path
