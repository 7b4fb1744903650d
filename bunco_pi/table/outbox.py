"""A table's durable outbox: every event it made, numbered, kept until the head commits it.

``append`` gives each event the next ``seq`` (1, 2, 3, ... never reused, across restarts);
the event is on disk when ``append`` returns. ``pending`` lists what the head has not yet
acknowledged, in seq order, for sending and for resending after a reconnect or a reboot.
``ack(n)`` records that the head committed every seq up to ``n`` (acks are cumulative).
Acknowledged events are kept (``entries``) so the table can rebuild its own view after a
reboot. One outbox file per night.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bunco_pi.net.durable import open_durable, transaction
from bunco_pi.net.envelope import MAX_EVENT_BYTES, EnvelopeError

log = logging.getLogger(__name__)

# Room left in an envelope for everything around the payload.
MAX_PAYLOAD_BYTES = MAX_EVENT_BYTES - 256

_SCHEMA = """
CREATE TABLE IF NOT EXISTS outbox (
    seq     INTEGER PRIMARY KEY,
    payload TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS outbox_state (
    id       INTEGER PRIMARY KEY CHECK (id = 1),
    last_seq INTEGER NOT NULL,
    acked    INTEGER NOT NULL
);
INSERT OR IGNORE INTO outbox_state (id, last_seq, acked) VALUES (1, 0, 0);
"""


@dataclass(frozen=True)
class OutboxEntry:
    seq: int
    payload: dict[str, Any]


class Outbox:
    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._db = open_durable(self.path)
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Outbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _state(self) -> tuple[int, int]:
        last_seq, acked = self._db.execute(
            "SELECT last_seq, acked FROM outbox_state WHERE id = 1").fetchone()
        return int(last_seq), int(acked)

    @property
    def last_seq(self) -> int:
        return self._state()[0]

    @property
    def acked(self) -> int:
        return self._state()[1]

    def append(self, payload: dict[str, Any]) -> int:
        """Store one event durably and return its seq."""
        return self.append_many([payload])[0]

    def append_many(self, payloads: list[dict[str, Any]]) -> list[int]:
        """Store events durably in one transaction (all or none: an undo of a whole turn is
        several events, and half of it must never reach the head); returns their seqs."""
        texts = [self._encode(payload) for payload in payloads]
        with transaction(self._db):
            first = self._state()[0] + 1
            for offset, text in enumerate(texts):
                self._db.execute("INSERT INTO outbox (seq, payload) VALUES (?, ?)",
                                 (first + offset, text))
            last = first + len(texts) - 1
            self._db.execute("UPDATE outbox_state SET last_seq = ? WHERE id = 1", (last,))
        return list(range(first, first + len(texts)))

    def _encode(self, payload: dict[str, Any]) -> str:
        if not isinstance(payload, dict):
            raise EnvelopeError(f"outbox {self.path}: event payload must be a dict")
        try:
            text = json.dumps(payload, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise EnvelopeError(f"outbox {self.path}: event payload is not JSON: {exc}") from exc
        if len(text.encode()) > MAX_PAYLOAD_BYTES:
            raise EnvelopeError(f"outbox {self.path}: event payload over {MAX_PAYLOAD_BYTES} bytes")
        return text

    def pending(self) -> list[OutboxEntry]:
        """Events the head has not acknowledged, in seq order."""
        return list(self._select("WHERE seq > (SELECT acked FROM outbox_state WHERE id = 1)"))

    def entries(self) -> list[OutboxEntry]:
        """Every event, acknowledged or not, in seq order."""
        return list(self._select(""))

    def ack(self, up_to: int) -> int:
        """Record that the head committed every seq <= ``up_to``; returns how many were new.

        An ack beyond our last seq means this outbox is younger than the head's log (a wiped
        or replaced card): the next seq jumps past it, or the head would take our new events
        for duplicates of old ones and drop them.
        """
        last_seq, acked = self._state()
        if up_to <= acked:
            return 0
        # An ack forgotten in a power cut costs nothing: the events are sent again and the
        # head drops them as duplicates. So it is not fsynced, which keeps a slow SD card off
        # the box's one thread, unless it moves the numbering on: that must not be forgotten.
        renumbers = up_to > last_seq
        if renumbers:
            log.warning("outbox %s: head acknowledged seq %d but the last here is %d; "
                        "numbering continues after %d", self.path, up_to, last_seq, up_to)
        with transaction(self._db, sync=renumbers):  # the box's one thread is the only writer
            self._db.execute("UPDATE outbox_state SET last_seq = ?, acked = ? WHERE id = 1",
                             (max(last_seq, up_to), up_to))
        return up_to - acked

    def _select(self, where: str) -> Iterator[OutboxEntry]:
        for seq, text in self._db.execute(f"SELECT seq, payload FROM outbox {where} ORDER BY seq"):
            yield OutboxEntry(int(seq), json.loads(text))
