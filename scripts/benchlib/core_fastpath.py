"""Candidate speed-ups for the universe core, measured side by side with the real code.

Nothing here is used by Wind Tunnel itself. `ProposedIndex` is a drop-in `UniverseIndex` whose
results the benchmark checks call by call against the real index before timing it, so a lead can
adopt any part of it knowing it answers the same. Each part is independent:

- `args_key`: the canonical key of an args object with scalar values handled inline, so the common
  flat call costs one sort instead of one recursive `canonical_key` call per value.
- `resolve` on stateless tools stops at the exact tier instead of always computing the keyed key
  too, and hands back a prebuilt, shared (frozen) `Hit`.
- `nearest` (limit 1, the replay hot path): instead of counting every posting of every shared
  (key, value) pair and sorting the counts, it looks for the earliest recording sharing *all* the
  call's known pairs, then all but one, and so on, with set intersections (in C) and an early-exit
  walk over the shortest posting list. A miss on an unknown id that shares three flags with 30,000
  recordings no longer touches 30,000 postings.
- `paused_gc`: the cyclic GC runs a full collection again and again while msgspec allocates a
  100,000-recording universe (or the index allocates its tuples); pausing it during the bulk
  allocation removes that cost.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from itertools import combinations, islice
from typing import Any, Final

from windtunnel.canonical import CanonicalKey, canonical_key
from windtunnel.matching import Hit, Miss, Nearest, SequenceState, UniverseIndex
from windtunnel.universe import Universe

__all__ = ["ProposedIndex", "args_key", "paused_gc"]

_NONE_TYPE: Final = type(None)
# Postings shorter than this are walked; longer ones get a set for C-speed membership.
_SET_AT: Final = 32
# Beyond this many shared pairs the subset search is no cheaper than counting.
_MAX_PAIRS: Final = 6


def args_key(args: dict[str, Any]) -> CanonicalKey:
    """`canonical_key(args)` for an args object, equal to it for every input."""
    items = []
    for key, value in args.items():
        cls = value.__class__
        if cls is str or cls is int or cls is float or value is None:
            items.append((key, value))
        else:
            items.append((key, canonical_key(value)))
    # Keys are distinct strings, so the sort never compares values.
    items.sort()
    return ("o", tuple(items))


@contextmanager
def paused_gc() -> Iterator[None]:
    """Pause the cyclic GC for a bulk allocation of acyclic data; restore it afterwards."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _earliest_common(lists: list[list[int]], sets: list[set[int] | None]) -> int | None:
    """The smallest index present in every list (lists sorted ascending, shortest first)."""
    first, rest = lists[0], sets[1:]
    if not rest:
        return first[0]
    rest_lists = lists[1:]
    for x in islice(first, _SET_AT):
        for other, other_set in zip(rest_lists, rest, strict=True):
            if other_set is not None:
                if x not in other_set:
                    break
            elif x not in other:
                break
        else:
            return x
    if len(first) <= _SET_AT:
        return None
    # Shortest first: when the first list is long enough to have a set, so has every other.
    common = sets[0].intersection(*rest)  # type: ignore[union-attr,arg-type]
    return min(common) if common else None


class ProposedIndex(UniverseIndex):
    """`UniverseIndex` with the proposed fast paths; same answers, checked by the benchmark."""

    def __init__(self, universe: Universe) -> None:
        super().__init__(universe)
        self._first_hit: dict[tuple[str, CanonicalKey], Hit] = {
            key: Hit(tier="exact", index=indices[0]) for key, indices in self._exact.items()
        }
        self._sets: dict[tuple[str, tuple[str, CanonicalKey]], set[int]] = {}
        for name, tindex in self._tools.items():
            for pair, postings in tindex.pairs.items():
                if len(postings) > _SET_AT:
                    self._sets[(name, pair)] = set(postings)

    def resolve(
        self, tool_name: str, args: dict[str, Any], state: SequenceState | None = None
    ) -> Hit | Miss:
        tindex = self._tools.get(tool_name)
        if tindex is None or tindex.tool.mode == "sequence":
            return super().resolve(tool_name, args, state)
        hit = self._first_hit.get((tool_name, args_key(args)))
        if hit is not None:
            return hit
        if tindex.arg_keys is not None:
            keyed = tindex.keyed.get(tindex.keyed_key(args))
            if keyed:
                return Hit(tier="keyed", index=keyed[0])
        return Miss(
            reason="no_recorded_result", policy=self.universe.matching.policy_for(tool_name)
        )

    def nearest(self, tool_name: str, args: dict[str, Any], *, limit: int = 1) -> list[Nearest]:
        tindex = self._tools[tool_name]
        if limit != 1 or tindex.first is None:
            return super().nearest(tool_name, args, limit=limit)
        found: list[tuple[list[int], set[int] | None]] = []
        for key, value in args.items():
            pair = (key, canonical_key(value))
            postings = tindex.pairs.get(pair)
            if postings:
                found.append((postings, self._sets.get((tool_name, pair))))
        if len(found) > _MAX_PAIRS:
            return super().nearest(tool_name, args, limit=limit)
        found.sort(key=lambda entry: len(entry[0]))
        # The best recording shares the most pairs, ties to the earliest: try every subset of
        # `size` pairs, largest size first; the first size with any common recording wins.
        for size in range(len(found), 0, -1):
            best: int | None = None
            for subset in combinations(found, size):
                index = _earliest_common([s[0] for s in subset], [s[1] for s in subset])
                if index is not None and (best is None or index < best):
                    best = index
            if best is not None:
                return [self._describe(best, size, args)]
        return [self._describe(tindex.first, 0, args)]
