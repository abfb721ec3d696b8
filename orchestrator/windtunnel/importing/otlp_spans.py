"""OTLP/JSON spans as plain records: what `otlp` groups into calls.

Reads both encodings real exporters write: the OTLP/JSON the file exporter and collectors write
(lower-case hex ids, integer enums) and protobuf's stock `json_format` (base64 ids, enum names
such as `SPAN_KIND_SERVER` and `STATUS_CODE_ERROR`, 64-bit integers as strings). A span that cannot
be read is skipped with a warning naming its JSON path: one odd span never aborts a file.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from ..errors import TraceError
from .document import Document
from .shape import as_list, as_obj, opt_str

__all__ = ["CLIENT", "ERROR", "SERVER", "Span", "nearest_above", "read_spans"]

_T = TypeVar("_T")

INTERNAL, SERVER, CLIENT = 1, 2, 3
ERROR = 2
_INT = re.compile(r"-?\d{1,18}")
_HEX = re.compile(r"[0-9a-fA-F]+")
_SPAN_KINDS = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": INTERNAL,
    "SPAN_KIND_SERVER": SERVER,
    "SPAN_KIND_CLIENT": CLIENT,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_STATUS_CODES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": ERROR}


class Span(msgspec.Struct):
    """One span, its resource's and scope's names, and where it sits in the file."""

    where: str
    order: int
    trace_id: str
    span_id: str
    parent_id: str
    name: str
    scope: str
    kind: int
    start: int
    end: int
    attrs: dict[str, Any]
    resource: dict[str, Any]
    status_code: int
    status_message: str | None
    exception_message: str | None


def _any_value(value: Any) -> Any:
    """An OTLP `AnyValue` as plain JSON data."""
    if not isinstance(value, dict):
        return None
    if "stringValue" in value:
        return value["stringValue"] if isinstance(value["stringValue"], str) else None
    if "boolValue" in value:
        return value["boolValue"] if isinstance(value["boolValue"], bool) else None
    if "intValue" in value:
        number = value["intValue"]
        if isinstance(number, int) and not isinstance(number, bool):
            return number if -(2**63) <= number < 2**63 else None
        return int(number) if isinstance(number, str) and _INT.fullmatch(number) else None
    if "doubleValue" in value:
        number = value["doubleValue"]
        return number if isinstance(number, int | float) and not isinstance(number, bool) else None
    if "arrayValue" in value:
        inner = value["arrayValue"]
        items = inner.get("values") if isinstance(inner, dict) else None
        return [_any_value(v) for v in items] if isinstance(items, list) else []
    if "kvlistValue" in value:
        inner = value["kvlistValue"]
        items = inner.get("values") if isinstance(inner, dict) else None
        return _kv_list(items) if isinstance(items, list) else {}
    if "bytesValue" in value:
        return value["bytesValue"] if isinstance(value["bytesValue"], str) else None
    return None


def _kv_list(items: list[Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = _any_value(item.get("value"))
    return out


def _attributes(doc: Document, value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    return _kv_list(as_list(doc, value, where))


def _hex_id(value: Any, size: int) -> str:
    """A trace/span id as lower-case hex; base64 ids (stock protobuf JSON) are converted."""
    if not isinstance(value, str):
        return ""
    if len(value) == 2 * size and _HEX.fullmatch(value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value.lower() if _HEX.fullmatch(value) else value
    return raw.hex() if len(raw) == size else value


def _nanos(value: Any) -> int:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit() and len(value) <= 20:
        return int(value)
    return 0


def _enum(value: Any, names: dict[str, int]) -> int:
    """An OTLP enum written as its integer (OTLP/JSON) or its name (protobuf `json_format`)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return names.get(value, 0)
    return 0


def read_spans(doc: Document) -> tuple[list[Span], list[TraceError]]:
    """Every readable span of every export in the file, in file order, and why each other span
    was skipped."""
    spans: list[Span] = []
    skipped: list[TraceError] = []
    for line, record in doc.records:
        base = f"line {line}: " if doc.jsonl else ""
        data = as_obj(doc, record, f"{base}$")
        resource_spans = as_list(doc, data.get("resourceSpans"), f"{base}$.resourceSpans")
        for i, rs in enumerate(resource_spans):
            at = f"{base}$.resourceSpans[{i}]"
            rs = as_obj(doc, rs, at)
            resource = rs.get("resource") or {}
            resource = as_obj(doc, resource, f"{at}.resource")
            resource_attrs = _attributes(doc, resource.get("attributes"), f"{at}.resource")
            key = "scopeSpans" if "scopeSpans" in rs else "instrumentationLibrarySpans"
            for j, scope in enumerate(as_list(doc, rs.get(key, []), f"{at}.{key}")):
                scope = as_obj(doc, scope, f"{at}.{key}[{j}]")
                scope_info = scope.get("scope", scope.get("instrumentationLibrary"))
                scope_name = (
                    opt_str(scope_info.get("name")) if isinstance(scope_info, dict) else None
                )
                span_list = as_list(doc, scope.get("spans", []), f"{at}.{key}[{j}].spans")
                for k, span in enumerate(span_list):
                    where = f"{at}.{key}[{j}].spans[{k}]"
                    try:
                        spans.append(
                            _span(doc, span, where, len(spans), resource_attrs, scope_name or "")
                        )
                    except TraceError as exc:
                        skipped.append(exc)
    return spans, skipped


def _span(
    doc: Document, value: Any, where: str, order: int, resource: dict[str, Any], scope: str
) -> Span:
    span = as_obj(doc, value, where)
    status: dict[str, Any] = span["status"] if isinstance(span.get("status"), dict) else {}
    exception = None
    events = span.get("events")
    for i, event in enumerate(events if isinstance(events, list) else []):
        if isinstance(event, dict) and event.get("name") == "exception":
            attrs = _attributes(doc, event.get("attributes"), f"{where}.events[{i}].attributes")
            exception = opt_str(attrs.get("exception.message"))
    return Span(
        where=where,
        order=order,
        trace_id=_hex_id(span.get("traceId"), 16),
        span_id=_hex_id(span.get("spanId"), 8),
        parent_id=_hex_id(span.get("parentSpanId"), 8),
        name=opt_str(span.get("name")) or "",
        scope=scope,
        kind=_enum(span.get("kind"), _SPAN_KINDS),
        start=_nanos(span.get("startTimeUnixNano")),
        end=_nanos(span.get("endTimeUnixNano")),
        attrs=_attributes(doc, span.get("attributes"), f"{where}.attributes"),
        resource=resource,
        status_code=_enum(status.get("code"), _STATUS_CODES),
        status_message=opt_str(status.get("message")),
        exception_message=exception,
    )


def nearest_above(span: Span, by_id: Mapping[str, Span], marked: Mapping[str, _T]) -> _T | None:
    """What `marked` holds for the nearest ancestor of `span` (by span id) it holds anything
    for, walking up through the others; None at the root, at a parent missing from the file,
    or on a cycle of parent ids."""
    seen: set[str] = set()
    parent_id = span.parent_id
    while parent_id and parent_id not in seen:
        if parent_id in marked:
            return marked[parent_id]
        seen.add(parent_id)
        parent = by_id.get(parent_id)
        if parent is None:
            return None
        parent_id = parent.parent_id
    return None
