"""A finished table's rolls, kept small for the rest of the night.

A night keeps every roll it was played with: a 500-table charity night some 600,000 by its
end, nearly all of them in rounds long closed. As ``RollRecord`` tuples they cost about 88
bytes each; a closed round only ever reads them again (the record, the audit, the score cards),
so each table's rolls are packed when its round closes: each field of a roll becomes a byte
that picks from the few different values that field takes at that table (four rollers, at
most 216 throws and the tallies, a handful of outcomes), five bytes a roll in all. Reading
one gives back an equal ``RollRecord``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import overload

from .table_round import RollRecord

FIELDS = len(RollRecord._fields)


class PackedRolls(Sequence[RollRecord]):
    """An immutable sequence of rolls, equal to the tuple of the same rolls."""

    __slots__ = ("_values", "_codes")

    def __init__(self, values: tuple[tuple[object, ...], ...], codes: bytes) -> None:
        self._values = values  # per field, the different values it takes here
        self._codes = codes  # per roll, FIELDS bytes: each field's place in its values

    def __len__(self) -> int:
        return len(self._codes) // FIELDS

    @overload
    def __getitem__(self, index: int) -> RollRecord: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[RollRecord, ...]: ...

    def __getitem__(self, index: int | slice) -> RollRecord | tuple[RollRecord, ...]:
        if isinstance(index, slice):
            return tuple(self[i] for i in range(*index.indices(len(self))))
        count = len(self)
        if index < 0:
            index += count
        if not 0 <= index < count:
            raise IndexError("roll index out of range")
        at = index * FIELDS
        codes = self._codes
        return RollRecord._make(values[codes[at + field]]
                                for field, values in enumerate(self._values))

    def __iter__(self) -> Iterator[RollRecord]:
        for index in range(len(self)):
            yield self[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, PackedRolls):
            return tuple(self) == tuple(other)
        if isinstance(other, tuple):
            return tuple(self) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __repr__(self) -> str:
        return f"PackedRolls({tuple(self)!r})"


def pack_rolls(rolls: Iterable[RollRecord]) -> Sequence[RollRecord]:
    """``rolls`` packed; as a plain tuple where some field takes more than 256 values at one
    table (no real round comes near that)."""
    rolls = tuple(rolls)
    places: list[dict[object, int]] = [{} for _ in range(FIELDS)]
    codes = bytearray()
    for roll in rolls:
        for field, value in enumerate(roll):
            place = places[field].setdefault(value, len(places[field]))
            if place > 255:
                return rolls
            codes.append(place)
    values = tuple(tuple(found) for found in places)  # dicts keep the order values came in
    return PackedRolls(values, bytes(codes))
