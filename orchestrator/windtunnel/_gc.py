"""Keep the cyclic garbage collector off data that lives as long as the process.

Decoding a 100,000-recording universe (or indexing it) allocates millions of small containers; the
cyclic GC would run full collections over and over meanwhile, for nothing to collect. And a full
collection walks every tracked object: a server whose heap holds the SDK, pydantic and a large
universe pauses in proportion to its size each time (docs/benchmarks.md), a latency tail for
whichever requests are in flight.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "paused_gc", "tune_gc_for_serving"]

YOUNG_THRESHOLD = 10_000
"""New tracked objects between young collections once serving (CPython's default is 700)."""


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def tune_gc_for_serving() -> None:
    """Set the collector up for a long-running command, once start-up is over (process-wide:
    for a command's start-up, such as `wt serve` and `wt run`, never library code).

    - Everything alive now (modules, the SDK, loaded universes) is frozen out of the
      collector's sight: full collections then walk only what serving allocates. Garbage
      cycles are collected first; an object alive now that later joins a garbage cycle is
      never freed, which is why this runs once, before serving, not periodically.
    - Young collections wait for `YOUNG_THRESHOLD` new objects instead of 700. Under concurrent
      requests each young collection promotes the objects of the requests in flight to the old
      generation, and promotions are what trigger full collections; waiting longer makes full
      collections rare at the price of longer young passes (docs/benchmarks.md, "Changes made").
    """
    gc.collect()
    gc.freeze()
    _, older, oldest = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, older, oldest)
