"""OpenTelemetry export from `wt run` and `wt serve`, received by a real OTLP/HTTP receiver
(`oteltap`, from PyPI): spans per unit and per call, divergences and evaluations as log records
parented the way the conventions say, the agent's `traceparent` honoured, nothing lost unseen."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio
from google.protobuf import json_format
from opentelemetry import trace
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import ResourceSpans, ScopeSpans, Span, TracesData
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from tests.processes import WT, read_until

from .receiver import Received, oteltap_receiver

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "configs" / "demo"
WANDERING = "{python} agents/support_agent.py --mcp-config {mcp_config} --style wandering"


def value(any_value: AnyValue) -> Any:
    kind = any_value.WhichOneof("value")
    if kind == "kvlist_value":
        return {kv.key: value(kv.value) for kv in any_value.kvlist_value.values}
    if kind == "array_value":
        return [value(v) for v in any_value.array_value.values]
    if kind is None:
        return None
    return getattr(any_value, kind)


def attrs(attributes: list[KeyValue]) -> dict[str, Any]:
    return {kv.key: value(kv.value) for kv in attributes}


def run_wt(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*WT, *args],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, **env},
        cwd=ROOT,
    )


def run_dir_traces(out: Path) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    return [json.loads((out / row["trace_file"]).read_text()) for row in rows]


def events(out: Path, name: str) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in (out / "events.jsonl").read_text().splitlines()]
    return [line for line in lines if line["event"] == name]


@pytest.mark.timeout(300)
def test_wt_run_exports_units_calls_divergences_and_evaluations(tmp_path: Path) -> None:
    """Every unit is a span with its verdict; every call a server span under it with the GenAI
    and MCP attributes; every divergence a log record on its call's span with the event's fields;
    every policy and scorer a `gen_ai.evaluation.result` on its unit's span."""
    out = tmp_path / "run"
    with oteltap_receiver() as received:
        done = run_wt(
            "run", str(DEMO / "pack.toml"), "-o", str(out), "--agent-command", WANDERING,
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": received.endpoint},
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        traces = run_dir_traces(out)
        calls = sum(len(t["mcp_calls"]) for t in traces)
        divergences = events(out, "universe_divergence")
        evaluations = sum(len(t["verdicts"]) + len(t["scores"]) for t in traces)
        assert len(traces) == 3 and divergences  # the wandering agent leaves the recording

        def complete(r: Received) -> bool:
            return (
                len(r.spans) == len(traces) + calls
                and len(r.logs) == len(divergences) + evaluations
            )

        # The run exited: everything was sent before it did (the receiver may still be
        # handing it over).
        received.wait_for(complete)
    units = {
        attrs(s.attributes)["windtunnel.unit_id"]: s for s in received.spans if not s.parent_span_id
    }
    assert sorted(units) == sorted(t["unit_id"] for t in traces)
    by_id = {s.span_id: s for s in received.spans}
    for trace_data in traces:
        unit = units[trace_data["unit_id"]]
        assert unit.name == f"scenario {trace_data['scenario']}"
        assert unit.kind == Span.SPAN_KIND_INTERNAL
        unit_attrs = attrs(unit.attributes)
        assert unit_attrs["windtunnel.status"] == trace_data.get("status", "error")
        assert unit_attrs["windtunnel.repeat"] == trace_data.get("repeat", 0)
        assert unit_attrs["windtunnel.seed"] == trace_data.get("seed", 0)
        assert unit_attrs["windtunnel.calls"] == len(trace_data["mcp_calls"])
        children = [s for s in received.spans if s.parent_span_id == unit.span_id]
        assert all(s.trace_id == unit.trace_id for s in children)
        # One server span per call, in the call log's order and with its facts.
        children.sort(key=lambda s: s.start_time_unix_nano)
        assert [
            (attrs(s.attributes)["windtunnel.upstream"], attrs(s.attributes)["gen_ai.tool.name"])
            for s in children
        ] == [(c["upstream"], c["tool_name"]) for c in trace_data["mcp_calls"]]
        for span, call in zip(children, trace_data["mcp_calls"], strict=True):
            span_attrs = attrs(span.attributes)
            assert span.kind == Span.SPAN_KIND_SERVER
            assert span.name == f"tools/call {call['tool_name']}"
            assert span_attrs["mcp.method.name"] == "tools/call"
            assert span_attrs["gen_ai.operation.name"] == "execute_tool"
            match = call.get("extra", {}).get("match")
            assert span_attrs["windtunnel.tier"] == (match["tier"] if match else "miss")
            assert span_attrs.get("windtunnel.recording.index") == (
                match["index"] if match else None
            )
            # Capture is opt-in: no arguments or results by default.
            assert "gen_ai.tool.call.arguments" not in span_attrs
            assert "gen_ai.tool.call.result" not in span_attrs
        # Its evaluations, in order: policies, then scorers.
        unit_logs = [log for log in received.logs if log.span_id == unit.span_id]
        assert [
            (
                log.event_name,
                attrs(log.attributes)["gen_ai.evaluation.name"],
                attrs(log.attributes)["gen_ai.evaluation.score.label"],
            )
            for log in unit_logs
        ] == [
            ("gen_ai.evaluation.result", v["name"], "pass" if v["passed"] else "fail")
            for v in trace_data["verdicts"]
        ] + [
            ("gen_ai.evaluation.result", s["name"], "pass" if s["passed"] else "fail")
            for s in trace_data["scores"]
        ]
        assert all(log.trace_id == unit.trace_id for log in unit_logs)
    # Divergences: the event's fields exactly, on the span of the call that diverged.
    divergence_logs = [log for log in received.logs if log.event_name == "universe_divergence"]
    bodies = [value(log.body) for log in divergence_logs]
    assert sorted(json.dumps(b, sort_keys=True) for b in bodies) == sorted(
        json.dumps({k: v for k, v in e.items() if k != "seq"}, sort_keys=True) for e in divergences
    )
    for log in divergence_logs:
        call_span = by_id[log.span_id]
        assert log.trace_id == call_span.trace_id
        assert attrs(call_span.attributes)["gen_ai.tool.name"] == value(log.body)["tool"]
        assert log.severity_text == "WARNING"
    (stopped,) = events(out, "fleet_stopped")
    assert stopped["dropped"] == 0


@pytest.mark.timeout(120)
def test_export_off_without_an_endpoint_loads_no_opentelemetry_sdk(tmp_path: Path) -> None:
    """Without an endpoint, `wt run` imports neither the OpenTelemetry SDK nor its exporter nor
    Wind Tunnel's export modules (the API alone comes with the `mcp` SDK)."""
    report = tmp_path / "modules.json"
    script = (
        "import json, sys\n"
        "from windtunnel.cli.main import main\n"
        "code = main(sys.argv[2:])\n"
        "json.dump(sorted(sys.modules), open(sys.argv[1], 'w'))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = subprocess.run(
        [sys.executable, "-c", script, str(report), "run", str(DEMO / "pack.toml"),
         "-o", str(tmp_path / "run"), "--scenario", "client-contact-lookup"],
        capture_output=True, text=True, timeout=100, env=env, cwd=ROOT,
    )  # fmt: skip
    assert report.exists(), done.stderr
    loaded = set(json.loads(report.read_text()))
    assert "windtunnel.runner.pack_run" in loaded  # it did run
    heavy = {
        name
        for name in loaded
        if name.startswith(("opentelemetry.sdk", "opentelemetry.exporter", "windtunnel.otel."))
    }
    # The two pure modules (what is configured, what a Ray task takes along) import no SDK.
    assert heavy == {"windtunnel.otel.config", "windtunnel.otel.shipping"}


async def test_traceparent_in_meta_parents_the_call_span() -> None:
    """A `tools/call` whose `_meta` carries a W3C `traceparent` (the `mcp` SDK client injects
    the current span's) is exported as a child of that span, in its trace."""
    trace_id, span_id = 0x0AF7651916CD43DD8448EB211C80319C, 0xB7AD6B7169203331
    agent_span = NonRecordingSpan(
        SpanContext(trace_id, span_id, is_remote=False, trace_flags=TraceFlags(1))
    )
    with oteltap_receiver() as received, trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*WT, "serve", str(DEMO / "universes" / "crm.universe.json")],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": received.endpoint},
        )
        try:
            assert process.stdout is not None
            url = (await read_until(process.stdout, b"\n")).decode().strip()
            async with mcp.Client(url) as client:
                with trace.use_span(agent_span):
                    inside = await client.call_tool(
                        "client_lookup", {"query": "Bluewing Logistics"}
                    )
                outside = await client.call_tool("client_lookup", {"query": "Nobody"})
            assert not inside.is_error and outside.is_error
        finally:
            process.send_signal(signal.SIGTERM)
            with trio.CancelScope(shield=True):
                await process.wait()
        assert process.returncode == 0
        await trio.to_thread.run_sync(received.wait_for, lambda r: len(r.spans) == 2)
        await trio.to_thread.run_sync(received.wait_for, lambda r: len(r.logs) == 1)
    first, second = sorted(received.spans, key=lambda s: s.start_time_unix_nano)
    assert (first.trace_id, first.parent_span_id) == (
        trace_id.to_bytes(16, "big"),
        span_id.to_bytes(8, "big"),
    )
    assert attrs(first.attributes)["windtunnel.tier"] == "exact"
    # A call without trace context is a trace of its own (`wt serve` has no unit around it).
    assert second.parent_span_id == b"" and second.trace_id != first.trace_id
    assert attrs(second.attributes)["windtunnel.tier"] == "miss"
    (divergence,) = received.logs
    assert (divergence.trace_id, divergence.span_id) == (second.trace_id, second.span_id)
    assert value(divergence.body)["args"] == {"query": "Nobody"}


