"""Which calls a server's faults hit, and what each does to the call's answer (pure, no Trio).

`FaultInjector` counts each tool's calls, picks the first declared fault that selects a call
(`Fault.selects`), rewrites the call's answer for the kinds that are an answer (`is_error`,
`bad_schema`, `not_json`, `empty`, `error`: the JSON-RPC error object) and puts the evidence in
`call.extra[FAULT_EXTRA_KEY]`. What a transport must do besides (wait, never answer, drop the
connection, send the error) is `mcp/_faulted.py`'s.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..calls import MCPCall, is_tool_result
from ..errors import InputError, UniverseError
from ..freeze import RECORDED_DURATION
from ..universe import Universe
from .spec import ALL_TOOLS, FAULT_EXTRA_KEY, Fault

__all__ = [
    "FaultInjector",
    "broken_json_text",
    "check_faults_against",
    "log_injected",
    "recorded_seconds",
    "schema_breaking_value",
]


class FaultInjector:
    """One server's faults and its per-tool call counts (reset with the call log)."""

    def __init__(
        self, faults: Sequence[Fault], universe: Universe, *, seed: int = 0, unit_id: str = ""
    ) -> None:
        self.faults = tuple(faults)
        self.universe = universe
        self.seed = seed
        self.unit_id = unit_id
        self._counts: dict[str, int] = {}

    def targeted_tools(self) -> frozenset[str] | None:
        """The tools a fault may hit; None when one targets every tool (`*`)."""
        if any(fault.tool == ALL_TOOLS for fault in self.faults):
            return None
        return frozenset(fault.tool for fault in self.faults)

    def reset(self) -> None:
        self._counts.clear()

    def apply(self, call: MCPCall) -> Fault | None:
        """Count `call` (a tools/call just answered from the recording or a miss policy, not
        yet logged), and if a fault selects it, rewrite its answer and record the evidence."""
        divergence = call.divergence
        if divergence is not None and divergence.get("reason") == "unknown_tool":
            return None  # answered -32602, as the MCP spec says, whatever the faults
        tool = call.tool_name
        number = self._counts[tool] = self._counts.get(tool, 0) + 1
        recording = _recording_of(call)
        for fault in self.faults:
            if fault.kind == "bad_schema" and _output_schema(self.universe, tool) is None:
                continue  # `*=bad_schema`: only tools with a schema to break
            if fault.selects(tool, number, recording, seed=self.seed, unit_id=self.unit_id):
                self._inject(call, fault, number, recording)
                return fault
        return None

    def _inject(self, call: MCPCall, fault: Fault, number: int, recording: int | None) -> None:
        details: dict[str, Any] = {"call_number": number}
        kind = fault.kind
        if kind == "error":
            call.result = {"code": fault.error_code, "message": fault.error_message}
            call.is_error = True
        elif kind == "is_error":
            call.result = {
                "content": [{"type": "text", "text": fault.error_message}],
                "isError": True,
            }
            call.is_error = True
        elif kind in ("timeout", "drop"):
            call.result = None  # the client never gets an answer
            call.is_error = False
        elif kind == "delay":
            seconds = fault.seconds
            if seconds == "recorded":
                seconds = recorded_seconds(self.universe, recording)
            details["waited"] = seconds
        elif kind == "bad_schema":
            schema = _output_schema(self.universe, call.tool_name)
            broken = schema_breaking_value(schema or {})
            text = json.dumps(broken, ensure_ascii=False)
            call.result = {"content": [{"type": "text", "text": text}], "structuredContent": broken}
            call.is_error = False
        elif kind == "not_json":
            call.result = {"content": [{"type": "text", "text": broken_json_text(call.result)}]}
            call.is_error = False
        else:  # empty
            call.result = {"content": []}
            call.is_error = False
        call.extra[FAULT_EXTRA_KEY] = fault.evidence(**details)


def log_injected(call: MCPCall, *, scenario: str | None) -> None:
    """The `fault_injected` log line of a faulted call (a server outside a fleet)."""
    # structlog loads here, not with this module: reading a pack must not load it.
    import structlog

    evidence = call.extra.get(FAULT_EXTRA_KEY)
    if evidence is not None:
        structlog.get_logger("windtunnel").warning(
            "fault_injected",
            tool=call.tool_name,
            fault=evidence,
            upstream=call.upstream,
            scenario=scenario,
        )


