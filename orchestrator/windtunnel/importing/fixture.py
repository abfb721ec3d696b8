"""Contract A → universe fixtures, one per upstream.

Only calls with a tool result (`ok` or `tool_error`) can be replayed, and only with their
arguments (a call flagged `args_missing`, `args_truncated` or `args_unparseable` never is). Suspect
calls (truncated or unparseable results, scrubbed values, tools the trace never advertised) stay
out unless `keep_suspect`. A result the trace holds only as the model saw it (a transcript) is
replayed as that text, its recording marked `meta.provenance = "model_view"`, unless
`wire_only`. A tool the server did not advertise is not offered unless one of its calls is
kept; built-in tools (kind `builtin`) are never served. A tool called twice with the same
arguments but different results is recorded in `sequence` mode, so the replay answers in order.
A call whose arguments or result nest deeper than a universe holds (`MAX_NESTING`) stays out:
the rest of the trace is still replayed (`diagnostics` warns about it).
"""

from __future__ import annotations

from typing import Any, Literal, TypeVar

import msgspec

from ..calls import MCPCall
from ..canonical import canonical_key, nested_deeper_than
from ..freeze import RECORDED_DURATION, RECORDING_META, freeze_universe
from ..universe import (
    MAX_NESTING,
    Universe,
    UniverseTool,
    flatten_wire_args,
    validate_universe,
)
from .envelope import ALWAYS_OUT, Call, Envelope, Surface

__all__ = ["FixturePlan", "held_schema", "plan_fixtures", "recording_result", "unheld_part"]


class FixturePlan(msgspec.Struct):
    """The universes to write (by upstream id), the calls they replay, and their file names."""

    universes: dict[str, Universe]
    files: dict[str, str]
    calls: list[Call]
    sequence_tools: list[str]


def recording_result(call: Call) -> Any:
    """The recorded result, as the MCP `CallToolResult` the server will serve verbatim."""
    assert call.result is not None
    result: dict[str, Any] = {"content": call.result.content}
    if call.result.structured is not msgspec.UNSET:
        result["structuredContent"] = call.result.structured
    if call.outcome == "tool_error":
        result["isError"] = True
    return result


def unheld_part(call: Call) -> Literal["args", "result"] | None:
    """The part of `call` a universe cannot hold: nested deeper than `MAX_NESTING` as the
    recording would store it (MCP clients cannot read it, so the universe refuses it)."""
    if call.args is not None and nested_deeper_than(call.args, MAX_NESTING):
        return "args"
    if call.result is not None and nested_deeper_than(recording_result(call), MAX_NESTING):
        return "result"
    return None


