"""Rules every adapter applies to one value: arguments, results, times, names.

Pure functions; flags say what was done to a value (`args_wrapped`, `args_truncated`, ...), so the
envelope records every conversion and the fixture can refuse damaged calls.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import msgspec

from .envelope import CallResult

__all__ = [
    "ParsedArgs",
    "anthropic_content",
    "elapsed_ms",
    "iso_from_nanos",
    "iso_from_seconds",
    "iso_from_text",
    "looks_truncated",
    "missing_args",
    "parse_args",
    "parse_json_text",
    "seconds_of",
    "slug",
    "text_block",
    "text_result",
    "wire_result",
]

_TRUNCATION_MARKS = ("…", "...", "[truncated]", "(truncated)", "<truncated>")


class ParsedArgs(msgspec.Struct):
    """Arguments as a flat object (None: not captured), the original text when it was
    converted, and what was done."""

    args: dict[str, Any] | None
    raw: str | None
    flags: list[str]


def missing_args() -> ParsedArgs:
    """Arguments the trace did not capture: never `{}`, which would claim a call without any."""
    return ParsedArgs(args=None, raw=None, flags=["args_missing"])


def parse_json_text(text: str) -> tuple[bool, Any]:
    """`(True, value)` when `text` is JSON, else `(False, None)`."""
    try:
        return True, msgspec.json.decode(text)
    except msgspec.DecodeError:
        return False, None


_JSON_START = re.compile(r'\{\s*(?:"|\})|\[\s*(?:[\[{"\d\-\]]|true|false|null)')


def looks_truncated(text: str) -> bool:
    """A value cut off by a length limit: a trailing ellipsis or marker, or JSON left open."""
    stripped = text.strip()
    if stripped.endswith(_TRUNCATION_MARKS):
        return True
    if not _JSON_START.match(stripped):
        return False
    ok, _ = parse_json_text(stripped)
    return not ok and _left_open(stripped)


def _left_open(text: str) -> bool:
    """More brackets opened than closed (outside strings), or a string never closed."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return in_string or depth > 0


def parse_args(value: Any) -> ParsedArgs:
    """Turn arguments as a trace holds them (object, JSON text, anything) into a flat object."""
    if isinstance(value, dict):
        return ParsedArgs(args=value, raw=None, flags=[])
    if value is None:
        return ParsedArgs(args={}, raw=None, flags=[])
    if isinstance(value, str):
        if not value.strip():
            return ParsedArgs(args={}, raw=value, flags=[])
        ok, decoded = parse_json_text(value)
        if ok and isinstance(decoded, dict):
            return ParsedArgs(args=decoded, raw=value, flags=[])
        if ok:
            return ParsedArgs(args={"input": decoded}, raw=value, flags=["args_wrapped"])
        flag = "args_truncated" if looks_truncated(value) else "args_unparseable"
        return ParsedArgs(args={}, raw=value, flags=[flag])
    return ParsedArgs(args={"input": value}, raw=None, flags=["args_wrapped"])


def text_block(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def text_result(text: str, *, view: str = "model") -> tuple[CallResult, list[str]]:
    """A plain-text result; flags `result_truncated` when the text looks cut off."""
    flags = ["result_truncated"] if looks_truncated(text) else []
    return CallResult(content=[text_block(text)], view="wire" if view == "wire" else "model"), flags


def _is_block(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("type"), str)


def wire_result(value: Any) -> tuple[CallResult, bool] | None:
    """An MCP `CallToolResult` as the wire carried it, and its `isError`; None if not one."""
    if not isinstance(value, dict):
        return None
    content = value.get("content")
    if not isinstance(content, list) or not all(_is_block(block) for block in content):
        return None
    result = CallResult(content=list(content), view="wire")
    if "structuredContent" in value:
        result.structured = value["structuredContent"]
    return result, value.get("isError") is True


def anthropic_content(value: Any) -> tuple[CallResult, list[str]] | None:
    """A `tool_result` / `mcp_tool_result` content (string or blocks) as MCP content blocks."""
    if isinstance(value, str):
        return text_result(value)
    if value is None:
        return CallResult(content=[], view="model"), []
    if not isinstance(value, list):
        return None
    blocks: list[dict[str, Any]] = []
    flags: list[str] = []
    for block in value:
        if not _is_block(block):
            return None
        if block["type"] == "text" and isinstance(block.get("text"), str):
            blocks.append(text_block(block["text"]))
            if looks_truncated(block["text"]) and "result_truncated" not in flags:
                flags.append("result_truncated")
        elif block["type"] == "image" and isinstance(block.get("source"), dict):
            source = block["source"]
            blocks.append(
                {
                    "type": "image",
                    "data": source.get("data", ""),
                    "mimeType": source.get("media_type", "application/octet-stream"),
                }
            )
        else:
            blocks.append(dict(block))
    return CallResult(content=blocks, view="model"), flags


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.") + (
        f"{moment.microsecond // 1000:03d}Z"
    )


def iso_from_nanos(nanos: int) -> str | None:
    """RFC 3339 UTC with milliseconds from Unix nanoseconds (OTLP); None when out of range."""
    try:
        seconds, rest = divmod(nanos, 1_000_000_000)
        moment = dt.datetime.fromtimestamp(seconds, dt.UTC)
        return _iso(moment.replace(microsecond=rest // 1000))
    except (OverflowError, OSError, ValueError):
        return None


def iso_from_seconds(seconds: float) -> str | None:
    """RFC 3339 UTC with milliseconds from Unix seconds; None when out of range."""
    try:
        return _iso(dt.datetime.fromtimestamp(seconds, dt.UTC))
    except (OverflowError, OSError, ValueError):
        return None


def _moment(text: str) -> dt.datetime | None:
    """An ISO 8601 timestamp as an aware datetime (UTC when it names no zone); None if not one."""
    try:
        moment = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment


def iso_from_text(text: str) -> str | None:
    """Normalize an ISO 8601 timestamp to RFC 3339 UTC with milliseconds; None if not one."""
    moment = _moment(text)
    if moment is None:
        return None
    try:
        return _iso(moment)
    except (OverflowError, ValueError):
        return None


def seconds_of(value: Any) -> float | None:
    """Unix seconds from a number or an ISO 8601 text (UTC when it names no zone), at the
    precision the trace gave; None when it is neither."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    moment = _moment(value) if isinstance(value, str) else None
    if moment is None:
        return None
    try:
        return moment.timestamp()
    except (OverflowError, ValueError):
        return None


def elapsed_ms(start: float | None, end: float | None) -> float | None:
    """How long a call took, in milliseconds to the microsecond, from its start and end in Unix
    seconds (`seconds_of`); None when either is unknown or the end comes before the start.

    The envelope's `started_at`/`ended_at` are written to the millisecond; this keeps what the
    trace had, for a recording's `meta.duration_ms` (replayed by `delay:recorded`)."""
    if start is None or end is None or end < start:
        return None
    return round((end - start) * 1000.0, 3)


_SLUG_BAD = re.compile(r"[^a-z0-9_.-]+")


def slug(name: str) -> str:
    """An upstream id: `[a-z0-9][a-z0-9_.-]*`, at most 63 characters; `default` when empty."""
    text = _SLUG_BAD.sub("-", name.strip().lower())
    text = text.lstrip("_.-")[:63].rstrip("_.-")
    return text or "default"
