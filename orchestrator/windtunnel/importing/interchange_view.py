"""Our fields → the seed's: what an envelope we write says to a reader that knows only design 0001.

The seed's fields are derived from ours, so windtunnel-bench imports what we import:

- `session.model` is the model when a trace names one, else `"unknown"` (the seed requires a
  non-empty string and our traces rarely say); `session.started_at` the run's start;
- `source` is the provenance: `ref` (the trace id, which the seed stamps as `origin:<ref>`), and
  the source `format`, `file` and `sha256`;
- `messages`: the system prompt, the task as the user's message, then per call an assistant
  `tool_call` part and, when the call has a result, a tool `tool_call_response` part holding the
  `CallToolResult` the fixture serves; last the final answer. A call whose arguments the trace did
  not capture has no `tool_call` part (the seed would read `{}` as "called without arguments");
- `tool_definitions`: every served tool with its input schema (the first of a name wins, since the
  seed has no upstreams);
- `witnessed_calls`: the calls with a result the wire carried, when every call with a result has
  one. A trace that holds some results only as the model saw them leaves it out, so the seed
  reconstructs every pair from `messages` (it reads `witnessed_calls` alone when present).
"""

from __future__ import annotations

from typing import Any

from .envelope import ALWAYS_OUT, Call, Envelope
from .fixture import recording_result

__all__ = ["UNKNOWN_MODEL", "derive_interchange", "message_call_ids"]

UNKNOWN_MODEL = "unknown"


def message_call_ids(calls: list[Call]) -> dict[int, str]:
    """The `tool_call` id of each call (by `seq`): the trace's id when unique, else `wt-<seq>`."""
    counts: dict[str, int] = {}
    for call in calls:
        if call.call_id:
            counts[call.call_id] = counts.get(call.call_id, 0) + 1
    ids: dict[int, str] = {}
    taken: set[str] = set()
    for call in calls:
        candidate = call.call_id if call.call_id and counts[call.call_id] == 1 else None
        if candidate is None or candidate in taken:
            candidate = f"wt-{call.seq}"
            while candidate in taken or candidate in counts:
                candidate += "_"
        taken.add(candidate)
        ids[call.seq] = candidate
    return ids


def _text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def _messages(envelope: Envelope) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    if envelope.task.system:
        messages.append(_text("system", envelope.task.system))
    if envelope.task.prompt:
        messages.append(_text("user", envelope.task.prompt))
    ids = message_call_ids(envelope.calls)
    for call in envelope.calls:
        if call.args is None or ALWAYS_OUT & set(call.flags):
            continue
        part = {"type": "tool_call", "id": ids[call.seq], "name": call.tool, "arguments": call.args}
        messages.append({"role": "assistant", "parts": [part]})
        if call.result is not None:
            response = {
                "type": "tool_call_response",
                "id": ids[call.seq],
                "response": recording_result(call),
            }
            messages.append({"role": "tool", "parts": [response]})
    if envelope.final_answer is not None and envelope.final_answer.text:
        messages.append(_text("assistant", envelope.final_answer.text))
    return messages


def _tool_definitions(envelope: Envelope) -> list[dict[str, Any]]:
    definitions: dict[str, dict[str, Any]] = {}
    for upstream in envelope.upstreams:
        if upstream.kind == "builtin":
            continue
        for tool in upstream.tools:
            definition: dict[str, Any] = {"name": tool.name}
            if tool.description:
                definition["description"] = tool.description
            definition["input_schema"] = tool.input_schema
            definitions.setdefault(tool.name, definition)
    return list(definitions.values())


def _witnessed_calls(envelope: Envelope) -> list[dict[str, Any]] | None:
    answered = [
        c
        for c in envelope.calls
        if c.result is not None and c.args is not None and not ALWAYS_OUT & set(c.flags)
    ]
    if not answered or any(c.result is not None and c.result.view != "wire" for c in answered):
        return None
    return [{"tool_name": c.tool, "args": c.args, "result": recording_result(c)} for c in answered]


def derive_interchange(envelope: Envelope, *, model: str | None = None) -> None:
    """Fill the seed's fields of `envelope` from ours (replacing what they held)."""
    session: dict[str, Any] = {"model": model or UNKNOWN_MODEL}
    if envelope.trace.started_at is not None:
        session["started_at"] = envelope.trace.started_at
    envelope.session = session
    origin = envelope.trace.source
    source: dict[str, Any] = {"ref": envelope.trace.id, "format": origin.format}
    if origin.file is not None:
        source["file"] = origin.file
    if origin.sha256 is not None:
        source["sha256"] = origin.sha256
    envelope.source = source
    envelope.messages = _messages(envelope)
    envelope.tool_definitions = _tool_definitions(envelope)
    envelope.witnessed_calls = _witnessed_calls(envelope)
