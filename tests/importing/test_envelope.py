"""Contract A reading in our earlier shape (`contract` + `version`): versions, cross-field rules,
forward compatibility; the shipped schema. (The `windtunnel_interchange` form: tests/seed.)"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from windtunnel.errors import TraceError
from windtunnel.importing.contract_a import decode_envelope
from windtunnel.importing.envelope import CONTRACT_VERSION, json_schema


def _doc(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "contract": "wind-tunnel/contract-a",
        "version": "1.0",
        "trace": {"id": "t1", "source": {"format": "manual"}},
        "task": {"prompt": "p"},
        "upstreams": [
            {
                "id": "ops",
                "kind": "mcp",
                "identity": {"source": "user"},
                "tools": [{"name": "ping", "input_schema": {}, "schema_source": "user"}],
            }
        ],
        "calls": [
            {
                "seq": 0,
                "upstream": "ops",
                "tool": "ping",
                "args": {},
                "outcome": "ok",
                "result": {"content": [], "view": "wire"},
            }
        ],
    }
    doc.update(changes)
    return doc


def _decode(doc: dict[str, Any]) -> Any:
    return decode_envelope(msgspec.json.encode(doc), file="t.wtin.json")


def test_unknown_major_version_is_refused_with_a_clear_message() -> None:
    """An earlier-shape version 2.0 is refused, naming the file, the path and the versions this reader knows."""
    with pytest.raises(TraceError) as caught:
        _decode(_doc(version="2.0"))
    assert str(caught.value) == (
        "t.wtin.json at $.version: unsupported Contract A version '2.0'; this Wind Tunnel "
        "reads 1.x of this earlier shape, and writes windtunnel_interchange 1"
    )


def test_newer_minor_version_fields_are_ignored() -> None:
    """A 1.7 document with a field this reader does not know still loads."""
    envelope = _decode(_doc(version="1.7", future_field={"x": 1}))
    assert (envelope.windtunnel_interchange, envelope.trace.id) == (1, "t1")


def test_other_documents_are_not_taken_for_contract_a() -> None:
    """A document with another `contract` is refused as not Contract A."""
    with pytest.raises(TraceError, match="not a Contract A envelope"):
        _decode(_doc(contract="something-else"))


def test_shape_errors_name_the_json_path() -> None:
    """A wrong type deep in the document is reported with its JSON path."""
    doc = _doc()
    doc["calls"][0]["seq"] = "zero"
    with pytest.raises(TraceError) as caught:
        _decode(doc)
    assert str(caught.value) == "t.wtin.json at $.calls[0].seq: Expected `int`, got `str`"


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"upstream": "nowhere"},
            "t.wtin.json at $.calls[0].upstream: call names undeclared upstream 'nowhere'",
        ),
        (
            {"tool": "pong"},
            "t.wtin.json at $.calls[0].tool: call names tool 'pong', which "
            "upstream 'ops' does not declare",
        ),
        ({"seq": 3}, "t.wtin.json at $.calls[0].seq: seq must be 0 (dense, in order)"),
        (
            {"outcome": "unknown"},
            "t.wtin.json at $.calls[0]: outcome 'unknown' needs an error and no result",
        ),
    ],
)
def test_cross_field_rules_are_enforced(change: dict[str, Any], message: str) -> None:
    """References, dense seq and the outcome/result pairing are checked after decoding."""
    doc = _doc()
    doc["calls"][0].update(change)
    with pytest.raises(TraceError) as caught:
        _decode(doc)
    assert str(caught.value) == message


def test_shipped_schema_describes_this_version() -> None:
    """The packaged JSON Schema accepts the version this Wind Tunnel writes."""
    schema = json_schema()
    assert schema["properties"]["windtunnel_interchange"] == {"const": 1}
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert CONTRACT_VERSION.startswith("1.")
