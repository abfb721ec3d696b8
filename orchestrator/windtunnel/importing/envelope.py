"""Contract A: the versioned trace envelope (`*.wtin.json`) every adapter produces.

One envelope is one agent run: the task, the final answer, the upstreams with their tools, and the
ordered calls. The universe fixture, the scenario skeleton and the scorer stub are generated from
the envelope alone, so every format quirk stays in its adapter. The JSON Schema that documents the
format ships as `windtunnel/schemas/contract-a-1.json`.

Readers refuse an unknown major version. Within a major version, fields a newer minor adds are
ignored (the OTLP rule), so old readers keep working on new files.
"""

from __future__ import annotations

import os
from importlib import resources
from typing import Annotated, Any, Literal, TypeAlias

import msgspec

from ..errors import TraceError
from ..input_files import read_input

__all__ = [
    "ALWAYS_OUT",
    "CONTRACT",
    "CONTRACT_VERSION",
    "SUSPECT_FLAGS",
    "Call",
    "CallError",
    "CallResult",
    "Envelope",
    "FinalAnswer",
    "Identity",
    "Outcome",
    "Source",
    "Task",
    "Tool",
    "TraceInfo",
    "TraceWarning",
    "Upstream",
    "decode_envelope",
    "encode_envelope",
    "json_schema",
    "read_envelope",
    "validate_envelope",
]

CONTRACT = "wind-tunnel/contract-a"
CONTRACT_VERSION = "1.0"
_MAJOR = 1

Outcome: TypeAlias = Literal[
    "ok",
    "tool_error",
    "protocol_error",
    "transport_error",
    "timeout",
    "denied",
    "cancelled",
    "unknown",
]
UpstreamKind: TypeAlias = Literal["mcp", "function", "builtin", "hosted"]
IdentitySource: TypeAlias = Literal[
    "server_info",
    "server_label",
    "server_name",
    "tool_prefix",
    "otel_resource",
    "otel_server_address",
    "connection",
    "user",
    "fallback",
]
SourceFormat: TypeAlias = Literal[
    "otlp-json",
    "mcp-jsonrpc",
    "anthropic-messages",
    "openai-chat",
    "openai-responses",
    "openai-agents",
    "claude-code-jsonl",
    "manual",
]
SchemaSource: TypeAlias = Literal[
    "tools/list", "mcp_list_tools", "request_tools", "otel_tool_definitions", "user", "inferred"
]
Timing: TypeAlias = Literal["exact", "approx", "none"]
View: TypeAlias = Literal["wire", "model"]

# Flags that keep a call out of the fixture whatever the user asks: its arguments are unknown.
ALWAYS_OUT: frozenset[str] = frozenset({"args_truncated", "args_unparseable", "args_missing"})
# Flags that keep a call out of the fixture unless the user asks (`--keep-suspect`).
SUSPECT_FLAGS: frozenset[str] = frozenset(
    {
        "args_truncated",
        "args_unparseable",
        "args_missing",
        "args_redacted",
        "result_truncated",
        "result_unparseable",
        "result_redacted",
        "tool_not_advertised",
    }
)


class Source(msgspec.Struct, omit_defaults=True):
    """Where the envelope came from: the source format and file."""

    format: SourceFormat
    file: str | None = None
    sha256: str | None = None


class TraceInfo(msgspec.Struct, omit_defaults=True):
    """The run's identity and time span."""

    id: str
    source: Source
    started_at: str | None = None
    ended_at: str | None = None


class Task(msgspec.Struct, omit_defaults=True):
    """What the agent was asked (`prompt` is empty when the trace does not say)."""

    prompt: str
    system: str | None = None


class FinalAnswer(msgspec.Struct, omit_defaults=True):
    """The agent's last answer on the main chain."""

    text: str


class Identity(msgspec.Struct, omit_defaults=True):
    """How the importer knows which upstream this is."""

    source: IdentitySource
    server_name: str | None = None
    server_version: str | None = None
    endpoint: str | None = None


class Tool(msgspec.Struct, omit_defaults=True):
    """A tool an upstream offered, with its input schema and where that schema came from."""

    name: str
    input_schema: dict[str, Any]
    schema_source: SchemaSource
    description: str | None = None
    output_schema: dict[str, Any] | None = None
    annotations: dict[str, Any] | None = None
    source_name: str | None = None


UPSTREAM_ID_PATTERN = r"^[a-z0-9][a-z0-9_.-]{0,62}\Z"
r"""The schema's upstream id (`$defs.upstream.id`): it names files, so it is checked on decode.
(`\Z`, not `$`: Python's `$` would also accept a trailing newline.)"""
UpstreamId: TypeAlias = Annotated[str, msgspec.Meta(pattern=UPSTREAM_ID_PATTERN)]


class Upstream(msgspec.Struct, omit_defaults=True):
    """One MCP server (or pseudo-upstream) the run talked to."""

    id: UpstreamId
    kind: UpstreamKind
    identity: Identity
    tools: list[Tool]


class CallResult(msgspec.Struct, omit_defaults=True):
    """A result in MCP `CallToolResult` shape; `view` says whether it is what the wire carried."""

    content: list[dict[str, Any]]
    view: View
    structured: Any = msgspec.UNSET


class CallError(msgspec.Struct, omit_defaults=True):
    """A failure that produced no tool result (JSON-RPC error, transport failure, ...)."""

    message: str
    code: int | str | None = None


