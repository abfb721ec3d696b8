"""Typed access to untrusted JSON: a wrong shape is a `TraceError` naming the position."""

from __future__ import annotations

from typing import Any

import msgspec

from .document import Document

__all__ = ["Body", "as_list", "as_obj", "last_response", "opt_str", "request_body"]


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


def opt_str(value: Any) -> str | None:
    """A string, or None for anything else (for fields that are only nice to have)."""
    return value if isinstance(value, str) else None


class Body(msgspec.Struct):
    """A request body to read (messages, tools, ...) and the final response, with their paths."""

    value: Any
    at: str
    response: Any
    response_at: str


def _is_exchange(value: Any) -> bool:
    return isinstance(value, dict) and "request" in value and "response" in value


def request_body(doc: Document) -> Body:
    """The body of a transcript: the document itself, or the last of a request/response log.

    A log (JSON lines, or an array, of `{"request", "response"}`) is read from its last exchange:
    the last request holds the whole conversation, and its response the final answer.
    """
    if doc.jsonl:
        entries = [(f"line {line}: $", value) for line, value in doc.records]
    elif isinstance(doc.single, list) and doc.single and _is_exchange(doc.single[0]):
        entries = [(f"$[{i}]", value) for i, value in enumerate(doc.single)]
    else:
        value = doc.single
        if isinstance(value, dict):
            return Body(value, "$", value.get("response"), "$.response")
        return Body(value, "$", None, "$.response")
    where, last = entries[-1]
    if not _is_exchange(last):
        doc.fail('expected a {"request", "response"} exchange', where)
    return Body(last["request"], f"{where}.request", last["response"], f"{where}.response")


def last_response(doc: Document) -> Any:
    """The final response of a request/response log (for sniffing); None when not a log."""
    records = (
        [value for _, value in doc.records]
        if doc.jsonl
        else (doc.single if isinstance(doc.single, list) else [])
    )
    if records and all(_is_exchange(value) for value in records):
        return records[-1]["response"]
    return None
