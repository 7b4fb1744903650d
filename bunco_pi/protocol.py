"""The messages between table boxes and the head table: their JSON form and validation.

Transport-neutral: the same payloads travel over MQTT or the in-process link. A reader
ignores keys it does not know, so a newer sender can add keys without breaking an older one.

- a table event (table -> head, QoS 1): one entry made at a table, in the envelope of
  ``bunco_pi.net.envelope`` with the table's own ``seq`` (1, 2, 3 ... kept across reboots in
  its outbox); its payload is ``{"round": round_index, "entry": encode_entry(entry)}``, tagged
  with the round it belongs to, so an entry replayed late never lands in the wrong round.
  ``TableEvent`` is the decoded event the head's coordinator takes.
- the night state and each table's view (head -> tables, retained): ``bunco_pi.head.views``.
- acks (head -> one table, retained): ``bunco_pi.net.delivery``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bunco_pi.rules.table_round import Bell, Entry, Pass, Roll, Tally, Undo

PROTOCOL_VERSION = 1


class ProtocolError(ValueError):
    """A payload that is not a valid message; the text says what is wrong."""


# --- table entries ---------------------------------------------------------------------------


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
    raise ProtocolError(f"not a table entry: {entry!r}")


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def decode_entry(item: Any) -> Entry:
    if not isinstance(item, list) or not item or not isinstance(item[0], str):
        raise ProtocolError(f"an entry is a list starting with its kind, got {item!r}")
    kind, args = item[0], item[1:]
    if kind == "roll" and len(args) == 1 and isinstance(args[0], list) and len(args[0]) == 3 \
            and all(_is_int(d) and 1 <= d <= 6 for d in args[0]):
        return Roll(tuple(args[0]))
    if kind == "tally" and len(args) in (1, 2) and args[0] in ("point", "three", "bunco", "wipeout"):
        face = args[1] if len(args) == 2 else None
        if face is not None and not (_is_int(face) and 1 <= face <= 6):
            raise ProtocolError(f"a tally's face is 1 to 6, got {face!r}")
        return Tally(args[0], face)
    if not args and kind in ("pass", "bell", "undo"):
        return {"pass": Pass, "bell": Bell, "undo": Undo}[kind]()
    raise ProtocolError(f"not a valid entry: {item!r}")


# --- messages --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableEvent:
    table: int
    seq: int
    round_index: int
    entry: Entry


# --- the night's position: nothing moves a box backwards -------------------------------------


@dataclass(frozen=True, slots=True)
class NightPosition:
    """Where in the night a head-to-table message was said: the head's event log (``epoch``,
    a name made when the log was created) and the log position then (``pos``, which only
    grows, across head restarts too). Everything the head publishes is a function of its log
    up to ``pos``, so a message with a lower ``pos`` is older, whatever the broker retained,
    restored from its last autosave or redelivered from a session queue."""

    epoch: str
    pos: int

    def stamp(self, message: dict[str, Any]) -> dict[str, Any]:
        return {**message, "epoch": self.epoch, "pos": self.pos}


def position_of(message: dict[str, Any]) -> NightPosition | None:
    """The position a head message carries, or None if it carries none (or a malformed one)."""
    epoch, pos = message.get("epoch"), message.get("pos")
    if isinstance(epoch, str) and _is_int(pos) and pos >= 0:
        return NightPosition(epoch, pos)
    return None


def is_older(held: NightPosition | None, incoming: NightPosition | None) -> bool:
    """Whether a message at ``incoming`` is older than what a box holds at ``held``: it must
    then be ignored. The same position is not older (the head says it again on reconnect). A
    new epoch is the head's log started afresh, so it is followed; a message without a
    position is only taken by a box that holds none."""
    if held is None:
        return False
    if incoming is None:
        return True
    return incoming.epoch == held.epoch and incoming.pos < held.pos