def test_otel_without_its_packages_is_one_clear_error() -> None:
    """An endpoint configured where the `otel` extra is not installed: exit 2, one line saying
    what to install (the SDK made unimportable for this process)."""
    done = subprocess.run(
        [sys.executable, "-c",
         "import sys; sys.modules['opentelemetry.sdk'] = None\n"
         "from windtunnel.cli.main import main; sys.exit(main(sys.argv[1:]))",
         "serve", str(DEMO / "universes" / "crm.universe.json"), "--otel", "http://127.0.0.1:9"],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 2
    assert "pip install 'windtunnel[otel]'" in done.stderr
    assert done.stderr.count("\n") == 1


RERUN_PACK = """\
[pack]
name = "rerun"
timeout_s = 60

[agent]
kind = "command"
command = ["{{python}}", "{agent}", "--mcp-config", "{{mcp_config}}"]
task_via = "stdin"

[[scenario]]
name = "ticket-history"
task = "How many support tickets has Bluewing Logistics opened?"
upstreams = {{ crm = "{crm}", tickets = "{tickets}" }}

[[scenario.policies]]
kind = "no_divergence"
"""


@pytest.mark.timeout(300)
def test_an_exported_run_imports_into_a_universe_that_replays_it(tmp_path: Path) -> None:
    """Round trip: a unit's exported trace (with content capture) goes through `wt import`, and
    the same agent rerun against the imported universes makes the same calls, gets the same
    answers (none diverges) and gives the same answer."""
    first = tmp_path / "first"
    with oteltap_receiver() as received:
        done = run_wt(
            "run", str(DEMO / "pack.toml"), "-o", str(first), "--scenario", "ticket-history",
            "--otel", received.endpoint, "--otel-capture-content",
            env={},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (original,) = run_dir_traces(first)
        received.wait_for(lambda r: len(r.spans) == 1 + len(original["mcp_calls"]))
    # With the spans of the requests that leave no call record (initialize, tools/list): the
    # importer takes the calls and passes over the rest.
    assert received.requests
    exported = TracesData(
        resource_spans=[
            ResourceSpans(scope_spans=[ScopeSpans(spans=received.spans + received.requests)])
        ]
    )
    trace_file = tmp_path / "exported.otlp.json"
    trace_file.write_text(json_format.MessageToJson(exported))
    imported = tmp_path / "imported"
    done = run_wt("import", str(trace_file), "-o", str(imported), env={})
    assert done.returncode == 0, done.stderr
    pack = tmp_path / "rerun.toml"
    pack.write_text(
        RERUN_PACK.format(
            agent=DEMO / "agents" / "support_agent.py",
            crm=imported / "crm.universe.json",
            tickets=imported / "tickets.universe.json",
        )
    )
    rerun_dir = tmp_path / "rerun"
    done = run_wt("run", str(pack), "-o", str(rerun_dir), env={})
    assert done.returncode == 0, done.stderr
    (rerun,) = run_dir_traces(rerun_dir)
    assert rerun["output"] == original["output"]
    assert [(c["upstream"], c["tool_name"], c["args"]) for c in rerun["mcp_calls"]] == [
        (c["upstream"], c["tool_name"], c["args"]) for c in original["mcp_calls"]
    ]
    assert all("divergence" not in c.get("extra", {}) for c in rerun["mcp_calls"])


STDIO_SESSION = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
     "params": {"name": "client_lookup", "arguments": {"query": "Bluewing Logistics"}}},
    {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
     "params": {"name": "client_lookup", "arguments": {"query": "Nobody"}}},
]  # fmt: skip


