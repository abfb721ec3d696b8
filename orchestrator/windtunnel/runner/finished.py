"""`FinishedUnits`: which units of a run are finished, in memory that barely grows with them.

Ids as `unit_id` writes them (`"<scenario>#<repeat>"`) are kept as one bit per repeat in a
bytearray per scenario: 100,000 units of 100 scenarios take ~13 KB instead of ~10 MB of strings.
Any other id (a hand-written results file) is kept as text.
"""

from __future__ import annotations

from collections.abc import Iterator

from .units import parse_unit_id, unit_id

__all__ = ["FinishedUnits"]


class FinishedUnits:
    """A set of unit ids: `add` (True when new), `in`, `len`, iteration by scenario and repeat."""

    def __init__(self) -> None:
        self._repeats: dict[str, bytearray] = {}
        self._other: set[str] = set()
        self._count = 0

    def add(self, unit_id_text: str) -> bool:
        """Record a unit; False when it was already recorded."""
        parsed = parse_unit_id(unit_id_text)
        if parsed is None:
            if unit_id_text in self._other:
                return False
            self._other.add(unit_id_text)
        else:
            name, repeat = parsed
            bits = self._repeats.setdefault(name, bytearray())
            byte, mask = divmod(repeat, 8)[0], 1 << (repeat % 8)
            if byte >= len(bits):
                # Grown by half again at least, so a scenario's repeats cost amortized O(1).
                bits.extend(bytes(max(byte + 1 - len(bits), len(bits) // 2)))
            if bits[byte] & mask:
                return False
            bits[byte] |= mask
        self._count += 1
        return True

    def __contains__(self, unit_id_text: object) -> bool:
        if not isinstance(unit_id_text, str):
            return False
        parsed = parse_unit_id(unit_id_text)
        if parsed is None:
            return unit_id_text in self._other
        name, repeat = parsed
        bits = self._repeats.get(name)
        byte = repeat // 8
        return bits is not None and byte < len(bits) and bool(bits[byte] & (1 << (repeat % 8)))

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        for name, bits in self._repeats.items():
            for byte, value in enumerate(bits):
                if value:
                    for bit in range(8):
                        if value & (1 << bit):
                            yield unit_id(name, byte * 8 + bit)
        yield from self._other
