"""A table entry as JSON: the one codec, used by the table's outbox, the head's log and ingest,
and the night record.

An entry is a short list starting with its kind: ``["roll", [3, 3, 5]]``, ``["tally",
"point"]`` (a tally may carry a face: ``["tally", "three", 2]``), ``["pass"]``, ``["bell"]``,
``["undo"]``. The night record writes a table's entry with the table number after the kind
(``["roll", 2, [3, 3, 5]]``): ``with_table`` and ``without_table`` move between the two.
"""

from __future__ import annotations

from typing import Any

from bunco_pi.rules.table_round import Bell, Entry, Pass, Roll, Tally, Undo

TALLY_KINDS = ("point", "three", "bunco", "wipeout")
_BARE = {"pass": Pass(), "bell": Bell(), "undo": Undo()}  # immutable: one of each
# Every roll of a night keeps its dice for the record: decoded rolls share one tuple for each
# of the 216 throws rather than one each (64 bytes a roll, 2.7 MiB of a 100-table night).
_THROWS = {(a, b, c): (a, b, c) for a in range(1, 7) for b in range(1, 7) for c in range(1, 7)}
# And one Roll for each throw (an entry is immutable): a head keeps every entry of the night,
# 40 bytes a roll otherwise, 25 MiB of a 500-table night.
_ROLLS = {dice: Roll(dice) for dice in _THROWS.values()}


class EntryFormatError(ValueError):
    """A JSON value that is not a table entry; the text says what is wrong."""


def encode_entry(entry: Entry) -> list[Any]:
    if isinstance(entry, Roll):
        return ["roll", list(entry.dice)]
    if isinstance(entry, Tally):
        return ["tally", entry.kind] + ([entry.face] if entry.face is not None else [])
    if isinstance(entry, Pass):
        return ["pass"]
    if isinstance(entry, Bell):
        return ["bell"]
    if isinstance(entry, Undo):
        return ["undo"]
    raise EntryFormatError(f"not a table entry: {entry!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decode_entry(item: Any) -> Entry:
    """The inverse of ``encode_entry``, strict: anything else raises ``EntryFormatError``."""
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise EntryFormatError(f"an entry is a list starting with its kind, got {item!r}")
    kind, args = item[0], item[1:]
    if kind == "roll" and len(args) == 1 and isinstance(args[0], list) and len(args[0]) == 3 \
            and all(_is_int(d) and 1 <= d <= 6 for d in args[0]):
        return _ROLLS[tuple(args[0])]
    if kind == "tally" and len(args) in (1, 2) and args[0] in TALLY_KINDS:
        face = args[1] if len(args) == 2 else None
        if face is not None and not (_is_int(face) and 1 <= face <= 6):
            raise EntryFormatError(f"a tally's face is 1 to 6, got {face!r}")
        return Tally(args[0], face)
    if not args and kind in _BARE:
        return _BARE[kind]
    raise EntryFormatError(f"not a valid entry: {item!r}")


def with_table(code: list[Any], table: int) -> list[Any]:
    """``["roll", [3, 3, 5]]`` at table 2 as the night record writes it: ``["roll", 2, [...]]``."""
    return [code[0], table, *code[1:]]


def without_table(item: list[Any]) -> tuple[int, list[Any]]:
    """The inverse of ``with_table``: the table number and the entry's own code."""
    if len(item) < 2 or not _is_int(item[1]):
        raise EntryFormatError(f"a table's entry names its table after its kind, got {item!r}")
    return item[1], [item[0], *item[2:]]
