"""Whole packs: many scenarios in parallel, `wt run` exit codes, Ctrl-C, resume, run_scenario."""

from __future__ import annotations

import json
import signal
import subprocess
import textwrap
from pathlib import Path

import pytest
import trio

from tests.cli.test_universe_commands import EXAMPLE
from tests.compat import COMPAT_UNIVERSE
from tests.processes import WT, read_until
from windtunnel.api import Scenario, ScenarioPack, no_divergence, run_scenario
from windtunnel.cli.main import main
from windtunnel.mcp import RecordedMCPServer
from windtunnel.runner import PlanStep, read_results
from windtunnel.runner.pack_run import PackRunOptions, run_pack
from windtunnel.runner.scoring import contains, required_call

DEMO = Path(__file__).parents[2] / "configs" / "demo" / "pack.toml"


def two_upstream_scenario(i: int) -> Scenario:
    wanders = i % 10 == 0
    return Scenario(
        name=f"s{i:03d}",
        task="look up Bluewing",
        upstreams={"crm": EXAMPLE, "compat": COMPAT_UNIVERSE},
        policies=[no_divergence()],
        plan=[
            PlanStep(upstream="crm", tool="client_lookup", args={"query": "ACC-1042"}),
            PlanStep(
                upstream="compat",
                tool="client_lookup",
                args={"query": "Bluewing" if wanders else "Bluewing Logistics"},
            ),
        ],
        final_answer="ok",
    )


async def test_200_scenarios_by_2_upstreams_at_concurrency_32(tmp_path: Path) -> None:
    """Every unit is written; summary counts equal the scenarios run; each run has its own logs."""
    pack = ScenarioPack("big", [two_upstream_scenario(i) for i in range(200)], concurrency=32)
    with trio.fail_after(240):
        summary = await run_pack(pack, PackRunOptions(run_dir=tmp_path))
    assert (summary.total, summary.passed, summary.failed, summary.errors) == (200, 180, 20, 0)
    assert summary.divergences == 20
    rows = read_results(tmp_path, with_calls=False)
    assert sorted(r.unit_id for r in rows) == [f"s{i:03d}#0" for i in range(200)]
    traces = read_results(tmp_path)
    assert all(len(t.mcp_calls) == 2 for t in traces)
    assert all([c.upstream for c in t.mcp_calls] == ["crm", "compat"] for t in traces)
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert (saved["total"], saved["passed"], saved["failed"]) == (200, 180, 20)
    events = [json.loads(line) for line in (tmp_path / "events.jsonl").read_text().splitlines()]
    assert sum(e["event"] == "scenario_finished" for e in events) == 200
    assert sum(e["event"] == "universe_divergence" for e in events) == 20
    assert (tmp_path / "junit.xml").exists()
    assert (tmp_path / "report.html").exists()


def test_run_scenario_public_api() -> None:
    """run_scenario(scenario, agent=..., mcps=[...]) returns a scored Trace with warnings."""
    scenario = Scenario(
        name="lookup",
        task="Bluewing Logistics",
        policies=[no_divergence(), required_call("client_lookup")],
        scorers=[contains("ops@bluewing.example")],
    )

    async def agent(ctx: object) -> str:
        import mcp

        from windtunnel.agents import AgentContext

        assert isinstance(ctx, AgentContext)
        async with mcp.Client(ctx.servers["compat"]) as client:
            hit = await client.call_tool("client_lookup", {"query": ctx.task})
            await client.call_tool("client_lookup", {"query": "Nobody"})
        return str(hit.structured_content["email"])

    from windtunnel.agents import PythonAgent

    trace = run_scenario(
        scenario, agent=PythonAgent(agent, flavor="trio"), mcps=[RecordedMCPServer(COMPAT_UNIVERSE)]
    )
    assert trace.output == "ops@bluewing.example"
    assert [c.tool_name for c in trace.mcp_calls] == ["client_lookup", "client_lookup"]
    assert [w["event"] for w in trace.warnings] == ["universe_divergence"]
    assert trace.warnings[0]["args"] == {"query": "Nobody"}
    assert trace.status == "failed"
    assert [v.passed for v in trace.verdicts] == [False, True]
    assert trace.scores[0].passed is True


def test_wt_run_exit_codes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """0 when all pass, 1 when some fail, 2 for a bad pack; the run directory is printed."""
    assert main(["run", str(DEMO), "-o", str(tmp_path / "v1"), "--progress", "plain"]) == 0
    wandering = "{python} agents/support_agent.py --mcp-config {mcp_config} --style wandering"
    code = main(
        [
            "run",
            str(DEMO),
            "-o",
            str(tmp_path / "v2"),
            "--progress",
            "plain",
            "--agent-command",
            wandering,
        ]
    )
    assert code == 1
    out, err = capsys.readouterr()
    assert out.splitlines() == [str(tmp_path / "v1"), str(tmp_path / "v2")]
    assert "support-demo: passed: 3 passed, 0 failed, 0 errors of 3; divergences 0" in err
    assert "support-demo: FAILED: 0 passed, 3 failed, 0 errors of 3; divergences 5" in err
    bad = tmp_path / "bad.toml"
    bad.write_text("[pack]\nname = 'x'\n[[scenario]]\nname = 'a'\n")
    assert main(["run", str(bad), "-o", str(tmp_path / "v3")]) == 2
    assert "task" in capsys.readouterr().err
    # An existing run directory is never overwritten silently.
    assert main(["run", str(DEMO), "-o", str(tmp_path / "v1")]) == 2
    assert "--resume" in capsys.readouterr().err


