"""Safe defaults: loopback only, foreign origins refused, bounded messages, no code from data,
outputs confined to the run directory, and secrets never written by Wind Tunnel itself."""

from __future__ import annotations

import json
import os
import sys
import textwrap
from pathlib import Path
from typing import Any

import mcp
import pytest
import trio
from trio_websocket import ConnectionClosed, ConnectionRejected, open_websocket_url

from tests.compat import COMPAT_UNIVERSE
from tests.reliability.leaks import listening_ports
from tests.reliability.mutations import base_universe
from windtunnel.actors import open_fleet
from windtunnel.mcp import RecordedMCPServer
from windtunnel.runner import read_results
from windtunnel.runner.pack_config import load_pack_toml
from windtunnel.runner.pack_run import PackRunOptions, run_pack
from windtunnel.runner.units import plan_units
from windtunnel.universe import decode_universe

CANARY_CODE = "__import__('wt_canary').run({path!r})"
CANARY_MODULE = "import pathlib\n\ndef run(path):\n    pathlib.Path(path).write_text('pwned')\n\nrun({path!r})\n"


def loopback_listeners() -> dict[int, str]:
    """Port → bound address of each socket this process listens on (IPv4 and IPv6)."""
    owned = listening_ports()
    found: dict[int, str] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, port_hex = fields[1].rsplit(":", 1)
            if fields[3] == "0A" and int(port_hex, 16) in owned:
                found[int(port_hex, 16)] = address
    return found


async def test_fleet_servers_and_feed_listen_on_loopback_only() -> None:
    """Every socket a fleet opens by default (servers, event feed) is bound to 127.0.0.1."""
    with trio.fail_after(30):
        async with open_fleet(feed_port=0) as fleet:
            servers = {
                "a": RecordedMCPServer(COMPAT_UNIVERSE),
                "b": RecordedMCPServer(COMPAT_UNIVERSE),
            }
            async with fleet.scenario("s", servers) as run:
                bound = loopback_listeners()
                assert fleet.feed is not None and fleet.feed.url is not None
                assert all(url.startswith("http://127.0.0.1:") for url in run.urls.values())
    assert len(bound) == 3
    assert set(bound.values()) == {"0100007F"}  # 127.0.0.1, little-endian hex


@pytest.mark.parametrize(
    ("origin", "accepted"),
    [
        (None, True),
        ("http://127.0.0.1:{port}", True),
        ("http://localhost:{port}", True),
        ("http://127.0.0.1:8080", False),
        ("http://localhost", False),
        ("https://[::1]:{port}", False),
        ("http://evil.example", False),
        ("http://127.0.0.1.evil.example", False),
        ("null", False),
        ("file://", False),
    ],
)
async def test_feed_refuses_foreign_web_origins(origin: str | None, accepted: bool) -> None:
    """The loopback event feed refuses every web page but its own (403: other local ports and
    `https` too) and accepts clients that send no Origin."""
    with trio.fail_after(30):
        async with open_fleet(feed_port=0) as fleet:
            assert fleet.feed is not None and fleet.feed.url is not None
            port = fleet.feed.url.rstrip("/").rsplit(":", 1)[1]
            headers = [(b"Origin", origin.format(port=port).encode())] if origin else []
            try:
                async with open_websocket_url(fleet.feed.url, extra_headers=headers) as ws:
                    hello = json.loads(await ws.get_message())
                    got = hello["event"]
            except ConnectionRejected as exc:
                got = f"rejected {exc.status_code}"
            async with open_websocket_url(fleet.feed.url) as ws:
                again = json.loads(await ws.get_message())["event"]
    assert got == ("feed_subscribed" if accepted else "rejected 403")
    assert again == "feed_subscribed"


async def test_feed_closes_an_oversized_message_and_keeps_serving() -> None:
    """A subscriber sending a message over 1 MiB is disconnected (1009); others still get events."""
    with trio.fail_after(30):
        async with open_fleet(feed_port=0) as fleet:
            assert fleet.feed is not None and fleet.feed.url is not None
            async with open_websocket_url(fleet.feed.url) as big:
                await big.get_message()
                await big.send_message("x" * (1024 * 1024 + 1))
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await big.get_message()
            async with open_websocket_url(fleet.feed.url) as ws:
                await ws.get_message()
                async with fleet.scenario("s", {"crm": RecordedMCPServer(COMPAT_UNIVERSE)}):
                    pass
                names = [json.loads(await ws.get_message())["event"] for _ in range(2)]
    assert closed.value.reason is not None and closed.value.reason.code == 1009
    assert names == ["scenario_started", "server_started"]


def code_like_universe(canary: Path) -> dict[str, Any]:
    doc = base_universe()
    trap = CANARY_CODE.format(path=str(canary))
    doc["tools"][0]["description"] = trap
    doc["tools"][0]["input_schema"] = {"type": "object", "default": trap, "$ref": "wt_canary:run"}
    doc["recordings"][0]["result"] = {"eval": trap, "callable": "wt_canary:run", "__reduce__": trap}
    doc["meta"] = {"synthesize": "wt_canary:run", "hook": trap, "module": "wt_canary"}
    return doc


