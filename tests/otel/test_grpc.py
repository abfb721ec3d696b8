"""OTLP over gRPC (`OTEL_EXPORTER_OTLP_PROTOCOL=grpc`, or per signal), through the official
exporter, received by a real gRPC server speaking the collector's services; a protocol Wind
Tunnel does not speak is one clear exit-2 line."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import mcp
import trio

from tests.processes import WT, read_until

from .grpc_receiver import grpc_receiver
from .receiver import oteltap_receiver
from .test_export import attrs, value

ROOT = Path(__file__).resolve().parents[2]
CRM = str(ROOT / "configs" / "demo" / "universes" / "crm.universe.json")


async def _serve_two_calls(env: dict[str, str]) -> None:
    """`wt serve` with `env`: one call the recording answers, one it does not (a divergence)."""
    process = await trio.lowlevel.open_process(
        [*WT, "serve", CRM],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**{k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}, **env},
    )
    try:
        assert process.stdout is not None
        url = (await read_until(process.stdout, b"\n")).decode().strip()
        async with mcp.Client(url) as client:
            assert not (
                await client.call_tool("client_lookup", {"query": "Bluewing Logistics"})
            ).is_error
            assert (await client.call_tool("client_lookup", {"query": "Nobody"})).is_error
    finally:
        process.send_signal(signal.SIGTERM)
        with trio.CancelScope(shield=True):
            await process.wait()
    assert process.returncode == 0


async def test_grpc_exports_spans_and_log_records() -> None:
    """Both signals over gRPC to the endpoint as given: the spans and the divergence's log
    record on its span."""
    with grpc_receiver() as received, trio.fail_after(60):
        await _serve_two_calls(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": received.endpoint,
                "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            }
        )
        await trio.to_thread.run_sync(
            received.wait_for, lambda r: len(r.spans) == 2 and len(r.logs) == 1
        )
    by_tier = {attrs(s.attributes)["windtunnel.tier"]: s for s in received.spans}
    assert sorted(by_tier) == ["exact", "miss"]
    assert {s.name for s in received.spans} == {"tools/call client_lookup"}
    (divergence,) = received.logs
    assert divergence.span_id == by_tier["miss"].span_id
    assert value(divergence.body)["args"] == {"query": "Nobody"}


async def test_a_per_signal_protocol_sends_that_signal_over_grpc_alone() -> None:
    """Traces over gRPC (their own protocol and endpoint), logs over OTLP/HTTP to the base URL."""
    with grpc_receiver() as traces, oteltap_receiver() as logs, trio.fail_after(60):
        await _serve_two_calls(
            {
                "OTEL_EXPORTER_OTLP_ENDPOINT": logs.endpoint,
                "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": traces.endpoint,
            }
        )
        await trio.to_thread.run_sync(traces.wait_for, lambda r: len(r.spans) == 2)
        await trio.to_thread.run_sync(logs.wait_for, lambda r: len(r.logs) == 1)
    assert traces.logs == [] and logs.spans == []
    (divergence,) = logs.logs
    miss = next(s for s in traces.spans if attrs(s.attributes)["windtunnel.tier"] == "miss")
    assert (divergence.trace_id, divergence.span_id) == (miss.trace_id, miss.span_id)


def test_an_unsupported_protocol_is_one_exit_2_line() -> None:
    done = subprocess.run(
        [*WT, "serve", CRM],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
             "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert "OTEL_EXPORTER_OTLP_PROTOCOL='http/json'" in done.stderr


def test_grpc_without_grpcio_is_one_clear_error() -> None:
    """gRPC configured where its exporter is not installed: exit 2, what to install."""
    done = subprocess.run(
        [sys.executable, "-c",
         "import sys; sys.modules['opentelemetry.exporter.otlp.proto.grpc'] = None\n"
         "from windtunnel.cli.main import main; sys.exit(main(sys.argv[1:]))",
         "serve", CRM, "--otel", "http://127.0.0.1:9"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={**os.environ, "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert "pip install 'windtunnel[otel]'" in done.stderr
    assert done.stderr.count("\n") == 1
