"""Traces written by the real instrumentation, inside the test, import exactly (sniffed, no
`--format`), and the generated pack replays them under `wt run`; a real agent rerun against the
imported fixture sees what it saw in production.

Each source runs in its third-party venv (`tests/requirements/traces-*.txt`) as a subprocess:
`sources/mcp2_agents.py` (pydantic-ai, logfire, fastmcp and the `mcp` 2.x SDK, openai-agents) and
`sources/mcp1_sessions.py` (OpenLLMetry and logfire on `mcp` 1.x). No trace is written by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.processes import wt_serve
from tests.thirdparty import thirdparty_python
from windtunnel.importing import import_trace, write_import
from windtunnel.importing.envelope import Envelope

SOURCES = Path(__file__).parent / "sources"
LOOKUP = ("client_lookup", {"query": "Bluewing", "limit": 3})
REFUND = ("refund", {"charge_id": "ch_1"})
SCRUBBED = ("verify_token", {"api_key": "[Scrubbed due to 'api_key']"})
LOOKUP_RESULT = (
    '{"name":"Bluewing","email":"ops@bluewing.example","tier":2,"zeta":[3,1.5],"alpha":null}'
)


def _generate(venv: str, script: str, tmp_path: Path, *args: str) -> tuple[Path, list[Any]]:
    """Run a source script in its venv; the trace file and the JSON lines it printed."""
    python = thirdparty_python(venv)
    trace = tmp_path / "trace.json"
    finished = subprocess.run(
        [str(python), str(SOURCES / script), args[0], str(trace), *args[1:]],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        cwd=tmp_path,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    return trace, [
        json.loads(line) for line in finished.stdout.splitlines() if line.startswith("{")
    ]


def _calls(envelope: Envelope) -> list[tuple[str, Any, str]]:
    return [(c.tool, c.args, c.outcome) for c in envelope.calls]


def _codes(envelope: Envelope) -> list[str]:
    return [w.code for w in envelope.warnings]


def _run_pack(pack_dir: Path, tmp_path: Path) -> dict[str, Any]:
    """`wt run` the generated pack; its one result line."""
    out = tmp_path / "run"
    command = [
        sys.executable,
        "-m",
        "windtunnel",
        "run",
        str(pack_dir / "scenario.toml"),
        "-o",
        str(out),
    ]
    finished = subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)
    assert finished.returncode == 0, finished.stderr[-3000:]
    (result,) = [json.loads(line) for line in (out / "results.jsonl").open()]
    result_: dict[str, Any] = result
    return result_


def _import_and_run(trace: Path, tmp_path: Path) -> tuple[Envelope, int]:
    """Import (sniffed) and, when the fixture holds calls, run the pack: it must pass with no
    divergence and replay every call of the plan. The number of calls replayed."""
    envelope = import_trace(trace)
    output = write_import(envelope, tmp_path / "pack", name="incident")
    plan = tomllib.loads((tmp_path / "pack" / "scenario.toml").read_text())["scenario"][0].get(
        "plan", []
    )
    assert len(plan) == len(output.plan.calls)
    if plan:
        result = _run_pack(tmp_path / "pack", tmp_path)
        assert result["status"] == "passed", result
        assert all(verdict["passed"] for verdict in result["verdicts"]), result["verdicts"]
    return envelope, len(output.plan.calls)


def _assert_timed(envelope: Envelope, tmp_path: Path) -> None:
    """Each call's span timed it (`duration_ms` > 0), and its recording keeps that duration."""
    durations = [call.duration_ms for call in envelope.calls]
    assert all(d is not None and d > 0 for d in durations), durations
    universe = json.loads((tmp_path / "pack" / "fixture.universe.json").read_text())
    assert [r["meta"]["duration_ms"] for r in universe["recordings"]] == durations


@pytest.mark.parametrize("version", ["2", "3", "4", "5", "6"])
def test_pydantic_ai_instrumentation_every_version(version: str, tmp_path: Path) -> None:
    """pydantic-ai over fastmcp, instrumentation v2..v6: exact args, a tool error, both replayed."""
    trace, _ = _generate(
        "traces-mcp2", "mcp2_agents.py", tmp_path, "pydantic-ai", f"version={version}"
    )
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert envelope.trace.source.format == "otlp-json"
    assert _calls(envelope) == [(*LOOKUP, "ok"), (*REFUND, "tool_error")]
    assert [u.id for u in envelope.upstreams] == ["crm"]
    assert envelope.task.prompt == "Refund Bluewing's duplicate charge."
    assert envelope.final_answer is not None
    assert envelope.final_answer.text == "Bluewing's duplicate charge was already refunded."
    assert envelope.calls[0].result is not None
    assert envelope.calls[0].result.content == [{"type": "text", "text": LOOKUP_RESULT}]
    assert "args_missing" not in _codes(envelope)
    assert replayed == 2
    _assert_timed(envelope, tmp_path)