class Call(msgspec.Struct, omit_defaults=True):
    """One tool call, in issue order. `args` is None when the trace did not capture them (flag
    `args_missing`): never `{}`, which would claim a call without arguments."""

    seq: int
    upstream: str
    tool: str
    args: dict[str, Any] | None
    outcome: Outcome
    call_id: str | None = None
    args_raw: str | None = None
    result: CallResult | None = None
    error: CallError | None = None
    started_at: str | None = None
    ended_at: str | None = None
    timing: Timing = "none"
    flags: list[str] = msgspec.field(default_factory=list)
    provenance: dict[str, Any] = msgspec.field(default_factory=dict)

    @property
    def suspect(self) -> list[str]:
        return [flag for flag in self.flags if flag in SUSPECT_FLAGS]


class TraceWarning(msgspec.Struct, omit_defaults=True):
    """Something the importer could not take at face value; `path` points into the envelope."""

    code: str
    message: str
    path: str | None = None


class Envelope(msgspec.Struct, omit_defaults=True):
    """A Contract A document."""

    contract: str
    version: str
    trace: TraceInfo
    task: Task
    upstreams: list[Upstream]
    calls: list[Call]
    final_answer: FinalAnswer | None = None
    warnings: list[TraceWarning] = msgspec.field(default_factory=list)
    extensions: dict[str, Any] = msgspec.field(default_factory=dict)

    def upstream(self, upstream_id: str) -> Upstream | None:
        for upstream in self.upstreams:
            if upstream.id == upstream_id:
                return upstream
        return None


class _Head(msgspec.Struct):
    contract: Any = None
    version: Any = None


_decoder = msgspec.json.Decoder(Envelope)


def _check_head(data: bytes | str, file: str) -> None:
    try:
        head = msgspec.json.decode(data, type=_Head)
    except msgspec.DecodeError:
        return  # the full decode reports the problem with its position
    if head.contract != CONTRACT:
        raise TraceError(f"not a Contract A envelope (expected contract {CONTRACT!r})", file=file)
    version = head.version
    major = version.split(".", 1)[0] if isinstance(version, str) else None
    if major != str(_MAJOR):
        raise TraceError(
            f"unsupported Contract A version {version!r}; this Wind Tunnel reads "
            f"{_MAJOR}.x (it writes {CONTRACT_VERSION})",
            file=file,
            path="$.version",
        )


def decode_envelope(data: bytes | str, *, file: str = "<envelope>") -> Envelope:
    """Decode and check a Contract A document; any problem is a `TraceError` with a JSON path."""
    _check_head(data, file)
    try:
        envelope = _decoder.decode(data)
    except msgspec.DecodeError as exc:
        text = str(exc)
        message, sep, where = text.partition(" - at `")
        raise TraceError(message, file=file, path=where.rstrip("`") if sep else None) from None
    validate_envelope(envelope, file=file)
    return envelope


def read_envelope(path: str | os.PathLike[str]) -> Envelope:
    """Read a `*.wtin.json` file."""
    file = os.fspath(path)
    data = read_input(file, what="a trace file", error=TraceError)
    return decode_envelope(data, file=file)


def validate_envelope(envelope: Envelope, *, file: str = "<envelope>") -> None:
    """The cross-field rules the JSON Schema cannot state."""
    tools: dict[str, set[str]] = {}
    for i, upstream in enumerate(envelope.upstreams):
        if upstream.id in tools:
            raise TraceError(
                f"upstream {upstream.id!r} is declared twice",
                file=file,
                path=f"$.upstreams[{i}].id",
            )
        names: set[str] = set()
        for j, tool in enumerate(upstream.tools):
            if tool.name in names:
                raise TraceError(
                    f"tool {tool.name!r} is declared twice",
                    file=file,
                    path=f"$.upstreams[{i}].tools[{j}].name",
                )
            names.add(tool.name)
        tools[upstream.id] = names
    for i, call in enumerate(envelope.calls):
        where = f"$.calls[{i}]"
        if call.seq != i:
            raise TraceError(f"seq must be {i} (dense, in order)", file=file, path=f"{where}.seq")
        if call.upstream not in tools:
            raise TraceError(
                f"call names undeclared upstream {call.upstream!r}",
                file=file,
                path=f"{where}.upstream",
            )
        if call.tool not in tools[call.upstream]:
            raise TraceError(
                f"call names tool {call.tool!r}, which upstream {call.upstream!r} does not declare",
                file=file,
                path=f"{where}.tool",
            )
        has_result = call.outcome in ("ok", "tool_error")
        if has_result and (call.result is None or call.error is not None):
            raise TraceError(
                f"outcome {call.outcome!r} needs a result and no error", file=file, path=where
            )
        if not has_result and (call.error is None or call.result is not None):
            raise TraceError(
                f"outcome {call.outcome!r} needs an error and no result", file=file, path=where
            )


def encode_envelope(envelope: Envelope) -> bytes:
    """Deterministic, indented JSON: the same envelope always gives the same bytes. Objects keep
    the key order the trace gave them, so recorded payloads reach the fixture as they were."""
    compact = msgspec.json.encode(envelope)
    return msgspec.json.format(compact, indent=2) + b"\n"


def json_schema() -> dict[str, Any]:
    """The JSON Schema of Contract A 1.x, as shipped in `windtunnel/schemas/contract-a-1.json`."""
    text = resources.files("windtunnel").joinpath("schemas", "contract-a-1.json").read_bytes()
    schema: dict[str, Any] = msgspec.json.decode(text)
    return schema
