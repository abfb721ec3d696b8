"""Infer a tool's input schema from the arguments it was called with.

Used only when the trace carries no definition. The schema never forbids arguments we merely did
not see (`additionalProperties: true`): it describes what the agent sent, it does not police it.
Every inferred schema carries `"x-wt-inferred": {"samples": N}` so nobody mistakes it for the
server's own. Below `MAX_NESTING` levels (what a universe holds) a value's schema is `{}` (any
value): one deeply nested call must not make a schema the fixture cannot hold.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..universe import MAX_NESTING

__all__ = ["infer_schema"]

_ORDER = ("null", "boolean", "integer", "number", "string", "array", "object")
# A schema object at this depth still fits with its `type` / `required` lists and `properties`
# object one level below it and the property schemas two below: deeper ones are `{}`.
_DEEPEST_SCHEMA = MAX_NESTING - 2


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _value_schema(values: Sequence[Any], depth: int) -> dict[str, Any]:
    if depth > _DEEPEST_SCHEMA:
        return {}
    types = {_json_type(v) for v in values}
    if {"integer", "number"} <= types:
        types.discard("integer")
    schema: dict[str, Any] = {}
    ordered = [t for t in _ORDER if t in types]
    schema["type"] = ordered[0] if len(ordered) == 1 else ordered
    if "array" in types:
        items = [item for v in values if isinstance(v, list) for item in v]
        if items:
            schema["items"] = _value_schema(items, depth + 1)
    if "object" in types:
        schema.update(_object_body([v for v in values if isinstance(v, dict)], depth))
    return schema


def _object_body(samples: Sequence[dict[str, Any]], depth: int) -> dict[str, Any]:
    keys = sorted({key for sample in samples for key in sample})
    body: dict[str, Any] = {
        "properties": {
            key: _value_schema([s[key] for s in samples if key in s], depth + 2) for key in keys
        }
    }
    required = [key for key in keys if all(key in sample for sample in samples)]
    if required:
        body["required"] = required
    body["additionalProperties"] = True
    return body


def infer_schema(samples: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """A JSON Schema for an object accepting every sample, marked as inferred."""
    schema: dict[str, Any] = {"type": "object"}
    if samples:
        schema.update(_object_body(samples, 0))
    schema["x-wt-inferred"] = {"samples": len(samples)}
    return schema
