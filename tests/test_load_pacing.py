"""Loading beside units in flight: the GIL switch interval while loads run, GC in small steps."""

from __future__ import annotations

import gc
import sys
import threading
from pathlib import Path

import pytest

from windtunnel.load_pacing import LOAD_SWITCH_INTERVAL, gc_in_steps, paced_loading
from windtunnel.matching import UniverseIndex
from windtunnel.universe import load_universe


def test_loads_lower_the_switch_interval_until_the_last_one_ends() -> None:
    """Nested and concurrent loads share the lowered interval; the old one comes back after."""
    before = sys.getswitchinterval()
    inside: list[float] = []
    started, release = threading.Event(), threading.Event()

    def other_load() -> None:
        with paced_loading():
            started.set()
            release.wait(10)

    with paced_loading():
        inside.append(sys.getswitchinterval())
        thread = threading.Thread(target=other_load)
        thread.start()
        assert started.wait(10)
        with paced_loading():
            inside.append(sys.getswitchinterval())
    inside.append(sys.getswitchinterval())  # the other thread's load still runs
    release.set()
    thread.join(10)
    assert inside == pytest.approx([LOAD_SWITCH_INTERVAL] * 3)
    assert sys.getswitchinterval() == before


def test_gc_steps_leave_collection_as_they_found_it() -> None:
    """Collection is paused inside and on again after; left off, it stays off."""
    assert gc.isenabled()
    with gc_in_steps():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_in_steps():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def big_universe(path: Path, count: int) -> Path:
    rows = ",\n".join(
        f'{{"tool_name": "lookup", "args": {{"id": "user-{i:07d}"}}, "result": {{"n": {i}}}}}'
        for i in range(count)
    )
    path.write_text(
        '{"windtunnel_universe": 1, "tools": [{"name": "lookup"}], "recordings": [\n'
        + rows
        + "\n]}\n"
    )
    return path


def test_a_loaded_universe_leaves_the_cyclic_gc_nothing_to_walk(tmp_path: Path) -> None:
    """20,000 recordings decoded and indexed: once collections have seen them, under 1% are
    left for every later full collection to walk (before: 6 per recording, and a full collection
    took 0.65 s with 200,000 recordings loaded)."""
    path = big_universe(tmp_path / "big.universe.json", 20_000)
    gc.collect()
    before = len(gc.get_objects())
    universe = load_universe(path)
    index = UniverseIndex(universe)
    assert index.resolve("lookup", {"id": "user-0019999"}) is not None
    # A pass untracks a tuple of scalars; an index key nests three, so two passes see them all.
    gc.collect()
    gc.collect()
    left = len(gc.get_objects()) - before
    assert left < 200, left
