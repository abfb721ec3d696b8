"""Reading Contract A in any of its forms: what `wt import`, `wt validate` and the API read.

- an envelope we wrote: the seed's fields (checked by the seed's rules) plus ours, which are the
  evidence (`calls` present): decoded as they are;
- a producer's envelope with the seed's fields only: converted (`interchange_read`), its seed
  fields kept verbatim so writing it again changes nothing a seed reader sees;
- our earlier shape (`"contract": "wind-tunnel/contract-a"`): decoded and given the seed's fields.

Every problem is a `TraceError` naming the file and the JSON path.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from ..errors import TraceError
from ..input_files import read_input
from .builder import TraceBuilder
from .document import parse_document
from .envelope import (
    INTERCHANGE_VERSION,
    Envelope,
    LegacyEnvelope,
    check_legacy_head,
    validate_envelope,
)
from .interchange import check_interchange
from .interchange_read import read_interchange
from .interchange_view import derive_interchange

__all__ = ["decode_envelope", "envelope_from_value", "is_contract_a", "read_envelope"]


def is_contract_a(value: Any) -> bool:
    """Whether a JSON value claims to be a Contract A envelope (either shape). A document with
    the seed's `session` and `messages` but no version is one too: refused for that, by name."""
    if not isinstance(value, dict):
        return False
    if "windtunnel_interchange" in value or "contract" in value:
        return True
    return "session" in value and "messages" in value and "windtunnel_universe" not in value


def _convert(value: Any, kind: type[Any], file: str) -> Any:
    try:
        return msgspec.convert(value, kind)
    except msgspec.ValidationError as exc:
        message, sep, where = str(exc).partition(" - at `")
        raise TraceError(message, file=file, path=where.rstrip("`") if sep else None) from None


def envelope_from_value(
    value: Any, *, file: str, sha256: str | None = None, upstream: str | None = None
) -> Envelope:
    """A parsed JSON value as an `Envelope`. For a seed-only envelope, `sha256` is the file's and
    `upstream` names the upstream its tools are put on (instead of `default`)."""
    if isinstance(value, dict) and "contract" in value and "windtunnel_interchange" not in value:
        check_legacy_head(value, file)
        legacy: LegacyEnvelope = _convert(value, LegacyEnvelope, file)
        validate_envelope(legacy, file=file)
        envelope = Envelope(
            windtunnel_interchange=INTERCHANGE_VERSION,
            session={},
            messages=[],
            trace=legacy.trace,
            task=legacy.task,
            final_answer=legacy.final_answer,
            upstreams=legacy.upstreams,
            calls=legacy.calls,
            warnings=legacy.warnings,
            extensions=legacy.extensions,
        )
        derive_interchange(envelope)
        return envelope
    check_interchange(value, file=file)
    if "calls" in value:
        ours: Envelope = _convert(value, Envelope, file)
        envelope = ours
        validate_envelope(envelope, file=file)
        return envelope
    builder = TraceBuilder("contract-a", file=os.path.basename(file), sha256=sha256)
    read_interchange(value, builder)
    if upstream is not None and not builder.name_unnamed(upstream):
        raise TraceError(f"--upstream {upstream!r}: not a name an upstream can take", file=file)
    envelope = builder.build()
    # What the producer wrote is what a seed reader of our file must see again.
    envelope.otel_genai_mapping = value.get("otel_genai_mapping", "")
    envelope.source = value.get("source")
    envelope.session = value["session"]
    envelope.messages = value["messages"]
    envelope.tool_definitions = value.get("tool_definitions")
    envelope.witnessed_calls = value.get("witnessed_calls")
    return envelope


def decode_envelope(data: bytes | str, *, file: str = "<envelope>") -> Envelope:
    """Decode and check a Contract A document; any problem is a `TraceError` with a JSON path."""
    raw = data.encode() if isinstance(data, str) else data
    doc = parse_document(raw, file=file)
    if doc.jsonl:
        raise TraceError("a Contract A envelope is one JSON document, not JSON lines", file=file)
    return envelope_from_value(doc.single, file=file, sha256=doc.sha256)


def read_envelope(path: str | os.PathLike[str]) -> Envelope:
    """Read a `*.wtin.json` file."""
    file = os.fspath(path)
    data = read_input(file, what="a trace file", error=TraceError)
    return decode_envelope(data, file=file)
