"""Just enough TOML writing for generated packs (the standard library only reads TOML)."""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["NotTomlError", "toml_key", "toml_value"]

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_INT64 = (-(2**63), 2**63 - 1)


class NotTomlError(ValueError):
    """A JSON value TOML cannot hold (null, a huge integer)."""


def toml_string(text: str) -> str:
    # JSON string escapes are a subset of TOML basic-string escapes; DEL must be escaped too.
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else toml_string(key)


def toml_value(value: Any) -> str:
    """One TOML value (inline tables for objects); raises `NotTomlError` for null."""
    if value is None:
        raise NotTomlError("TOML has no null")
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if not _INT64[0] <= value <= _INT64[1]:
            raise NotTomlError("integer out of TOML's 64-bit range")
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = ", ".join(f"{toml_key(k)} = {toml_value(v)}" for k, v in value.items())
        return "{ " + items + " }"
    raise NotTomlError(f"not a JSON value: {type(value).__name__}")