def _recording_of(call: MCPCall) -> int | None:
    """The recording whose answer the call got (a hit's, or the `nearest` policy's)."""
    match = call.extra.get("match")
    if match is not None:
        index: int | None = match.get("index")
        return index
    divergence = call.extra.get("divergence")
    if divergence is not None:
        matched: int | None = divergence.get("matched")
        return matched
    return None


def _output_schema(universe: Universe, tool_name: str) -> dict[str, Any] | None:
    tool = universe.tool(tool_name)
    return None if tool is None else tool.output_schema


def recorded_seconds(universe: Universe, recording: int | None) -> float:
    """The recorded duration of `recording` (`meta.duration_ms`, written by `wt record` and by
    `wt import` from a timed trace), 0 when it has none."""
    if recording is None:
        return 0.0
    meta = universe.recordings[recording].meta
    duration = meta.get(RECORDED_DURATION) if isinstance(meta, dict) else None
    if isinstance(duration, int | float) and not isinstance(duration, bool) and duration > 0:
        return float(duration) / 1000.0
    return 0.0


def schema_breaking_value(schema: dict[str, Any]) -> dict[str, Any] | None:
    """An object the JSON Schema `schema` (a tool's `outputSchema`) refuses: without a field it
    requires, or with a property of another type; None when no such object is found."""
    required = schema.get("required")
    if isinstance(required, list) and required:
        return {}
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            kind = prop.get("type") if isinstance(prop, dict) else None
            if isinstance(kind, str):
                return {name: 0 if kind == "string" else f"not a {kind}"}
    return None


def broken_json_text(recorded: Any) -> str:
    """Text that is not JSON, made from what the call would have answered: its JSON (or the
    recorded structured content, or text block) cut off before its last character, as a
    truncated upstream payload is."""
    source: Any = recorded
    if is_tool_result(recorded):
        if "structuredContent" in recorded:
            source = recorded["structuredContent"]
        else:
            texts = [b["text"] for b in recorded["content"] if b.get("type") == "text"]
            source = texts[0] if texts else {}
            if isinstance(source, str):
                return _cut(source)
    return _cut(json.dumps(source, ensure_ascii=False))


def _cut(text: str) -> str:
    if text[:1] in ("{", "[", '"') and len(text) > 1:
        return text[:-1]
    return '{"value": ' + text  # a number, `true`, `null` or plain text: an object never closed


def check_faults_against(
    faults: Sequence[Fault],
    universe: Universe,
    *,
    error: type[InputError] = UniverseError,
    file: str | None = None,
    path: str = "$.faults",
    paths: Sequence[str] | None = None,
) -> None:
    """What a fault can only be checked against with the universe it is served with: the tool
    is declared, the recording exists and is that tool's, `bad_schema` has a schema to break.
    `paths` names each fault (e.g. `--fault` for the command line's); default `path[i]`."""
    names = {tool.name for tool in universe.tools}
    for i, fault in enumerate(faults):
        where = paths[i] if paths is not None else f"{path}[{i}]"
        if fault.tool != ALL_TOOLS and fault.tool not in names:
            listing = ", ".join(sorted(names)) or "none"
            raise error(
                f"fault names undeclared tool {fault.tool!r}; this universe declares: {listing}",
                file=file,
                path=f"{where}.tool" if paths is None else where,
            )
        if fault.recording is not None:
            recordings = universe.recordings
            if fault.recording >= len(recordings):
                raise error(
                    f"recording {fault.recording} does not exist (the universe has "
                    f"{len(recordings)})",
                    file=file,
                    path=f"{where}.recording" if paths is None else where,
                )
            recorded_tool = recordings[fault.recording].tool_name
            if recorded_tool != fault.tool:
                raise error(
                    f"recording {fault.recording} is a call of {recorded_tool!r}, "
                    f"not {fault.tool!r}",
                    file=file,
                    path=f"{where}.recording" if paths is None else where,
                )
        if fault.kind == "bad_schema" and fault.tool != ALL_TOOLS:
            schema = _output_schema(universe, fault.tool)
            if schema is None or schema_breaking_value(schema) is None:
                has = "none" if schema is None else "one that accepts any object"
                raise error(
                    "`bad_schema` needs a tool whose outputSchema an object can break; "
                    f"{fault.tool!r} has {has}",
                    file=file,
                    path=f"{where}.kind" if paths is None else where,
                )
