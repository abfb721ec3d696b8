"""Adapter: OTLP/JSON spans (placeholder while the adapter is written)."""

from __future__ import annotations

from .builder import TraceBuilder
from .document import Document

__all__ = ["FORMAT", "looks_like", "read"]

FORMAT = "otlp-json"


def looks_like(doc: Document) -> bool:
    first = doc.records[0][1] if doc.records else None
    return isinstance(first, dict) and "resourceSpans" in first


def read(doc: Document, builder: TraceBuilder) -> None:
    doc.fail("OTLP import is not written yet")
