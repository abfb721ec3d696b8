"""The seed's side of Contract A: the `windtunnel_interchange` 1 fields, checked and linted.

windtunnel-bench's design 0001 defines the envelope: `windtunnel_interchange` (the integer 1),
`otel_genai_mapping`, `source` (opaque provenance), `session` (`model` required), `messages`
(OpenTelemetry GenAI messages whose parts are `text`, `tool_call`, `tool_call_response`) and the
optional `tool_definitions` and `witnessed_calls`. `check_interchange` applies its rules in the
order the original reader does, so the first problem reported is the one it reports, here with the
JSON path; fields it does not know are ignored (its forward-tolerance rule), which is what lets our
own fields travel in the same document. `lint_interchange` flags what is valid but usually means a
mis-wired producer, with the original's two rules: a truncation or redaction marker inside a tool
call's arguments or a tool response, and a tool response whose id no tool call has.
"""

from __future__ import annotations

import json
from typing import Any, NoReturn

from ..errors import TraceError

__all__ = [
    "INTERCHANGE_VERSION",
    "PART_TYPES",
    "TRUNCATION_MARKERS",
    "Lint",
    "check_interchange",
    "lint_interchange",
]

INTERCHANGE_VERSION = 1
PART_TYPES = ("text", "tool_call", "tool_call_response")
TRUNCATION_MARKERS = ("[truncated]", "[redacted]")


class _Checker:
    """Raises the first problem as a `TraceError` naming the file and the JSON path."""

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, path: str, message: str) -> NoReturn:
        raise TraceError(message, file=self.file, path=path)

    def obj(self, value: Any, path: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(path, "must be an object")
        return value

    def array(self, value: Any, path: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(path, "must be a list")
        return value

    def name(self, value: Any, path: str) -> str:
        if not isinstance(value, str) or not value:
            self.fail(path, "must be a non-empty string")
        return value


def check_interchange(value: Any, *, file: str) -> None:
    """Check `value` against the seed's version-1 rules; the first problem is a `TraceError`."""
    check = _Checker(file)
    doc = check.obj(value, "$")
    version = doc.get("windtunnel_interchange")
    if type(version) is not int:  # a bool is an int to Python, not to the format
        check.fail("$.windtunnel_interchange", "must be a positive integer")
    if version != INTERCHANGE_VERSION:
        check.fail(
            "$.windtunnel_interchange",
            f"unsupported windtunnel_interchange version {version}; this Wind Tunnel reads "
            f"{INTERCHANGE_VERSION}",
        )
    if not isinstance(doc.get("otel_genai_mapping", ""), str):
        check.fail("$.otel_genai_mapping", "must be a string")
    session = check.obj(doc.get("session"), "$.session")
    check.name(session.get("model"), "$.session.model")
    if doc.get("source") is not None:
        check.obj(doc["source"], "$.source")
    for i, message in enumerate(check.array(doc.get("messages"), "$.messages")):
        _check_message(check, message, f"$.messages[{i}]")
    if doc.get("tool_definitions") is not None:
        for i, tool in enumerate(check.array(doc["tool_definitions"], "$.tool_definitions")):
            _check_tool_definition(check, tool, f"$.tool_definitions[{i}]")
    if doc.get("witnessed_calls") is not None:
        for i, call in enumerate(check.array(doc["witnessed_calls"], "$.witnessed_calls")):
            where = f"$.witnessed_calls[{i}]"
            entry = check.obj(call, where)
            check.name(entry.get("tool_name"), f"{where}.tool_name")
            check.obj(entry.get("args"), f"{where}.args")
            if "result" not in entry:
                check.fail(f"{where}.result", "is required")


def _check_message(check: _Checker, value: Any, where: str) -> None:
    message = check.obj(value, where)
    check.name(message.get("role"), f"{where}.role")
    for j, part in enumerate(check.array(message.get("parts"), f"{where}.parts")):
        _check_part(check, part, f"{where}.parts[{j}]")


def _check_part(check: _Checker, value: Any, where: str) -> None:
    part = check.obj(value, where)
    kind = part.get("type")
    if kind == "text":
        if not isinstance(part.get("content"), str):
            check.fail(f"{where}.content", "must be a string")
    elif kind == "tool_call":
        check.name(part.get("id"), f"{where}.id")
        check.name(part.get("name"), f"{where}.name")
        if "arguments" not in part:
            check.fail(f"{where}.arguments", "is required")
        if isinstance(part["arguments"], str):
            check.fail(
                f"{where}.arguments",
                "must be an object, not JSON text (write the parsed arguments, not a string)",
            )
        check.obj(part["arguments"], f"{where}.arguments")
    elif kind == "tool_call_response":
        check.name(part.get("id"), f"{where}.id")
        if "response" not in part:
            check.fail(f"{where}.response", "is required")
    else:
        check.fail(f"{where}.type", f"must be one of {', '.join(PART_TYPES)}")


def _check_tool_definition(check: _Checker, value: Any, where: str) -> None:
    tool = check.obj(value, where)
    check.name(tool.get("name"), f"{where}.name")
    # The original reads `description or ""`: any false value stands for "no description".
    if not isinstance(tool.get("description") or "", str):
        check.fail(f"{where}.description", "must be a string")
    for key in ("input_schema", "result_schema"):
        if tool.get(key) is not None:
            check.obj(tool[key], f"{where}.{key}")


class Lint:
    """One lint finding: `kind` (`marker` or `unpaired_response`), the part's JSON path and id."""

    __slots__ = ("call_id", "kind", "marker", "path")

    def __init__(self, kind: str, path: str, call_id: str, marker: str | None = None) -> None:
        self.kind = kind
        self.path = path
        self.call_id = call_id
        self.marker = marker

    @property
    def message(self) -> str:
        if self.marker is not None:
            side = "arguments" if self.path.endswith(".arguments") else "response"
            return (
                f"the {side} of tool call {self.call_id!r} hold {self.marker!r}: the producer "
                "read a scrubbed or cut-off source, and a universe recorded from it will not "
                "answer the calls a rerun makes"
            )
        return (
            f"tool response {self.call_id!r} answers no tool_call in the messages: valid "
            "(some producers add synthetic results), but often the wrong source; it is not "
            "imported"
        )


def _markers(value: Any) -> list[str]:
    # The original looks for the markers in the value's JSON text, case-insensitively.
    text = json.dumps(value).lower()
    return [marker for marker in TRUNCATION_MARKERS if marker in text]


def lint_interchange(value: dict[str, Any]) -> list[Lint]:
    """The seed's lint findings, in message order, for an envelope `check_interchange` passed."""
    parts = [
        (f"$.messages[{i}].parts[{j}]", part)
        for i, message in enumerate(value["messages"])
        for j, part in enumerate(message["parts"])
    ]
    call_ids = {part["id"] for _, part in parts if part["type"] == "tool_call"}
    found: list[Lint] = []
    for where, part in parts:
        if part["type"] == "tool_call":
            path = f"{where}.arguments"
            found += [Lint("marker", path, part["id"], m) for m in _markers(part["arguments"])]
        elif part["type"] == "tool_call_response":
            path = f"{where}.response"
            found += [Lint("marker", path, part["id"], m) for m in _markers(part["response"])]
            if part["id"] not in call_ids:
                found.append(Lint("unpaired_response", where, part["id"]))
    return found
