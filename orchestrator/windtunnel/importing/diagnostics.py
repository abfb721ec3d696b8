"""Warnings that follow from an envelope's content alone: damaged, suspect or unreplayable calls,
inferred schemas, unnamed upstreams, a missing task, and values that look like secrets.

They are recomputed whenever an envelope is built or re-read, so they never drift from the data.
"""

from __future__ import annotations

from ..universe import MAX_NESTING
from .envelope import ALWAYS_OUT, SUSPECT_FLAGS, Call, Envelope, TraceWarning
from .fixture import held_schema, unheld_part
from .secrets import scan_secrets

__all__ = ["COMPUTED_CODES", "computed_warnings"]

_FLAG_WARNINGS: dict[str, str] = {
    "args_truncated": "arguments look truncated",
    "args_unparseable": "arguments are not valid JSON",
    "args_missing": "the trace did not capture the arguments (content capture off?)",
    "args_redacted": "arguments hold values scrubbed by the tracer; a rerun sends the real "
    "value, which the placeholder cannot match",
    "result_redacted": "the result holds values scrubbed by the tracer; replay would serve "
    "the placeholder",
    "result_partial": "the tracer kept only the first content block's text (structuredContent "
    "and any other blocks are lost); replayed as that text",
    "args_wrapped": 'arguments were not an object; wrapped as {"input": ...}',
    "result_truncated": "result looks truncated",
    "result_unparseable": "result could not be read",
    "tool_not_advertised": "the tool is not in the tool list the trace advertised",
}


COMPUTED_CODES: frozenset[str] = frozenset(
    {
        *_FLAG_WARNINGS,
        "task_missing",
        "upstream_unnamed",
        "schema_inferred",
        "schema_stubbed",
        "builtin_tool",
        "no_result",
        "not_replayable",
        "result_model_view",
        "secret_suspected",
        "nested_too_deep",
        "schema_too_deep",
    }
)


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
            if held_schema(tool.input_schema) is not tool.input_schema:
                warnings.append(
                    TraceWarning(
                        code="schema_too_deep",
                        message=f"{upstream.id}.{tool.name}: the input schema nests deeper than "
                        f"{MAX_NESTING} levels, more than a universe holds; the fixture offers "
                        '{"type": "object"} instead',
                        path=f"$.upstreams[{i}].tools[{j}].input_schema",
                    )
                )
            if tool.schema_source == "stub":
                warnings.append(
                    TraceWarning(
                        code="schema_stubbed",
                        message=f"{upstream.id}.{tool.name}: the tool definition has no input "
                        "schema; the fixture offers one that accepts any object: replace it",
                        path=f"$.upstreams[{i}].tools[{j}].input_schema",
                    )
                )
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
        unheld = unheld_part(call)
        if unheld is not None:
            part = "arguments nest" if unheld == "args" else "result nests"
            in_file = f" in {envelope.trace.source.file}" if envelope.trace.source.file else ""
            warnings.append(
                TraceWarning(
                    code="nested_too_deep",
                    message=f"{_label(call)}{in_file}: its {part} deeper than "
                    f"{MAX_NESTING} levels, more than a universe holds (MCP clients cannot "
                    "read them); kept out of the fixture, the other calls are replayed",
                    path=f"{where}.{unheld}",
                )
            )
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
                'replayed as the text the model received (meta.provenance = "model_view"); '
                "--wire-only keeps them out",
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
        if call.args is not None:
            findings += scan_secrets(call.args, root=f"$.calls[{call.seq}].args")
        if call.result is not None:
            findings += scan_secrets(
                call.result.content, root=f"$.calls[{call.seq}].result.content"
            )
            findings += scan_secrets(
                call.result.structured, root=f"$.calls[{call.seq}].result.structured"
            )
    return findings
