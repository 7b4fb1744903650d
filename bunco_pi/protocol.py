"""The messages between table boxes and the head table: their JSON form and validation.

Transport-neutral: the same payloads travel over MQTT or the in-process link. Every message is
a JSON object with ``"v": PROTOCOL_VERSION``; a reader ignores keys it does not know, so a
newer sender can add keys without breaking an older reader.

- ``TableEvent`` (table -> head, QoS 1): one entry made at a table, numbered by the table's own
  ``seq`` (1, 2, 3 ... kept across reboots in its outbox) and tagged with the round it belongs
  to, so an entry replayed late never lands in the wrong round.
- ``NightState`` (head -> everyone, retained): the phase, the round, the bell, the seating.
- ``TableView`` (head -> one table, retained): what that table must show.
- acks (head -> one table, retained): the highest seq the head has committed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from bunco_pi.rules.table_round import Bell, Entry, Pass, Roll, Tally, Undo

PROTOCOL_VERSION = 1
MAX_PAYLOAD = 64 * 1024


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

    def to_json(self) -> dict[str, Any]:
        return {"v": PROTOCOL_VERSION, "table": self.table, "seq": self.seq,
                "round": self.round_index, "entry": encode_entry(self.entry)}

    @classmethod
    def from_json(cls, data: Any) -> TableEvent:
        obj = _object(data)
        table, seq, rnd = obj.get("table"), obj.get("seq"), obj.get("round")
        if not (_is_int(table) and 1 <= table <= 50):
            raise ProtocolError(f"'table' must be 1 to 50, got {table!r}")
        if not (_is_int(seq) and seq >= 1):
            raise ProtocolError(f"'seq' must be a whole number >= 1, got {seq!r}")
        if not (_is_int(rnd) and rnd >= 0):
            raise ProtocolError(f"'round' must be a whole number >= 0, got {rnd!r}")
        return cls(table, seq, rnd, decode_entry(obj.get("entry")))


def _object(data: Any) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ProtocolError("a message is a JSON object")
    version = data.get("v")
    if not _is_int(version) or version < 1:
        raise ProtocolError(f"'v' must be the protocol version, got {version!r}")
    if version > PROTOCOL_VERSION:
        raise ProtocolError(f"protocol version {version} is newer than this box ({PROTOCOL_VERSION})")
    return data


def dumps(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode()


def loads(payload: bytes | str) -> dict[str, Any]:
    """Parse a payload; ProtocolError for anything too big, not JSON, or not an object."""
    if len(payload) > MAX_PAYLOAD:
        raise ProtocolError(f"payload of {len(payload)} bytes is over the {MAX_PAYLOAD} limit")
    try:
        data = json.loads(payload)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ProtocolError(f"not JSON: {exc}") from None
    return _object(data)


def ack_json(seq: int) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "seq": seq}


def ack_seq(data: Any) -> int:
    obj = _object(data)
    seq = obj.get("seq")
    if not (_is_int(seq) and seq >= 0):
        raise ProtocolError(f"'seq' must be a whole number >= 0, got {seq!r}")
    return seq
