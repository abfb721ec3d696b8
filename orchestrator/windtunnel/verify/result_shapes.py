"""What a tool's answer looks like, and how two answers differ: by shape or by value. Pure.

A result is compared as the agent sees it, the MCP `CallToolResult` (a bare recorded payload is
first made into the one a replay serves, `as_call_tool_result`): whether it is an error, the
types of its content blocks in order, and its structured content. A text block that holds JSON
(as most servers' structured answers do) is compared by that JSON's shape too.

The shape of a JSON value is its skeleton: an object's keys with their shapes, an array's
element shapes merged, and the type of a scalar (`1` and `1.5` are both numbers). A key the live
answer lacks, or a type that changed, is breaking; a key it adds is informational.

By value, the two views must be equal canonically, with every redaction placeholder
(`[REDACTED:3]`) equal to any other: a verification run numbers its secrets afresh.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from ..canonical import canonical_key
from ..importing.export import as_call_tool_result

__all__ = ["ShapeChange", "result_view", "shape_changes", "value_difference"]

_PLACEHOLDER = re.compile(r"\[REDACTED(?::\d+)?\]")


class ShapeChange(msgspec.Struct, frozen=True):
    path: str
    change: str  # "removed", "added" or "type"
    detail: str

    @property
    def is_breaking(self) -> bool:
        return self.change != "added"


def result_view(result: Any) -> dict[str, Any]:
    """The parts of a `CallToolResult` an agent reads: `isError`, `content`, `structuredContent`
    (`_meta` describes the response, not the answer)."""
    full = as_call_tool_result(result)
    view: dict[str, Any] = {"isError": full.get("isError") is True, "content": full["content"]}
    if "structuredContent" in full:
        view["structuredContent"] = full["structuredContent"]
    return view


def shape_changes(recorded: dict[str, Any], live: dict[str, Any]) -> list[ShapeChange]:
    """Every difference in shape between two `result_view`s, breaking ones first."""
    changes: list[ShapeChange] = []
    if recorded["isError"] != live["isError"]:
        was = "an error" if recorded["isError"] else "a result"
        now = "an error" if live["isError"] else "a result"
        changes.append(ShapeChange("isError", "type", f"was {was}, is now {now}"))
    before = [_block_shape(block) for block in recorded["content"]]
    after = [_block_shape(block) for block in live["content"]]
    before_types = [shape.get("type") for shape in before]
    after_types = [shape.get("type") for shape in after]
    if before_types != after_types:
        changes.append(ShapeChange("content", "type", f"blocks {before_types} -> {after_types}"))
    else:
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            _diff(old, new, f"content[{index}]", changes)
    if "structuredContent" in recorded or "structuredContent" in live:
        _diff(
            _shape(recorded.get("structuredContent")) if "structuredContent" in recorded else None,
            _shape(live.get("structuredContent")) if "structuredContent" in live else None,
            "structuredContent",
            changes,
        )
    changes.sort(key=lambda change: not change.is_breaking)
    return changes


def value_difference(recorded: dict[str, Any], live: dict[str, Any]) -> str | None:
    """The first JSON path where the two views differ by value, or None when they are equal."""
    return _first_difference(_unnumbered(recorded), _unnumbered(live), "$")


def _block_shape(block: Any) -> dict[str, Any]:
    if not isinstance(block, dict):
        return {"type": _scalar(block)}
    shape: dict[str, Any] = {"type": block.get("type")}
    text = block.get("text")
    if isinstance(text, str):
        shape["text"] = _shape(_json_or_text(text))
    return shape


def _json_or_text(text: str) -> Any:
    """The JSON a text block holds (an object or an array), else the text itself."""
    stripped = text.lstrip()
    if stripped[:1] in ("{", "["):
        try:
            return msgspec.json.decode(text)
        except (msgspec.DecodeError, RecursionError):
            return text
    return text


def _shape(value: Any) -> Any:
    if isinstance(value, dict):
        return {"object": {key: _shape(item) for key, item in value.items()}}
    if isinstance(value, list):
        merged: Any = None
        for item in value:
            merged = _merge(merged, _shape(item))
        return {"array": merged}
    return _scalar(value)


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def _merge(a: Any, b: Any) -> Any:
    """Two element shapes as one: objects by the union of their keys; otherwise the first."""
    if a is None:
        return b
    if isinstance(a, dict) and isinstance(b, dict) and "object" in a and "object" in b:
        keys = dict(a["object"])
        for key, shape in b["object"].items():
            keys[key] = _merge(keys.get(key), shape)
        return {"object": keys}
    return a


def _kind(shape: Any) -> str:
    if isinstance(shape, dict):
        return "object" if "object" in shape else "array" if "array" in shape else "block"
    return str(shape)


def _diff(old: Any, new: Any, path: str, changes: list[ShapeChange]) -> None:
    if old is None and new is None:
        return
    if old is None:
        changes.append(ShapeChange(path, "added", "now present"))
        return
    if new is None:
        changes.append(ShapeChange(path, "removed", "no longer present"))
        return
    if _kind(old) != _kind(new):
        changes.append(ShapeChange(path, "type", f"{_kind(old)} -> {_kind(new)}"))
        return
    if _kind(old) == "object":
        for key, shape in old["object"].items():
            _diff(shape, new["object"].get(key), f"{path}.{key}", changes)
        for key, shape in new["object"].items():
            if key not in old["object"]:
                _diff(None, shape, f"{path}.{key}", changes)
    elif _kind(old) == "array":
        # An empty array says nothing about its elements: only two known element shapes differ.
        if old["array"] is not None and new["array"] is not None:
            _diff(old["array"], new["array"], f"{path}[]", changes)
    elif _kind(old) == "block":
        _diff(old.get("text"), new.get("text"), path + ".text", changes)


def _unnumbered(value: Any) -> Any:
    if isinstance(value, dict):
        return {_unnumbered(k): _unnumbered(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unnumbered(item) for item in value]
    if isinstance(value, str):
        return _PLACEHOLDER.sub("[REDACTED]", value)
    return value


def _first_difference(old: Any, new: Any, path: str) -> str | None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in list(old) + [k for k in new if k not in old]:
            if key not in old or key not in new:
                return f"{path}.{key}"
            found = _first_difference(old[key], new[key], f"{path}.{key}")
            if found is not None:
                return found
        return None
    if isinstance(old, list) and isinstance(new, list):
        for index, (a, b) in enumerate(zip(old, new, strict=False)):
            found = _first_difference(a, b, f"{path}[{index}]")
            if found is not None:
                return found
        return None if len(old) == len(new) else f"{path}[{min(len(old), len(new))}]"
    if isinstance(old, str) and isinstance(new, str) and old != new:
        # A text block holding JSON: compared as JSON (canonically: 1 is 1.0), and a
        # difference points into it, not at the whole text.
        a, b = _json_or_text(old), _json_or_text(new)
        if not isinstance(a, str) and not isinstance(b, str):
            return _first_difference(a, b, path)
        return path
    return None if canonical_key(old) == canonical_key(new) else path
