"""The head's half of delivery: validate table events, commit them to the log in (table, seq)
order, then acknowledge.

On the head's owner thread::

    for ev in ingest.handle_many(link_events):   # validate, dedupe, commit, then ack
        night = apply(night, ev)                  # LoggedEvent, in log order
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace

from bunco_pi.head.eventlog import EventLog, IncomingEvent, LoggedEvent
from bunco_pi.net import envelope
from bunco_pi.net.delivery import HEAD_NAME, ack_payload
from bunco_pi.net.link import Connected, Link, LinkEvent, Message
from bunco_pi.net.sequence import Limits, SeqWindow
from bunco_pi.net.topics import TopicError, Topics, parse_topic

log = logging.getLogger(__name__)


@dataclass
class IngestStats:
    received: int = 0  # messages on the night's events topics, whatever became of them
    committed: int = 0
    duplicates: int = 0
    rejected: int = 0
    held: int = 0
    dropped: int = 0


class HeadIngest:
    """Validates table events, commits them to the log in (table, seq) order, then acks."""

    def __init__(self, link: Link, topics: Topics, eventlog: EventLog, *,
                 check: Callable[[IncomingEvent], object] | None = None,
                 name: str = HEAD_NAME, limits: Limits | None = None,
                 tables: int = 0) -> None:
        """``check(event)`` decodes the payload (what it returns travels with the logged event
        as ``decoded``), or raises ValueError (or KeyError/TypeError) for a payload the
        protocol refuses: that event is logged as rejected (it uses up its seq) and not
        returned for applying."""
        self.link, self.topics, self.log = link, topics, eventlog
        self.check = check
        self.name = name
        self.limits = limits or Limits()
        self.tables = tables  # the night's table count, for acks of tables not heard from yet
        self.stats = IngestStats()
        # With defer_acks, a batch's acks wait for flush_acks(): every one of them is after
        # the batch's commit all the same, and the head says the batch's news first.
        self.defer_acks = False
        self._acks_due: set[int] = set()
        # Per table, the events that came before an earlier seq of theirs, held within bounds.
        self._windows: dict[int, SeqWindow[IncomingEvent]] = {}
        # Per table, the latest of its entries logged but refused (seq, reason): every ack
        # carries it, so the box is told (and a box that reconnects is told again).
        self._refusals: dict[int, tuple[int, str]] = {}
        link.subscribe(topics.all_events())

    def publish_all_acks(self) -> None:
        """Re-publish every table's retained ack (after a connect: the broker may have lost it).
        A table of the night that has sent nothing yet gets 0: a fresh outbox then knows for
        certain that the head holds nothing of it, and numbers from 1."""
        highest = self.log.highest_all()
        for table in sorted({t for t in highest if t >= 1} | set(range(1, self.tables + 1))):
            self._publish_ack(table, highest.get(table, 0))

    def handle(self, event: LinkEvent) -> list[LoggedEvent]:
        return self.handle_many([event])

    def handle_many(self, events: Iterable[LinkEvent]) -> list[LoggedEvent]:
        """Ingest a batch of link events in one commit; returns the newly committed events
        to apply, in log order. Other link events (status, Published ...) are ignored."""
        incoming: list[tuple[IncomingEvent, int]] = []
        for event in events:
            if isinstance(event, Connected):
                self.publish_all_acks()
            elif isinstance(event, Message):
                accepted = self._accept(event)
                if accepted is not None:
                    incoming.append(accepted)
        if not incoming:
            return []
        return self._ingest(incoming)

    def _accept(self, msg: Message) -> tuple[IncomingEvent, int] | None:
        try:
            ref = parse_topic(msg.topic)
        except TopicError:
            return None  # not ours to judge
        if ref.night != self.topics.night or ref.kind != "events":
            return None
        self.stats.received += 1
        env = envelope.try_decode(msg.topic, msg.payload, log)
        if env is None:
            self.stats.rejected += 1
            return None
        assert env.table is not None and env.seq is not None
        event = IncomingEvent(env.table, env.seq, env.sender, env.payload)
        if self.check is not None:
            try:
                event = replace(event, decoded=self.check(event))
            except (ValueError, KeyError, TypeError) as exc:
                reason = envelope.clip((str(exc).splitlines() or [type(exc).__name__])[0])
                log.warning("%s: table %d seq %d refused by the protocol check: %s",
                            msg.topic, env.table, env.seq, reason)
                self.stats.rejected += 1
                return (IncomingEvent(env.table, env.seq, env.sender, env.payload, reason),
                        len(msg.payload))
        return event, len(msg.payload)

    def refuse(self, table: int, seq: int, reason: str) -> None:
        """The engine refused ``table``'s committed entry ``seq``: tell its box, in the ack."""
        if seq >= self._refusals.get(table, (0, ""))[0]:
            self._refusals[table] = (seq, reason)
        self._publish_ack(table, self.log.highest(table))

    def held(self, table: int) -> tuple[int, int]:
        """How many events of ``table`` are held waiting for a gap, and their bytes."""
        window = self._windows.get(table)
        return (window.held, window.held_bytes) if window is not None else (0, 0)

    def _ingest(self, incoming: list[tuple[IncomingEvent, int]]) -> list[LoggedEvent]:
        batch: list[IncomingEvent] = []
        dups: list[IncomingEvent] = []
        touched: set[int] = set()
        expected: dict[int, int] = {}
        for ev, size in incoming:
            touched.add(ev.table)
            top = expected.setdefault(ev.table, self.log.highest(ev.table))
            window = self._windows.setdefault(ev.table, SeqWindow(self.limits))
            verdict, released = window.offer(top, ev.seq, ev, size)
            if verdict == "duplicate":
                self.stats.duplicates += 1
                if ev.seq <= top:
                    dups.append(ev)
            elif verdict == "held":
                self.stats.held += 1
            elif verdict == "refused":
                self.stats.dropped += 1  # the table resends it later
                log.warning("table %d seq %d refused: the head expects seq %d and holds at "
                            "most %d events (%d bytes, up to %d ahead) of a table; it is sent "
                            "again later", ev.table, ev.seq, top + 1, self.limits.count,
                            self.limits.bytes, self.limits.ahead)
            elif released:
                batch += released
                expected[ev.table] = released[-1].seq
        result = self.log.commit(batch) if batch else None
        if result is not None:
            self.stats.committed += len(result.committed)
            self.stats.duplicates += len(result.duplicates)
            for ev in result.committed:
                if ev.rejected is not None:  # the protocol check's refusal (logged above)
                    self._refusals[ev.table] = (ev.seq, ev.rejected)
        for table, seq in self.log.conflicts(dups):
            log.error("table %d sent seq %d again with a different payload: its outbox was "
                      "renumbered; the new event is NOT counted", table, seq)
        # The commit above is durable: only now may the tables hear that it happened.
        self._acks_due.update(touched)
        if not self.defer_acks:
            self.flush_acks()
        return [ev for ev in result.committed if ev.rejected is None] if result else []

    def flush_acks(self) -> None:
        """Publish the acks of what the last batches committed (with ``defer_acks``, the
        head's loop calls it once the batch's news, the bell above all, is out)."""
        due, self._acks_due = self._acks_due, set()
        for table in sorted(due):
            self._publish_ack(table, self.log.highest(table))

    def _publish_ack(self, table: int, seq: int) -> None:
        self.link.publish(self.topics.ack(table),
                          envelope.message(self.name, ack_payload(seq, self._refusals.get(table))),
                          qos=1, retain=True)
