"""Faults are survived and reported: bad agents, bad hooks, taken ports, vanished universes,
full disks and signals each end with a clear reason, valid results and nothing left running."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import resource
import signal
import socket
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio
from structlog.testing import capture_logs

from tests.compat import COMPAT_UNIVERSE
from tests.processes import WT, read_until
from tests.reliability.faulty_pack import FLOOD_CALLS, write_faulty_pack
from tests.reliability.leaks import listening_ports, processes_with, tcp_listeners
from windtunnel.actors import MemorySink, open_fleet
from windtunnel.cli.main import main
from windtunnel.mcp import RecordedMCPServer
from windtunnel.runner import pack_run, read_results
from windtunnel.runner.pack_config import load_pack_toml
from windtunnel.runner.pack_run import PackRunOptions, run_pack
from windtunnel.universe import Matching, Universe, UniverseTool

FAULT_OUTCOMES = {
    "ok0#0": ("passed", None),
    "ok1#0": ("passed", None),
    "ok2#0": ("passed", None),
    "crash#0": ("error", "agent exited with code 3: kaput"),
    "hang#0": ("error", "agent timed out after 1s"),
    "junk#0": ("failed", None),
    "junk_crash#0": ("error", "agent exited with code 1: \ufffd\ufffd\x00garbage\ufffd("),
    "flood#0": ("failed", None),
}


async def test_faulty_agents_fail_only_their_own_scenario(tmp_path: Path) -> None:
    """Crashing, hanging, junk and flooding agents fail only their scenario, with reasons, leaving nothing running."""
    marker = f"wt-fault-{tmp_path.name}"
    pack = load_pack_toml(write_faulty_pack(tmp_path, marker))
    before = listening_ports()
    with trio.fail_after(60):
        summary = await run_pack(pack, PackRunOptions(run_dir=tmp_path / "run"))
    rows = {r.unit_id: r for r in read_results(tmp_path / "run", with_calls=False)}
    assert {uid: (r.status, r.error) for uid, r in rows.items()} == FAULT_OUTCOMES
    assert (summary.total, summary.passed) == (8, 3)
    junk = rows["junk#0"]
    assert junk.output is not None and "\ufffd" in junk.output
    assert [s.passed for s in junk.scores] == [False]
    flood = rows["flood#0"]
    assert [(v.name, v.passed) for v in flood.verdicts] == [("call_budget(100)", False)]
    [flood_trace] = [t for t in read_results(tmp_path / "run") if t.unit_id == "flood#0"]
    assert len(flood_trace.mcp_calls) == FLOOD_CALLS
    lines = (tmp_path / "run" / "results.jsonl").read_bytes().splitlines()
    assert len(lines) == 8
    assert all(json.loads(line)["unit_id"] in FAULT_OUTCOMES for line in lines)
    assert processes_with(marker) == []
    assert listening_ports() == before


def hook(tool: str, args: dict[str, Any], universe: Universe) -> Any:
    kind = args.get("kind")
    if kind == "raise":
        raise RuntimeError("boom")
    if kind == "object":
        return object()
    if kind == "nan":
        return {"x": float("nan")}
    return {"made": kind}


async def test_raising_or_non_json_synthesize_hooks_answer_tool_errors_and_are_logged() -> None:
    """Raising or non-JSON synthesize hooks answer tool errors, are logged and marked as faults."""
    universe = Universe(
        windtunnel_universe=1, tools=[UniverseTool("make")], matching=Matching(on_miss="synthesize")
    )
    server = RecordedMCPServer(universe, synthesize=hook)
    memory = MemorySink()
    seen: list[tuple[bool, Any]] = []
    with trio.fail_after(30), capture_logs() as logs:
        async with open_fleet(sinks=[memory]) as fleet:
            async with fleet.scenario("s", {"u": server}) as run:
                async with mcp.Client(run.urls["u"]) as client:
                    for kind in ["raise", "object", "nan", "fine"]:
                        result = await client.call_tool("make", {"kind": kind})
                        assert result.structured_content is not None
                        seen.append((result.is_error, result.structured_content))
    failed = "the synthesize hook "
    assert seen == [
        (
            True,
            {
                "error": "synthesize_failed",
                "message": failed + "raised RuntimeError: boom",
                "tool": "make",
            },
        ),
        (
            True,
            {
                "error": "synthesize_failed",
                "message": failed + "returned object, not JSON data",
                "tool": "make",
            },
        ),
        (
            True,
            {
                "error": "synthesize_failed",
                "message": failed + "returned dict, not JSON data",
                "tool": "make",
            },
        ),
        (False, {"made": "fine"}),
    ]
    assert [e["error"] for e in logs if e["event"] == "synthesize_failed"] == [
        "the synthesize hook raised RuntimeError: boom",
        "the synthesize hook returned object, not JSON data",
        "the synthesize hook returned dict, not JSON data",
    ]
    assert run.faults == [
        "u: the synthesize hook raised RuntimeError: boom",
        "u: the synthesize hook returned object, not JSON data",
        "u: the synthesize hook returned dict, not JSON data",
    ]
    assert len(memory.named("server_fault")) == 3


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


async def test_taken_ports_are_clear_errors(tmp_path: Path, taken_port: int) -> None:
    """`wt serve --port` and `wt run --feed-port` on a taken port exit 2 naming the port."""
    with trio.fail_after(60):
        serve = await trio.run_process(
            [*WT, "serve", str(COMPAT_UNIVERSE), "--port", str(taken_port)],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        run = await trio.run_process(
            [
                *WT,
                "run",
                str(write_faulty_pack(tmp_path, "x", good=1)),
                "-k",
                "ok*",
                "-o",
                str(tmp_path / "run"),
                "--feed-port",
                str(taken_port),
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert serve.returncode == 2
    assert serve.stderr.decode().splitlines()[-1] == (
        f"wt: error: server 'compat' cannot listen on 127.0.0.1:{taken_port}: Address already in use"
    )
    assert run.returncode == 2
    assert run.stderr.decode().splitlines()[-1] == (
        f"wt: error: the event feed cannot listen on 127.0.0.1:{taken_port}: Address already in use"
    )
    assert list(tcp_listeners().values()).count(taken_port) == 1  # only the test's own socket


async def test_universe_deleted_after_the_pack_loaded(tmp_path: Path) -> None:
    """A universe removed after loading fails only the scenarios using it, naming the file."""
    pack_file = write_faulty_pack(tmp_path, "x", good=2)
    (tmp_path / "other.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    text = pack_file.read_text().replace(
        'name = "ok1"\ntask = "t"\nupstreams = { crm = "crm.universe.json" }',
        'name = "ok1"\ntask = "t"\nupstreams = { crm = "other.universe.json" }',
    )
    pack_file.write_text(text)
    pack = load_pack_toml(pack_file)
    (tmp_path / "other.universe.json").unlink()
    with trio.fail_after(60):
        await run_pack(pack, PackRunOptions(run_dir=tmp_path / "run", scenario_filter="ok*"))
    rows = {r.unit_id: r for r in read_results(tmp_path / "run", with_calls=False)}
    assert rows["ok0#0"].status == "passed"
    assert (rows["ok1#0"].status, rows["ok1#0"].error) == (
        "error",
        f"UniverseError: {tmp_path / 'other.universe.json'}: no such file",
    )
    assert len(rows) == 2


def _ok_pack(
    root: Path, n: int, marker: str, *, hang_after: int | None = None, prefix: str = "s"
) -> Path:
    """`n` scenarios answering at once; with `hang_after`, later ones wait for a flag file.
    Scenarios are named `prefix` and a number."""
    (root / "crm.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    flag = root / "hang"
    if hang_after is not None:
        flag.write_text("1")
    agent = (
        "import os, sys, time\n"
        f"while int(sys.argv[1][{len(prefix)}:]) >= {hang_after if hang_after is not None else n} "
        f"and os.path.exists({str(flag)!r}):\n"
        "    time.sleep(0.05)\n"
        "print('answer ' + sys.argv[1])\n"
    )
    head = (
        '[pack]\nname = "ok"\nconcurrency = 4\n[agent]\nkind = "command"\n'
        f'command = ["{{python}}", "-c", {json.dumps(agent)}, "{{scenario}}", "{marker}"]\n'
    )
    body = "".join(
        f'[[scenario]]\nname = "{prefix}{i:03d}"\ntask = "t"\nupstreams = {{ crm = "crm.universe.json" }}\n'
        f'[[scenario.plan]]\ntool = "motd"\n'
        for i in range(n)
    )
    path = root / "pack.toml"
    path.write_text(head + body)
    return path


async def can_mount_tmpfs(target: Path) -> bool:
    if os.geteuid() != 0:
        return False
    done = await trio.run_process(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(target)],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    return done.returncode == 0


async def test_full_disk_ends_with_a_clear_error_and_valid_results(tmp_path: Path) -> None:
    """A full tmpfs ends the run with one clear error (exit 2), complete results lines, no agent left."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if not await can_mount_tmpfs(disk):
        pytest.skip("needs root to mount a tmpfs")
    marker = f"wt-full-{tmp_path.name}"
    try:
        with trio.fail_after(60):
            done = await trio.run_process(
                [
                    *WT,
                    "run",
                    str(_ok_pack(tmp_path, 60, marker)),
                    "-o",
                    str(disk / "run"),
                    "--progress",
                    "plain",
                ],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
        err = done.stderr.decode()
        assert done.returncode == 2, err
        assert err.splitlines()[-1].startswith(f"wt: error: {disk / 'run'}")
        assert err.splitlines()[-1].endswith("cannot write: No space left on device")
        assert "Traceback" not in err
        rows = read_results(disk / "run", with_calls=False)
        passed = {line.split()[1] for line in err.splitlines() if line.startswith("PASS ")}
        assert {r.unit_id for r in rows} == passed
        assert 0 < len(rows) < 60
        assert processes_with(marker) == []
    finally:
        with trio.CancelScope(shield=True):
            await trio.run_process(["umount", str(disk)], check=False)


def test_unwritable_events_file_is_reported_and_results_are_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """events.jsonl on a full disk (/dev/full): every unit reaches results.jsonl and the run exits 2 counting lost events."""
    run_dir = tmp_path / "run"
    # A link planted in the run directory is refused (tests/reliability/test_run_directory.py),
    # so the full disk is handed to the run where it opens its event file.
    monkeypatch.setattr(
        pack_run, "open_append", lambda path: os.open("/dev/full", os.O_WRONLY | os.O_CLOEXEC)
    )
    capsys.readouterr()
    assert main(["run", str(_ok_pack(tmp_path, 10, "x")), "-o", str(run_dir)]) == 2
    last = capsys.readouterr().err.splitlines()[-1]
    assert last.startswith(
        f"wt: error: {run_dir / 'events.jsonl'}: cannot write: No space left on device; "
    )
    assert last.endswith(" event(s) were not written (results.jsonl and the reports are complete)")
    assert len(read_results(run_dir, with_calls=False)) == 10
    assert json.loads((run_dir / "summary.json").read_text())["passed"] == 10


def server_ports(run_dir: Path) -> set[int]:
    ports = set()
    for line in (run_dir / "events.jsonl").read_text().splitlines():
        event = json.loads(line)
        if event["event"] == "server_started":
            ports.add(int(event["url"].rsplit(":", 1)[1].split("/")[0]))
    return ports


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
async def test_signal_mid_pack_leaves_no_process_or_listener(
    tmp_path: Path, stop_signal: signal.Signals
) -> None:
    """SIGINT/SIGTERM mid-pack: exit 130, finished units kept, no agent process or listener left."""
    marker = f"wt-sig-{tmp_path.name}"
    run_dir = tmp_path / "run"
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [
                *WT,
                "run",
                str(_ok_pack(tmp_path, 12, marker, hang_after=6)),
                "-o",
                str(run_dir),
                "--progress",
                "plain",
            ],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
        assert process.stderr is not None
        seen = b""
        while seen.count(b"PASS ") < 6:
            seen += await read_until(process.stderr, b"\n")
        hung = server_ports(run_dir)
        process.send_signal(stop_signal)
        rest = b""
        async for chunk in process.stderr:
            rest += chunk
        await process.wait()
    assert process.returncode == 130
    assert b": interrupted: 6 passed, 0 failed, 0 errors of 6" in rest
    assert sorted(r.unit_id for r in read_results(run_dir, with_calls=False)) == [
        f"s{i:03d}#0" for i in range(6)
    ]
    assert processes_with(marker) == []
    assert hung and not hung & set(tcp_listeners().values())


async def test_sigkill_keeps_every_reported_unit_and_resume_finishes_the_rest(
    tmp_path: Path,
) -> None:
    """SIGKILL loses no reported unit; --resume runs only the rest and equals an uninterrupted run."""
    marker = f"wt-kill-{tmp_path.name}"
    pack = _ok_pack(tmp_path, 12, marker, hang_after=5)
    run_dir = tmp_path / "run"
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(
            [*WT, "run", str(pack), "-o", str(run_dir), "--progress", "plain"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
        assert process.stderr is not None
        seen = b""
        while seen.count(b"PASS ") < 5:
            seen += await read_until(process.stderr, b"\n")
        process.kill()
        await process.wait()
    reported = {line.split()[1].decode() for line in seen.splitlines() if line.startswith(b"PASS ")}
    rows = read_results(run_dir, with_calls=False)
    assert {r.unit_id for r in rows} == reported
    assert len(reported) == 5
    # The reaper kills the hung agents once `wt` is gone (test_inputs.py times that); any
    # not yet reaped are killed here so the resumed run starts clean.
    for pid in processes_with(marker):
        os.kill(pid, signal.SIGKILL)
    (tmp_path / "hang").unlink()
    with trio.fail_after(60):
        resumed = await trio.run_process(
            [*WT, "run", str(pack), "-o", str(run_dir), "--resume", "--progress", "plain"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        straight = await trio.run_process(
            [*WT, "run", str(pack), "-o", str(tmp_path / "straight"), "--progress", "plain"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert straight.returncode == 0, straight.stderr.decode()
    assert b"resuming: 5 unit(s) already finished, 7 to run" in resumed.stderr
    ran = {
        line.split()[1].decode()
        for line in resumed.stderr.splitlines()
        if line.startswith(b"PASS ")
    }
    assert ran == {f"s{i:03d}#0" for i in range(12)} - reported

    def outcome(d: Path) -> dict[str, tuple[str, str | None, int]]:
        return {t.unit_id: (t.status, t.output, len(t.mcp_calls)) for t in read_results(d)}

    assert outcome(run_dir) == outcome(tmp_path / "straight")
    assert len(outcome(run_dir)) == 12
    assert len((run_dir / "results.jsonl").read_bytes().splitlines()) == 12


async def test_python_agent_error_inside_its_own_nursery_is_named(tmp_path: Path) -> None:
    """An error raised inside a Python agent's MCP session is reported as itself, not as a group."""
    from windtunnel.agents import AgentContext, AgentError, PythonAgent

    async def agent(ctx: AgentContext) -> str:
        async with mcp.Client(ctx.servers["crm"]) as client:
            await client.call_tool("motd", {})
            raise RuntimeError("injected crash")

    with trio.fail_after(30):
        async with open_fleet() as fleet:
            async with fleet.scenario("s", {"crm": RecordedMCPServer(COMPAT_UNIVERSE)}) as run:
                ctx = AgentContext(scenario="s", task="t", servers=dict(run.urls), workdir=tmp_path)
                with pytest.raises(AgentError) as info:
                    await PythonAgent(agent, flavor="trio").run(ctx)
    assert str(info.value) == "agent raised RuntimeError: injected crash"


def _fd_limit(limit: int) -> Callable[[], None]:
    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (limit, limit))

    return set_limit


async def test_running_out_of_file_descriptors_is_a_clear_error(tmp_path: Path) -> None:
    """Out of file descriptors: no traceback; every failed unit names the limit; the run either
    stops with one clear hint (exit 2) or, when the writer keeps up, records every unit (exit 1)."""
    (tmp_path / "crm.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    scenarios = "".join(
        f'[[scenario]]\nname = "s{i:03d}"\ntask = "t"\n'
        'upstreams = { crm = "crm.universe.json", b = "crm.universe.json" }\n'
        '[[scenario.plan]]\nupstream = "crm"\ntool = "motd"\n'
        '[[scenario.plan]]\nupstream = "b"\ntool = "motd"\n'
        for i in range(100)
    )
    (tmp_path / "pack.toml").write_text(f'[pack]\nname = "fd"\nconcurrency = 32\n{scenarios}')
    run_dir = tmp_path / "run"
    with trio.fail_after(60):
        done = await trio.run_process(
            [*WT, "run", str(tmp_path / "pack.toml"), "-o", str(run_dir), "--progress", "plain"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            preexec_fn=_fd_limit(80),
        )
    err = done.stderr.decode()
    assert "ExceptionGroup" not in err
    # Servers whose accept ran out of fds say so in one line for the run, not a traceback each.
    assert "Traceback" not in err
    assert err.count('"accept_failed"') <= 1
    rows = read_results(run_dir, with_calls=False)
    results = run_dir / "results.jsonl"
    lines = results.read_bytes().splitlines() if results.exists() else []
    assert len(lines) == len(rows)
    # Every unit that failed names the cause and the fix, whatever ran out of descriptors first
    # (its server's listener, its client's connect, ...).
    unexplained = [
        r.error for r in rows if r.error is not None and "open-file limit" not in r.error
    ]
    assert not unexplained, unexplained[:3]
    # Who runs out first is a race; both endings are clean.
    if done.returncode == 2:
        # The results writer could not open a file: the run stops short, saying why and how.
        last = err.splitlines()[-1]
        assert last.startswith(f"wt: error: {run_dir}"), err[-3000:]
        assert last.endswith(
            "cannot write: Too many open files; raise the open-file limit (ulimit -n) or lower"
            " --concurrency"
        )
        assert len(rows) < 100
    else:
        # The writer kept up: every unit is recorded, the failed ones fail the run (exit 1).
        assert done.returncode == 1, err[-2000:]
        assert len(rows) == 100
        assert any(r.error is not None for r in rows)


async def test_unit_errors_from_inside_task_groups_are_unwrapped() -> None:
    """An agent adapter failing inside a task group is reported by its cause."""
    from windtunnel.agents import AgentContext, AgentResult
    from windtunnel.api import Scenario
    from windtunnel.fd_limit import open_file_limit
    from windtunnel.runner.execute import run_unit
    from windtunnel.runner.units import WorkUnit

    class Failing:
        name = "failing"

        async def run(self, ctx: AgentContext) -> AgentResult:
            raise ExceptionGroup("group", [OSError(24, "Too many open files")])

    scenario = Scenario(name="s", task="t", upstreams={"crm": COMPAT_UNIVERSE})
    with trio.fail_after(30):
        async with open_fleet() as fleet:
            servers = {"crm": RecordedMCPServer(COMPAT_UNIVERSE)}
            trace = await run_unit(WorkUnit(scenario, 0), fleet, servers=servers, agent=Failing())
    # Unwrapped to its cause, with the fix for that cause.
    hint = f" (open-file limit {open_file_limit()}; raise it with ulimit -n)"
    assert trace.error == "unexpected OSError: [Errno 24] Too many open files" + hint


async def test_wt_run_finishes_while_nobody_reads_its_stderr(tmp_path: Path) -> None:
    """A parent that pipes `wt run`'s stderr and reads it only later (a common harness pattern)
    gets a finished run: lines that do not fit in the full pipe are dropped, never waited on,
    and the ones that fit are whole lines."""
    units = 150
    pack = _ok_pack(tmp_path, units, "x", prefix="scenario_with_a_long_name_" + "x" * 70)
    read_end, write_end = os.pipe()
    fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)  # fills after a few dozen progress lines
    try:
        with trio.fail_after(120):
            done = await trio.run_process(
                [*WT, "run", str(pack), "-o", str(tmp_path / "run"), "--progress", "plain"],
                capture_stdout=True,
                stderr=write_end,
                check=False,
            )
        os.close(write_end)
        with os.fdopen(read_end, "rb") as pipe:
            received = pipe.read()
    finally:
        for fd in (read_end, write_end):
            with contextlib.suppress(OSError):
                os.close(fd)
    assert done.returncode == 0
    assert done.stdout.decode().strip() == str(tmp_path / "run")
    assert len(read_results(tmp_path / "run", with_calls=False)) == units
    lines = received.decode().splitlines(keepends=True)
    assert 0 < len(lines) < units  # the pipe held some, the rest were dropped
    assert all(
        re.fullmatch(r"PASS  scenario_with_a_long_name_x+\d{3}#0 \(\d+\.\d\ds\)\n", line)
        for line in lines
    )
