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
    MATCHING_FIELDS,
    CompletionRecord,
    Matching,
    PromptGet,
    Recording,
    ResourceRead,
    ServerSurface,
    ToolMode,
    Universe,
    UniverseTool,
    flatten_wire_args,
    matching_from_file,
    tool_from_file,
    validate_universe,
    with_modes,
    write_universe,
)

__all__ = ["RECORDED_DURATION", "RECORDING_META", "freeze_universe", "rounded_ms"]

# A call log entry's `extra[RECORDING_META]` becomes its recording's `meta` (provenance).
RECORDING_META = "recording_meta"

RECORDED_DURATION = "duration_ms"
"""The key of a recording's `meta` that says how long the witnessed call took, in milliseconds
(`wt record`, and `wt import` where the trace timed the call): what `delay:recorded` waits."""


def rounded_ms(milliseconds: float) -> float:
    """A duration as a recording keeps it: milliseconds to the microsecond (3 decimals), never
    negative (a wall clock stepped back mid-call is taken as no time)."""
    return round(max(milliseconds, 0.0), 3)


def freeze_universe(
    call_log: Iterable[MCPCall],
    tools: Sequence[UniverseTool | Mapping[str, Any]] | Mapping[str, UniverseTool],
    *,
    matching: Matching | Mapping[str, Any] | None = None,
    path: str | os.PathLike[str] | None = None,
    include_divergent: bool = False,
    meta: dict[str, Any] | None = None,
    server: ServerSurface | Mapping[str, Any] | None = None,
    resources: Sequence[dict[str, Any]] = (),
    resource_templates: Sequence[dict[str, Any]] = (),
    prompts: Sequence[dict[str, Any]] = (),
) -> Universe:
    """Turn the calls that were answered without divergence into a universe, and write it.

    Stateless tools keep the first of identical (tool, canonical args) calls; sequence-mode tools
    keep every call in order. Divergent calls are left out unless `include_divergent`. Calls to
    tools not in `tools` are refused, so the file always loads. A call whose
    `extra["recording_meta"]` is a non-empty object passes it on as its recording's `meta`.
    `matching` is a `Matching` or its mapping form, as in the file
    (`{"arg_keys": {"client_lookup": ["query"]}}`, `"modes"` and object-form `arg_keys`
    included). `tools` are `UniverseTool`s or their mapping form; without `path` nothing is
    written. Arguments are normalized as the loader does (`flatten_wire_args`).

    The rest of the surface: `server` (a `ServerSurface` or its mapping form:
    `{"info": {"name": ..., "version": ...}, "instructions": ..., "capabilities": {...}}`),
    the `resources`, `resource_templates` and `prompts` listed; the log's answered
    `resources/read`, `prompts/get` and `completion/complete` calls (`MCPCall.method`) become
    `resource_reads`, `prompt_gets` and `completions`, the first of identical requests kept (a
    mock server's `surface()` gives all of it: `freeze_universe(log, **mock.surface_parts(),
    ...)`). Any problem is a `UniverseError` raised before anything is written.
    """
    file = os.fspath(path) if path is not None else "<frozen universe>"
    rules, rule_modes = _matching(matching, file)
    tool_list = with_modes(_tools(tools, file), rule_modes)
    modes = {tool.name: tool.mode for tool in tool_list}
    seen: set[tuple[str, Any]] = set()
    recordings: list[Recording] = []
    other_calls: list[MCPCall] = []
    for position, call in enumerate(call_log):
        if call.divergence is not None and not include_divergent:
            continue
        if call.method != "tools/call":
            if call.divergence is None:  # a divergent read has no recorded answer to keep
                other_calls.append(call)
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
    reads, gets, completions = _surface_calls(other_calls, file)
    universe = Universe(
        windtunnel_universe=FORMAT_VERSION,
        tools=tool_list,
        recordings=recordings,
        matching=rules,
        meta=dict(meta or {}),
        server=_server(server, file),
        resources=[dict(r) for r in resources],
        resource_templates=[dict(t) for t in resource_templates],
        resource_reads=reads,
        prompts=[dict(p) for p in prompts],
        prompt_gets=gets,
        completions=completions,
    )
    validate_universe(universe, file=file)
    if path is not None:
        write_universe(universe, path)
    return universe


def _matching(
    matching: Matching | Mapping[str, Any] | None, file: str
) -> tuple[Matching, dict[str, ToolMode]]:
    """The matching rules, from a `Matching` or the mapping form a universe file holds (with
    every spelling the file allows: `modes`, object-form `arg_keys`), and the modes they set."""
    if matching is None:
        return Matching(), {}
    if isinstance(matching, Matching):
        return matching, {}
    if not isinstance(matching, Mapping):
        raise UniverseError(
            f"matching must be a Matching or a mapping, got {type(matching).__name__}",
            file=file,
            path="$.matching",
        )
    # A file from a newer producer may carry fields this release does not know; a mapping in
    # the caller's own code that does is a typo.
    unknown = sorted(set(matching) - MATCHING_FIELDS)
    if unknown:
        raise UniverseError(
            f"Object contains unknown field `{unknown[0]}`", file=file, path="$.matching"
        )
    return matching_from_file(dict(matching), file=file)


def _tools(
    tools: Sequence[UniverseTool | Mapping[str, Any]] | Mapping[str, UniverseTool], file: str
) -> list[UniverseTool]:
    """`UniverseTool`s, or tool definitions in the file's mapping form (as windtunnel-bench's
    `freeze_universe` takes them), or `{name: UniverseTool}`."""
    given = list(tools.values()) if isinstance(tools, Mapping) else list(tools)
    return [
        tool
        if isinstance(tool, UniverseTool)
        else tool_from_file(dict(tool), file=file, path=f"$.tools[{i}]")
        for i, tool in enumerate(given)
    ]


def _server(server: ServerSurface | Mapping[str, Any] | None, file: str) -> ServerSurface | None:
    if server is None or isinstance(server, ServerSurface):
        return server
    try:
        return msgspec.convert(dict(server), ServerSurface)
    except msgspec.ValidationError as exc:
        message, _, where = str(exc).partition(" - at `")
        path = "$.server" + where.rstrip("`").removeprefix("$") if where else "$.server"
        raise UniverseError(message, file=file, path=path) from None


def _surface_calls(
    calls: Iterable[MCPCall], file: str
) -> tuple[list[ResourceRead], list[PromptGet], list[CompletionRecord]]:
    """Answered reads, prompt gets and completions as the universe keeps them (the first of
    canonically equal requests; see `MCPCall.method` for how each is logged)."""
    reads: list[ResourceRead] = []
    gets: list[PromptGet] = []
    completions: list[CompletionRecord] = []
    seen: set[tuple[str, str, Any]] = set()
    for call in calls:
        key = (call.method, call.tool_name, canonical_key(call.args))
        if key in seen:
            continue
        seen.add(key)
        if not isinstance(call.result, dict) or not is_json_value(call.result):
            raise UniverseError(
                f"a {call.method} answer for {call.tool_name!r} is not a JSON object", file=file
            )
        if call.method == "resources/read":
            reads.append(ResourceRead(uri=call.tool_name, result=call.result))
        elif call.method == "prompts/get":
            gets.append(PromptGet(name=call.tool_name, arguments=call.args, result=call.result))
        elif call.method == "completion/complete":
            completions.append(
                CompletionRecord(
                    ref=call.args["ref"],
                    argument=call.args["argument"],
                    context=call.args.get("context"),
                    result=call.result,
                )
            )
    return reads, gets, completions