def test_pydantic_ai_without_content_capture_says_what_is_missing(tmp_path: Path) -> None:
    """Content capture off: no call claims `{}` arguments; each says args_missing; none replayed."""
    trace, _ = _generate("traces-mcp2", "mcp2_agents.py", tmp_path, "pydantic-ai", "content=0")
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [("client_lookup", None, "unknown"), ("refund", None, "tool_error")]
    assert [w.path for w in envelope.warnings if w.code == "args_missing"] == [
        "$.calls[0]",
        "$.calls[1]",
    ]
    assert replayed == 0


def test_protobuf_json_format_export(tmp_path: Path) -> None:
    """protobuf's stock JSON (base64 ids, enum names) imports like OTLP/JSON: errors kept."""
    trace, _ = _generate(
        "traces-mcp2", "mcp2_agents.py", tmp_path, "pydantic-ai", "exporter=protobuf"
    )
    text = trace.read_text()
    assert '"kind": "SPAN_KIND_SERVER"' in text and '"code": "STATUS_CODE_ERROR"' in text
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [(*LOOKUP, "ok"), (*REFUND, "tool_error")]
    assert [u.id for u in envelope.upstreams] == ["crm"]
    assert replayed == 2


def test_logfire_scrubbed_arguments_are_flagged_not_replayed(tmp_path: Path) -> None:
    """logfire (pydantic-ai) scrubs an api_key argument: args_redacted, not a secret, kept out."""
    trace, _ = _generate("traces-mcp2", "mcp2_agents.py", tmp_path, "logfire", "secret=1")
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [(*LOOKUP, "ok"), (*REFUND, "tool_error"), (*SCRUBBED, "ok")]
    assert "args_redacted" in envelope.calls[2].flags
    assert "secret_suspected" not in _codes(envelope)
    assert replayed == 2


def test_fastmcp_and_mcp_sdk_client_spans_import_without_aborting(tmp_path: Path) -> None:
    """The `mcp` SDK's client spans (no gen_ai.tool.name) join their call; no arguments captured."""
    trace, _ = _generate("traces-mcp2", "mcp2_agents.py", tmp_path, "fastmcp")
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [("client_lookup", None, "unknown"), ("refund", None, "tool_error")]
    assert [u.identity.server_name for u in envelope.upstreams] == ["crm"]
    assert all("deduplicated" in c.flags for c in envelope.calls)
    assert replayed == 0


def test_mcp_sdk_server_spans_say_what_the_trace_lacks(tmp_path: Path) -> None:
    """The SDK's own server spans: calls with no arguments, no result, no made-up error text."""
    trace, _ = _generate("traces-mcp2", "mcp2_agents.py", tmp_path, "mcp-sdk")
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [("client_lookup", None, "unknown"), ("refund", None, "unknown")]
    assert envelope.calls[1].error is not None
    assert envelope.calls[1].error.message == (
        "the call failed as a tool error (error.type = tool_error); the trace holds no error text"
    )
    # In process, the server span carries the agent's own resource: that is all the trace says.
    assert [(u.id, u.identity.source) for u in envelope.upstreams] == [
        ("support-agent", "otel_resource")
    ]
    assert _codes(envelope).count("args_missing") == 2
    assert replayed == 0


def test_openai_agents_native_tracing(tmp_path: Path) -> None:
    """openai-agents' TracingProcessor export is sniffed and read: exact args, model-view results."""
    trace, _ = _generate("traces-mcp2", "mcp2_agents.py", tmp_path, "openai-agents")
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert envelope.trace.source.format == "openai-agents"
    # openai-agents drops isError: the refund's error reads as an ordinary result.
    assert _calls(envelope) == [(*LOOKUP, "ok"), (*REFUND, "ok")]
    assert envelope.calls[0].result is not None
    assert envelope.calls[0].result.content == [{"type": "text", "text": LOOKUP_RESULT}]
    assert [u.id for u in envelope.upstreams] == ["crm"]
    assert replayed == 2
    _assert_timed(envelope, tmp_path)


