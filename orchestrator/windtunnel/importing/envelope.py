"""Contract A: the trace envelope (`*.wtin.json`) every adapter produces and `wt import` reads.

Contract A is windtunnel-bench's `windtunnel_interchange` 1 envelope (design 0001): `session`,
OpenTelemetry GenAI `messages`, optional `source`, `tool_definitions` and `witnessed_calls`
(`interchange` checks those fields). What our importers know beyond it travels as additive fields
of the same document, which the original ignores (its forward-tolerance rule): the run's `trace`
identity, its `task` and `final_answer`, the `upstreams` with their tools, the ordered `calls` with
their outcomes, flags and provenance, and the `warnings`. One agent run is one envelope; the
universe fixtures, the scenario skeleton and the scorer stub are generated from it alone, so every
format quirk stays in its adapter. The JSON Schema of what we write ships as
`windtunnel/schemas/contract-a-1.json`.

Files in our earlier shape (`{"contract": "wind-tunnel/contract-a", "version": "1.x", ...}`,
`LegacyEnvelope`) stay readable: `contract_a` reads every form.
"""

from __future__ import annotations

from importlib import resources
from typing import Annotated, Any, Literal, TypeAlias

import msgspec

from ..errors import TraceError

__all__ = [
    "ALWAYS_OUT",
    "CONTRACT",
    "CONTRACT_VERSION",
    "INTERCHANGE_VERSION",
    "SUSPECT_FLAGS",
    "Call",
    "CallError",
    "CallResult",
    "Envelope",
    "FinalAnswer",
    "Identity",
    "LegacyEnvelope",
    "Outcome",
    "Source",
    "Surface",
    "Task",
    "Tool",
    "TraceInfo",
    "TraceWarning",
    "Upstream",
    "check_legacy_head",
    "encode_envelope",
    "json_schema",
    "validate_envelope",
]

INTERCHANGE_VERSION = 1
# The discriminator and version of our earlier shape, which readers still accept.
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
    "contract-a",
    "manual",
]
SchemaSource: TypeAlias = Literal[
    "tools/list",
    "mcp_list_tools",
    "request_tools",
    "otel_tool_definitions",
    "tool_definitions",
    "user",
    "inferred",
    "stub",
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
    # What else `tools/list` gave (issue 25), each as sent; the universe serves it as recorded.
    title: str | None = None
    icons: list[Any] | None = None
    execution: dict[str, Any] | None = None
    meta: dict[str, Any] | None = msgspec.field(default=None, name="_meta")


class Surface(msgspec.Struct, omit_defaults=True):
    """What the upstream showed the agent besides its tools (issue 25), in the universe format's
    own shape and names (docs/universe.md "The whole surface"): `server` (`protocol_version`,
    `info`, `instructions`, `capabilities`), the listed `resources`, `resource_templates` and
    `prompts`, and the answered `resource_reads`, `prompt_gets` and `completions`. Payloads are
    kept as the wire gave them, minus the protocol's envelope."""

    server: dict[str, Any] | None = None
    resources: list[dict[str, Any]] = msgspec.field(default_factory=list)
    resource_templates: list[dict[str, Any]] = msgspec.field(default_factory=list)
    resource_reads: list[dict[str, Any]] = msgspec.field(default_factory=list)
    prompts: list[dict[str, Any]] = msgspec.field(default_factory=list)
    prompt_gets: list[dict[str, Any]] = msgspec.field(default_factory=list)
    completions: list[dict[str, Any]] = msgspec.field(default_factory=list)

    def empty(self) -> bool:
        return self == Surface()


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
    surface: Surface | None = None


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
    duration_ms: float | None = None
    """How long the call took as the trace timed it (`timing` exact), in milliseconds to the
    microsecond: `started_at`/`ended_at` are to the millisecond. Its recording's
    `meta.duration_ms`, which `delay:recorded` replays."""
    flags: list[str] = msgspec.field(default_factory=list)
    provenance: dict[str, Any] = msgspec.field(default_factory=dict)
    server_messages: list[dict[str, Any]] | None = None
    """What the server sent while answering (issue 25): notifications, and its requests to the
    client with the client's `response`, in order, as a universe recording holds them."""

    @property
    def suspect(self) -> list[str]:
        return [flag for flag in self.flags if flag in SUSPECT_FLAGS]


class TraceWarning(msgspec.Struct, omit_defaults=True):
    """Something the importer could not take at face value; `path` points into the envelope."""

    code: str
    message: str
    path: str | None = None


class Envelope(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A Contract A document: the seed's fields first (what windtunnel-bench reads), then ours.

    `session`, `messages`, `tool_definitions` and `witnessed_calls` are kept as JSON values: read
    verbatim from a producer's envelope, or derived from our fields (`interchange_view`)."""

    windtunnel_interchange: int
    otel_genai_mapping: str = ""
    source: dict[str, Any] | None = None
    session: dict[str, Any]
    messages: list[dict[str, Any]]
    tool_definitions: list[dict[str, Any]] | None = None
    witnessed_calls: list[dict[str, Any]] | None = None
    trace: TraceInfo
    task: Task
    final_answer: FinalAnswer | None = None
    upstreams: list[Upstream]
    calls: list[Call]
    warnings: list[TraceWarning] = msgspec.field(default_factory=list)
    extensions: dict[str, Any] = msgspec.field(default_factory=dict)

    def upstream(self, upstream_id: str) -> Upstream | None:
        for upstream in self.upstreams:
            if upstream.id == upstream_id:
                return upstream
        return None


class LegacyEnvelope(msgspec.Struct, omit_defaults=True):
    """Our earlier shape of Contract A (`contract` + `version` 1.x), still read."""

    contract: str
    version: str
    trace: TraceInfo
    task: Task
    upstreams: list[Upstream]
    calls: list[Call]
    final_answer: FinalAnswer | None = None
    warnings: list[TraceWarning] = msgspec.field(default_factory=list)
    extensions: dict[str, Any] = msgspec.field(default_factory=dict)


def check_legacy_head(value: dict[str, Any], file: str) -> None:
    """Refuse an earlier-shape document of another contract or major version."""
    if value.get("contract") != CONTRACT:
        raise TraceError(f"not a Contract A envelope (expected contract {CONTRACT!r})", file=file)
    version = value.get("version")
    major = version.split(".", 1)[0] if isinstance(version, str) else None
    if major != str(_MAJOR):
        raise TraceError(
            f"unsupported Contract A version {version!r}; this Wind Tunnel reads "
            f"{_MAJOR}.x of this earlier shape, and writes windtunnel_interchange "
            f"{INTERCHANGE_VERSION}",
            file=file,
            path="$.version",
        )


def validate_envelope(envelope: Envelope | LegacyEnvelope, *, file: str = "<envelope>") -> None:
    """The cross-field rules of our fields that the JSON Schema cannot state."""
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
    """The JSON Schema of the envelope we write (`windtunnel/schemas/contract-a-1.json`)."""
    text = resources.files("windtunnel").joinpath("schemas", "contract-a-1.json").read_bytes()
    schema: dict[str, Any] = msgspec.json.decode(text)
    return schema
