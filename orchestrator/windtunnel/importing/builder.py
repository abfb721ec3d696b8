"""`TraceBuilder`: what adapters fill in, and how an envelope is finished.

Adapters only say what the trace holds (upstreams, declared tools, calls, results); the builder
does what is the same for every format: dense ordering, schema inference for tools the trace never
defined, a deterministic order of upstreams and tools, and the warnings `diagnostics` derives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .diagnostics import computed_warnings
from .envelope import (
    INTERCHANGE_VERSION,
    Call,
    CallError,
    CallResult,
    Envelope,
    FinalAnswer,
    Identity,
    Outcome,
    SchemaSource,
    Source,
    SourceFormat,
    Surface,
    Task,
    Timing,
    Tool,
    TraceInfo,
    TraceWarning,
    Upstream,
    UpstreamKind,
)
from .inference import infer_schema
from .interchange_view import derive_interchange
from .normalize import ParsedArgs, slug

__all__ = ["TraceBuilder"]

_NO_RESULT = "the trace holds no result for this call"

_COMPLETE_LISTS = frozenset({"tools/list", "mcp_list_tools", "request_tools"})


class TraceBuilder:
    """Collects one run's upstreams and calls, then builds a checked `Envelope`."""

    def __init__(
        self, source_format: SourceFormat, *, file: str | None, sha256: str | None
    ) -> None:
        self.source = Source(format=source_format, file=file, sha256=sha256)
        self.trace_id: str | None = None
        self.started_at: str | None = None
        self.ended_at: str | None = None
        self.prompt = ""
        self.system: str | None = None
        self.final_answer: str | None = None
        self.model: str | None = None
        self._upstreams: dict[str, Upstream] = {}
        self._calls: list[Call] = []
        self._warnings: list[TraceWarning] = []

    def upstream(
        self, name: str, *, kind: UpstreamKind = "mcp", identity: Identity | None = None
    ) -> str:
        """Declare (or find) an upstream; returns its id. A better identity replaces a fallback."""
        upstream_id = slug(name)
        identity = identity or Identity(source="fallback")
        known = self._upstreams.get(upstream_id)
        if known is None:
            self._upstreams[upstream_id] = Upstream(
                id=upstream_id, kind=kind, identity=identity, tools=[]
            )
        elif known.identity.source == "fallback" and identity.source != "fallback":
            known.identity = identity
            known.kind = kind
        return upstream_id

    def declare_tool(
        self,
        upstream_id: str,
        name: str,
        *,
        input_schema: Any,
        schema_source: SchemaSource,
        description: str | None = None,
        output_schema: Any = None,
        annotations: Any = None,
        source_name: str | None = None,
        listed: dict[str, Any] | None = None,
    ) -> None:
        """A tool the trace advertised; the first definition of a name wins. A definition without
        a name is dropped with a warning: no call can name it, and a universe cannot offer it.
        `listed` is the tool exactly as a `tools/list` answer gave it: its `title`, `icons`,
        `execution` and `_meta` are kept too (each only when of the type MCP gives it)."""
        upstream = self._upstreams[upstream_id]
        if not name:
            self.warn("tool_unnamed", f"{upstream_id}: a tool definition without a name; ignored")
            return
        if any(tool.name == name for tool in upstream.tools):
            return
        if not isinstance(input_schema, dict):
            input_schema = {"type": "object"}
        upstream.tools.append(
            Tool(
                name=name,
                input_schema=input_schema,
                schema_source=schema_source,
                description=description if isinstance(description, str) else None,
                output_schema=output_schema if isinstance(output_schema, dict) else None,
                annotations=annotations if isinstance(annotations, dict) else None,
                source_name=source_name,
                **_listed_fields(listed or {}),
            )
        )

    def surface(self, upstream_id: str) -> Surface:
        """The upstream's surface beyond tools (issue 25), created empty on first use; an empty
        one is left out of the envelope."""
        upstream = self._upstreams[upstream_id]
        if upstream.surface is None:
            upstream.surface = Surface()
        return upstream.surface

    def call(
        self,
        upstream_id: str,
        tool: str,
        args: ParsedArgs,
        *,
        call_id: str | None = None,
        started_at: str | None = None,
        ended_at: str | None = None,
        timing: Timing = "none",
        duration_ms: float | None = None,
        provenance: dict[str, Any] | None = None,
        source_name: str | None = None,
    ) -> Call:
        """Add a call with no result yet (outcome `unknown`); adapters then set one."""
        call = Call(
            seq=len(self._calls),
            upstream=upstream_id,
            tool=tool,
            args=args.args,
            args_raw=args.raw,
            outcome="unknown",
            error=CallError(message=_NO_RESULT),
            call_id=call_id,
            started_at=started_at,
            ended_at=ended_at,
            timing=timing,
            duration_ms=duration_ms,
            flags=list(args.flags),
            provenance=dict(provenance or {}),
        )
        if source_name is not None and source_name != tool:
            call.provenance["source_name"] = source_name
        self._calls.append(call)
        return call

    @staticmethod
    def set_result(
        call: Call, result: CallResult, *, is_error: bool = False, flags: Iterable[str] = ()
    ) -> None:
        call.outcome = "tool_error" if is_error else "ok"
        call.result = result
        call.error = None
        add_flags(call, flags)
        if result.view == "model":
            add_flags(call, ["result_model_view"])

    @staticmethod
    def set_error(
        call: Call, outcome: Outcome, message: str, *, code: int | str | None = None
    ) -> None:
        call.outcome = outcome
        call.result = None
        call.error = CallError(message=message, code=code)

    def name_unnamed(self, name: str) -> bool:
        """Give the fallback upstream (`default`) a name the user chose; False if there is none."""
        known = self._upstreams.get("default")
        if known is None or known.identity.source != "fallback":
            return False
        new_id = slug(name)
        if new_id != "default" and new_id in self._upstreams:
            return False
        del self._upstreams["default"]
        known.id = new_id
        known.identity = Identity(source="user")
        self._upstreams[new_id] = known
        for call in self._calls:
            if call.upstream == "default":
                call.upstream = new_id
        return True

    def warn(self, code: str, message: str, path: str | None = None) -> None:
        self._warnings.append(TraceWarning(code=code, message=message, path=path))

    @property
    def calls(self) -> list[Call]:
        return self._calls

    def build(self) -> Envelope:
        """Finish the envelope: infer missing tools, order everything, add computed warnings."""
        # Only a complete tool list proves a tool was not offered; OTel definitions are partial.
        advertised = {
            uid: any(tool.schema_source in _COMPLETE_LISTS for tool in up.tools)
            for uid, up in self._upstreams.items()
        }
        for call in self._calls:
            if call.upstream not in self._upstreams:
                self.upstream(call.upstream)
            upstream = self._upstreams[call.upstream]
            if not any(tool.name == call.tool for tool in upstream.tools):
                if advertised.get(call.upstream, False):
                    add_flags(call, ["tool_not_advertised"])
                samples = [
                    c.args
                    for c in self._calls
                    if c.upstream == call.upstream
                    and c.tool == call.tool
                    and c.args is not None
                    and not {"args_truncated", "args_unparseable"} & set(c.flags)
                ]
                upstream.tools.append(
                    Tool(
                        name=call.tool,
                        input_schema=infer_schema(samples),
                        schema_source="inferred",
                        source_name=call.provenance.get("source_name"),
                    )
                )
        upstreams = sorted(self._upstreams.values(), key=lambda up: up.id)
        for upstream in upstreams:
            # A server's own `tools/list` order is what the agent saw: kept, ahead of the rest.
            upstream.tools.sort(key=_tool_order(upstream.tools))
            if upstream.surface is not None and upstream.surface.empty():
                upstream.surface = None
        final = FinalAnswer(text=self.final_answer) if self.final_answer is not None else None
        envelope = Envelope(
            windtunnel_interchange=INTERCHANGE_VERSION,
            session={},
            messages=[],
            trace=TraceInfo(
                id=self.trace_id or f"sha256:{self.source.sha256 or ''}",
                source=self.source,
                started_at=self.started_at,
                ended_at=self.ended_at,
            ),
            task=Task(prompt=self.prompt, system=self.system),
            upstreams=upstreams,
            calls=self._calls,
            final_answer=final,
            warnings=list(self._warnings),
        )
        envelope.warnings.extend(computed_warnings(envelope))
        derive_interchange(envelope, model=self.model)
        return envelope


_LISTED_FIELDS: dict[str, tuple[str, type[Any]]] = {
    "title": ("title", str),
    "icons": ("icons", list),
    "execution": ("execution", dict),
    "_meta": ("meta", dict),
}
"""A listed tool's field -> (its name on `Tool`, the JSON type MCP gives it)."""


def _listed_fields(listed: dict[str, Any]) -> dict[str, Any]:
    return {
        name: listed[wire]
        for wire, (name, kind) in _LISTED_FIELDS.items()
        if isinstance(listed.get(wire), kind)
    }


def _tool_order(tools: list[Tool]) -> Callable[[Tool], tuple[int, int, str]]:
    """Tools from `tools/list` in their listed order, then every other tool by name."""
    listed = {tool.name: i for i, tool in enumerate(tools) if tool.schema_source == "tools/list"}

    def key(tool: Tool) -> tuple[int, int, str]:
        if tool.name in listed:
            return (0, listed[tool.name], "")
        return (1, 0, tool.name)

    return key


def add_flags(call: Call, flags: Iterable[str]) -> None:
    for flag in flags:
        if flag not in call.flags:
            call.flags.append(flag)
