"""The run directory: crash-safe results.jsonl, confined trace files, summary.json."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.runner.factories import call, trace
from windtunnel.errors import InputError
from windtunnel.rundir.layout import trace_filename
from windtunnel.rundir.results import RunWriter, read_results
from windtunnel.runner.scoring import contains, evaluate, no_divergence
from windtunnel.runner.summary import Summary, summarize
from windtunnel.runner.trace import Trace


def scored(t: Trace) -> Trace:
    return evaluate(t, [no_divergence()], [contains("INV-7")])


def sample_traces() -> list[Trace]:
    miss = call("client_lookup", {"query": "Blue"}, reason="no_recorded_result")
    return [
        scored(trace([call("client_lookup", {"query": "Bluewing"})], output="INV-7", repeat=0)),
        scored(trace([miss], output="INV-7", repeat=1)),
        scored(trace([], error="timeout after 30s", repeat=2)),
        scored(trace([], output="INV-7", scenario="other")),
    ]


def test_each_write_appends_one_whole_line_and_a_trace_file(tmp_path: Path) -> None:
    """A results line per unit, without the call log; the full trace sits in traces/."""
    writer = RunWriter(tmp_path / "run", pack="demo")
    traces = sample_traces()
    for t in traces:
        writer.write(t)
    lines = (tmp_path / "run" / "results.jsonl").read_bytes().split(b"\n")
    assert lines[-1] == b""
    rows = [json.loads(line) for line in lines[:-1]]
    assert [r["unit_id"] for r in rows] == ["bluewing#0", "bluewing#1", "bluewing#2", "other#0"]
    assert [r["status"] for r in rows] == ["passed", "failed", "error", "passed"]
    assert all(r["mcp_calls"] == [] for r in rows)
    assert rows[1]["warnings"][0]["reason"] == "no_recorded_result"
    full = json.loads((tmp_path / "run" / rows[1]["trace_file"]).read_text())
    assert full["mcp_calls"][0]["extra"]["divergence"]["reason"] == "no_recorded_result"
    assert read_results(tmp_path / "run") == traces


def test_truncated_last_line_is_skipped(tmp_path: Path) -> None:
    """A crash mid-write leaves an unterminated line; readers keep everything before it."""
    writer = RunWriter(tmp_path, pack="demo")
    traces = sample_traces()
    for t in traces[:2]:
        writer.write(t)
    results = tmp_path / "results.jsonl"
    whole = results.read_bytes()
    partial = msgspec.json.encode(traces[2])[:40]
    results.write_bytes(whole + partial)
    assert [t.unit_id for t in read_results(tmp_path)] == ["bluewing#0", "bluewing#1"]
    # Even a complete JSON object without its newline was never acknowledged as written.
    results.write_bytes(whole + msgspec.json.encode(traces[2]))
    assert len(read_results(tmp_path)) == 2


def test_resuming_cuts_the_torn_line_before_appending(tmp_path: Path) -> None:
    """A writer opened on an interrupted run drops the torn tail, then appends whole lines."""
    traces = sample_traces()
    first = RunWriter(tmp_path, pack="demo")
    first.write(traces[0])
    results = tmp_path / "results.jsonl"
    results.write_bytes(results.read_bytes() + b'{"unit_id": "bluew')
    second = RunWriter(tmp_path, pack="demo")
    assert second.finished_ids() == {"bluewing#0"}
    second.write(traces[1])
    assert [t.unit_id for t in read_results(tmp_path)] == ["bluewing#0", "bluewing#1"]
    assert all(json.loads(line) for line in results.read_text().splitlines())


def test_rerun_unit_keeps_position_and_last_result(tmp_path: Path) -> None:
    """A unit written twice is read once: first position, last content."""
    writer = RunWriter(tmp_path)
    a, b = sample_traces()[:2]
    writer.write(a)
    writer.write(b)
    again = scored(trace([], output="no", repeat=0))
    writer.write(again)
    read = read_results(tmp_path)
    assert [t.unit_id for t in read] == ["bluewing#0", "bluewing#1"]
    assert read[0].status == "failed"
    assert [t.unit_id for t in writer.traces] == ["bluewing#0", "bluewing#1"]


def test_a_corrupt_middle_line_is_an_input_error(tmp_path: Path) -> None:
    """Only the last line may be torn; garbage before it names the file and line."""
    writer = RunWriter(tmp_path)
    writer.write(sample_traces()[0])
    results = tmp_path / "results.jsonl"
    results.write_bytes(b"not json\n" + results.read_bytes())
    with pytest.raises(InputError) as info:
        read_results(tmp_path)
    assert str(info.value).startswith(f"{results} at line 1: ")


def test_rows_without_trace_files_still_read(tmp_path: Path) -> None:
    """A missing trace file falls back to the row (no call log), never an exception."""
    writer = RunWriter(tmp_path)
    path = writer.write(sample_traces()[1])
    path.unlink()
    [row] = read_results(tmp_path)
    assert row.mcp_calls == []
    assert row.divergence_count == 1
    assert read_results(tmp_path / "nowhere") == []


@pytest.mark.parametrize(
    "name",
    [
        "../../etc/passwd",
        "/abs/path",
        "..",
        "a/../../b",
        "..\\..\\windows",
        "name\x00with nul",
        "ünïcode ✓ spaces",
        "x" * 500,
        ".hidden",
    ],
)
def test_trace_files_stay_inside_traces_dir(tmp_path: Path, name: str) -> None:
    """Whatever a scenario is called, its trace file is a plain file directly in traces/."""
    run = tmp_path / "run"
    writer = RunWriter(run)
    path = writer.write(scored(trace([], output="x", scenario=name)))
    assert path.parent == run / "traces"
    assert path.resolve().parent == (run / "traces").resolve()
    assert not path.name.startswith(".")
    assert len(path.name) <= 80 + 1 + 10 + 5
    assert sorted(p.name for p in run.rglob("*") if p.is_file()) == sorted(
        ["results.jsonl", path.name]
    )
    assert read_results(run)[0].scenario == name


def test_distinct_ids_never_share_a_file() -> None:
    """Ids that sanitize alike still get distinct names."""
    assert trace_filename("a/b#0") != trace_filename("a_b#0")
    assert trace_filename("a/b#0") == trace_filename("a/b#0")


def test_finish_writes_summary_junit_and_report_atomically(tmp_path: Path) -> None:
    """The end of a run adds summary.json, junit.xml, report.html and leaves no temp files."""
    writer = RunWriter(tmp_path, pack="demo")
    for t in sample_traces():
        writer.write(t)
    summary = writer.finish()
    names = sorted(os.listdir(tmp_path))
    assert names == ["junit.xml", "report.html", "results.jsonl", "summary.json", "traces"]
    data = json.loads((tmp_path / "summary.json").read_text())
    assert msgspec.json.decode((tmp_path / "summary.json").read_bytes(), type=Summary) == summary
    assert (data["total"], data["passed"], data["failed"], data["errors"]) == (4, 2, 1, 1)
    assert (data["ok"], data["divergences"], data["policy_failures"]) == (False, 1, 1)
    bluewing = data["scenarios"]["bluewing"]
    assert (bluewing["runs"], bluewing["passed"], bluewing["failed"], bluewing["errors"]) == (
        3,
        1,
        1,
        1,
    )
    assert bluewing["pass_at_k"] == {"1": pytest.approx(1 / 3), "2": pytest.approx(2 / 3), "3": 1.0}
    assert bluewing["pass_hat_k"] == {"1": pytest.approx(1 / 3), "2": 0.0, "3": 0.0}
    assert (bluewing["all_passed"], bluewing["any_passed"], bluewing["divergences"]) == (
        False,
        True,
        1,
    )
    assert bluewing["durations"] == {"total": 0.75, "mean": 0.25, "max": 0.25}
    assert data["scenarios"]["other"]["all_passed"] is True
    assert data["windtunnel_summary"] == 1


def test_summary_of_nothing() -> None:
    """An empty run is zero everywhere and ok."""
    summary = summarize([], pack="p")
    assert (summary.total, summary.ok, summary.wall_s, summary.scenarios) == (0, True, 0.0, {})


def test_a_trace_file_from_an_unacknowledged_attempt_is_ignored(tmp_path: Path) -> None:
    """If a rerun's trace file landed but its line did not, readers keep the acknowledged row."""
    writer = RunWriter(tmp_path)
    first = sample_traces()[1]
    writer.write(first)
    later = scored(trace([], output="INV-7", repeat=1, started_at=1_796_000_100.0))
    results = tmp_path / "results.jsonl"
    acknowledged = results.read_bytes()
    writer.write(later)
    results.write_bytes(acknowledged)  # the crash: the second line never reached the disk
    [row] = read_results(tmp_path)
    assert (row.status, row.started_at, row.mcp_calls) == ("failed", first.started_at, [])


@given(st.text(max_size=300))
def test_any_unit_id_gives_a_plain_file_name(unit_id: str) -> None:
    """Sanitized names use only safe characters, never start with a dot, and stay short."""
    name = trace_filename(unit_id)
    assert re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,79}-[0-9a-f]{10}\.json", name)


def test_unusable_run_directory_is_an_input_error(tmp_path: Path) -> None:
    """A run directory that cannot be created is one InputError line naming it."""
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError) as info:
        RunWriter(blocker / "run")
    assert str(info.value) == f"{blocker / 'run'}: cannot create the run directory: Not a directory"
