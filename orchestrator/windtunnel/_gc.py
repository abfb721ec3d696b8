"""Pause the cyclic garbage collector during bulk allocation of acyclic data.

Decoding a 100,000-recording universe (or indexing it) allocates millions of small containers;
the cyclic GC would run full collections over and over meanwhile, for nothing to collect.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["paused_gc"]


@contextmanager
def paused_gc() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
