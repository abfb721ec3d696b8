"""Agent adapters with real subprocesses and real MCP clients: answers, crashes, hangs, floods."""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio

from tests.compat import BLUEWING, COMPAT_UNIVERSE
from windtunnel.actors import open_fleet
from windtunnel.agents import (
    AgentContext,
    AgentError,
    CommandAgent,
    PlannedCall,
    PythonAgent,
    ScriptedAgent,
)
from windtunnel.mcp import RecordedMCPServer

MCP_AGENT = textwrap.dedent(
    """
    import asyncio, json, os, sys
    import mcp

    async def main():
        config = json.load(open(sys.argv[1]))
        url = config["mcpServers"]["crm"]["url"]
        assert url == os.environ["WT_MCP_URL_CRM"] == os.environ["WT_MCP_URL"]
        task = {task_source}
        async with mcp.Client(url) as client:
            result = await client.call_tool("client_lookup", {{"query": task.strip()}})
        print(result.structured_content["email"], os.environ["WT_SCENARIO"], os.environ["EXTRA"])

    asyncio.run(main())
    """
)


def alive(pid: int) -> bool:
    """Running, or stopped: not gone and not a zombie waiting for init to reap it."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")


async def run_agent(agent: Any, tmp_path: Path) -> tuple[Any, list[Any]]:
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    async with open_fleet() as fleet:
        async with fleet.scenario("s", {"crm": server}) as run:
            ctx = AgentContext(
                scenario="s",
                task="Bluewing Logistics\n",
                servers=dict(run.urls),
                workdir=tmp_path,
                unit_id="s#0",
            )
            with trio.fail_after(60):
                result = await agent.run(ctx)
    return result, run.call_log()


@pytest.mark.parametrize(
    ("task_via", "task_source", "extra_args"),
    [
        ("stdin", "sys.stdin.read()", []),
        ("file", "open(sys.argv[2]).read()", ["{task_file}"]),
        ("arg", "sys.argv[2]", ["{task}"]),
    ],
)
async def test_command_agent_gets_config_env_and_task(
    tmp_path: Path, task_via: str, task_source: str, extra_args: list[str]
) -> None:
    """The mcpServers file, WT_* variables and the task reach a real subprocess MCP client."""
    script = tmp_path / "agent.py"
    script.write_text(MCP_AGENT.format(task_source=task_source))
    agent = CommandAgent(
        [sys.executable, str(script), "{mcp_config}", *extra_args],
        task_via=task_via,  # type: ignore[arg-type]
        env={"EXTRA": "yes"},
    )
    result, calls = await run_agent(agent, tmp_path)
    assert result.output == "ops@bluewing.example s yes"
    assert [c.args for c in calls] == [{"query": "Bluewing Logistics"}]
    config = json.loads((tmp_path / "mcp.json").read_text())
    assert list(config["mcpServers"]) == ["crm"]
    assert config["mcpServers"]["crm"]["type"] == "http"


async def test_crashing_agent_is_an_agent_error(tmp_path: Path) -> None:
    """A non-zero exit becomes an AgentError carrying the exit code and the last stderr line."""
    agent = CommandAgent(
        [
            sys.executable,
            "-c",
            "import sys; print('boom: no API key', file=sys.stderr); sys.exit(3)",
        ]
    )
    with pytest.raises(AgentError, match="exited with code 3: boom: no API key"):
        await run_agent(agent, tmp_path)


async def test_missing_program_is_an_agent_error(tmp_path: Path) -> None:
    """A command that does not exist is a clear AgentError."""
    with pytest.raises(AgentError, match="cannot start agent '/no/such/agent'"):
        await run_agent(CommandAgent(["/no/such/agent"]), tmp_path)


async def test_flooding_agent_is_stopped_at_the_output_cap(tmp_path: Path) -> None:
    """An agent that prints more than 4 MiB fails with a clear reason and does not exhaust memory."""
    agent = CommandAgent(
        [sys.executable, "-c", "import sys; sys.stdout.write('x' * (6 * 1024 * 1024))"]
    )
    with pytest.raises(AgentError, match="more than 4194304 bytes"):
        await run_agent(agent, tmp_path)


async def test_hanging_agent_and_its_children_are_killed_on_cancel(tmp_path: Path) -> None:
    """Cancelling a run kills the agent's whole process group, grandchildren included."""
    pids = tmp_path / "pids"
    code = (
        "import os, subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pids)!r}, 'w').write(f'{{os.getpid()}} {{child.pid}}')\n"
        "time.sleep(600)\n"
    )
    agent = CommandAgent([sys.executable, "-c", code])
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    with trio.fail_after(30):
        async with open_fleet() as fleet:
            async with fleet.scenario("s", {"crm": server}) as run:
                ctx = AgentContext(scenario="s", task="t", servers=dict(run.urls), workdir=tmp_path)
                with trio.move_on_after(2) as deadline:
                    await agent.run(ctx)
    assert deadline.cancelled_caught
    assert [alive(pid) for pid in map(int, pids.read_text().split())] == [False, False]


