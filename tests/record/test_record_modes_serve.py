"""Record modes on `wt serve` (a real subprocess, a real live server): `new_episodes` from the
environment variable, `once` recording a missing file and then replaying it, `all`
re-recording."""

from __future__ import annotations

import shlex
import signal
import subprocess
from pathlib import Path

import mcp
import pytest
import trio

from tests.processes import WT, wt_serve
from tests.verify.recorded import drifting_command, record_async
from windtunnel.universe import load_universe

pytestmark = pytest.mark.timeout(180)


async def one_lookup(client: mcp.Client) -> None:
    await client.call_tool("lookup", {"query": "ana"})


async def calls_through(url: str, *queries: str) -> list[object]:
    async with mcp.Client(url, mode="legacy") as client:
        return [
            (await client.call_tool("lookup", {"query": q})).structured_content for q in queries
        ]


async def stop(process: trio.Process) -> None:
    process.send_signal(signal.SIGTERM)
    with trio.fail_after(30):
        await process.wait()


async def test_new_episodes_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """WT_RECORD_MODE=new_episodes: the miss reaches the upstream the universe recorded, its
    answer is served and appended, and the event says recorded_live."""
    path = await record_async(
        drifting_command("v1", tmp_path / "sent.log"),
        one_lookup,
        tmp_path / "u.universe.json",
        name="drifting",
    )
    monkeypatch.setenv("WT_RECORD_MODE", "new_episodes")
    with trio.fail_after(120):
        async with wt_serve(str(path)) as (process, first):
            answers = await calls_through(first.decode().strip(), "ana", "bob")
            await stop(process)
            assert process.stderr is not None
            err = (await process.stderr.receive_some(1 << 20)).decode()
    assert answers == [{"name": "Ana", "tier": 2}, {"name": "Bob", "tier": 2}]
    assert '"reason": "recorded_live"' in err or '"reason":"recorded_live"' in err
    assert [r.args for r in load_universe(path).recordings] == [{"query": "ana"}, {"query": "bob"}]


async def test_once_records_a_missing_file_then_replays_it(tmp_path: Path) -> None:
    """--record-mode once: no file yet, so the session is recorded into it; the file exists the
    second time, so it is replayed (the upstream given then does not even exist)."""
    path = tmp_path / "new.universe.json"
    upstream = shlex.join(drifting_command("v1", tmp_path / "sent.log"))
    with trio.fail_after(120):
        async with wt_serve(str(path), "--record-mode", "once", "--upstream", upstream) as (
            process,
            first,
        ):
            recorded = await calls_through(first.decode().strip(), "ana")
            await stop(process)
        assert [r.args for r in load_universe(path).recordings] == [{"query": "ana"}]
        before = path.read_bytes()
        gone = str(tmp_path / "no-such-server")
        async with wt_serve(str(path), "--record-mode", "once", "--upstream", gone) as (
            process,
            first,
        ):
            replayed = await calls_through(first.decode().strip(), "ana")
            await stop(process)
    assert replayed == recorded
    assert path.read_bytes() == before


async def test_all_records_again(tmp_path: Path) -> None:
    """--record-mode all: the existing file is replaced by this session's recording."""
    path = await record_async(
        drifting_command("v1", tmp_path / "sent.log"),
        one_lookup,
        tmp_path / "u.universe.json",
        name="drifting",
    )
    with trio.fail_after(120):
        async with wt_serve(str(path), "--record-mode", "all") as (process, first):
            await calls_through(first.decode().strip(), "bob", "cy")
            await stop(process)
    assert [r.args for r in load_universe(path).recordings] == [{"query": "bob"}, {"query": "cy"}]


def test_all_with_an_upstream_that_cannot_start_keeps_the_file(tmp_path: Path) -> None:
    """--record-mode all, the live server missing: exit 2 naming it, the universe untouched."""
    path = tmp_path / "u.universe.json"
    path.write_text('{"windtunnel_universe": 1, "tools": [{"name": "lookup"}]}')
    before = path.read_bytes()
    gone = str(tmp_path / "no-such-server")
    done = subprocess.run(
        [*WT, "serve", str(path), "--record-mode", "all", "--upstream", gone],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "no-such-server" in done.stderr
    assert path.read_bytes() == before
