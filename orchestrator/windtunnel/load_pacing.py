"""Loading a large universe beside units in flight, without starving them.

A pack loads each scenario's universes in a worker thread while other units serve calls on the
Trio loop. Two things made a large load (1,000,000 recordings) stall them for seconds:

- **The GIL.** A thread that wants the GIL waits for the switch interval (5 ms) before the
  holder is asked to drop it, and the loop gives the GIL up at every socket operation and
  `epoll_wait`: while a load runs, each of those waits up to 5 ms, and a call that takes 1 ms
  alone takes tens. `paced_loading` lowers the interval while any load runs in this process,
  so the loop gets the GIL back within `LOAD_SWITCH_INTERVAL`; the previous value is restored
  when the last load ends.
- **The cyclic GC.** Decoding and indexing run with automatic collection paused (it would run
  full passes over and over, for nothing to collect). The first collection after the pause then
  walked every container the load made, millions, in one C call holding the GIL (2 s for an
  index of 1,000,000 recordings). `GcSteps` collects the young generation every `GC_STEP` items
  while the load runs, so each pass walks only what the last few thousand items made; a pass
  also untracks the containers holding only scalars (most arguments and index keys), so they
  never cost a full collection again.
"""

from __future__ import annotations

import gc
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["GC_STEP", "LOAD_SWITCH_INTERVAL", "GcSteps", "gc_in_steps", "paced_loading"]

LOAD_SWITCH_INTERVAL = 0.0002
"""The GIL switch interval (s) while a load runs: the longest the event loop waits to get the GIL
back from a loading thread (CPython's default is 0.005)."""

GC_STEP = 2048
"""Items (recordings) decoded or indexed between two young collections during a load."""

_YOUNG_PASSES_PER_OLDER = 8

_lock = threading.Lock()
_loads = 0
_saved_interval = 0.0
_pauses = 0
_gc_was_enabled = False


@contextmanager
def paced_loading() -> Iterator[None]:
    """While this runs (in any thread), the GIL switch interval is `LOAD_SWITCH_INTERVAL`.

    Nested and concurrent loads count: the interval is restored when the last one ends, to what
    it was when the first began.
    """
    global _loads, _saved_interval
    with _lock:
        if _loads == 0:
            _saved_interval = sys.getswitchinterval()
            sys.setswitchinterval(min(_saved_interval, LOAD_SWITCH_INTERVAL))
        _loads += 1
    try:
        yield
    finally:
        with _lock:
            _loads -= 1
            if _loads == 0:
                sys.setswitchinterval(_saved_interval)


class GcSteps:
    """Collection in small steps for one load (see `gc_in_steps`)."""

    __slots__ = ("_active", "_count", "_passes")

    def __init__(self, *, active: bool) -> None:
        self._active = active
        self._count = 0
        self._passes = 0

    def item(self) -> None:
        """One more item (a recording) loaded: every `GC_STEP` items, collect what they made."""
        self._count += 1
        if self._count < GC_STEP or not self._active:
            return
        self._count = 0
        self._passes += 1
        # The young generation each step; every few steps the middle one too, so survivors
        # reach the old generation a few thousand containers at a time.
        gc.collect(1 if self._passes % _YOUNG_PASSES_PER_OLDER == 0 else 0)


@contextmanager
def gc_in_steps() -> Iterator[GcSteps]:
    """Automatic collection paused while this runs; the load collects in steps instead.

    Concurrent loads (several threads) share the pause: collection resumes when the last one
    ends. Steps run only when collection was on before the first pause (off is the caller's
    choice, and stays so). The last steps' survivors are collected before the pause ends, by
    the loading thread, so the first automatic pass after it has little to walk.
    """
    global _pauses, _gc_was_enabled
    with _lock:
        if _pauses == 0:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
        _pauses += 1
        active = _gc_was_enabled
    try:
        yield GcSteps(active=active)
    finally:
        if active:
            gc.collect(1)
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _gc_was_enabled:
                gc.enable()
