"""What `wt validate` warns about in a universe that loads (DESIGN §3, forward tolerance).

Within version 1 a universe may hold what this release does not read: a field a newer producer
added (`producer`, a future tool field), which loads and takes no part in matching; and entries
that load but do nothing, or less than they seem to (`arg_keys` / `per_tool_on_miss` / `modes`
naming a tool the file does not declare, an empty or repeated key list, a mode set twice). Each
is one `UniverseWarning` with its JSON path; `wt validate --strict` fails on any.

Pure: the file's bytes and the universe they loaded as in, warnings out.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import msgspec

from .errors import UniverseError
from .faults.spec import FAULT_FIELDS
from .input_files import read_input
from .universe import (
    MATCHING_FIELDS,
    Recording,
    Universe,
    UniverseTool,
    decode_universe,
)
from .universe_surface import CompletionRecord, PromptGet, ResourceRead, ServerSurface

__all__ = ["UniverseWarning", "load_universe_with_warnings", "universe_warnings"]


class UniverseWarning(msgspec.Struct, frozen=True):
    """One thing in a universe that loads but is not read as written."""

    path: str
    message: str


def _names(struct: type[msgspec.Struct]) -> frozenset[str]:
    return frozenset(field.encode_name for field in msgspec.structs.fields(struct))


_TOP = _names(Universe)
_TOOL = _names(UniverseTool)
_RECORDING = _names(Recording)
_ARG_KEYS_OBJECT = frozenset({"keys", "arg_keys", "mode"})
_LISTS: dict[str, frozenset[str]] = {
    "resource_reads": _names(ResourceRead),
    "prompt_gets": _names(PromptGet),
    "completions": _names(CompletionRecord),
}


def load_universe_with_warnings(
    path: str | os.PathLike[str],
) -> tuple[Universe, list[UniverseWarning]]:
    """`load_universe`, and what it loaded but does not read as written."""
    file = os.fspath(path)
    data = read_input(file, what="a universe file", error=UniverseError)
    universe = decode_universe(data, file=file)
    return universe, universe_warnings(data, universe)


def universe_warnings(data: bytes | str, universe: Universe) -> list[UniverseWarning]:
    """The warnings for a file whose bytes are `data` and which loaded as `universe`."""
    document = msgspec.json.decode(data)
    warnings = list(_unknown_fields(document))
    warnings.extend(_matching_warnings(document.get("matching"), universe))
    warnings.extend(_overridden_modes(document, universe))
    return warnings


def _unknown(obj: Any, known: frozenset[str], path: str) -> Iterator[UniverseWarning]:
    if isinstance(obj, dict):
        for key in obj:
            if key not in known:
                yield UniverseWarning(
                    f"{path}.{key}", "unknown field: loaded, not read, not written back"
                )


def _unknown_fields(document: dict[str, Any]) -> Iterator[UniverseWarning]:
    yield from _unknown(document, _TOP, "$")
    for i, tool in enumerate(document.get("tools") or []):
        yield from _unknown(tool, _TOOL, f"$.tools[{i}]")
    for i, recording in enumerate(document.get("recordings") or []):
        yield from _unknown(recording, _RECORDING, f"$.recordings[{i}]")
    yield from _unknown(document.get("server"), _names(ServerSurface), "$.server")
    for field, known in _LISTS.items():
        for i, entry in enumerate(document.get(field) or []):
            yield from _unknown(entry, known, f"$.{field}[{i}]")
    for i, fault in enumerate(document.get("faults") or []):
        yield from _unknown(fault, FAULT_FIELDS, f"$.faults[{i}]")
    matching = document.get("matching")
    yield from _unknown(matching, MATCHING_FIELDS, "$.matching")
    if isinstance(matching, dict):
        for tool_name, entry in (matching.get("arg_keys") or {}).items():
            yield from _unknown(entry, _ARG_KEYS_OBJECT, f"$.matching.arg_keys.{tool_name}")


def _matching_warnings(matching: Any, universe: Universe) -> Iterator[UniverseWarning]:
    if not isinstance(matching, dict):
        return
    declared = {tool.name for tool in universe.tools}
    for field in ("arg_keys", "per_tool_on_miss", "modes"):
        for tool_name in matching.get(field) or {}:
            if tool_name not in declared:
                yield UniverseWarning(
                    f"$.matching.{field}.{tool_name}",
                    f"names {tool_name!r}, which the universe does not declare: it has no effect",
                )
    for tool_name, entry in (matching.get("arg_keys") or {}).items():
        keys = entry.get("keys", entry.get("arg_keys")) if isinstance(entry, dict) else entry
        where = f"$.matching.arg_keys.{tool_name}"
        if tool_name in declared and not keys:
            yield UniverseWarning(
                where,
                "no keys: every call of this tool is a keyed hit on its first recording "
                "(in sequence mode, its first one not yet used)",
            )
        elif isinstance(keys, list) and len(set(keys)) != len(keys):
            yield UniverseWarning(where, "a key is listed twice; it counts once")
    set_by_arg_keys = {
        name
        for name, entry in (matching.get("arg_keys") or {}).items()
        if isinstance(entry, dict) and entry.get("mode") is not None
    }
    for tool_name in sorted(set_by_arg_keys & set(matching.get("modes") or {})):
        yield UniverseWarning(
            f"$.matching.arg_keys.{tool_name}.mode",
            "the mode is also set in matching.modes, which wins",
        )


def _overridden_modes(document: dict[str, Any], universe: Universe) -> Iterator[UniverseWarning]:
    """A tool whose own `mode` the matching rules set otherwise."""
    mode_of = {tool.name: tool.mode for tool in universe.tools}
    for i, tool in enumerate(document.get("tools") or []):
        if not isinstance(tool, dict) or tool.get("mode") is None:
            continue
        name = tool.get("name")
        if isinstance(name, str) and mode_of.get(name, tool["mode"]) != tool["mode"]:
            yield UniverseWarning(
                f"$.tools[{i}].mode",
                f"the matching rules set this tool's mode to {mode_of[name]!r}, which wins",
            )