def held_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The tool's input schema, or `{"type": "object"}` when it nests deeper than a universe
    holds (the agent is then offered any arguments; `diagnostics` warns)."""
    return {"type": "object"} if nested_deeper_than(schema, MAX_NESTING) else schema


_Field = TypeVar("_Field", dict[str, Any], list[Any])


def _held(value: _Field | None) -> _Field | None:
    """A listed tool field, or None when it nests deeper than a universe holds (MCP clients
    could not read it; `diagnostics` already says so for schemas)."""
    return None if value is None or nested_deeper_than(value, MAX_NESTING) else value


def replayable(envelope: Envelope, call: Call, *, keep_suspect: bool, wire_only: bool) -> bool:
    upstream = envelope.upstream(call.upstream)
    if upstream is None or upstream.kind == "builtin":
        return False
    if call.outcome not in ("ok", "tool_error") or call.result is None or call.args is None:
        return False
    if ALWAYS_OUT & set(call.flags):
        return False
    if wire_only and call.result.view == "model":
        return False
    if unheld_part(call) is not None:
        return False
    return keep_suspect or not call.suspect


def _recording_meta(call: Call) -> dict[str, Any]:
    """What a call's recording keeps of it besides the call: that its result is the model's
    view, and how long it took where the trace timed it (`delay:recorded` replays that)."""
    meta: dict[str, Any] = {}
    if call.result is not None and call.result.view == "model":
        meta.update(provenance="model_view", seq=call.seq)
    if call.duration_ms is not None:
        meta[RECORDED_DURATION] = call.duration_ms
    return {RECORDING_META: meta} if meta else {}


def _sequence_tools(calls: list[Call]) -> set[tuple[str, str]]:
    seen: dict[tuple[str, str, Any], Any] = {}
    stateful: set[tuple[str, str]] = set()
    for call in calls:
        key = (call.upstream, call.tool, canonical_key(call.args or {}))
        result = canonical_key(recording_result(call))
        if key in seen and seen[key] != result:
            stateful.add((call.upstream, call.tool))
        seen.setdefault(key, result)
    return stateful


def surface_calls(surface: Surface, upstream: str) -> list[MCPCall]:
    """The answered reads, prompt gets and completions, as the call log `freeze_universe` turns
    into `resource_reads`, `prompt_gets` and `completions` (`MCPCall.method`)."""
    calls = [
        MCPCall(tool_name=read["uri"], args={}, result=read["result"], method="resources/read")
        for read in surface.resource_reads
    ]
    calls += [
        MCPCall(
            tool_name=get["name"], args=get["arguments"], result=get["result"], method="prompts/get"
        )
        for get in surface.prompt_gets
    ]
    for completion in surface.completions:
        ref = completion["ref"]
        request = {k: v for k, v in completion.items() if k != "result"}
        calls.append(
            MCPCall(
                tool_name=str(ref.get("name") or ref.get("uri") or ""),
                args=request,
                result=completion["result"],
                method="completion/complete",
            )
        )
    return [msgspec.structs.replace(call, upstream=upstream) for call in calls]


def with_server_messages(universe: Universe, calls: list[Call]) -> Universe:
    """Each recording with what the server sent while answering its call. `freeze_universe`
    keeps every call of a sequence tool and the first of identical calls of the rest: the same
    rule picks the call each recording came from."""
    if not any(call.server_messages for call in calls):
        return universe
    modes = {tool.name: tool.mode for tool in universe.tools}
    seen: set[tuple[str, Any]] = set()
    kept: list[Call] = []
    for call in calls:
        args = flatten_wire_args(call.tool, call.args or {})
        if modes.get(call.tool) != "sequence":
            key = (call.tool, canonical_key(args))
            if key in seen:
                continue
            seen.add(key)
        kept.append(call)
    recordings = [
        msgspec.structs.replace(recording, server_messages=call.server_messages)
        if call.server_messages
        else recording
        for recording, call in zip(universe.recordings, kept, strict=True)
    ]
    universe = msgspec.structs.replace(universe, recordings=recordings)
    validate_universe(universe, file="<imported universe>")
    return universe


def plan_fixtures(
    envelope: Envelope, *, keep_suspect: bool = False, wire_only: bool = False
) -> FixturePlan:
    """Build (in memory) the universe of every served upstream."""
    calls = [
        c
        for c in envelope.calls
        if replayable(envelope, c, keep_suspect=keep_suspect, wire_only=wire_only)
    ]
    stateful = _sequence_tools(calls)
    served = [up for up in envelope.upstreams if up.kind != "builtin"]
    # A client checks a tool's answers against its output schema: one recorded without
    # `structuredContent` (a tracer kept only the text) would be refused, so the schema is not
    # served for that tool.
    unstructured = {
        (c.upstream, c.tool)
        for c in calls
        if c.outcome == "ok" and c.result is not None and c.result.structured is msgspec.UNSET
    }
    universes: dict[str, Universe] = {}
    for upstream in served:
        replayed = {c.tool for c in calls if c.upstream == upstream.id}
        unadvertised = {
            c.tool
            for c in envelope.calls
            if c.upstream == upstream.id and "tool_not_advertised" in c.flags
        }
        tools = [
            UniverseTool(
                name=tool.name,
                input_schema=held_schema(tool.input_schema),
                description=tool.description or "",
                mode="sequence" if (upstream.id, tool.name) in stateful else "stateless",
                title=tool.title,
                annotations=_held(tool.annotations),
                output_schema=_held(tool.output_schema)
                if (upstream.id, tool.name) not in unstructured
                else None,
                icons=_held(tool.icons),
                execution=_held(tool.execution),
                meta=_held(tool.meta),
            )
            for tool in upstream.tools
            if tool.name in replayed or tool.name not in unadvertised
        ]
        log = [
            MCPCall(
                tool_name=c.tool,
                args=c.args or {},
                result=recording_result(c),
                upstream=upstream.id,
                extra=_recording_meta(c),
            )
            for c in calls
            if c.upstream == upstream.id
        ]
        meta = {
            "imported_from": {
                "format": envelope.trace.source.format,
                "trace_id": envelope.trace.id,
                "upstream": upstream.id,
            }
        }
        surface = upstream.surface or Surface()
        universe = freeze_universe(
            [*log, *surface_calls(surface, upstream.id)],
            tools=tools,
            path=None,
            meta=meta,
            server=surface.server,
            resources=surface.resources,
            resource_templates=surface.resource_templates,
            prompts=surface.prompts,
        )
        universes[upstream.id] = with_server_messages(
            universe, [c for c in calls if c.upstream == upstream.id]
        )
    if not universes:
        meta = {
            "imported_from": {"format": envelope.trace.source.format, "trace_id": envelope.trace.id}
        }
        universes["default"] = freeze_universe([], tools=[], path=None, meta=meta)
    if len(universes) == 1:
        files = {name: "fixture.universe.json" for name in universes}
    else:
        files = {name: f"{name}.universe.json" for name in universes}
    return FixturePlan(
        universes=universes,
        files=files,
        calls=calls,
        sequence_tools=sorted(f"{up}.{tool}" for up, tool in stateful),
    )