async def test_a_universe_never_runs_or_imports_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code-like strings anywhere in a universe are served as data: nothing imported, nothing run."""
    canary = tmp_path / "pwned"
    (tmp_path / "wt_canary.py").write_text(CANARY_MODULE.format(path=str(canary)))
    monkeypatch.syspath_prepend(tmp_path)  # importable, were anything to try
    path = tmp_path / "trap.universe.json"
    path.write_text(json.dumps(code_like_universe(canary)))
    universe = decode_universe(path.read_bytes())
    with pytest.raises(Exception, match="synthesize"):
        RecordedMCPServer(path)  # the file asks for a hook; it cannot name one
    server = RecordedMCPServer(universe, synthesize=lambda tool, args, u: {"from": "the user"})
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await server.start(nursery)
            async with mcp.Client(url) as client:
                tools = await client.list_tools()
                hit = await client.call_tool("lookup", {"q": "a", "n": 1})
                made = await client.call_tool("make", {"q": CANARY_CODE.format(path=str(canary))})
            await server.stop()
    assert tools.tools[0].description == CANARY_CODE.format(path=str(canary))
    assert hit.structured_content == code_like_universe(canary)["recordings"][0]["result"]
    assert made.structured_content == {"from": "the user"}
    assert not canary.exists()
    assert "wt_canary" not in sys.modules


def code_like_pack(root: Path, canary: Path) -> Path:
    trap = json.dumps(CANARY_CODE.format(path=str(canary)))
    universe = base_universe()
    universe["matching"]["per_tool_on_miss"] = {"pages": "empty"}
    (root / "crm.universe.json").write_text(json.dumps(universe))
    (root / "evil_agent.py").write_text(
        f"import pathlib\npathlib.Path({str(canary)!r}).write_text('imported')\n"
        "def run(ctx):\n    return 'answer'\n"
    )
    pack = root / "pack.toml"
    pack.write_text(
        textwrap.dedent(
            f"""
            [pack]
            name = {trap}
            [agent]
            kind = "command"
            command = ["{{python}}", "-c", "print(1)", {trap}, "wt_canary:run"]
            env = {{ PYTHONSTARTUP = "evil_agent.py", HOOK = "evil_agent:run" }}
            [[scenario]]
            name = "scripted"
            task = {trap}
            tags = [{trap}, "evil_agent:run"]
            metadata = {{ callable = "evil_agent:run", code = {trap} }}
            upstreams = {{ crm = "crm.universe.json" }}
            [[scenario.policies]]
            kind = "required_call"
            tool = "evil_agent:run"
            args = {{ q = {trap} }}
            [[scenario.scorers]]
            kind = "regex"
            pattern = "(?P<x>evil_agent:run)"
            [[scenario.scorers]]
            kind = "json_field"
            field = "__class__.__init__.__globals__"
            equals = {trap}
            [[scenario.plan]]
            tool = "lookup"
            args = {{ q = {trap}, callable = "evil_agent:run" }}
            [scenario.agent]
            kind = "scripted"
            [[scenario]]
            name = "python"
            task = "t"
            upstreams = {{ crm = "crm.universe.json" }}
            [scenario.agent]
            kind = "python"
            callable = "evil_agent:run"
            """
        )
    )
    return pack


async def test_a_pack_imports_code_only_through_a_python_agent_callable(tmp_path: Path) -> None:
    """A pack imports code only through a `python` agent `callable`, and only when that scenario runs."""
    canary = tmp_path / "pwned"
    pack_file = code_like_pack(tmp_path, canary)
    modules = set(sys.modules)
    pack = load_pack_toml(pack_file)
    assert [u.id for u in plan_units(pack)] == ["scripted#0", "python#0"]
    assert not canary.exists()
    assert set(sys.modules) - modules == set()
    with trio.fail_after(60):
        await run_pack(
            pack, PackRunOptions(run_dir=tmp_path / "only-scripted", scenario_filter="scripted")
        )
    assert not canary.exists()
    assert "evil_agent" not in sys.modules
    with trio.fail_after(60):
        await run_pack(pack, PackRunOptions(run_dir=tmp_path / "python", scenario_filter="python"))
    [row] = read_results(tmp_path / "python", with_calls=False)
    assert (row.error, row.output) == (None, "answer")
    assert canary.read_text() == "imported"
    del sys.modules["evil_agent"]
    sys.path.remove(str(tmp_path))


async def test_task_text_is_never_interpreted_by_a_shell(tmp_path: Path) -> None:
    """A task full of shell syntax reaches a command agent as one literal argument."""
    canary = tmp_path / "pwned"
    task = f"$(touch {canary}); `touch {canary}`; touch {canary} && echo {{task}}"
    (tmp_path / "crm.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    (tmp_path / "pack.toml").write_text(
        textwrap.dedent(
            f"""
            [pack]
            name = "shell"
            [agent]
            kind = "command"
            command = ["{{python}}", "-c", "import sys; print(sys.argv[1])", "{{task}}"]
            task_via = "arg"
            [[scenario]]
            name = "s"
            task = {json.dumps(task)}
            upstreams = {{ crm = "crm.universe.json" }}
            """
        )
    )
    with trio.fail_after(60):
        await run_pack(
            load_pack_toml(tmp_path / "pack.toml"), PackRunOptions(run_dir=tmp_path / "run")
        )
    [row] = read_results(tmp_path / "run", with_calls=False)
    assert row.output == task
    assert not canary.exists()


HOSTILE_NAMES = [
    "../../etc/x",
    "/etc/passwd",
    "..",
    ".hidden/../../up",
    "a/../../../b",
    "C:\\Windows\\x",
    "~/x",
    "nul\u0000byte",
    "x" * 300,
]


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file()}


async def test_outputs_stay_in_the_run_directory_whatever_the_scenario_names(
    tmp_path: Path,
) -> None:
    """Hostile scenario names only ever name files inside the run directory's traces/."""
    (tmp_path / "crm.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    scenarios = "".join(
        f'[[scenario]]\nname = {json.dumps(name)}\ntask = "t"\n'
        f'upstreams = {{ crm = "crm.universe.json" }}\n[[scenario.plan]]\ntool = "motd"\n'
        for name in HOSTILE_NAMES
    )
    (tmp_path / "pack.toml").write_text(f'[pack]\nname = "../../pack"\n{scenarios}')
    outside = files_under(tmp_path.parent)
    run_dir = tmp_path / "deep" / "run"
    with trio.fail_after(60):
        summary = await run_pack(
            load_pack_toml(tmp_path / "pack.toml"), PackRunOptions(run_dir=run_dir)
        )
    assert summary.passed == len(HOSTILE_NAMES)
    created = files_under(tmp_path.parent) - outside
    assert all(run_dir in p.parents for p in created)
    traces = {p for p in created if p.parent == run_dir / "traces"}
    assert len(traces) == len(HOSTILE_NAMES)
    assert {p.name for p in created - traces} == {
        "results.jsonl",
        "events.jsonl",
        "summary.json",
        "junit.xml",
        "report.html",
    }
    assert {t.scenario for t in read_results(run_dir)} == set(HOSTILE_NAMES)


