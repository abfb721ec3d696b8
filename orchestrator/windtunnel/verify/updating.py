"""`wt verify --update`: write the universe as the live server is now, the way `wt record` does.

The new universe is built by the verification proxy's own `RecordingBuilder` (so the same
freezing, sequence detection, surface and redaction as `wt record`) from:

- the surface the live server just showed (identity, instructions, tools, resources, prompts);
- every recording in file order: the live answer (and its duration) where the call was re-sent,
  the recorded one (with its `meta`) where it was skipped (a write tool is never re-sent, so its
  recording stays), and none for a tool the live server no longer lists;
- what verification never asks again (resource reads, prompt gets, completions), as recorded;
- the universe's own `matching` (for the tools that remain), each tool's `result_schema` and
  its `"mode": "sequence"`.

It is written with `save_recording`, atomically (temporary file, then rename), like every
checkpoint of `wt record`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import msgspec

from .. import __version__
from ..calls import MCPCall
from ..canonical import canonical_key
from ..freeze import RECORDING_META
from ..record.build import Recording
from ..record.saving import save_recording
from ..record.tap import SERVER_MESSAGES
from ..universe import Matching, Universe, validate_universe
from .check_universe import Verified

__all__ = ["UpdateSummary", "updated_recording", "write_update"]


@dataclass(frozen=True)
class UpdateSummary:
    rerecorded: int
    kept: int
    dropped: int

    def text(self) -> str:
        return (
            f"{self.rerecorded} recording(s) re-recorded, {self.kept} kept as recorded, "
            f"{self.dropped} dropped (tool gone); surface from the live server"
        )


def updated_recording(verified: Verified) -> tuple[Recording, UpdateSummary]:
    """The recording `--update` writes (see the module), and what changed."""
    universe, proxy = verified.universe, verified.proxy
    tap = proxy.tap
    merged: list[MCPCall] = []
    kept = dropped = 0
    for index, recording in enumerate(universe.recordings):
        if recording.tool_name not in tap.tools:
            dropped += 1
            continue
        live = verified.live_calls.get(index)
        if live is not None:
            merged.append(live)
            continue
        kept += 1
        extra: dict[str, Any] = {}
        if isinstance(recording.server_messages, list) and recording.server_messages:
            extra[SERVER_MESSAGES] = recording.server_messages
        if isinstance(recording.meta, dict) and recording.meta:
            extra[RECORDING_META] = recording.meta  # its recorded duration and provenance
        is_error = isinstance(recording.result, dict) and recording.result.get("isError") is True
        proxy.redactor.see_call(recording.args, recording.result)
        merged.append(
            MCPCall(
                tool_name=recording.tool_name,
                args=recording.args,
                result=recording.result,
                upstream=tap.upstream,
                is_error=is_error,
                extra=extra,
            )
        )
    tap.calls = merged
    surface = tap.surface
    for read in universe.resource_reads:
        surface.resource_reads.setdefault(read.uri, msgspec.to_builtins(read))
    for get in universe.prompt_gets:
        key = (get.name, canonical_key(get.arguments))
        surface.prompt_gets.setdefault(key, msgspec.to_builtins(get))
    for completion in universe.completions:
        surface.completions.setdefault(
            canonical_key(completion.request()), msgspec.to_builtins(completion)
        )
    built = proxy.recording(with_log=False)
    new = _carried_over(universe, built.universe)
    summary = UpdateSummary(rerecorded=len(verified.live_calls), kept=kept, dropped=dropped)
    built.universe = new
    return built, summary


def _carried_over(old: Universe, new: Universe) -> Universe:
    """`new` with what only the old file knew: matching, result schemas, sequence modes, and
    when it was first recorded."""
    before = {tool.name: tool for tool in old.tools}
    tools = []
    for tool in new.tools:
        was = before.get(tool.name)
        if was is not None:
            tool = msgspec.structs.replace(
                tool,
                result_schema=was.result_schema,
                mode="sequence" if was.mode == "sequence" else tool.mode,
            )
        tools.append(tool)
    names = {tool.name for tool in tools}
    matching = Matching(
        on_miss=old.matching.on_miss,
        per_tool_on_miss={k: v for k, v in old.matching.per_tool_on_miss.items() if k in names},
        arg_keys={k: v for k, v in old.matching.arg_keys.items() if k in names},
        per_method_on_miss=old.matching.per_method_on_miss,
    )
    meta = dict(new.meta)
    meta["recorded_by"] = f"wt verify --update (windtunnel {__version__})"
    first = old.meta.get("first_recorded_at", old.meta.get("recorded_at"))
    if isinstance(first, str):
        meta["first_recorded_at"] = first
    updated = msgspec.structs.replace(new, tools=tools, matching=matching, meta=meta)
    validate_universe(updated, file="<updated universe>")
    return updated


def write_update(verified: Verified, path: str | os.PathLike[str]) -> UpdateSummary:
    """Write the updated universe over `path`, atomically; what changed."""
    recording, summary = updated_recording(verified)
    save_recording(recording, path)
    verified.report.updated = os.fspath(path)
    return summary
