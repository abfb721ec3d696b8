"""How a live call finds a recording (DESIGN §4): exact, then keyed, then the miss policy.

`UniverseIndex` is immutable and shared; `SequenceState` is the per-server consumption state of
sequence-mode tools. Both are pure: no I/O, no Trio. Exact and keyed lookups are dictionary hits
(O(1) in the number of recordings); `nearest` uses an inverted index of (key, value) pairs.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable
from itertools import chain, combinations, islice
from typing import Any, Final, Literal, TypeAlias

import msgspec

from .canonical import CanonicalKey, args_key, canonical_key
from .load_pacing import GcSteps, gc_in_steps
from .universe import MissPolicy, Universe, UniverseTool

__all__ = [
    "Hit",
    "Miss",
    "MissReason",
    "Nearest",
    "SequenceState",
    "Tier",
    "UniverseIndex",
]

Tier: TypeAlias = Literal["exact", "keyed"]
MissReason: TypeAlias = Literal[
    "no_recorded_result", "sequence_exhausted", "unknown_tool", "client_answer_differs"
]
"""`client_answer_differs`: the recording matched, but the live client answered a request the
server makes while answering (elicitation, sampling, roots) otherwise than the recorded one."""

# Posting lists longer than this also get a set, for C-speed membership in `nearest`.
_SET_AT: Final = 32
# Beyond this many shared pairs, trying subsets costs more than counting postings.
_MAX_SUBSET_PAIRS: Final = 6


class Nearest(msgspec.Struct, frozen=True):
    """The closest recording of a tool: how many (key, value) pairs it shares, which keys differ."""

    index: int
    shared: int
    differing_keys: list[str]

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "shared": self.shared, "differing_keys": self.differing_keys}


class Hit(msgspec.Struct, frozen=True):
    """A call answered by recording `index` at `tier`: the call's `extra["match"]`."""

    tier: Tier
    index: int

    def to_dict(self) -> dict[str, Any]:
        return {"tier": self.tier, "index": self.index}


class Miss(msgspec.Struct, frozen=True):
    """A call no recording answers."""

    reason: MissReason
    policy: MissPolicy


Postings: TypeAlias = tuple[int] | list[int]
"""Recording indices in file order. One index is a tuple: most keys of a large universe have one
recording, and a tuple of ints is smaller than a list and, unlike a list, never walked again by
the cyclic GC once a collection has seen it."""


def _post(postings: dict[Any, Postings], key: Any, index: int) -> None:
    found = postings.get(key)
    if found is None:
        postings[key] = (index,)
    elif found.__class__ is tuple:
        postings[key] = [found[0], index]
    else:
        found.append(index)  # type: ignore[union-attr]  # a list, checked above


class _ToolIndex:
    __slots__ = ("arg_keys", "first", "keyed", "pair_sets", "pairs", "recordings", "tool")

    def __init__(self, tool: UniverseTool, arg_keys: list[str] | None) -> None:
        self.tool = tool
        # An empty list is a keyed tier all of whose (no) keys agree: every call of the tool
        # hits its first recording there, as in windtunnel-bench.
        self.arg_keys = tuple(arg_keys) if arg_keys is not None else None
        self.keyed: dict[CanonicalKey, Postings] = {}
        self.pairs: dict[tuple[str, CanonicalKey], Postings] = {}
        self.pair_sets: dict[tuple[str, CanonicalKey], set[int]] = {}
        self.recordings: list[int] = []
        self.first: int | None = None

    def keyed_key(self, args: dict[str, Any]) -> CanonicalKey | None:
        """The canonical values of the tool's `arg_keys` in `args`; None when one is absent (a
        keyed match needs every key on both sides)."""
        assert self.arg_keys is not None
        if not all(k in args for k in self.arg_keys):
            return None
        return tuple([canonical_key(args[k]) for k in self.arg_keys])


