"""Inputs that never end, never come or never load fail alone, at once, in one line; a killed
`wt run` takes its agents with it; options that make no sense are refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import trio

from tests.processes import WT, read_until
from tests.reliability.leaks import processes_with
from tests.reliability.packs import (
    fifo,
    nested,
    sparse,
    universe_doc,
    write_pack,
    write_universe,
)
from tests.reliability.wt_process import run_wt
from windtunnel.calls import MCPCall
from windtunnel.cli.main import main
from windtunnel.errors import UniverseError
from windtunnel.runner import read_results
from windtunnel.runner.trace import drop_deep_values
from windtunnel.universe import decode_universe

# Every command that reads a file named on its command line; FILE stands for the bad input.
COMMANDS = {
    "validate": ["validate", "FILE"],
    "explain": ["explain", "FILE", "lookup", "{}"],
    "serve": ["serve", "FILE"],
    "serve --stdio": ["serve", "--stdio", "FILE"],
    "import": ["import", "FILE", "-o", "out"],
    "run": ["run", "FILE", "-o", "run"],
    "plan": ["plan", "FILE"],
}
ROLE = {"import": "a trace file", "run": "a pack file", "plan": "a pack file"}


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`wt ARGS` in this process, in a thread, so that a command that hangs fails the test at a
    deadline instead of hanging it; returns the exit code, stdout and stderr."""
    codes: list[int] = []
    worker = threading.Thread(target=lambda: codes.append(main(args)), daemon=True)
    worker.start()
    worker.join(20)
    assert codes, f"wt {' '.join(args)} still running after 20 s"
    captured = capsys.readouterr()
    return codes[0], captured.out, captured.err


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_inputs_that_never_come_or_never_end_are_refused_up_front(
    tmp_path: Path,
    command: str,
    kind: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A FIFO with no writer or /dev/zero: exit 2 at once, one line naming the file and what was expected."""
    monkeypatch.chdir(tmp_path)
    if kind == "fifo":
        bad = str(fifo(tmp_path / "input.toml"))
        expected = "is a FIFO (named pipe), expected"
    else:
        bad = "/dev/zero"
        expected = "is a character device, expected"
    code, out, err = run_main([bad if a == "FILE" else a for a in COMMANDS[command]], capsys)
    assert code == 2
    role = ROLE.get(command, "a universe file")
    if command == "validate":  # its verdict, INVALID included, is a line on stdout
        assert (out, err) == (f"INVALID {bad}: {expected} {role}\n", "")
    else:
        assert err == f"wt: error: {bad}: {expected} {role}\n"


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_2_gib_sparse_input_is_refused_from_its_size(tmp_path: Path, command: str) -> None:
    """A 2 GiB sparse file: exit 2, one line naming the limit, and the process stays small."""
    bad = str(sparse(tmp_path / "input.toml"))
    outcome = run_wt([bad if a == "FILE" else a for a in COMMANDS[command]], cwd=tmp_path)
    assert outcome.code == 2, outcome
    role = ROLE.get(command, "a universe file")
    limit = "16,777,216 bytes" if role == "a pack file" else "268,435,456 bytes (set WT_MAX"
    refused = f"{bad}: is 2,147,483,648 bytes; {role} may have at most {limit}"
    if command == "validate":  # its verdict, INVALID included, is a line on stdout
        assert outcome.stderr == ""
        assert outcome.stdout.startswith(f"INVALID {refused}")
        assert outcome.stdout.count("\n") == 1
    else:
        assert outcome.one_error_line().startswith(f"wt: error: {refused}")
    assert outcome.max_rss_mib < 300, outcome.max_rss_mib


STALLED_PACK = """
import os

from windtunnel.api import Scenario, ScenarioPack
from windtunnel.mcp import RecordedMCPServer
from windtunnel.runner.agent_spec import AgentSpec
from windtunnel.runner.scenario import PlanStep

HERE = os.path.dirname(os.path.abspath(__file__))


def factory(scenario):
    if scenario.name.startswith("stalled"):
        # A filesystem that never answers: opening a FIFO nobody writes to blocks forever.
        open(os.path.join(HERE, "stall.fifo"), "rb")
    return {{"u": RecordedMCPServer(os.path.join(HERE, "good.universe.json"), name="u")}}


pack = ScenarioPack(
    "stall",
    [
        Scenario(
            name=name,
            task="t",
            timeout_s={timeout},
            plan=[PlanStep(tool="lookup", args={{"q": "a"}})],
            final_answer="done",
        )
        for name in [*(f"stalled{{i}}" for i in range({stalled})), "h0", "h1", "h2"]
    ],
    mcp_factory=factory,
    agent=AgentSpec(kind="scripted"),
    concurrency={stalled} + 3,
)
"""


def _stalled_pack(root: Path, timeout_s: float, stalled: int = 1) -> str:
    """A Python pack: `stalled` scenarios whose fixture never loads, and three healthy ones."""
    write_universe(root / "good.universe.json")
    fifo(root / "stall.fifo")
    (root / "stalled_pack.py").write_text(STALLED_PACK.format(timeout=timeout_s, stalled=stalled))
    return f"{root / 'stalled_pack.py'}:pack"


def test_a_stalled_fixture_fails_only_its_unit_within_its_timeout(tmp_path: Path) -> None:
    """Fixture loading that never returns fails its unit at its timeout; the other units pass."""
    outcome = run_wt(
        ["run", _stalled_pack(tmp_path, 2), "-o", str(tmp_path / "run"), "--progress", "plain"],
        deadline_s=60,
    )
    assert outcome.code == 1, outcome
    rows = {r.unit_id: r for r in read_results(tmp_path / "run", with_calls=False)}
    assert {u: r.status for u, r in rows.items()} == {
        "stalled0#0": "error",
        "h0#0": "passed",
        "h1#0": "passed",
        "h2#0": "passed",
    }
    assert rows["stalled0#0"].error == (
        "InputError: the scenario's upstreams were still loading when its timeout (2s) ran out"
    )
    assert 2 <= rows["stalled0#0"].duration_s < 4
    assert (tmp_path / "run" / "junit.xml").is_file()
    assert "Traceback" not in outcome.stderr


def test_stalled_fixtures_never_starve_the_results_writer(tmp_path: Path) -> None:
    """45 fixtures stuck at once (more than Trio's 40 default threads): each fails at its timeout; the rest pass and are written."""
    outcome = run_wt(
        ["run", _stalled_pack(tmp_path, 1, stalled=45), "-o", str(tmp_path / "run")],
        deadline_s=90,
    )
    assert outcome.code == 1, outcome
    rows = read_results(tmp_path / "run", with_calls=False)
    assert sorted((r.status, r.unit_id) for r in rows if r.status == "passed") == [
        ("passed", "h0#0"),
        ("passed", "h1#0"),
        ("passed", "h2#0"),
    ]
    stuck = [r for r in rows if r.unit_id.startswith("stalled")]
    assert len(stuck) == 45
    assert {r.error for r in stuck} == {
        "InputError: the scenario's upstreams were still loading when its timeout (1s) ran out"
    }


async def test_a_run_stalled_on_a_fixture_stops_on_sigint(tmp_path: Path) -> None:
    """SIGINT while a fixture stalls: exit 130 at once, the units that finished are kept."""
    pack = _stalled_pack(tmp_path, 600)
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*WT, "run", pack, "-o", str(tmp_path / "run"), "--progress", "plain"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
        assert process.stderr is not None
        seen = b""
        while seen.count(b"PASS ") < 3:
            seen += await read_until(process.stderr, b"\n")
        t0 = time.monotonic()
        process.send_signal(signal.SIGINT)
        rest = b""
        async for chunk in process.stderr:
            rest += chunk
        await process.wait()
        stopped_in = time.monotonic() - t0
    assert process.returncode == 130
    assert b"stall: interrupted: 3 passed, 0 failed, 0 errors of 3" in rest
    assert sorted(r.unit_id for r in read_results(tmp_path / "run", with_calls=False)) == [
        "h0#0",
        "h1#0",
        "h2#0",
    ]
    assert stopped_in < 10
    assert b"Traceback" not in seen + rest


def test_a_deep_universe_fails_only_its_scenario_and_the_reports_are_written(
    tmp_path: Path,
) -> None:
    """A universe nesting a result 500 deep fails its scenario only; summary, JUnit, report written."""
    write_universe(tmp_path / "good.universe.json")
    deep = write_universe(tmp_path / "deep.universe.json", universe_doc(result=nested(500)))
    pack = write_pack(
        tmp_path, {"good": "good.universe.json", "deep": "deep.universe.json"}, name="deep"
    )
    outcome = run_wt(["run", str(pack), "-o", str(tmp_path / "run"), "--progress", "plain"])
    assert outcome.code == 1, outcome
    assert "Traceback" not in outcome.stderr
    rows = {r.unit_id: r for r in read_results(tmp_path / "run")}
    assert rows["good#0"].status == "passed"
    assert (rows["deep#0"].status, rows["deep#0"].error) == (
        "error",
        f"UniverseError: {deep} at $.recordings[0].result: nested deeper than 128 levels; MCP "
        "clients cannot read it",
    )
    for name in ("summary.json", "junit.xml", "report.html"):
        assert (tmp_path / "run" / name).stat().st_size > 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert (summary["passed"], summary["errors"]) == (1, 1)


@pytest.mark.parametrize(
    ("result", "loads"),
    [
        (nested(128), True),
        (nested(129), False),
        ([{"id": i, "tags": [[i]]} for i in range(300)], True),  # 900 brackets, 3 levels
        ([nested(127)] * 3, True),
        ({"a": [nested(128)]}, False),
    ],
)
def test_the_universe_nesting_limit_is_exact(result: Any, loads: bool) -> None:
    """Recorded values load up to 128 levels of nesting, however many brackets; 129 is refused by path."""
    data = json.dumps(universe_doc(result=result))
    if loads:
        assert decode_universe(data, file="u.json").recordings[0].result == result
        return
    with pytest.raises(UniverseError) as caught:
        decode_universe(data, file="u.json")
    assert str(caught.value) == (
        "u.json at $.recordings[0].result: nested deeper than 128 levels; MCP clients cannot "
        "read it"
    )


def test_values_too_deep_for_a_trace_fail_the_unit_and_are_replaced() -> None:
    """A call whose args or result nest past 256 levels (a mock server, an agent) is kept with a placeholder."""
    calls = [
        MCPCall(tool_name="fine", args={"q": nested(200)}, result=nested(256)),
        MCPCall(tool_name="deep", args={"q": "a"}, result=nested(257)),
        MCPCall(tool_name="both", args=nested(300), result=[nested(400)]),
    ]
    reason = drop_deep_values(calls)
    assert reason == (
        "call 2 (deep) carries result nested deeper than 256 levels; the trace keeps a placeholder"
    )
    placeholder = "(a value nested deeper than 256 levels, not kept)"
    assert [(c.args, c.result) for c in calls[1:]] == [
        ({"q": "a"}, placeholder),
        ({"_windtunnel": placeholder}, placeholder),
    ]
    assert calls[0].result == nested(256)
    assert drop_deep_values(calls) is None


SLEEPER = textwrap.dedent(
    """
    import os, sys, time
    fd = os.open(sys.argv[1], os.O_WRONLY)  # held open until this process dies
    os.write(fd, b"up\\n")
    time.sleep(600)
    """
)


async def test_sigkill_of_wt_run_takes_its_agents_with_it(tmp_path: Path) -> None:
    """SIGKILL of `wt run` mid-pack: every agent process it started is killed within a second."""
    marker = f"wt-orphan-{tmp_path.name}"
    started = fifo(tmp_path / "started.fifo")
    write_universe(tmp_path / "good.universe.json")
    pack = write_pack(
        tmp_path,
        {"a": "good.universe.json", "b": "good.universe.json"},
        agent=["{python}", "-c", SLEEPER, str(started), marker],
        timeout_s=600,
    )
    process = await trio.lowlevel.open_process(
        [*WT, "run", str(pack), "-o", str(tmp_path / "run"), "--progress", "plain"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        with trio.fail_after(60):
            fd = await trio.to_thread.run_sync(os.open, started, os.O_RDONLY)
            reader = trio.lowlevel.FdStream(fd)
            await read_until(reader, b"up\nup\n")  # both agents run
        assert len(processes_with(marker)) == 2
        process.kill()
        await process.wait()
        t0 = time.monotonic()
        with trio.fail_after(10):
            while await reader.receive_some():  # EOF: every agent holding the FIFO is dead
                pass
        died_in = time.monotonic() - t0
        await reader.aclose()
    finally:
        for pid in processes_with(marker):
            os.kill(pid, signal.SIGKILL)
    assert processes_with(marker) == []
    assert died_in < 1.0


def test_concurrency_zero_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`wt run -c 0` is a usage error (exit 2) and writes nothing."""
    write_universe(tmp_path / "good.universe.json")
    pack = write_pack(tmp_path, {"a": "good.universe.json"})
    with pytest.raises(SystemExit) as stop:
        main(["run", str(pack), "-c", "0", "-o", str(tmp_path / "run")])
    assert stop.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "wt run: error: argument -c/--concurrency: expected a whole number of at least 1, got '0'"
    )
    assert not (tmp_path / "run").exists()


def test_resume_of_a_missing_run_directory_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`wt run --resume -o DIR` with no DIR is an error (exit 2), not a silent fresh run."""
    monkeypatch.chdir(tmp_path)
    write_universe(tmp_path / "good.universe.json")
    pack = write_pack(tmp_path, {"a": "good.universe.json"})
    missing = tmp_path / "typo"
    assert main(["run", str(pack), "--resume", "-o", str(missing)]) == 2
    assert capsys.readouterr().err == (
        f"wt: error: {missing}: no such run directory to resume (leave out --resume to start "
        "a new run)\n"
    )
    assert not missing.exists()
    assert main(["run", str(pack), "--resume"]) == 2
    assert capsys.readouterr().err == (
        "wt: error: --resume needs -o DIR, the run directory to finish\n"
    )
    assert not (tmp_path / "runs").exists()


CONTRACT_A = Path(__file__).parents[1] / "importing/data/traces/contract_a_minimal.wtin.json"


@pytest.mark.parametrize("upstream_id", ["a/b", "x\u0000y", "..", "../escape", "ok\n", "Upper"])
def test_contract_a_upstream_ids_must_match_the_schema(
    tmp_path: Path, upstream_id: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An upstream id outside the schema's pattern (`/`, NUL, `..`) is exit 2 naming the path; nothing written."""
    doc = json.loads(CONTRACT_A.read_text())
    doc["upstreams"][0]["id"] = upstream_id
    doc["calls"][0]["upstream"] = upstream_id
    trace = tmp_path / "t.wtin.json"
    trace.write_text(json.dumps(doc))
    assert main(["import", str(trace), "-o", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err == (
        f"wt: error: {trace} at $.upstreams[0].id: Expected `str` matching regex "
        "'^[a-z0-9][a-z0-9_.-]{0,62}\\\\Z'\n"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.wtin.json"]
