"""`wt run -j N`: worker processes, one progress display, one merged run; stopped as one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.processes import WT
from tests.scale.packs import scripted_pack
from windtunnel.cli.main import main
from windtunnel.rundir.results import read_results
from windtunnel.runner.trace import Trace
from windtunnel.scale.local import parse_progress_line


def verdicts(run_dir: Path) -> list[tuple[Any, ...]]:
    """What a run decided per unit, in the run's order (timings and ports left out)."""

    def row(t: Trace) -> tuple[Any, ...]:
        calls = [(c.upstream, c.tool_name, c.args, c.result) for c in t.mcp_calls]
        return (t.unit_id, t.seed, t.status, t.verdicts, t.scores, t.output, t.warnings, calls)

    return [row(t) for t in read_results(run_dir)]


def test_jobs_2_gives_the_verdicts_of_jobs_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-j 2 runs two workers and merges them into the verdicts and summary of -j 1."""
    pack = scripted_pack(tmp_path, 6, repeats=2)
    one, two = tmp_path / "j1", tmp_path / "j2"
    assert main(["run", str(pack), "-j", "1", "-o", str(one), "--progress", "plain"]) == 1
    capsys.readouterr()
    assert main(["run", str(pack), "-j", "2", "-o", str(two), "--progress", "plain"]) == 1
    out, err = capsys.readouterr()
    assert verdicts(two) == sorted(verdicts(one))  # a merged run is in plan order
    assert [row[0] for row in verdicts(two)] == [
        f"lookup-{i:02d}#{r}" for i in range(6) for r in (0, 1)
    ]
    assert sorted(p.name for p in (two / "shards").iterdir()) == ["1-of-2", "2-of-2"]
    s1, s2 = (json.loads((d / "summary.json").read_text()) for d in (one, two))
    assert s2["scenarios"] == {
        name: {**s, "durations": s2["scenarios"][name]["durations"]}
        for name, s in s1["scenarios"].items()
    }
    assert out == f"{two}\n"
    lines = err.splitlines()
    progress = [parse_progress_line(line) for line in lines[:-2]]
    assert sorted((p.unit_id, p.status) for p in progress if p is not None) == sorted(
        (t.unit_id, t.status) for t in read_results(one)
    )
    assert len(progress) == 12
    assert lines[-2:] == [
        "scripted: FAILED: 8 passed, 4 failed, 0 errors of 12; divergences 4",
        f"report: {two / 'report.html'}",
    ]


def test_a_parallel_run_refuses_a_used_directory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """-j auto (a worker per core) into a used directory needs --resume, which reruns nothing."""
    pack = scripted_pack(tmp_path, 3)
    run = tmp_path / "run"
    assert main(["run", str(pack), "-j", "auto", "-o", str(run), "--progress", "plain"]) == 1
    cores = len(os.sched_getaffinity(0))
    assert sorted(p.name for p in (run / "shards").iterdir()) == [
        f"{i}-of-{cores}" for i in range(1, cores + 1)
    ]
    capsys.readouterr()
    assert main(["run", str(pack), "-j", str(cores), "-o", str(run)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"wt: error: {run}: this run directory already has results; use --resume to finish it, "
        "or another -o"
    ]
    before = verdicts(run)
    assert (
        main(["run", str(pack), "-j", "2", "-o", str(run), "--resume", "--progress", "plain"]) == 1
    )
    assert verdicts(run) == before
    err = capsys.readouterr().err.splitlines()
    assert err[0] == "resuming: 3 unit(s) already finished, 0 to run"
    assert err[-2:] == [
        "scripted: FAILED: 2 passed, 1 failed, 0 errors of 3; divergences 1",
        f"report: {run / 'report.html'}",
    ]


def test_resume_with_jobs_auto_keeps_the_shard_count_of_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`-j auto --resume` resumes the shards the directory holds (3 here), whatever the cores."""
    pack = scripted_pack(tmp_path, 3)
    run = tmp_path / "run"
    assert main(["run", str(pack), "-j", "3", "-o", str(run), "--progress", "plain"]) == 1
    before = verdicts(run)
    capsys.readouterr()
    argv = ["run", str(pack), "-j", "auto", "-o", str(run), "--resume", "--progress", "plain"]
    assert main(argv) == 1
    assert capsys.readouterr().err.splitlines()[0] == (
        "resuming: 3 unit(s) already finished, 0 to run"
    )
    assert sorted(p.name for p in (run / "shards").iterdir()) == ["1-of-3", "2-of-3", "3-of-3"]
    assert verdicts(run) == before