class UniverseIndex:
    """Lookup tables over a universe's recordings; build once, share freely."""

    def __init__(self, universe: Universe) -> None:
        # Collection paused, in steps (`load_pacing`): a large index makes millions of
        # containers, and one pass over all of them would hold the GIL for seconds.
        with gc_in_steps() as steps:
            self._build(universe, steps)

    def _build(self, universe: Universe, steps: GcSteps) -> None:
        self.universe = universe
        self._tools: dict[str, _ToolIndex] = {
            t.name: _ToolIndex(t, universe.matching.arg_keys.get(t.name)) for t in universe.tools
        }
        self._exact: dict[tuple[str, CanonicalKey], Postings] = {}
        for i, recording in enumerate(universe.recordings):
            tindex = self._tools[recording.tool_name]
            # One (key, canonical value) tuple per argument, shared by the exact key and the
            # pair postings.
            items = sorted([(k, canonical_key(v)) for k, v in recording.args.items()])
            _post(self._exact, (recording.tool_name, ("o", tuple(items))), i)
            if tindex.arg_keys is not None:
                ckeys = dict(items)
                if all(k in ckeys for k in tindex.arg_keys):
                    _post(tindex.keyed, tuple([ckeys[k] for k in tindex.arg_keys]), i)
            for pair in items:
                _post(tindex.pairs, pair, i)
            tindex.recordings.append(i)
            if tindex.first is None:
                tindex.first = i
            steps.item()
        for tindex in self._tools.values():
            tindex.pair_sets = {
                pair: set(postings)
                for pair, postings in tindex.pairs.items()
                if len(postings) > _SET_AT
            }
        # The hit a stateless exact lookup returns, made on a key's first lookup and kept (not
        # one per recording up front: most recordings of a large universe are never asked for).
        self._exact_hit: dict[tuple[str, CanonicalKey], Hit] = {}

    def tool(self, name: str) -> UniverseTool | None:
        tindex = self._tools.get(name)
        return tindex.tool if tindex is not None else None

    @property
    def tool_names(self) -> list[str]:
        return list(self._tools)

    def candidates(self, tool_name: str, args: dict[str, Any]) -> tuple[Postings, Postings]:
        """Recording indices that match exactly, and those that match on `arg_keys` (file order)."""
        tindex = self._tools[tool_name]
        exact = self._exact.get((tool_name, args_key(args)), [])
        keyed: Postings = []
        if tindex.arg_keys is not None:
            keyed = tindex.keyed.get(tindex.keyed_key(args), [])
        return exact, keyed

    def recordings_of(self, tool_name: str) -> list[int]:
        return self._tools[tool_name].recordings

    def nearest(self, tool_name: str, args: dict[str, Any], *, limit: int = 1) -> list[Nearest]:
        """Recordings of the tool sharing the most (key, value) pairs with `args`; ties earliest.

        The replay path (`limit=1`) looks for the earliest recording sharing all of the call's
        known pairs, then all but one, and so on, by intersecting posting sets: its cost depends
        on the call's pairs, not on the number of recordings. Longer rankings (`wt explain`) count
        postings instead.
        """
        tindex = self._tools[tool_name]
        if tindex.first is None:
            return []
        if limit == 1:
            best = self._best_by_subsets(tindex, args)
            if best is not None:
                index, shared = best
                return [self._describe(index, shared, args)]
        postings = [tindex.pairs.get((k, canonical_key(v)), ()) for k, v in args.items()]
        counts = Counter(chain.from_iterable(postings))
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
        if len(ranked) < limit:
            seen = {index for index, _ in ranked}
            for index in tindex.recordings:
                if len(ranked) >= limit:
                    break
                if index not in seen:
                    ranked.append((index, 0))
        return [self._describe(index, shared, args) for index, shared in ranked]

    def take_nearest(
        self, tool_name: str, args: dict[str, Any], state: SequenceState
    ) -> Nearest | None:
        """For a sequence-mode tool's `nearest` miss: the nearest recording not yet consumed,
        consumed now (consume-once holds on every path); None when every one is used."""
        tindex = self._tools[tool_name]
        counts: Counter[int] = Counter()
        for key, value in args.items():
            counts.update(tindex.pairs.get((key, canonical_key(value)), ()))
        ranked = sorted(tindex.recordings, key=lambda index: (-counts[index], index))
        index = state.take_first(ranked)
        return None if index is None else self._describe(index, counts[index], args)

    @staticmethod
    def _best_by_subsets(tindex: _ToolIndex, args: dict[str, Any]) -> tuple[int, int] | None:
        """(index, shared) of the best recording, or None when counting is cheaper."""
        found: list[tuple[Postings, set[int] | None]] = []
        for key, value in args.items():
            pair = (key, canonical_key(value))
            postings = tindex.pairs.get(pair)
            if postings:
                found.append((postings, tindex.pair_sets.get(pair)))
        if len(found) > _MAX_SUBSET_PAIRS:
            return None
        found.sort(key=lambda entry: len(entry[0]))
        # The largest subset of pairs that some recording shares in full decides `shared`; the
        # earliest recording over all subsets of that size wins.
        for size in range(len(found), 0, -1):
            best: int | None = None
            for subset in combinations(found, size):
                index = _earliest_common([s[0] for s in subset], [s[1] for s in subset])
                if index is not None and (best is None or index < best):
                    best = index
            if best is not None:
                return best, size
        assert tindex.first is not None
        return tindex.first, 0

    def _describe(self, index: int, shared: int, args: dict[str, Any]) -> Nearest:
        recorded = self.universe.recordings[index].args
        differing = sorted(
            key
            for key in recorded.keys() | args.keys()
            if key not in recorded
            or key not in args
            or canonical_key(recorded[key]) != canonical_key(args[key])
        )
        return Nearest(index=index, shared=shared, differing_keys=differing)

    def resolve(
        self, tool_name: str, args: dict[str, Any], state: SequenceState | None = None
    ) -> Hit | Miss:
        """Resolve a call; sequence-mode tools consume from `state` (required for them)."""
        tindex = self._tools.get(tool_name)
        if tindex is None:
            return Miss(reason="unknown_tool", policy="fail_call")
        if tindex.tool.mode != "sequence":
            # Stateless: stop at the first tier that answers.
            key = (tool_name, args_key(args))
            hit = self._exact_hit.get(key)
            if hit is not None:
                return hit
            found = self._exact.get(key)
            if found:
                hit = self._exact_hit[key] = Hit(tier="exact", index=found[0])
                return hit
            if tindex.arg_keys is not None:
                keyed_hits = tindex.keyed.get(tindex.keyed_key(args))
                if keyed_hits:
                    return Hit(tier="keyed", index=keyed_hits[0])
            return Miss(
                reason="no_recorded_result", policy=self.universe.matching.policy_for(tool_name)
            )
        exact, keyed = self.candidates(tool_name, args)
        if state is None:
            raise ValueError("sequence-mode tools need a SequenceState")
        hit = state.consume(exact, keyed)
        if hit is not None:
            return hit
        reason: MissReason = "sequence_exhausted" if exact or keyed else "no_recorded_result"
        return Miss(reason=reason, policy=self.universe.matching.policy_for(tool_name))


