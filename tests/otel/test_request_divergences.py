"""OpenTelemetry export of a `wt run` whose agent leaves the recording with requests (issue 25):
each unrecorded read, prompt get and completion is a server span named for its method and a
`universe_divergence` log record on it carrying `windtunnel.method`; the call whose elicitation
the live client answered otherwise is a tool span with its record (no method), received by a
real OTLP/HTTP receiver."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.runner.test_request_divergences import UNRECORDED_URI, write_pack

from .receiver import Received, oteltap_receiver
from .test_export import attrs, events, run_dir_traces, run_wt, value


@pytest.mark.timeout(300)
def test_request_divergences_are_exported_with_their_method(tmp_path: Path) -> None:
    """One span per request, named and attributed by method; one divergence log record per
    divergence, on its span, whose body is the event (method included) and whose attributes
    name the method of a request only."""
    out = tmp_path / "run"
    with oteltap_receiver() as received:
        done = run_wt(
            "run", str(write_pack(tmp_path, "leaves")), "-o", str(out),
            env={"OTEL_EXPORTER_OTLP_ENDPOINT": received.endpoint},
        )  # fmt: skip
        assert done.returncode == 1, done.stderr
        [trace] = run_dir_traces(out)
        divergences = events(out, "universe_divergence")
        assert len(divergences) == 4
        evaluations = len(trace["verdicts"])

        def complete(r: Received) -> bool:
            return len(r.spans) == 1 + 4 and len(r.logs) == 4 + evaluations

        received.wait_for(complete)
    calls = sorted(
        (s for s in received.spans if s.parent_span_id), key=lambda s: s.start_time_unix_nano
    )
    assert [(s.name, attrs(s.attributes)["mcp.method.name"]) for s in calls] == [
        ("resources/read", "resources/read"),
        ("prompts/get with_args", "prompts/get"),
        ("completion/complete", "completion/complete"),
        ("tools/call echo", "tools/call"),
    ]
    assert attrs(calls[0].attributes)["mcp.resource.uri"] == UNRECORDED_URI
    assert attrs(calls[1].attributes)["gen_ai.prompt.name"] == "with_args"
    assert attrs(calls[2].attributes)["windtunnel.target"] == "with_args"
    by_id = {s.span_id: s for s in received.spans}
    records = sorted(
        (log for log in received.logs if log.event_name == "universe_divergence"),
        key=lambda log: by_id[log.span_id].start_time_unix_nano,
    )
    assert [by_id[log.span_id].name for log in records] == [s.name for s in calls]
    assert [attrs(log.attributes).get("windtunnel.method") for log in records] == [
        "resources/read",
        "prompts/get",
        "completion/complete",
        None,
    ]
    assert [attrs(log.attributes)["windtunnel.reason"] for log in records] == [
        "no_recorded_result",
        "no_recorded_result",
        "no_recorded_result",
        "client_answer_differs",
    ]
    assert "gen_ai.tool.name" not in attrs(records[0].attributes)
    assert attrs(records[3].attributes)["gen_ai.tool.name"] == "echo"
    bodies = sorted(json.dumps(value(log.body), sort_keys=True) for log in records)
    assert bodies == sorted(
        json.dumps({k: v for k, v in e.items() if k != "seq"}, sort_keys=True) for e in divergences
    )
