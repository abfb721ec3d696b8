"""Keep the cyclic garbage collector off data that lives as long as the process.

Decoding a 100,000-recording universe (or indexing it) allocates millions of small containers;
the cyclic GC would run full collections over and over meanwhile, for nothing to collect. And a
full collection walks every tracked object: a server whose heap holds the SDK, pydantic and a
large universe pauses for tens of milliseconds (per 100,000 objects, ~20 ms here) each time,
a latency tail for whichever requests are in flight.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["freeze_startup_heap", "paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def freeze_startup_heap() -> None:
    """Move everything alive now (modules, classes, loaded universes) out of the collector's
    sight, once start-up is over: full collections then walk only what serving allocates.

    Process-wide: for a command's start-up (`wt serve`), never library code. Garbage cycles are
    collected first; an object alive now that later becomes part of a garbage cycle is not
    freed, which is why this runs once, before serving, not periodically.
    """
    gc.collect()
    gc.freeze()
