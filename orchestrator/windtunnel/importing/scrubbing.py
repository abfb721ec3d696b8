"""Values a tracer replaced before export (logfire's scrubbing: `[Scrubbed due to 'api_key']`).

Such a value is not what the agent sent or the server answered, and it is not a secret either:
it is a placeholder. Calls that hold one are flagged (`args_redacted`, `result_redacted`) instead
of being taken at face value, and the secret scanner does not report it.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["is_placeholder", "scrubbed_paths", "unscrub_schema"]

_PLACEHOLDER = re.compile(r"\[Scrubbed due to '[^']*'\]")


def is_placeholder(value: Any) -> bool:
    return isinstance(value, str) and _PLACEHOLDER.fullmatch(value) is not None


def scrubbed_paths(value: Any, root: str) -> list[str]:
    """JSON paths (under `root`) of every scrubbed placeholder in `value`, in document order."""
    found: list[str] = []
    stack: list[tuple[str, Any]] = [(root, value)]
    while stack:
        path, item = stack.pop()
        if is_placeholder(item):
            found.append(path)
        elif isinstance(item, dict):
            stack.extend((f"{path}.{key}", child) for key, child in reversed(item.items()))
        elif isinstance(item, list):
            stack.extend((f"{path}[{i}]", child) for i, child in reversed(list(enumerate(item))))
    return found


def unscrub_schema(schema: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A JSON Schema whose scrubbed property schemas become `{}` (any value), and whether any
    was: logfire scrubs a property *named* like a secret (`api_key`) even inside a schema."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not any(map(is_placeholder, properties.values())):
        return schema, False
    fixed = {key: {} if is_placeholder(sub) else sub for key, sub in properties.items()}
    return {**schema, "properties": fixed}, True
