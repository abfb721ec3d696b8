"""What the format sniffers look at (each adapter's `looks_like` says what it looks for).

Two families of trace share a skeleton:

- *logs* (MCP JSON-RPC, OpenAI Responses exchanges) are told by their first record: the first
  JSON line, the first element of a top-level array, or the one document (`first_record`);
- *chat transcripts* (Anthropic Messages, OpenAI Chat Completions) come as a request/response
  log, a single response, a request body with its `response`, or bare messages
  (`transcript_looks_like`, given what a response of that API is and what a message that uses
  tools is).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .document import Document
from .shape import is_exchange

__all__ = ["first_record", "last_response", "transcript_looks_like"]


def first_record(doc: Document) -> Any:
    """A log's first record: its first JSON line, the first element of a top-level array, or
    the document itself (None for an empty array)."""
    value = doc.single
    if not doc.jsonl and isinstance(value, list):
        return value[0] if value else None
    return value


def last_response(doc: Document) -> Any:
    """The final response of a request/response log; None when the trace is not such a log."""
    records = (
        [value for _, value in doc.records]
        if doc.jsonl
        else (doc.single if isinstance(doc.single, list) else [])
    )
    if records and all(is_exchange(value) for value in records):
        return records[-1]["response"]
    return None


def transcript_looks_like(
    doc: Document,
    *,
    is_response: Callable[[Any], bool],
    uses_tools: Callable[[dict[str, Any]], bool],
) -> bool:
    """Whether `doc` is a transcript of the API whose responses satisfy `is_response`.

    A request/response log is decided by its last response alone; otherwise the document must
    be a response, carry one under `response`, or hold (as `messages`, or bare) a message that
    `uses_tools`: a transcript without tool use has nothing to import.
    """
    response = last_response(doc)
    if response is not None:
        return is_response(response)
    if doc.jsonl:
        return False
    value = doc.single
    if is_response(value) or (isinstance(value, dict) and is_response(value.get("response"))):
        return True
    messages = value.get("messages") if isinstance(value, dict) else value
    return isinstance(messages, list) and any(
        isinstance(message, dict) and uses_tools(message) for message in messages
    )
