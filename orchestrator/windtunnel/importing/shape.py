"""Typed access to untrusted JSON: a wrong shape is a `TraceError` naming the position."""

from __future__ import annotations

from typing import Any

from .document import Document

__all__ = ["as_list", "as_obj", "opt_str", "req_str"]


def _kind(value: Any) -> str:
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), "null")


def as_obj(doc: Document, value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        doc.fail(f"expected an object, got {_kind(value)}", where)
    return value


def as_list(doc: Document, value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        doc.fail(f"expected an array, got {_kind(value)}", where)
    return value


def req_str(doc: Document, value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        doc.fail(f"expected a non-empty string, got {_kind(value)}", where)
    return value


def opt_str(value: Any) -> str | None:
    """A string, or None for anything else (for fields that are only nice to have)."""
    return value if isinstance(value, str) else None