def interruptible_pack(tmp_path: Path) -> Path:
    """Five scenarios; `slow*` ones hang while the flag file exists."""
    flag = tmp_path / "hang"
    flag.write_text("1")
    agent = (
        "import os, sys, time\n"
        f"while sys.argv[1].startswith('slow') and os.path.exists({str(flag)!r}):\n"
        "    time.sleep(0.05)\n"
        "print('answer ' + sys.argv[1])\n"
    )
    scenarios = "".join(
        textwrap.dedent(
            f"""
            [[scenario]]
            name = "{name}"
            task = "t"
            upstreams = {{ crm = "{EXAMPLE}" }}
            [[scenario.scorers]]
            kind = "contains"
            text = "answer {name}"
            """
        )
        for name in ["fast1", "fast2", "slow1", "slow2", "fast3"]
    )
    pack = tmp_path / "pack.toml"
    pack.write_text(
        textwrap.dedent(
            f"""
            [pack]
            name = "interruptible"
            concurrency = 2
            timeout_s = 120
            [agent]
            kind = "command"
            command = ["{{python}}", "-c", {json.dumps(agent)}, "{{scenario}}"]
            """
        )
        + scenarios
    )
    return pack


@pytest.mark.parametrize("stop_signal", [signal.SIGINT, signal.SIGTERM])
async def test_interrupted_run_keeps_what_finished_and_resumes(
    tmp_path: Path, stop_signal: signal.Signals
) -> None:
    """A signal mid-pack: exit 130, valid results for finished units, no agent left; --resume
    runs only the rest, and the merged run equals an uninterrupted one."""
    pack = interruptible_pack(tmp_path)
    run_dir = tmp_path / "run"
    with trio.fail_after(120):
        process = await trio.lowlevel.open_process(
            [*WT, "run", str(pack), "-o", str(run_dir), "--progress", "plain"],
            stderr=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
        )
        assert process.stderr is not None
        seen = await read_until(process.stderr, b"PASS  fast2#0")
        if b"PASS  fast1#0" not in seen:
            await read_until(process.stderr, b"PASS  fast1#0")
        process.send_signal(stop_signal)
        await process.wait()
    assert process.returncode == 130
    rows = read_results(run_dir, with_calls=False)
    assert sorted(r.unit_id for r in rows) == ["fast1#0", "fast2#0"]
    assert json.loads((run_dir / "summary.json").read_text())["total"] == 2
    leftovers = subprocess.run(  # noqa: ASYNC221  # one quick pgrep
        ["pgrep", "-f", str(tmp_path / "hang")], capture_output=True, text=True
    )
    assert leftovers.stdout == ""
    (tmp_path / "hang").unlink()
    with trio.fail_after(120):
        resumed = await trio.run_process(
            [*WT, "run", str(pack), "-o", str(run_dir), "--resume", "--progress", "plain"],
            capture_stderr=True,
            capture_stdout=True,
            check=False,
        )
    assert resumed.returncode == 0, resumed.stderr.decode()
    assert b"resuming: 2 unit(s) already finished, 3 to run" in resumed.stderr
    merged = {r.unit_id: (r.status, r.output) for r in read_results(run_dir, with_calls=False)}
    with trio.fail_after(120):
        await trio.run_process(
            [*WT, "run", str(pack), "-o", str(tmp_path / "straight"), "--progress", "plain"],
            capture_stderr=True,
            capture_stdout=True,
        )
    straight = {
        r.unit_id: (r.status, r.output)
        for r in read_results(tmp_path / "straight", with_calls=False)
    }
    assert merged == straight
    assert len(straight) == 5


async def test_a_stopped_run_returns_the_summary_it_wrote(tmp_path: Path) -> None:
    """`run_pack(stop=...)` set after the first unit: the units in flight are cancelled and the
    run returns the summary of what finished, the one in summary.json (`wt run` reads nothing
    back after Ctrl-C)."""
    pack = ScenarioPack("stop", [two_upstream_scenario(i) for i in range(1, 9)], concurrency=1)
    stop = trio.Event()
    with trio.fail_after(60):
        summary = await run_pack(
            pack, PackRunOptions(run_dir=tmp_path), stop=stop, on_trace=lambda _: stop.set()
        )
    rows = read_results(tmp_path, with_calls=False)
    assert 1 <= summary.total == summary.passed == len(rows) < 8
    written = json.loads((tmp_path / "summary.json").read_text())
    assert (written["total"], written["passed"]) == (summary.total, summary.passed)