def test_openai_agents_tool_failure_from_the_sdk_server_is_a_tool_error(tmp_path: Path) -> None:
    """A tool that raised on an `mcp` SDK server, traced by openai-agents (span `error` null, the
    output the SDK's `Error executing tool refund: ...`), imports as a tool error, not `ok`."""
    trace, seen = _generate(
        "traces-mcp2", "mcp2_agents.py", tmp_path, "openai-agents", "server=mcp-sdk"
    )
    failure = "Error executing tool refund: charge ch_1 already refunded"
    # What the agent's model received, and what the trace holds: no error, only the text.
    assert seen[2] == {"tool": "call_1", "view": {"type": "text", "text": failure}}
    spans = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
    (refund_span,) = [s for s in spans if s.get("span_data", {}).get("name") == "refund"]
    assert refund_span["error"] is None
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [(*LOOKUP, "ok"), (*REFUND, "tool_error")]
    refund = envelope.calls[1]
    assert refund.result is not None
    assert refund.result.content == [{"type": "text", "text": failure}]
    assert "error_from_result_text" in refund.flags
    assert replayed == 2
    universe = json.loads((tmp_path / "pack" / "fixture.universe.json").read_text())
    assert [r["result"].get("isError") for r in universe["recordings"]] == [None, True]


def test_openllmetry_on_mcp1(tmp_path: Path) -> None:
    """OpenLLMetry tool spans: exact args, tool errors, the server's name and tool schemas."""
    trace, _ = _generate("traces-mcp1", "mcp1_sessions.py", tmp_path, "openllmetry")
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [
        (*LOOKUP, "ok"),
        (*REFUND, "tool_error"),
        ("verify_token", {"api_key": "sk-live-4f9a8b7c6d5e4f3a2b1c"}, "ok"),
    ]
    (upstream,) = envelope.upstreams
    assert (upstream.id, upstream.identity.source) == ("crm", "server_info")
    assert {t.name: t.schema_source for t in upstream.tools} == dict.fromkeys(
        ["client_lookup", "refund", "verify_token"], "tools/list"
    )
    assert all("result_partial" in c.flags for c in envelope.calls)
    assert replayed == 3


def test_logfire_on_mcp1_reads_the_wire_result(tmp_path: Path) -> None:
    """logfire's instrument_mcp: the CallToolResult as sent, scrubbed arguments flagged."""
    trace, _ = _generate("traces-mcp1", "mcp1_sessions.py", tmp_path, "logfire")
    envelope, replayed = _import_and_run(trace, tmp_path)
    assert _calls(envelope) == [(*LOOKUP, "ok"), (*REFUND, "tool_error"), (*SCRUBBED, "ok")]
    assert [c.result.view for c in envelope.calls if c.result is not None] == ["wire"] * 3
    assert "args_redacted" in envelope.calls[2].flags
    assert "secret_suspected" not in _codes(envelope)
    assert replayed == 2


async def _production_and_replay(
    tmp_path: Path, venv: str, script: str, source: str
) -> tuple[list[Any], list[Any]]:
    """What a client/agent received in the traced run, and what the same client/agent receives
    when it runs again against `wt serve` of the imported fixture."""
    trace, production = _generate(venv, script, tmp_path, source)
    write_import(import_trace(trace), tmp_path / "pack", name="incident")
    python = thirdparty_python(venv)
    with trio.fail_after(120):
        async with wt_serve(str(tmp_path / "pack" / "fixture.universe.json")) as (_, first):
            url = first.decode().strip()
            finished = await trio.run_process(
                [str(python), str(SOURCES / script), source, "-", f"replay={url}"],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
    assert finished.returncode == 0, finished.stderr.decode()[-3000:]
    lines = finished.stdout.decode().splitlines()
    return production, [json.loads(line) for line in lines if line.startswith("{")]


async def test_logfire_wire_results_replay_byte_identical(tmp_path: Path) -> None:
    """An mcp 1.x client gets the same CallToolResult JSON from the replay as in production."""
    production, replayed = await _production_and_replay(
        tmp_path, "traces-mcp1", "mcp1_sessions.py", "logfire"
    )
    # The scrubbed call is not in the fixture: the replay answers it with a divergence.
    assert len(production) == len(replayed) == 3
    assert production[0]["structuredContent"]["zeta"] == [3, 1.5]
    assert [json.dumps(view) for view in replayed[:2]] == [
        json.dumps(view) for view in production[:2]
    ]


async def test_pydantic_ai_sees_the_same_tool_results_in_the_replay(tmp_path: Path) -> None:
    """pydantic-ai rerun against the imported fixture shows its model the same tool results."""
    production, replayed = await _production_and_replay(
        tmp_path, "traces-mcp2", "mcp2_agents.py", "pydantic-ai"
    )
    assert replayed == production
    assert production[1] == {"tool": "client_lookup", "view": LOOKUP_RESULT}
