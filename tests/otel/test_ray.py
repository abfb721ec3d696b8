"""`wt run --executor ray --otel URL`: units run as Ray tasks on a real local Ray instance export
their spans to the collector the driver was given (the configuration travels with the task),
each call span under its unit's span. Received by a real OTLP/gRPC
receiver."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest
import ray

from tests.scale.packs import scripted_pack
from windtunnel.cli.main import main
from windtunnel.otel.config import otel_config
from windtunnel.otel.shipping import ship_otel
from windtunnel.rundir.results import read_results
from windtunnel.runner.pack_config import load_pack_toml
from windtunnel.scale.ray_executor import ShardJob, ShardPayload, run_shard_task
from windtunnel.scale.ray_ship import ship_pack

from .grpc_receiver import grpc_receiver
from .test_export import attrs


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    """A local Ray instance with 2 CPUs, for these tests only."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


@pytest.mark.timeout(240)
def test_ray_tasks_export_their_units_and_calls(
    tmp_path: Path, local_ray: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two shards on Ray, `--otel` on the driver only and gRPC and a service name in the
    driver's environment (set after Ray started, so its workers cannot inherit them): every unit
    arrives over gRPC as a span with its verdict, every call under its unit, and the workers'
    resource carries the driver's service name."""
    for name in [k for k in os.environ if k.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "ray-driver-service")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
    pack = scripted_pack(tmp_path, 4)
    out = tmp_path / "run"
    with grpc_receiver() as received:
        code = main(
            ["run", str(pack), "--executor", "ray", "-j", "2", "-o", str(out),
             "--progress", "plain", "--otel", received.endpoint]
        )  # fmt: skip
        assert code in (0, 1)
        traces = read_results(out)
        calls = sum(len(t.mcp_calls) for t in traces)
        assert len(traces) == 4 and calls > 0
        received.wait_for(lambda r: len(r.spans) == len(traces) + calls, timeout=60)
    units = {s.span_id: s for s in received.spans if not s.parent_span_id}
    assert sorted(attrs(s.attributes)["windtunnel.unit_id"] for s in units.values()) == sorted(
        t.unit_id for t in traces
    )
    by_unit = {t.unit_id: t for t in traces}
    for unit in units.values():
        trace = by_unit[attrs(unit.attributes)["windtunnel.unit_id"]]
        assert attrs(unit.attributes)["windtunnel.status"] == trace.status
        children = [s for s in received.spans if s.parent_span_id == unit.span_id]
        assert len(children) == len(trace.mcp_calls)
        assert all(s.trace_id == unit.trace_id for s in children)
    assert received.services == {"ray-driver-service"}


@pytest.mark.timeout(180)
def test_the_ray_task_body_exports_with_what_the_job_carries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a Ray worker runs (`run_shard_task`, here in this process, with none of the
    driver's `OTEL_*` variables set): the job's shipped export alone sends the shard's units and
    calls over gRPC, under the driver's service name."""
    pack_path = scripted_pack(tmp_path, 2)
    with grpc_receiver() as received:
        driver = {
            "OTEL_EXPORTER_OTLP_ENDPOINT": received.endpoint,
            "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc",
            "OTEL_SERVICE_NAME": "ray-driver-service",
        }
        shipped = ship_otel(otel_config(driver), driver)
        assert shipped is not None
        for name in [k for k in os.environ if k.startswith("OTEL_")] + list(driver):
            # Unset here; whatever the task sets is undone after the test.
            monkeypatch.setenv(name, "")
            monkeypatch.delenv(name)
        shipment = ship_pack(
            str(pack_path), load_pack_toml(pack_path), working_dir=None, run_dir=tmp_path / "run"
        )
        job = ShardJob(pack=shipment.pack, shard="1/1", otel=shipped)
        payload = msgspec.json.decode(
            run_shard_task(msgspec.json.encode(job), shipment.archive), type=ShardPayload
        )
        calls = sum(len(t.mcp_calls) for t in payload.traces)
        assert len(payload.traces) == 2 and calls == 2
        received.wait_for(lambda r: len(r.spans) == 4, timeout=30)
    units = [s for s in received.spans if not s.parent_span_id]
    assert sorted(attrs(u.attributes)["windtunnel.unit_id"] for u in units) == sorted(
        t.unit_id for t in payload.traces
    )
    for unit in units:
        (call,) = [s for s in received.spans if s.parent_span_id == unit.span_id]
        assert call.trace_id == unit.trace_id and call.name == "tools/call client_lookup"
    assert received.services == {"ray-driver-service"}
