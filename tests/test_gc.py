"""What a long-running server keeps costs the cyclic GC nothing it does not have to walk."""

from __future__ import annotations

import argparse
import gc
import io
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
import trio

from tests.compat import COMPAT_UNIVERSE
from windtunnel._gc import YOUNG_THRESHOLD, tune_gc_for_serving
from windtunnel.actors import JsonLinesSink, PipeWriter
from windtunnel.actors.sinks import drop_notice
from windtunnel.calls import MCPCall
from windtunnel.cli import run_main, serve_main
from windtunnel.cli.main import main
from windtunnel.mcp import RecordedMCPServer


@pytest.fixture
def restored_gc() -> Iterator[None]:
    """Give the test process's heap and thresholds back to the collector afterwards."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def test_calls_are_not_tracked_by_the_collector() -> None:
    """An `MCPCall` is invisible to the cyclic GC, whatever it holds."""
    call = MCPCall(tool_name="t", args={"nested": [{}]}, result={"a": [1]}, extra={"m": {}})
    assert not gc.is_tracked(call)


def test_a_logged_hit_adds_at_most_one_tracked_object() -> None:
    """Each call a server logs adds at most one object to every full collection's walk (its
    `extra` dict), so the pauses a growing call log causes grow half as fast as before."""
    server = RecordedMCPServer(COMPAT_UNIVERSE)
    server.log_events = False
    args = {"query": "Bluewing Logistics"}
    server.call_tool("client_lookup", args)
    gc.collect()
    before = len(gc.get_objects())
    for _ in range(1000):
        server.call_tool("client_lookup", dict(args))
    gc.collect()
    assert len(gc.get_objects()) - before <= 1000 + 50  # slack for interpreter caches
    assert len(server.call_log()) == 1001


def test_tuning_for_serving_freezes_the_start_up_heap_and_spaces_young_collections(
    restored_gc: None,
) -> None:
    """Once tuned, what was alive is out of the collector's walk, and young collections wait for
    `YOUNG_THRESHOLD` new objects (the older generations keep their settings)."""
    alive = [{"x": [i]} for i in range(1000)]
    _, older, oldest = gc.get_threshold()
    tune_gc_for_serving()
    assert gc.get_freeze_count() >= len(alive)
    assert not any(o is alive[0] for o in gc.get_objects())
    assert gc.get_threshold() == (YOUNG_THRESHOLD, older, oldest)


async def test_wt_serve_tunes_the_collector_once_started(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`wt serve` tunes the collector once started (universes loaded, servers listening)."""
    frozen = trio.Event()
    printed: list[str] = []

    def freeze() -> None:
        printed.append(capsys.readouterr().out)
        frozen.set()

    monkeypatch.setattr(serve_main, "tune_gc_for_serving", freeze)
    servers = {"compat": RecordedMCPServer(COMPAT_UNIVERSE, name="compat")}
    args = argparse.Namespace(
        host="127.0.0.1", port=0, feed_port=None, allow_host=[], allow_origin=[]
    )
    stderr = PipeWriter(2, notice=drop_notice)
    sink = JsonLinesSink(io.StringIO())
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve_main._serve_http, servers, args, sink, stderr)
            await frozen.wait()
            os.kill(os.getpid(), signal.SIGTERM)  # `wt serve` stops on it, as on Ctrl-C
    assert stderr.close(deadline_s=5)
    assert printed[0].startswith("http://127.0.0.1:") and printed[0].rstrip().endswith("/mcp")


def test_wt_run_tunes_the_collector_before_the_units_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`wt run` tunes the collector once the pack is loaded, before any unit runs."""
    run_dir = tmp_path / "run"
    seen: list[bool] = []

    def tune() -> None:
        seen.append((run_dir / "results.jsonl").exists())

    monkeypatch.setattr(run_main, "tune_gc_for_serving", tune)
    (tmp_path / "crm.universe.json").write_bytes(COMPAT_UNIVERSE.read_bytes())
    (tmp_path / "pack.toml").write_text(
        '[pack]\nname = "gc"\n[[scenario]]\nname = "one"\ntask = "t"\n'
        'upstreams = { crm = "crm.universe.json" }\n'
        '[[scenario.plan]]\nupstream = "crm"\ntool = "motd"\n'
    )
    code = main(["run", str(tmp_path / "pack.toml"), "-o", str(run_dir), "--progress", "plain"])
    assert code == 0
    assert seen == [False]
    assert (run_dir / "results.jsonl").read_bytes().count(b"\n") == 1
