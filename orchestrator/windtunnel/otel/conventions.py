"""What each exported record says: span names and attributes, log records' fields.

Following the OpenTelemetry GenAI and MCP semantic conventions (semantic-conventions-genai,
"Development" status as of 2026):

- a request served (or recorded by `wt record`, tier `live`) is an MCP **server** span named
  `{mcp.method.name} {target}` (the tool or prompt name; a resource URI is high-cardinality
  and stays out of the name), with `mcp.method.name`, `gen_ai.operation.name = execute_tool`
  and `gen_ai.tool.name` for a tool call, `gen_ai.prompt.name` / `mcp.resource.uri` for the
  other requests, `error.type = tool_error` for a tool error; arguments and results
  (`gen_ai.tool.call.arguments` / `.result`) only when capture is on, as the conventions ask.
  Wind Tunnel's own facts are `windtunnel.*`: upstream, tier, recording index, unit, scenario,
  pack;
- a work unit is an internal span `scenario {name}` with its repeat, seed and verdict;
- a policy's or scorer's verdict is a `gen_ai.evaluation.result` event (a log record) parented to
  its unit's span: `gen_ai.evaluation.name`, `.score.value`, `.score.label` (`pass` / `fail`),
  `.explanation`;
- a divergence, a server fault or an injected fault is a log record named after its event
  (`universe_divergence`, `server_fault`, `fault_injected`) linked to its call's span, whose
  body is the event with the same fields; a call with an injected fault also carries
  `windtunnel.fault.id` and `windtunnel.fault.kind`.

Pure: plain data in, plain dicts out, no OpenTelemetry import.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..calls import MCPCall, is_tool_result
from ..faults.spec import FAULT_EXTRA_KEY

__all__ = [
    "CallSpan",
    "call_span",
    "evaluation_records",
    "event_record",
    "request_span",
    "unit_attributes",
    "unit_span_name",
    "wire_result",
]

AttributeValue = str | bool | int | float


@dataclass(frozen=True)
class CallSpan:
    name: str
    attributes: dict[str, AttributeValue]
    start_ns: int
    end_ns: int
    error: str | None
    """The span's error status description, or None (status unset)."""


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def wire_result(call: MCPCall) -> Any:
    """The `CallToolResult` the agent received, as the wire carried it: a recorded MCP result
    verbatim, else a text block with the JSON (sorted keys, as the servers write it) and, for an
    object, `structuredContent`."""
    result = call.result
    if is_tool_result(result):
        return result
    text = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
    wire: dict[str, Any] = {"content": [{"type": "text", "text": text}]}
    if isinstance(result, dict):
        wire["structuredContent"] = result
    if call.is_error:
        wire["isError"] = True
    return wire


def call_span(
    call: MCPCall,
    *,
    upstream: str,
    scenario: str,
    unit_id: str,
    pack: str | None,
    capture_content: bool,
    tier: str | None = None,
) -> CallSpan:
    """The server span of one request a universe answered (or, with `tier="live"`, a live
    upstream answered while `wt record` recorded it)."""
    method = call.method
    attributes: dict[str, AttributeValue] = {"mcp.method.name": method}
    name = method
    if method == "tools/call":
        name = f"{method} {call.tool_name}"
        attributes["gen_ai.operation.name"] = "execute_tool"
        attributes["gen_ai.tool.name"] = call.tool_name
    elif method == "prompts/get":
        name = f"{method} {call.tool_name}"
        attributes["gen_ai.prompt.name"] = call.tool_name
    elif method == "resources/read":
        attributes["mcp.resource.uri"] = call.tool_name
    else:
        attributes["windtunnel.target"] = call.tool_name
    # The server's own name: what `wt import` takes the upstream from.
    attributes["mcp.server.name"] = upstream
    attributes["windtunnel.upstream"] = upstream
    attributes["windtunnel.scenario"] = scenario
    attributes["windtunnel.unit_id"] = unit_id
    if pack is not None:
        attributes["windtunnel.pack"] = pack
    match = call.extra.get("match")
    attributes["windtunnel.tier"] = tier or (match["tier"] if match else "miss")
    if match:
        attributes["windtunnel.recording.index"] = match["index"]
    divergence = call.divergence
    if divergence is not None:
        attributes["windtunnel.divergence.reason"] = str(divergence.get("reason"))
        attributes["windtunnel.divergence.policy"] = str(divergence.get("policy"))
    injected = call.extra.get(FAULT_EXTRA_KEY)
    if injected is not None:
        attributes["windtunnel.fault.id"] = str(injected.get("id"))
        attributes["windtunnel.fault.kind"] = str(injected.get("kind"))
    error = None
    fault = call.extra.get("fault")
    if fault is not None:
        attributes["error.type"] = "server_fault"
        error = str(fault)
    elif call.is_error:
        attributes["error.type"] = "tool_error"
        error = ""
    if capture_content:
        attributes["gen_ai.tool.call.arguments"] = _json(call.args)
        if method == "tools/call":
            attributes["gen_ai.tool.call.result"] = _json(wire_result(call))
    start_ns = int(call.started_at * 1e9)
    end_ns = start_ns + int(call.duration_ms * 1e6)
    return CallSpan(name, attributes, start_ns, end_ns, error)


