"""The night's events as the head keeps them in memory for the night record: 4 bytes an entry.

The head keeps every event of the night to write its record at each round's end (the event log
on disk is the durable copy; this is the fold's own list). A 500-table night is some 640,000
table entries: as ``TableEntry`` objects in a list they took 56 bytes each, a fifth of the
head's memory. Here a table's entry is one C int, its table and which of the night's few
distinct entries it is (the 216 throws, the tallies, pass, bell, undo); the host's and the
clock's events, a few hundred a night, are kept as they are. Reading gives the same events.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, overload

from bunco_pi.rules.limits import MAX_TABLES
from bunco_pi.rules.night import NightEvent, TableEntry
from bunco_pi.rules.table_round import Entry

# a table entry's code: (its entry's index) * _SPAN + table; any other event: -1 - its index
_SPAN = MAX_TABLES + 1


class NightLog(Sequence[NightEvent]):
    """An append-only list of night events, compact for table entries."""

    __slots__ = ("_codes", "_entries", "_index", "_others")

    def __init__(self, events: Iterable[NightEvent] = ()) -> None:
        self._codes = array("i")
        self._entries: list[Entry] = []  # the distinct entries, in the order first seen
        self._index: dict[Entry, int] = {}
        self._others: list[NightEvent] = []
        for event in events:
            self.append(event)

    def append(self, event: NightEvent) -> None:
        if type(event) is TableEntry and 1 <= event.table < _SPAN:
            index = self._index.get(event.entry)
            if index is None:
                index = self._index[event.entry] = len(self._entries)
                self._entries.append(event.entry)
            self._codes.append(index * _SPAN + event.table)
        else:
            self._codes.append(-1 - len(self._others))
            self._others.append(event)

    def copy(self) -> NightLog:
        """A copy that does not grow with this one (the record's thread reads it)."""
        new = NightLog()
        new._codes = array("i", self._codes)
        new._entries = list(self._entries)
        new._index = dict(self._index)
        new._others = list(self._others)
        return new

    def _event(self, code: int) -> NightEvent:
        if code < 0:
            return self._others[-1 - code]
        index, table = divmod(code, _SPAN)
        return TableEntry(table, self._entries[index])

    def __len__(self) -> int:
        return len(self._codes)

    @overload
    def __getitem__(self, position: int) -> NightEvent: ...

    @overload
    def __getitem__(self, position: slice) -> list[NightEvent]: ...

    def __getitem__(self, position: int | slice) -> NightEvent | list[NightEvent]:
        if isinstance(position, slice):
            return [self._event(code) for code in self._codes[position]]
        return self._event(self._codes[position])

    def __iter__(self) -> Iterator[NightEvent]:
        event = self._event
        return (event(code) for code in self._codes)

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, NightLog | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other,
                                                                            strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<NightLog of {len(self)} events>"


def as_log(events: Sequence[NightEvent]) -> Sequence[NightEvent]:
    """``events`` as a record's thread may keep them: a copy that the night does not grow."""
    return events.copy() if isinstance(events, NightLog) else tuple(events)
