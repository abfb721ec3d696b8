"""`UnitOrder`: a run's results lines ordered for the report, in memory that barely grows.

The report lists errors, then invalid units, then failures, then passes, each group by unit id
(as text). Keeping `(rank, id, offset)` for every unit costs ~160 bytes a unit; here each
scenario keeps one byte (rank) and one 8-byte offset per repeat, and the ids are made again,
in text order, while the report is written: a scenario's repeats come out in the order of their
decimal text, and the scenarios are merged by id. Ids that `unit_id` did not make are kept as
they are.
"""

from __future__ import annotations

import heapq
from array import array
from collections.abc import Iterator

from .units import parse_unit_id, unit_id

__all__ = ["RANKS", "UnitOrder"]

RANKS = {"error": 0, "invalid": 1, "failed": 2, "passed": 3}
_ABSENT = 255


def _repeats_in_text_order(count: int) -> Iterator[int]:
    """0..count-1 in the order of their decimal text: 0, 1, 10, 100, 11, ..., 2, 20, ..."""
    if count > 0:
        yield 0
    stack = [r for r in range(9, 0, -1) if r < count]
    while stack:
        repeat = stack.pop()
        yield repeat
        stack.extend(
            child for child in range(repeat * 10 + 9, repeat * 10 - 1, -1) if child < count
        )


class _Scenario:
    def __init__(self) -> None:
        self.ranks = bytearray()
        self.offsets = array("q")

    def put(self, repeat: int, rank: int, offset: int) -> None:
        if repeat >= len(self.ranks):
            grow = max(repeat + 1 - len(self.ranks), len(self.ranks) // 2)
            self.ranks.extend(bytes([_ABSENT]) * grow)
            self.offsets.extend([0] * grow)
        self.ranks[repeat] = rank
        self.offsets[repeat] = offset

    def of_rank(self, name: str, rank: int) -> Iterator[tuple[str, int]]:
        for repeat in _repeats_in_text_order(len(self.ranks)):
            if self.ranks[repeat] == rank:
                yield unit_id(name, repeat), self.offsets[repeat]


class UnitOrder:
    """Add `(unit id, status, offset)` for each unit (a later add of a unit replaces it), then
    `offsets()` gives the offsets in report order."""

    def __init__(self) -> None:
        self._scenarios: dict[str, _Scenario] = {}
        self._other: dict[str, tuple[int, int]] = {}

    def add(self, unit_id_text: str, status: str, offset: int) -> None:
        rank = RANKS[status]
        parsed = parse_unit_id(unit_id_text)
        if parsed is None:
            self._other[unit_id_text] = (rank, offset)
            return
        name, repeat = parsed
        self._scenarios.setdefault(name, _Scenario()).put(repeat, rank, offset)

    def offsets(self) -> Iterator[int]:
        for rank in sorted(RANKS.values()):
            others = sorted((uid, offset) for uid, (r, offset) in self._other.items() if r == rank)
            groups = [s.of_rank(name, rank) for name, s in self._scenarios.items()]
            for _, offset in heapq.merge(iter(others), *groups):
                yield offset