def test_parse_progress_line() -> None:
    """Worker progress lines become stub traces; any other line is not progress."""
    fail = parse_progress_line("FAIL  a b#1 (0.25s) - call 1 x diverged (really)")
    assert fail is not None
    assert (fail.unit_id, fail.scenario, fail.status, fail.duration_s, fail.error) == (
        "a b#1",
        "a b",
        "failed",
        0.25,
        "call 1 x diverged (really)",
    )
    ok = parse_progress_line("PASS  s#0 (1.00s)")
    assert ok is not None and (ok.unit_id, ok.status, ok.error) == ("s#0", "passed", None)
    assert parse_progress_line('{"event": "scenario_finished"}') is None
    assert parse_progress_line("PASSED s#0 (1.00s)") is None


SLOW = """
[[scenario]]
name = "slow-{name}"
task = "wait"
[scenario.agent]
kind = "command"
command = ["{{python}}", "-c", "import sys; sys.stdin.read(); import time; time.sleep(600)"]
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
async def test_a_signal_stops_every_worker_and_merges_what_finished(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """Ctrl-C or SIGTERM: every worker stops, what finished is merged, exit 130."""
    # By the plan's hash: slow-a and lookup-04 fall in shard 1, slow-b and lookup-00..03 in
    # shard 2. A fast unit in each shard means both workers are running when the signal comes.
    slow = "".join(SLOW.format(name=n) for n in ("a", "b"))
    pack = scripted_pack(tmp_path, 5, extra=slow)
    run = tmp_path / "run"
    fast = [f"lookup-{i:02d}#0" for i in range(5)]
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*WT, "run", str(pack), "-j", "2", "-o", str(run), "--progress", "plain"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None and process.stdout is not None
        seen = b""
        while sum(f" {uid} (".encode() in seen for uid in fast) < len(fast):
            chunk = await process.stderr.receive_some()
            assert chunk, seen
            seen += chunk
        process.send_signal(signum)
        assert await process.wait() == 130
    rest = seen + await process.stderr.receive_some(65536)
    assert rest.decode().splitlines()[-2:] == [
        "scripted: interrupted: 3 passed, 2 failed, 0 errors of 5; divergences 2",
        f"report: {run / 'report.html'}",
    ]
    assert sorted(t.unit_id for t in read_results(run)) == fast
    merge = json.loads((run / "merge.json").read_text())
    assert (merge["merged"], merge["missing"]) == (["1/2", "2/2"], ["slow-a#0", "slow-b#0"])
    for shard in ("1-of-2", "2-of-2"):
        assert (run / "shards" / shard / "summary.json").exists()  # each worker ended cleanly


def test_the_signal_test_plan_puts_a_fast_unit_in_each_shard(tmp_path: Path) -> None:
    """Guards the signal test's premise: both shards of 2 own a fast unit."""
    from windtunnel.runner.pack_config import load_pack_toml
    from windtunnel.runner.units import plan_units
    from windtunnel.scale import shard_of

    slow = "".join(SLOW.format(name=n) for n in ("a", "b"))
    units = plan_units(load_pack_toml(scripted_pack(tmp_path, 5, extra=slow)))
    shards = {unit.id: shard_of(unit.id, 2) for unit in units}
    assert shards == {
        "lookup-00#0": 2,
        "lookup-01#0": 2,
        "lookup-02#0": 2,
        "lookup-03#0": 2,
        "lookup-04#0": 1,
        "slow-a#0": 1,
        "slow-b#0": 2,
    }