@pytest.mark.parametrize("flavor", ["sync", "trio", "asyncio"])
async def test_python_agents_of_every_flavor(tmp_path: Path, flavor: str) -> None:
    """Sync, Trio and asyncio callables all reach the servers through the official client."""

    def sync_agent(ctx: AgentContext) -> str:
        return trio.run(trio_agent, ctx)

    async def trio_agent(ctx: AgentContext) -> str:
        async with mcp.Client(ctx.servers["crm"]) as client:
            result = await client.call_tool("client_lookup", {"query": ctx.task.strip()})
        return str(result.structured_content["email"])

    async def asyncio_agent(ctx: AgentContext) -> str:
        import asyncio

        await asyncio.sleep(0)
        async with mcp.Client(ctx.servers["crm"]) as client:
            result = await client.call_tool("client_lookup", {"query": ctx.task.strip()})
        return str(result.structured_content["email"])

    fn = {"sync": sync_agent, "trio": trio_agent, "asyncio": asyncio_agent}[flavor]
    agent = PythonAgent(fn, flavor=flavor if flavor == "trio" else "auto")  # type: ignore[arg-type]
    result, calls = await run_agent(agent, tmp_path)
    assert result.output == BLUEWING["email"]
    assert len(calls) == 1


async def test_python_agent_exception_is_an_agent_error(tmp_path: Path) -> None:
    """An exception from a Python agent fails the run with its type and message."""

    def broken(ctx: AgentContext) -> str:
        raise KeyError("model")

    with pytest.raises(AgentError, match="agent raised KeyError: 'model'"):
        await run_agent(PythonAgent(broken), tmp_path)


async def test_scripted_agent_runs_its_plan_through_the_client(tmp_path: Path) -> None:
    """The scripted agent's plan reaches the server in order, unknown tools included."""
    plan = [
        PlannedCall("client_lookup", {"query": "Bluewing Logistics"}),
        PlannedCall("refund_card", {}),
        PlannedCall("motd", {}, upstream="crm"),
    ]
    result, calls = await run_agent(ScriptedAgent(plan, final_answer="done"), tmp_path)
    assert result.output == "done"
    assert [c.tool_name for c in calls] == ["client_lookup", "refund_card", "motd"]
    transcript = json.loads((tmp_path / "transcript.json").read_text())
    assert transcript[1]["error"]["code"] == -32602


async def test_scripted_agent_needs_upstream_with_several(tmp_path: Path) -> None:
    """With two upstreams, a plan step without `upstream` is an AgentError."""
    agent = ScriptedAgent([PlannedCall("motd", {})])
    with trio.fail_after(30):
        async with open_fleet() as fleet:
            servers = {
                "a": RecordedMCPServer(COMPAT_UNIVERSE),
                "b": RecordedMCPServer(COMPAT_UNIVERSE),
            }
            async with fleet.scenario("s", servers) as run:
                ctx = AgentContext(scenario="s", task="t", servers=dict(run.urls), workdir=tmp_path)
                with pytest.raises(AgentError, match="needs `upstream`: this run has 2 upstreams"):
                    await agent.run(ctx)


def test_command_template_is_filled_in_one_pass(tmp_path: Path) -> None:
    """A task that mentions a placeholder reaches the agent as written, as one argument."""
    agent = CommandAgent(
        ["agent", "--task={task}", "{workdir}", '{"k": 1}', "{unknown}"], task_via="arg"
    )
    ctx = AgentContext(scenario="s", task="see {workdir}; rm -rf /", servers={}, workdir=tmp_path)
    assert agent.argv(ctx) == [
        "agent",
        "--task=see {workdir}; rm -rf /",
        str(tmp_path),
        '{"k": 1}',
        "{unknown}",
    ]
