"""The head's event log: the truth of the night, in the order the head accepted events.

Each row is one event: its log ``position`` (the order of the night), the ``(table, seq)`` it
came with, its sender and payload. ``UNIQUE(table, seq)`` makes a re-delivered event a
reported duplicate instead of a second effect, and :meth:`EventLog.commit` accepts a table's
events only in seq order with no gap, so "highest committed seq" of a table is also a
cumulative acknowledgement: every seq up to it is in the log.

Who calls what, in which order (``bunco_pi.head.ingest`` does this):

1. ``commit(batch)`` - one transaction, durable (WAL + synchronous=FULL) when it returns;
2. only then publish the retained ``table/<n>/ack`` with ``highest(n)``;
3. apply the returned events to the night's state, in log order.

A crash between 1 and 2 is harmless: the table resends, the log reports duplicates, and the
ack is published again. Replay after a restart is ``fold(apply, log.replay())``.
Source 0 (``OWN_SOURCE``) numbers the head's own events (the bell button, a forced round end),
so they take their place in the same order as the tables' events.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bunco_pi.net.durable import open_durable, transaction
from bunco_pi.net.sequence import place

OWN_SOURCE = 0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS events (
    position INTEGER PRIMARY KEY AUTOINCREMENT,
    table_no INTEGER NOT NULL,
    seq      INTEGER NOT NULL,
    sender   TEXT NOT NULL,
    payload  TEXT NOT NULL,
    rejected TEXT,
    UNIQUE (table_no, seq)
);
CREATE TABLE IF NOT EXISTS log_meta (
    id    INTEGER PRIMARY KEY CHECK (id = 1),
    epoch TEXT NOT NULL
);
"""


@dataclass(frozen=True)
class IncomingEvent:
    table: int
    seq: int
    sender: str
    payload: dict[str, Any]
    # Why the payload is not to be applied (it failed the protocol check), or None. Such an
    # event is still logged: it uses up its seq, so the table's later events are not stuck
    # behind a gap, and the log keeps what was received.
    rejected: str | None = None
    # What the protocol check made of the payload (decoded once, at the door), carried to
    # the logged event so the head need not decode it again. Not stored.
    decoded: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class LoggedEvent:
    position: int
    table: int
    seq: int
    sender: str
    payload: dict[str, Any]
    rejected: str | None = None
    decoded: Any = field(default=None, compare=False)


@dataclass
class CommitResult:
    committed: list[LoggedEvent] = field(default_factory=list)
    duplicates: list[tuple[int, int]] = field(default_factory=list)
    # (table, seq) that came before an earlier seq of the same table: not written.
    out_of_order: list[tuple[int, int]] = field(default_factory=list)
    # Duplicates whose payload differs from the logged one: a table renumbered its events
    # (a wiped outbox). Not written either; worth a loud log line.
    conflicts: list[tuple[int, int]] = field(default_factory=list)


class EventLog:
    """Single writer: the head's owner thread. Safe to reopen after kill -9."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self._db = open_durable(self.path)
        self._db.executescript(_SCHEMA)
        with transaction(self._db) as db:
            # A name for this log, made once: a table that sees another one knows the head
            # started the night's log afresh, and that positions are not comparable across.
            db.execute("INSERT OR IGNORE INTO log_meta (id, epoch) VALUES (1, ?)",
                       (secrets.token_hex(6),))
        self.epoch: str = self._db.execute("SELECT epoch FROM log_meta").fetchone()[0]
        self._position = int(self._db.execute(
            "SELECT COALESCE(MAX(position), 0) FROM events").fetchone()[0])
        self._highest: dict[int, int] = {
            int(t): int(s) for t, s in
            self._db.execute("SELECT table_no, MAX(seq) FROM events GROUP BY table_no")
        }

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> EventLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def highest(self, table: int) -> int:
        """Highest committed seq of ``table`` (0 if none): every seq up to it is logged."""
        return self._highest.get(table, 0)

    @property
    def position(self) -> int:
        """The log position of the latest committed event (0 for an empty log). It only grows,
        across restarts too: everything the head says is a function of the log up to here."""
        return self._position

    def highest_all(self) -> dict[int, int]:
        return dict(self._highest)

    def commit(self, events: Iterable[IncomingEvent]) -> CommitResult:
        """Write every event that is next in its table's sequence, in one durable transaction."""
        result = CommitResult()
        highest = dict(self._highest)
        with transaction(self._db) as db:
            for ev in events:
                where = place(highest.get(ev.table, 0), ev.seq)
                if where == "duplicate":
                    result.duplicates.append((ev.table, ev.seq))
                    if self._differs(ev):
                        result.conflicts.append((ev.table, ev.seq))
                    continue
                if where == "ahead":
                    result.out_of_order.append((ev.table, ev.seq))
                    continue
                text = json.dumps(ev.payload, separators=(",", ":"), allow_nan=False)
                cur = db.execute(
                    "INSERT INTO events (table_no, seq, sender, payload, rejected)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT (table_no, seq) DO NOTHING",
                    (ev.table, ev.seq, ev.sender, text, ev.rejected),
                )
                if cur.rowcount == 0:  # only if the cache and the file disagree
                    result.duplicates.append((ev.table, ev.seq))
                    continue
                highest[ev.table] = ev.seq
                result.committed.append(LoggedEvent(
                    int(cur.lastrowid or 0), ev.table, ev.seq, ev.sender, ev.payload,
                    ev.rejected, ev.decoded))
        self._highest = highest  # only once the commit is durable
        if result.committed:
            self._position = result.committed[-1].position
        return result

    def conflicts(self, events: Iterable[IncomingEvent]) -> list[tuple[int, int]]:
        """The (table, seq) of ``events`` already logged with a different payload."""
        return [(ev.table, ev.seq) for ev in events if self._differs(ev)]

    def _differs(self, ev: IncomingEvent) -> bool:
        row = self._db.execute("SELECT payload FROM events WHERE table_no = ? AND seq = ?",
                               (ev.table, ev.seq)).fetchone()
        return row is not None and json.loads(row[0]) != ev.payload

    def append_own(self, sender: str, *payloads: dict[str, Any]) -> list[LoggedEvent]:
        """Log the head's own records (source 0, next seqs) in one durable transaction."""
        first = self.highest(OWN_SOURCE) + 1
        return self.commit([IncomingEvent(OWN_SOURCE, first + i, sender, payload)
                            for i, payload in enumerate(payloads)]).committed

    def replay(self, after_position: int = 0, *,
               include_rejected: bool = False) -> Iterator[LoggedEvent]:
        """Every logged event after ``after_position``, in log order (the ones to apply,
        unless ``include_rejected``)."""
        rows = self._db.execute(
            "SELECT position, table_no, seq, sender, payload, rejected FROM events"
            " WHERE position > ? AND (? OR rejected IS NULL) ORDER BY position",
            (after_position, include_rejected))
        for pos, table, seq, sender, text, rejected in rows:
            yield LoggedEvent(int(pos), int(table), int(seq), sender, json.loads(text), rejected)

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM events").fetchone()[0])
