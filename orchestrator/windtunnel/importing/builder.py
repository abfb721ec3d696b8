"""`TraceBuilder`: what adapters fill in, and how an envelope is finished.

Adapters only say what the trace holds (upstreams, declared tools, calls, results); the builder
does what is the same for every format: dense ordering, schema inference for tools the trace never
defined, warnings for every damaged or suspect call, secret scanning, and a deterministic order of
upstreams and tools.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .envelope import (
    ALWAYS_OUT,
    CONTRACT,
    CONTRACT_VERSION,
    SUSPECT_FLAGS,
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
    Task,
    Timing,
    Tool,
    TraceInfo,
    TraceWarning,
    Upstream,
    UpstreamKind,
)
from .inference import infer_schema
from .normalize import ParsedArgs, slug
from .secrets import scan_secrets

__all__ = ["TraceBuilder"]

_NO_RESULT = "the trace holds no result for this call"

_FLAG_WARNINGS: dict[str, str] = {
    "args_truncated": "arguments look truncated",
    "args_unparseable": "arguments are not valid JSON",
    "args_wrapped": 'arguments were not an object; wrapped as {"input": ...}',
    "result_truncated": "result looks truncated",
    "result_unparseable": "result could not be read",
    "tool_not_advertised": "the tool is not in the tool list the trace advertised",
}


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
    ) -> None:
        """A tool the trace advertised; the first definition of a name wins."""
        upstream = self._upstreams[upstream_id]
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
            )
        )

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
            upstream.tools.sort(key=lambda tool: tool.name)
        final = FinalAnswer(text=self.final_answer) if self.final_answer is not None else None
        envelope = Envelope(
            contract=CONTRACT,
            version=CONTRACT_VERSION,
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
        return envelope


def add_flags(call: Call, flags: Iterable[str]) -> None:
    for flag in flags:
        if flag not in call.flags:
            call.flags.append(flag)


def _label(call: Call) -> str:
    return f"call {call.seq} ({call.upstream}.{call.tool})"


def computed_warnings(envelope: Envelope) -> list[TraceWarning]:
    """The warnings that follow from the envelope's content alone, in a fixed order."""
    warnings: list[TraceWarning] = []
    if not envelope.task.prompt:
        warnings.append(
            TraceWarning(
                code="task_missing",
                message="the trace does not say what the agent was asked; pass --task",
                path="$.task.prompt",
            )
        )
    for i, upstream in enumerate(envelope.upstreams):
        if upstream.identity.source == "fallback":
            warnings.append(
                TraceWarning(
                    code="upstream_unnamed",
                    message=f"the trace does not name this upstream; calling it {upstream.id!r}",
                    path=f"$.upstreams[{i}].id",
                )
            )
        for j, tool in enumerate(upstream.tools):
            if tool.schema_source == "inferred" and upstream.kind != "builtin":
                samples = tool.input_schema.get("x-wt-inferred", {}).get("samples", 0)
                warnings.append(
                    TraceWarning(
                        code="schema_inferred",
                        message=f"{upstream.id}.{tool.name}: no input schema in the trace; "
                        f"inferred from {samples} call(s)",
                        path=f"$.upstreams[{i}].tools[{j}].input_schema",
                    )
                )
    builtin = {up.id for up in envelope.upstreams if up.kind == "builtin"}
    model_view: list[str] = []
    for call in envelope.calls:
        where = f"$.calls[{call.seq}]"
        if call.upstream in builtin:
            warnings.append(
                TraceWarning(
                    code="builtin_tool",
                    message=f"{_label(call)}: a built-in tool of the agent, not an MCP upstream; "
                    "kept in the envelope, never served",
                    path=where,
                )
            )
            continue
        for flag in call.flags:
            if flag in _FLAG_WARNINGS:
                suffix = ""
                if flag in ALWAYS_OUT:
                    suffix = "; kept out of the fixture"
                elif flag in SUSPECT_FLAGS:
                    suffix = "; kept out of the fixture unless --keep-suspect"
                warnings.append(
                    TraceWarning(
                        code=flag,
                        message=f"{_label(call)}: {_FLAG_WARNINGS[flag]}{suffix}",
                        path=where,
                    )
                )
        if "result_model_view" in call.flags:
            model_view.append(str(call.seq))
        if call.outcome == "unknown":
            warnings.append(
                TraceWarning(
                    code="no_result",
                    message=f"{_label(call)}: no result in the trace; kept out of the fixture",
                    path=where,
                )
            )
        elif call.outcome not in ("ok", "tool_error"):
            warnings.append(
                TraceWarning(
                    code="not_replayable",
                    message=f"{_label(call)}: outcome {call.outcome!r} has no tool result to "
                    "replay; kept out of the fixture",
                    path=where,
                )
            )
    if model_view:
        warnings.append(
            TraceWarning(
                code="result_model_view",
                message="results of call(s) "
                + ", ".join(model_view)
                + " are the model's view (the transcript), not what the MCP server sent; "
                "kept out of the fixture unless --keep-suspect",
                path="$.calls",
            )
        )
    for path, kind in _secret_findings(envelope):
        warnings.append(
            TraceWarning(
                code="secret_suspected",
                message=f"value looks like {kind.replace('_', ' ')}; redact it at the source "
                "before committing",
                path=path,
            )
        )
    return warnings


def _secret_findings(envelope: Envelope) -> list[tuple[str, str]]:
    findings = scan_secrets(envelope.task.prompt, root="$.task.prompt")
    if envelope.final_answer is not None:
        findings += scan_secrets(envelope.final_answer.text, root="$.final_answer.text")
    for call in envelope.calls:
        findings += scan_secrets(call.args, root=f"$.calls[{call.seq}].args")
        if call.result is not None:
            findings += scan_secrets(
                call.result.content, root=f"$.calls[{call.seq}].result.content"
            )
            findings += scan_secrets(
                call.result.structured, root=f"$.calls[{call.seq}].result.structured"
            )
    return findings