def _earliest_common(lists: list[Postings], sets: list[set[int] | None]) -> int | None:
    """The smallest index present in every list (each sorted ascending; shortest first)."""
    first, rest_sets = lists[0], sets[1:]
    if not rest_sets:
        return first[0]
    rest_lists = lists[1:]
    # Walk the head of the shortest list: the earliest common index is usually near the front.
    for x in islice(first, _SET_AT):
        for other, other_set in zip(rest_lists, rest_sets, strict=True):
            if x not in (other_set if other_set is not None else other):
                break
        else:
            return x
    if len(first) <= _SET_AT:
        return None
    # The shortest list is long, so every list has a set: intersect in C.
    first_set = sets[0]
    assert first_set is not None
    common = first_set.intersection(*[s for s in rest_sets if s is not None])
    return min(common) if common else None


class SequenceState:
    """Which recordings of sequence-mode tools one server instance has consumed.

    Consumption is atomic: the lock makes a check-and-consume one step even when in-process
    callers use several threads (Trio tasks never interleave inside it anyway).
    """

    def __init__(self, size: int) -> None:
        self._consumed = bytearray(size)
        # Per candidate list (the index's own lists, so identity is stable): everything before
        # the cursor is consumed, so repeated calls stay O(1) amortized.
        self._cursors: dict[int, int] = {}
        self._lock = threading.Lock()

    def consume(self, exact: Postings, keyed: Postings) -> Hit | None:
        with self._lock:
            index = self._take(exact)
            if index is not None:
                return Hit(tier="exact", index=index)
            index = self._take(keyed)
            if index is not None:
                return Hit(tier="keyed", index=index)
        return None

    def _take(self, candidates: Postings) -> int | None:
        if not candidates:
            return None
        position = self._cursors.get(id(candidates), 0)
        while position < len(candidates) and self._consumed[candidates[position]]:
            position += 1
        self._cursors[id(candidates)] = position
        if position == len(candidates):
            return None
        index = candidates[position]
        self._consumed[index] = 1
        return index

    def take_first(self, ranked: Iterable[int]) -> int | None:
        """Consume the first of `ranked` not consumed yet, and give it (None: all are)."""
        with self._lock:
            for index in ranked:
                if not self._consumed[index]:
                    self._consumed[index] = 1
                    return index
        return None

    def release(self, index: int) -> None:
        """Give a consumed recording back: its call asked the live client for input before it
        was answered, and the retry takes it again."""
        with self._lock:
            if self._consumed[index]:
                self._consumed[index] = 0
                self._cursors.clear()  # a cursor may have passed it; they are only a shortcut

    def consumed(self, index: int) -> bool:
        return bool(self._consumed[index])
