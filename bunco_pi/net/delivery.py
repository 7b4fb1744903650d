"""At-least-once delivery with exactly-once effects, between a table's outbox and the head's log.

Table side (:class:`TableSender`), on the table's owner thread::

    seq = sender.submit(payload)       # durable in the outbox, then published (QoS 1)
    sender.handle(link_event)          # Connected -> resend pending; ack -> drop acknowledged
    sender.tick()                      # now and then: resend if the head has gone quiet

Head side (:class:`HeadIngest`), on the head's owner thread::

    for ev in ingest.handle_many(link_events):   # validate, dedupe, commit, then ack
        night = apply(night, ev)                  # LoggedEvent, in log order

Order is never by wall clock: a table's events are committed in seq order (an event that
arrives before an earlier one is held until the gap fills), and the log position orders the
night. The ack is cumulative and published only after the commit is durable.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bunco_pi.head.eventlog import EventLog, IncomingEvent, LoggedEvent
from bunco_pi.net import envelope
from bunco_pi.net.link import Connected, Link, LinkEvent, Message
from bunco_pi.net.topics import TopicError, Topics, parse_topic, table_node
from bunco_pi.table.outbox import Outbox

log = logging.getLogger(__name__)

HEAD_NAME = "head"


def ack_payload(seq: int) -> dict[str, Any]:
    return {"seq": seq}


def read_ack(env: envelope.Envelope) -> int | None:
    seq = env.payload.get("seq")
    if isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq <= envelope.MAX_SEQ:
        return seq
    return None


class TableSender:
    """Sends a table's outbox to the head and drops what the head acknowledged."""

    def __init__(self, link: Link, topics: Topics, table: int, outbox: Outbox, *,
                 resend_after: float = 3.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.link, self.topics, self.table, self.outbox = link, topics, table, outbox
        self.name = table_node(table)
        self._events_topic = topics.events(table)
        self._ack_topic = topics.ack(table)
        self._resend_after = resend_after
        self._clock = clock
        self._last_progress = clock()
        self._ack_seen = False
        link.subscribe(self._ack_topic)

    @property
    def ack_seen(self) -> bool:
        """Whether an ack came since start. A fresh outbox (``last_seq == 0``) on a night
        already under way should wait for it (it is retained: it comes right after connecting)
        before its first ``submit``, so numbering continues after what the head has."""
        return self._ack_seen

    @property
    def pending_count(self) -> int:
        return self.outbox.last_seq - self.outbox.acked

    def submit(self, payload: dict[str, Any]) -> int:
        """Make an event durable, then send it; returns its seq."""
        return self.submit_many([payload])[0]

    def submit_many(self, payloads: list[dict[str, Any]]) -> list[int]:
        """Make events durable together (one transaction), then send them; their seqs."""
        seqs = self.outbox.append_many(payloads)
        if self.link.connected:
            for seq, payload in zip(seqs, payloads, strict=True):
                self._send(seq, payload)
        return seqs

    def resend_pending(self) -> int:
        pending = self.outbox.pending()
        for entry in pending:
            self._send(entry.seq, entry.payload)
        self._last_progress = self._clock()
        return len(pending)

    def handle(self, event: LinkEvent) -> bool:
        """Take a link event if it concerns delivery; returns whether it did."""
        if isinstance(event, Connected):
            self.resend_pending()
            return False  # others may want to know about the connection too
        if not (isinstance(event, Message) and event.topic == self._ack_topic):
            return False
        env = envelope.try_decode(event.topic, event.payload, log)
        seq = read_ack(env) if env is not None else None
        if env is None or seq is None or env.sender != HEAD_NAME:
            log.warning("%s: ignored a malformed ack on %s", self.name, event.topic)
            return True
        self._ack_seen = True
        if self.outbox.ack(seq):
            self._last_progress = self._clock()
        return True

    def tick(self) -> None:
        """Resend if events are pending and no ack has come for ``resend_after`` seconds."""
        if not self.link.connected or self._clock() - self._last_progress < self._resend_after:
            return
        if self.pending_count > 0:
            n = self.resend_pending()
            log.info("%s: no ack for %.1f s, resent %d event(s)",
                     self.name, self._resend_after, n)
        else:
            self._last_progress = self._clock()

    def _send(self, seq: int, payload: dict[str, Any]) -> None:
        self.link.publish(self._events_topic,
                          envelope.event(self.name, self.table, seq, payload), qos=1)


@dataclass
class IngestStats:
    committed: int = 0
    duplicates: int = 0
    rejected: int = 0
    held: int = 0
    dropped: int = 0


class HeadIngest:
    """Validates table events, commits them to the log in (table, seq) order, then acks."""

    def __init__(self, link: Link, topics: Topics, eventlog: EventLog, *,
                 check: Callable[[IncomingEvent], object] | None = None,
                 name: str = HEAD_NAME, max_held: int = 1000, tables: int = 0) -> None:
        """``check(event)`` raises ValueError (or KeyError/TypeError) for a payload the
        protocol refuses: that event is logged as rejected (it uses up its seq) and not
        returned for applying."""
        self.link, self.topics, self.log = link, topics, eventlog
        self.check = check
        self.name = name
        self.max_held = max_held
        self.tables = tables  # the night's table count, for acks of tables not heard from yet
        self.stats = IngestStats()
        # Events that came before an earlier seq of their table: table -> seq -> event.
        self._held: dict[int, dict[int, IncomingEvent]] = {}
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
        incoming: list[IncomingEvent] = []
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

    def _accept(self, msg: Message) -> IncomingEvent | None:
        try:
            ref = parse_topic(msg.topic)
        except TopicError:
            return None  # not ours to judge
        if ref.night != self.topics.night or ref.kind != "events":
            return None
        env = envelope.try_decode(msg.topic, msg.payload, log)
        if env is None:
            self.stats.rejected += 1
            return None
        assert env.table is not None and env.seq is not None
        event = IncomingEvent(env.table, env.seq, env.sender, env.payload)
        if self.check is not None:
            try:
                self.check(event)
            except (ValueError, KeyError, TypeError) as exc:
                reason = envelope.clip((str(exc).splitlines() or [type(exc).__name__])[0])
                log.warning("%s: table %d seq %d refused by the protocol check: %s",
                            msg.topic, env.table, env.seq, reason)
                self.stats.rejected += 1
                return IncomingEvent(env.table, env.seq, env.sender, env.payload, reason)
        return event

    def _ingest(self, incoming: list[IncomingEvent]) -> list[LoggedEvent]:
        batch: list[IncomingEvent] = []
        dups: list[IncomingEvent] = []
        touched: set[int] = set()
        expected = {}
        for ev in incoming:
            touched.add(ev.table)
            top = expected.setdefault(ev.table, self.log.highest(ev.table))
            if ev.seq <= top:
                self.stats.duplicates += 1
                dups.append(ev)
                continue
            held = self._held.setdefault(ev.table, {})
            if ev.seq != top + 1:
                if ev.seq in held:
                    self.stats.duplicates += 1
                elif len(held) >= self.max_held:
                    self.stats.dropped += 1  # the table resends it later
                else:
                    held[ev.seq] = ev
                    self.stats.held += 1
                continue
            batch.append(ev)
            top = ev.seq
            held.pop(top, None)
            while top + 1 in held:  # the gap is filled: release what waited for it
                top += 1
                batch.append(held.pop(top))
            expected[ev.table] = top
            # Anything held at or below the new top is a duplicate of what is committed now.
            for seq in [s for s in held if s <= top]:
                del held[seq]
        result = self.log.commit(batch) if batch else None
        if result is not None:
            self.stats.committed += len(result.committed)
            self.stats.duplicates += len(result.duplicates)
        for table, seq in self.log.conflicts(dups):
            log.error("table %d sent seq %d again with a different payload: its outbox was "
                      "renumbered; the new event is NOT counted", table, seq)
        # The commit above is durable: only now may the tables hear that it happened.
        for table in sorted(touched):
            self._publish_ack(table, self.log.highest(table))
        return [ev for ev in result.committed if ev.rejected is None] if result else []

    def _publish_ack(self, table: int, seq: int) -> None:
        self.link.publish(self.topics.ack(table),
                          envelope.message(self.name, ack_payload(seq)), qos=1, retain=True)
