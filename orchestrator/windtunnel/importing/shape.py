"""Typed access to untrusted JSON: a wrong shape is a `TraceError` naming the position."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec

from .document import Document

__all__ = [
    "Body",
    "Transcript",
    "as_list",
    "as_obj",
    "is_exchange",
    "opt_str",
    "read_transcript",
    "request_body",
]


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


def is_exchange(value: Any) -> bool:
    """A `{"request", "response"}` pair of a request/response log."""
    return isinstance(value, dict) and "request" in value and "response" in value


def request_body(doc: Document) -> Body:
    """The body of a transcript: the document itself, or the last of a request/response log.

    A log (JSON lines, or an array, of `{"request", "response"}`) is read from its last exchange:
    the last request holds the whole conversation, and its response the final answer.
    """
    if doc.jsonl:
        entries = [(f"line {line}: $", value) for line, value in doc.records]
    elif isinstance(doc.single, list) and doc.single and is_exchange(doc.single[0]):
        entries = [(f"$[{i}]", value) for i, value in enumerate(doc.single)]
    else:
        value = doc.single
        if isinstance(value, dict):
            return Body(value, "$", value.get("response"), "$.response")
        return Body(value, "$", None, "$.response")
    where, last = entries[-1]
    if not is_exchange(last):
        doc.fail('expected a {"request", "response"} exchange', where)
    return Body(last["request"], f"{where}.request", last["response"], f"{where}.response")


class Transcript(msgspec.Struct):
    """A chat transcript's request body (at `at`), its messages with their paths, and the final
    response (an object, at `response_at`) when there is one."""

    body: dict[str, Any]
    at: str
    messages: list[tuple[str, dict[str, Any]]]
    response: dict[str, Any] | None
    response_at: str


def read_transcript(doc: Document, *, is_response: Callable[[Any], bool]) -> Transcript:
    """The parts of a chat transcript (Anthropic Messages, OpenAI Chat Completions): a request
    body with its messages, a bare final response (`is_response`), or a bare array of messages,
    alone or as the last exchange of a request/response log (`request_body`)."""
    found = request_body(doc)
    value, response, response_at = found.value, found.response, found.response_at
    messages_at = f"{found.at}.messages"
    if is_response(value):
        value, response, response_at = {"messages": []}, value, found.at
    elif isinstance(value, list):
        value, messages_at = {"messages": value}, found.at
    body = as_obj(doc, value, found.at)
    messages = [
        (f"{messages_at}[{i}]", as_obj(doc, m, f"{messages_at}[{i}]"))
        for i, m in enumerate(as_list(doc, body.get("messages"), messages_at))
    ]
    final = as_obj(doc, response, response_at) if response is not None else None
    return Transcript(body, found.at, messages, final, response_at)
