"""The emitted pack runs as is: the scripted plan replays against the emitted universes with no
divergence, and every answer equals the trace's result."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import msgspec
import pytest
from samples import SAMPLE_IDS, SAMPLES, Sample

from windtunnel.importing import import_trace, write_import
from windtunnel.importing.fixture import recording_result
from windtunnel.mcp import RecordedMCPServer
from windtunnel.universe import load_universe


def _emit(sample: Sample, out: Path, *, keep_suspect: bool) -> tuple[Any, dict[str, Any]]:
    envelope = import_trace(sample.path, format=sample.format, task=sample.task)
    output = write_import(envelope, out, name=sample.name, keep_suspect=keep_suspect)
    pack = tomllib.loads((out / "scenario.toml").read_text())
    return output, pack


def _replay(out: Path, pack: dict[str, Any]) -> tuple[list[Any], dict[str, RecordedMCPServer]]:
    scenario = pack["scenario"][0]
    servers = {
        name: RecordedMCPServer(load_universe(out / file), name=name)
        for name, file in scenario["upstreams"].items()
    }
    answers = [
        servers[step["upstream"]].call_tool(step["tool"], step.get("args", {}))
        for step in scenario.get("plan", [])
    ]
    return answers, servers


@pytest.mark.parametrize("keep_suspect", [False, True], ids=["default", "keep-suspect"])
@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_scripted_plan_replays_without_divergence(
    sample: Sample, keep_suspect: bool, tmp_path: Path
) -> None:
    """Every plan entry hits a recording and returns exactly the trace's result."""
    output, pack = _emit(sample, tmp_path, keep_suspect=keep_suspect)
    answers, servers = _replay(tmp_path, pack)
    divergences = [c.divergence for s in servers.values() for c in s.call_log() if c.divergence]
    assert divergences == []
    assert answers == [recording_result(call) for call in output.plan.calls]


@pytest.mark.parametrize("sample", SAMPLES, ids=SAMPLE_IDS)
def test_pack_follows_the_pack_format(sample: Sample, tmp_path: Path) -> None:
    """The pack uses the scripted agent, one scenario, its upstream files, and no_divergence."""
    output, pack = _emit(sample, tmp_path, keep_suspect=True)
    assert set(pack) == {"pack", "agent", "scenario"}
    assert pack["agent"] == {"kind": "scripted"}
    (scenario,) = pack["scenario"]
    assert set(scenario) <= {"name", "task", "tags", "upstreams", "policies", "plan", "scripted"}
    assert scenario["upstreams"] == output.plan.files
    assert scenario["policies"][0] == {"kind": "no_divergence"}
    assert all(p["kind"] == "required_call" for p in scenario["policies"][1:])
    assert len(scenario.get("plan", [])) == len(output.plan.calls)


def test_transcript_results_replay_by_default_marked_model_view(tmp_path: Path) -> None:
    """Transcript results are served by default, each recording marked model_view."""
    sample = next(s for s in SAMPLES if s.name == "anthropic_refund")
    output, _ = _emit(sample, tmp_path, keep_suspect=False)
    assert [c.seq for c in output.plan.calls] == [0, 1]
    universes = [load_universe(tmp_path / file) for file in output.plan.files.values()]
    assert [r.meta for u in universes for r in u.recordings] == [
        {"provenance": "model_view", "seq": 0},
        {"provenance": "model_view", "seq": 1},
    ]


def test_wire_only_keeps_model_view_results_out(tmp_path: Path) -> None:
    """With wire_only, no transcript result reaches the fixture or the plan."""
    sample = next(s for s in SAMPLES if s.name == "anthropic_refund")
    envelope = import_trace(sample.path, format=sample.format, task=sample.task)
    output = write_import(envelope, tmp_path, name=sample.name, wire_only=True)
    assert output.plan.calls == []
    assert "[[scenario.plan]]" not in (tmp_path / "scenario.toml").read_text()


def test_multi_upstream_trace_gets_one_universe_per_upstream(tmp_path: Path) -> None:
    """A trace spanning three servers writes <upstream>.universe.json for each."""
    sample = next(s for s in SAMPLES if s.name == "mcp_jsonrpc_multi")
    output, pack = _emit(sample, tmp_path, keep_suspect=False)
    assert pack["scenario"][0]["upstreams"] == {
        "billing": "billing.universe.json",
        "crm": "crm.universe.json",
        "email": "email.universe.json",
    }
    assert output.plan.sequence_tools == ["billing.job_status"]
    billing = load_universe(tmp_path / "billing.universe.json")
    assert [(t.name, t.mode) for t in billing.tools] == [
        ("job_status", "sequence"),
        ("list_invoices", "stateless"),
    ]


def test_trace_without_tool_calls_gives_an_empty_universe(tmp_path: Path) -> None:
    """A tool-less run imports into fixture.universe.json with no tools and an empty plan."""
    sample = next(s for s in SAMPLES if s.name == "anthropic_no_tools")
    output, pack = _emit(sample, tmp_path, keep_suspect=False)
    universe = load_universe(tmp_path / "fixture.universe.json")
    assert (universe.tools, universe.recordings) == ([], [])
    assert pack["scenario"][0]["scripted"] == {"final_answer": "Hello, team!"}
    assert output.files == [
        "trace.wtin.json",
        "fixture.universe.json",
        "scenario.toml",
        "IMPORTED.md",
    ]


def test_unadvertised_tool_is_not_offered(tmp_path: Path) -> None:
    """A tool the server never listed (and answered as unknown) is not in the universe."""
    sample = next(s for s in SAMPLES if s.name == "mcp_jsonrpc_calendar")
    _emit(sample, tmp_path, keep_suspect=False)
    universe = load_universe(tmp_path / "fixture.universe.json")
    assert [t.name for t in universe.tools] == ["find_slots", "book_room"]  # tools/list order


def test_builtin_tools_are_never_served(tmp_path: Path) -> None:
    """Claude Code's Bash stays in the envelope but gets no universe and no plan entry."""
    sample = next(s for s in SAMPLES if s.name == "claude_code_session")
    output, pack = _emit(sample, tmp_path, keep_suspect=True)
    assert list(output.plan.universes) == ["expenses"]
    assert [step["tool"] for step in pack["scenario"][0]["plan"]] == [
        "find_receipts",
        "assign_project",
    ]


def test_replayed_answers_are_the_wire_results_of_the_log(tmp_path: Path) -> None:
    """For an MCP log, each replayed answer is byte-for-byte the `result` the server sent."""
    sample = next(s for s in SAMPLES if s.name == "mcp_jsonrpc_calendar")
    records = [msgspec.json.decode(line) for line in sample.path.read_bytes().splitlines()]
    sent = {r["msg"]["id"]: r["msg"]["result"] for r in records if "result" in r["msg"]}
    output, pack = _emit(sample, tmp_path, keep_suspect=False)
    answers, _ = _replay(tmp_path, pack)
    assert answers == [sent[int(call.call_id or "0")] for call in output.plan.calls]