async def test_agent_env_secrets_are_never_written_by_wind_tunnel(tmp_path: Path) -> None:
    """`[agent] env` values reach the agent but no file of the run and nothing `wt run` prints."""
    secret = "sk-live-5ECRET-" + os.urandom(8).hex()
    (tmp_path / "crm.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    agent = (
        "import os, sys; tok = os.environ['API_TOKEN']; "
        "print('answer', len(tok)); sys.exit(0 if sys.argv[1] != 'boom' else 4)"
    )
    (tmp_path / "pack.toml").write_text(
        textwrap.dedent(
            f"""
            [pack]
            name = "secrets"
            [agent]
            kind = "command"
            command = ["{{python}}", "-c", {json.dumps(agent)}, "{{scenario}}"]
            env = {{ API_TOKEN = "{secret}" }}
            [[scenario]]
            name = "fine"
            task = "t"
            upstreams = {{ crm = "crm.universe.json" }}
            [[scenario]]
            name = "boom"
            task = "t"
            upstreams = {{ crm = "crm.universe.json" }}
            [[scenario.policies]]
            kind = "no_divergence"
            """
        )
    )
    run_dir = tmp_path / "run"
    with trio.fail_after(60):
        done = await trio.run_process(
            [
                sys.executable,
                "-m",
                "windtunnel",
                "run",
                str(tmp_path / "pack.toml"),
                "-o",
                str(run_dir),
                "--progress",
                "plain",
                "--feed-port",
                "0",
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 1
    rows = {r.unit_id: r for r in read_results(run_dir)}
    assert rows["fine#0"].output == f"answer {len(secret)}"
    assert rows["boom#0"].error == "agent exited with code 4: (no stderr)"
    written = {p: p.read_bytes() for p in files_under(run_dir)}
    assert len(written) == 8  # 2 traces, results, events, summary, JUnit, report, pack.json
    assert [p for p, data in written.items() if secret.encode() in data] == []
    assert secret.encode() not in done.stdout + done.stderr


@pytest.mark.parametrize("pack_name", ["../../../escaped", "/tmp/abs"])
async def test_default_run_directory_stays_under_runs(tmp_path: Path, pack_name: str) -> None:
    """Without -o the run directory stays under runs/, whatever the pack's name says."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "crm.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    (work / "pack.toml").write_text(
        f'[pack]\nname = {json.dumps(pack_name)}\n[[scenario]]\nname = "s"\ntask = "t"\n'
        'upstreams = { crm = "crm.universe.json" }\n[[scenario.plan]]\ntool = "motd"\n'
    )
    with trio.fail_after(60):
        done = await trio.run_process(
            [sys.executable, "-m", "windtunnel", "run", "pack.toml"],
            cwd=work,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    printed = Path(done.stdout.decode().strip())
    assert printed.parent == Path("runs")
    assert (work / printed / "results.jsonl").is_file()
    assert os.listdir(tmp_path) == ["work"]
