"""An injected fault in the OpenTelemetry export: the call's span names it, and a
`fault_injected` log record on that span carries the evidence (a real OTLP/HTTP receiver)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from tests.faults.world import DOC
from tests.otel.receiver import oteltap_receiver
from tests.otel.test_export import attrs, value
from tests.processes import WT

SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "search", "arguments": {"q": "x"}}},
]  # fmt: skip


@pytest.mark.timeout(300)
async def test_an_injected_fault_is_in_the_span_and_a_log_record(tmp_path: Path) -> None:
    """`wt serve --stdio --otel --fault search=is_error:down`: the span has the fault's id and
    kind, and its log record's body is the fault_injected event."""
    universe = tmp_path / "shop.universe.json"
    universe.write_text(json.dumps(DOC))
    with oteltap_receiver() as received, trio.fail_after(120):
        session = "".join(json.dumps(message) + "\n" for message in SESSION)
        await trio.run_process(
            [*WT, "serve", "--stdio", "--otel", received.endpoint, "--fault",
             "search=is_error:down", str(universe)],
            stdin=session.encode(),
            capture_stdout=True,
            capture_stderr=True,
        )  # fmt: skip
        await trio.to_thread.run_sync(
            received.wait_for, lambda r: len(r.spans) == 1 and len(r.logs) == 1
        )
    (span,) = received.spans
    span_attributes = attrs(span.attributes)
    assert span_attributes["windtunnel.fault.id"] == "search=is_error:down"
    assert span_attributes["windtunnel.fault.kind"] == "is_error"
    (record,) = received.logs
    body = value(record.body)
    assert record.span_id == span.span_id
    assert (body["event"], body["tool"]) == ("fault_injected", "search")
    assert body["fault"] == {
        "id": "search=is_error:down",
        "kind": "is_error",
        "target": "search",
        "message": "down",
        "call_number": 1,
    }
