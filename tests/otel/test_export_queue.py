"""`otel.export.OtlpExport`: a collector that never answers costs the offering thread nothing;
what does not fit is dropped and counted, and closing is bounded by its deadline."""

from __future__ import annotations

import socket
import time

import pytest

from windtunnel.otel.config import OtelConfig
from windtunnel.otel.conventions import CallSpan
from windtunnel.otel.export import CallRecord, OtlpExport


def record(n: int) -> CallRecord:
    span = CallSpan(f"tools/call t{n}", {"mcp.method.name": "tools/call"}, 1, 2, None)
    return CallRecord("serve", span, None, [])


@pytest.mark.timeout(60)
@pytest.mark.parametrize("protocol", ["http/protobuf", "grpc"])
def test_a_collector_that_never_answers_drops_and_counts_and_never_blocks(protocol: str) -> None:
    """With the export thread stuck on a collector that accepted the connection and never
    answers (over OTLP/HTTP or gRPC), offers return at once; past the queue's bound each is
    dropped and counted; `close` gives up at its deadline and counts what was still queued."""
    with socket.socket() as black_hole:
        black_hole.bind(("127.0.0.1", 0))
        black_hole.listen()
        port = black_hole.getsockname()[1]
        grpc = protocol == "grpc"
        config = OtelConfig(
            traces_endpoint=f"http://127.0.0.1:{port}" + ("" if grpc else "/v1/traces"),
            logs_endpoint=None,
            traces_protocol="grpc" if grpc else "http/protobuf",
        )
        export = OtlpExport(config, queue_size=4)
        export.offer(record(0))
        black_hole.settimeout(30)
        connection, _ = black_hole.accept()  # the thread is now sending record 0, and waits
        with connection:
            for n in range(1, 11):
                export.offer(record(n))
            assert (export.queued, export.queue_dropped) == (4, 6)
            started = time.perf_counter()
            export.close(deadline_s=0.5)
            assert time.perf_counter() - started < 5
            assert export.dropped == 6 + 4