def request_span(
    method: str,
    *,
    upstream: str,
    pack: str | None,
    start_ns: int,
    end_ns: int,
    error: str | None,
) -> CallSpan:
    """The server span of a request answered without a call record (`initialize`,
    `tools/list`, ...): named after its method (it has no target), its JSON-RPC error code as
    `error.type` when it failed."""
    attributes: dict[str, AttributeValue] = {
        "mcp.method.name": method,
        "mcp.server.name": upstream,
        "windtunnel.upstream": upstream,
    }
    if pack is not None:
        attributes["windtunnel.pack"] = pack
    if error is not None:
        attributes["error.type"] = error
    return CallSpan(method, attributes, start_ns, end_ns, error)


def unit_span_name(scenario: str) -> str:
    return f"scenario {scenario}"


def unit_attributes(
    *, pack: str | None, scenario: str, unit_id: str, upstreams: list[str]
) -> dict[str, Any]:
    """A unit span's attributes when it starts."""
    attributes: dict[str, Any] = {
        "windtunnel.scenario": scenario,
        "windtunnel.unit_id": unit_id,
        "windtunnel.upstreams": list(upstreams),
    }
    if pack is not None:
        attributes["windtunnel.pack"] = pack
    return attributes


def unit_outcome(trace: Any) -> dict[str, AttributeValue]:
    """A unit span's attributes once scored (`trace` is a `runner.trace.Trace`)."""
    attributes: dict[str, AttributeValue] = {
        "windtunnel.repeat": int(trace.repeat),
        "windtunnel.seed": int(trace.seed),
        "windtunnel.status": str(trace.status),
        "windtunnel.calls": len(trace.mcp_calls),
        "windtunnel.divergences": int(trace.divergence_count),
    }
    if trace.error is not None:
        attributes["windtunnel.error"] = str(trace.error)
        attributes["error.type"] = "unit_error"
    return attributes


def evaluation_records(trace: Any) -> list[dict[str, AttributeValue]]:
    """One `gen_ai.evaluation.result` per policy verdict and scorer score, in that order."""
    records: list[dict[str, AttributeValue]] = []
    for verdict in trace.verdicts:
        records.append(
            {
                "gen_ai.evaluation.name": verdict.name,
                "gen_ai.evaluation.score.value": 1.0 if verdict.passed else 0.0,
                "gen_ai.evaluation.score.label": "pass" if verdict.passed else "fail",
                "gen_ai.evaluation.explanation": verdict.reason,
                "windtunnel.evaluation.kind": "policy",
            }
        )
    for score in trace.scores:
        record: dict[str, AttributeValue] = {
            "gen_ai.evaluation.name": score.name,
            "gen_ai.evaluation.score.value": float(score.value),
            "gen_ai.evaluation.score.label": "pass" if score.passed else "fail",
            "windtunnel.evaluation.kind": "scorer",
            "windtunnel.evaluation.threshold": float(score.threshold),
        }
        if score.detail:
            record["gen_ai.evaluation.explanation"] = score.detail
        records.append(record)
    return records


def event_record(event: dict[str, Any]) -> tuple[dict[str, AttributeValue], dict[str, Any]]:
    """A divergence or fault event as a log record: its queryable attributes, and its body (the
    event itself, every field as the event has it, `seq` aside: it numbers one fleet's lines)."""
    body = {key: value for key, value in event.items() if key != "seq"}
    attributes: dict[str, AttributeValue] = {}
    for key in ("tool", "reason", "policy", "upstream", "scenario", "unit_id", "pack", "method"):
        value = event.get(key)
        if isinstance(value, str):
            attributes[f"windtunnel.{key}"] = value
    if event.get("method", "tools/call") == "tools/call" and isinstance(event.get("tool"), str):
        attributes["gen_ai.tool.name"] = event["tool"]
    if "error" in event:
        attributes["windtunnel.error"] = str(event["error"])
    return attributes, body