async def test_wt_serve_stdio_exports_its_calls() -> None:
    """Over stdio too: a span per call, each its own trace, and the divergence's log record on
    its span, all sent before the process exits once its stdin closes."""
    with oteltap_receiver() as received, trio.fail_after(90):
        universe = str(DEMO / "universes" / "crm.universe.json")
        session = "".join(json.dumps(message) + "\n" for message in STDIO_SESSION)
        done = await trio.run_process(
            [*WT, "serve", "--stdio", "--otel", received.endpoint, universe],
            stdin=session.encode(),
            capture_stdout=True,
            capture_stderr=True,
        )
        # Both calls were answered and logged (an answer still in flight when stdin closes
        # may not reach stdout: the stdio transport's, not the export's).
        logged = [json.loads(line) for line in done.stderr.splitlines() if line.startswith(b"{")]
        assert [e["tool"] for e in logged if e["event"] == "tool_call"] == ["client_lookup"] * 2
        # The process has exited: everything was sent.
        await trio.to_thread.run_sync(
            received.wait_for, lambda r: len(r.spans) == 2 and len(r.logs) == 1
        )
    by_tier = {attrs(s.attributes)["windtunnel.tier"]: s for s in received.spans}
    assert sorted(by_tier) == ["exact", "miss"]
    hit, miss = by_tier["exact"], by_tier["miss"]
    assert hit.trace_id != miss.trace_id and not hit.parent_span_id
    (divergence,) = received.logs
    assert (divergence.span_id, value(divergence.body)["reason"]) == (
        miss.span_id,
        "no_recorded_result",
    )


@pytest.mark.timeout(300)
def test_local_workers_export_their_units(tmp_path: Path) -> None:
    """`wt run -j 2 --otel URL`: each worker process exports the units it ran, so every unit of
    the merged run arrives, with its verdict."""
    out = tmp_path / "run"
    with oteltap_receiver() as received:
        done = run_wt(
            "run", str(DEMO / "pack.toml"), "-o", str(out), "-j", "2", "--otel", received.endpoint,
            env={},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        traces = run_dir_traces(out)
        received.wait_for(
            lambda r: sum(1 for s in r.spans if not s.parent_span_id) == len(traces) == 3
        )
    units = {
        attrs(s.attributes)["windtunnel.unit_id"]: attrs(s.attributes)["windtunnel.status"]
        for s in received.spans
        if not s.parent_span_id
    }
    assert units == {t["unit_id"]: t["status"] for t in traces}
